"""The trace explorer panel: the fate of one message, and the events that touched it."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from engine import BuildResult
from playground.app.explain import decision_rows, why_dropped
from playground.app.views import tokens_long


def trace_content(result: BuildResult, message_id: str) -> Content:
    """The panel's text for one message of `result`."""
    decision = result.decision_for(message_id)
    if decision is None:
        return Content.assemble(("TRACE ", "bold"), message_id, ("\nno decision recorded for it", "$warning"))
    fate = "$success" if decision.kept else "$error"
    parts: list[Content | str | tuple[str, str]] = [("TRACE ", "bold"), (message_id, f"bold {fate}")]
    for label, value in decision_rows(decision, tokens_long, why_dropped(result, decision)):
        style = fate if label == "fate" else ""
        parts += [f"\n{label:<12}", (value, style) if style else value]
    if cards := result.cards_carrying(message_id):
        parts += [f"\n{'on the wire':<12}", ", ".join(f"#{i}" for i in cards)]
    events = result.events_touching(message_id)
    parts.append((f"\n\nEVENTS ({len(events)})", "bold"))
    for event in events:
        parts += ["\n", (event.kind, "$text-accent bold"), "  ", event.title]
    return Content.assemble(*parts)


class TraceView(Static):
    """Shows `trace_content` for the message given to `show`."""

    DEFAULT_CSS = """
    TraceView {
        height: auto;
        padding: 0 1;
        border: round $accent;
        border-title-color: $accent;
    }
    """

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("select a message to trace it", name=name, id=id, classes=classes)
        self.message_id: str | None = None
        self.border_title = "trace"

    def show(self, result: BuildResult, message_id: str) -> None:
        """Trace `message_id` in `result`."""
        self.message_id = message_id
        self.update(trace_content(result, message_id))
