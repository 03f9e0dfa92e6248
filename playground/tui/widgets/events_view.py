"""What the build did: its events (compression, pruning, summarization, ...) and the reminders it added."""

from __future__ import annotations

from textual import on
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine import BuildResult, Event

KIND_STYLES = {
    "summarization": "$primary bold",
    "checkpoint": "$secondary bold",
    "reminder": "$accent bold",
    "error": "$error bold",
    "warning": "$warning bold",
    "provider": "$error bold",
}


def event_prompt(event: Event) -> Content:
    count = len(event.message_ids)
    suffix = f" · {count} message{'s' if count != 1 else ''}" if count else ""
    style = KIND_STYLES.get(event.kind, "$text-accent bold")
    return Content.assemble((event.kind, style), "  ", event.title, (suffix, "$text-muted"))


def reminder_prompt(rule_id: str, text: str) -> Content:
    return Content.assemble(("reminder", KIND_STYLES["reminder"]), "  ", (rule_id, "bold"), ": ", text)


class EventsView(OptionList):
    """One line per `Event`, per reminder rule that fired, and per warning; `show(result)` refills it."""

    DEFAULT_CSS = """
    EventsView {
        height: auto;
        max-height: 8;
        border: none;
        padding: 0;
    }
    """

    class EventSelected(Message):
        """Posted when an event line is selected; the app may trace its messages."""

        def __init__(self, events_view: EventsView, event: Event) -> None:
            super().__init__()
            self.events_view = events_view
            self.event = event

        @property
        def control(self) -> EventsView:
            return self.events_view

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes, compact=True)
        self._events: tuple[Event, ...] = ()

    def show(self, result: BuildResult, provider_problems: tuple[str, ...] = ()) -> None:
        """List `result`'s events, reminders and warnings; first, in red, why a provider would reject its
        wire (`result.provider_problems`, passed in as text: the caller computes them once)."""
        self._events = result.events
        options: list[Option] = [
            Option(event_prompt(e), id=f"event-{i}") for i, e in enumerate(result.events)
        ]
        options += [
            Option(reminder_prompt(rule, result.reminder.texts.get(rule, "")), id=f"reminder-{rule}")
            for rule in result.reminder.hit_rule_ids
        ]
        options += [
            Option(Content.assemble(("warning", KIND_STYLES["warning"]), "  ", w)) for w in result.warnings
        ]
        options[:0] = [
            Option(Content.assemble(("provider", KIND_STYLES["provider"]), "  ", (p, "$error")))
            for p in provider_problems
        ]
        if result.error is not None:
            failure = f"{result.error.code}: {result.error.message}"
            options.insert(0, Option(Content.assemble(("error", KIND_STYLES["error"]), "  ", failure)))
        if not options:
            options = [Option(Content.styled("no events", "$text-muted"), disabled=True)]
        self.set_options(options)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or ""
        if option_id.startswith("event-"):
            self.post_message(self.EventSelected(self, self._events[int(option_id.removeprefix("event-"))]))
