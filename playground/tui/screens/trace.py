"""The trace explorer for one message: its decision, the events that touched it, the effective policy."""

from __future__ import annotations

import json
from typing import Any, ClassVar

import yaml
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from engine import BuildResult
from playground.tui.widgets import TraceView


def trace_events(result: BuildResult, message_id: str) -> list[dict[str, Any]]:
    """The ContextTrace's message-decision events for the message (when the trace is on)."""
    events = (result.trace or {}).get("events", [])
    return [e for e in events if e.get("kind") == "message-decision" and e.get("messageId") == message_id]


def policy_text(result: BuildResult, changed: str) -> str:
    full = yaml.safe_dump(result.effective_policy, sort_keys=False, allow_unicode=True)
    return f"# changed from the defaults\n{changed or '{}'}\n# effective policy\n{full}"


class TraceScreen(ModalScreen[None]):
    """Left: the message's fate and events. Right: the policy the build ran with."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,t", "dismiss", "Close", id="trace.close", tooltip="Back to the wire view"),
    ]

    DEFAULT_CSS = """
    TraceScreen {
        align: center middle;
        & > Horizontal { width: 92%; height: 85%; border: thick $accent; background: $surface; }
        & .trace--left { width: 1fr; }
        & .trace--events { color: $text-muted; padding: 0 1; height: auto; }
        & .trace--policy { width: 1fr; border-left: solid $panel-lighten-2; padding: 0 1; }
    }
    """

    def __init__(self, result: BuildResult, message_id: str, changed_policy: str) -> None:
        super().__init__()
        self.result, self.message_id, self.changed_policy = result, message_id, changed_policy

    def compose(self) -> ComposeResult:
        view = TraceView()
        view.show(self.result, self.message_id)
        events = trace_events(self.result, self.message_id)
        lines = [json.dumps(e, ensure_ascii=False) for e in events]
        text = "CONTEXT TRACE\n" + ("\n".join(lines) if lines else "(trace off: contextTrace.enabled)")
        with Horizontal():
            with VerticalScroll(classes="trace--left"):
                yield view
                yield Static(text, classes="trace--events", markup=False)
            with VerticalScroll(classes="trace--policy"):
                yield Static(policy_text(self.result, self.changed_policy), markup=False)

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss()
