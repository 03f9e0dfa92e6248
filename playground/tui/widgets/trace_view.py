"""The trace explorer panel: the fate of one message, and the events that touched it."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from engine.result import BuildResult, Decision, Event
from playground.tui.widgets._format import tokens_long


def touching_events(result: BuildResult, message_id: str) -> list[Event]:
    """Events naming the message, or naming the message that now carries it."""
    decision = result.decision_for(message_id)
    ids = {message_id} | ({decision.replaced_by} if decision and decision.replaced_by else set())
    return [e for e in result.events if ids.intersection(e.message_ids)]


def carriers(result: BuildResult, message_id: str) -> list[int]:
    """Wire indexes of the cards that carry the message."""
    return [c.index for c in result.cards if message_id in c.source_ids or c.message_id == message_id]


def decision_rows(decision: Decision) -> list[tuple[str, str]]:
    rows = [
        ("fate", "kept" if decision.kept else "dropped"),
        ("message", f"{decision.role} · {decision.type}"),
        ("index", "created by the build" if decision.index < 0 else str(decision.index)),
        ("stage", decision.stage),
        ("phase", decision.phase or "–"),
        ("reason", decision.reason),
        ("strategy", decision.strategy or "–"),
        ("tokens", tokens_long(decision.tokens)),
        ("wire index", "–" if decision.wire_index is None else str(decision.wire_index)),
    ]
    if decision.replaced_by:
        rows.append(("replaced by", decision.replaced_by))
    if decision.note:
        rows.append(("note", decision.note))
    return rows


def trace_content(result: BuildResult, message_id: str) -> Content:
    """The panel's text for one message of `result`."""
    decision = result.decision_for(message_id)
    if decision is None:
        return Content.assemble(("TRACE ", "bold"), message_id, ("\nno decision recorded for it", "$warning"))
    fate = "$success" if decision.kept else "$error"
    parts: list[Content | str | tuple[str, str]] = [("TRACE ", "bold"), (message_id, f"bold {fate}")]
    for label, value in decision_rows(decision):
        style = fate if label == "fate" else ""
        parts += [f"\n{label:<12}", (value, style) if style else value]
    if cards := carriers(result, message_id):
        parts += [f"\n{'on the wire':<12}", ", ".join(f"#{i}" for i in cards)]
    events = touching_events(result, message_id)
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
