"""What the model receives: the wire messages as cards, dropped messages in place, and one card in full."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.widgets import Static

from engine import BuildResult, to_anthropic
from playground.app.views import WireRow, anthropic_rows, tokens_long, wire_rows
from playground.tui.widgets.wire_list import WireList

DETAIL_CHARS = 20_000  # beyond this the detail pane shows a count, not the text


class WireView(Vertical):
    """A `WireList` of the build's wire cards above a pane with the highlighted card in full.

    Call `show(result)` after each build: the rows are replaced, the widgets stay mounted.
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("d", "toggle_dropped", "Dropped", id="wire.dropped", tooltip="Show or hide dropped messages"),
        Binding("w", "toggle_shape", "Wire shape", id="wire.shape", tooltip="OpenAI or Anthropic shape"),
    ]

    DEFAULT_CSS = """
    WireView {
        height: 1fr;
        & > .wire-view--title { height: 1; color: $text-muted; text-style: bold; }
        & > WireList { height: 2fr; overflow-x: hidden; }
        & > WireList:focus { background-tint: $foreground 3%; }
        & > VerticalScroll { height: 1fr; border-top: solid $panel-lighten-2; }
        & WireList > .wire-view--role-system { color: $secondary-lighten-2; }
        & WireList > .wire-view--role-user { color: $primary-lighten-2; }
        & WireList > .wire-view--role-assistant { color: $success; }
        & WireList > .wire-view--role-tool { color: $warning; }
        & WireList > .wire-view--mark-fence { color: $accent; text-style: bold; }
        & WireList > .wire-view--mark-summary { color: $primary-lighten-3; text-style: bold; }
        & WireList > .wire-view--mark-compressed { color: $warning-lighten-2; text-style: bold; }
        & WireList > .wire-view--mark-degraded { color: $error-lighten-2; text-style: bold; }
        & WireList > .wire-view--mark-truncated { color: $error; text-style: bold; }
        & WireList > .wire-view--mark-reminder { color: $accent-lighten-2; text-style: italic; }
        & WireList > .wire-view--mark-assembled { color: $secondary-lighten-3; }
        & WireList > .wire-view--header { color: $text; }
        & WireList > .wire-view--dropped { color: $text-disabled; text-style: italic; }
        & WireList > .wire-view--cursor { background: $accent 30%; }
        & WireList > .wire-view--muted { color: $text-muted; }
    }
    """

    show_dropped: reactive[bool] = reactive(False, init=False)
    """Whether dropped messages are listed in place, dimmed, with their reason."""
    shape: reactive[str] = reactive("openai", init=False)
    """`openai` (the cards) or `anthropic` (the payload given to `show`)."""

    class MessageSelected(Message):
        """Posted when a card or a dropped line is selected (enter or click)."""

        def __init__(self, wire_view: WireView, message_id: str) -> None:
            super().__init__()
            self.wire_view = wire_view
            self.message_id = message_id

        @property
        def control(self) -> WireView:
            return self.wire_view

    class ShapeChanged(Message):
        """Posted when the user switches the wire shape, so the app can supply the other payload."""

        def __init__(self, wire_view: WireView, shape: str) -> None:
            super().__init__()
            self.wire_view = wire_view
            self.shape = shape

        @property
        def control(self) -> WireView:
            return self.wire_view

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self._result: BuildResult | None = None
        self._anthropic: dict[str, Any] | None = None
        self._dropped: int | None = None  # the shown build's count of dropped messages (None: on its way)
        self._title = Static("WIRE · no build yet", classes="wire-view--title")
        self._list = WireList()
        self._detail = Static()
        self._detail_row: WireRow | None = None  # what the detail pane shows (re-wrapping it costs ~50 ms)

    def compose(self) -> ComposeResult:
        yield self._title
        yield self._list
        with VerticalScroll():
            yield self._detail

    def show(
        self,
        result: BuildResult,
        *,
        anthropic: dict[str, Any] | None = None,
        dropped: int | None = None,
        wait_for_count: bool = False,
    ) -> None:
        """Render a new build (and, optionally, its Anthropic-shaped payload: made here when the Anthropic
        shape is shown without it). `dropped`: its count of dropped messages, when the caller made it; else
        counted here, or with `wait_for_count` said to be on its way (`set_checked` brings it)."""
        self._result, self._anthropic = result, anthropic
        self._dropped = dropped if dropped is not None or wait_for_count else result.dropped_count()
        self._refresh_rows()

    def set_checked(self, anthropic: dict[str, Any] | None, dropped: int | None) -> None:
        """The shown build's Anthropic-shaped payload and count of dropped messages, made after it was shown
        (`ProvidersChecked`)."""
        self._anthropic = anthropic
        counted, self._dropped = self._dropped is None and dropped is not None, dropped
        if self.shape == "anthropic":
            self._refresh_rows()
        elif counted and self._result is not None:
            self._title.update(self._title_text(self._result, self._list.rows), layout=False)

    @property
    def highlighted_message_id(self) -> str | None:
        row = self._list.highlighted
        return row.message_id if row else None

    def action_toggle_dropped(self) -> None:
        self.show_dropped = not self.show_dropped

    def action_toggle_shape(self) -> None:
        self.shape = "anthropic" if self.shape == "openai" else "openai"

    def watch_show_dropped(self) -> None:
        self._refresh_rows()

    def watch_shape(self, shape: str) -> None:
        self._refresh_rows()
        self.post_message(self.ShapeChanged(self, shape))

    def _refresh_rows(self) -> None:
        result = self._result
        if result is None:
            return
        if self.shape == "anthropic":
            if self._anthropic is None:
                self._anthropic = to_anthropic(list(result.wire))
            rows = anthropic_rows(self._anthropic)
        else:
            rows = wire_rows(result, self.show_dropped)
        self._list.set_rows(rows)
        self._title.update(self._title_text(result, rows), layout=False)  # one line, always

    def _title_text(self, result: BuildResult, rows: Sequence[WireRow]) -> str:
        dropped = "counting" if self._dropped is None else self._dropped
        shown = "shown" if self.show_dropped else "hidden"
        cards = sum(1 for r in rows if r.kind != "dropped") if self.show_dropped else len(rows)
        tokens = tokens_long(result.tokens.final_tokens)
        return f"WIRE {self.shape} · {cards} messages · {tokens} tok · {dropped} dropped ({shown})"

    @on(WireList.RowHighlighted)
    def _highlighted(self, event: WireList.RowHighlighted) -> None:
        event.stop()
        if event.row == self._detail_row and event.row is not None:
            return  # the same card after a rebuild: leave the pane alone
        self._detail_row = event.row
        self._detail.update(self._detail_text(event.row) if event.row else "")

    @on(WireList.RowSelected)
    def _selected(self, event: WireList.RowSelected) -> None:
        event.stop()
        if event.row.message_id is not None:
            self.post_message(self.MessageSelected(self, event.row.message_id))

    def _detail_text(self, row: WireRow) -> Text:
        style = self._list.get_component_rich_style
        role = self._list.role_style(row.role) if row.kind != "dropped" else style("wire-view--dropped")
        head = [row.role, row.type] + ([f"{tokens_long(row.tokens)} tok"] if row.tokens is not None else [])
        text = Text(" · ".join(head), role)
        for mark in row.marks:
            text.append(f" {mark.upper()}", self._list.mark_style(mark))
        facts = [f"id {row.message_id}"] if row.message_id else []
        if row.kind == "dropped":
            facts.append(f"dropped: {row.reason}" + (f" → {row.replaced_by}" if row.replaced_by else ""))
        if len(row.source_ids) > 1 or (row.source_ids and row.source_ids[0] != row.message_id):
            facts.append("carries " + ", ".join(row.source_ids))
        text.append("\n" + " · ".join(facts) + "\n\n" if facts else "\n\n", style("wire-view--muted"))
        body = row.text
        if len(body) > DETAIL_CHARS:
            body = body[:DETAIL_CHARS] + f"\n… {len(body) - DETAIL_CHARS} more characters"
        text.append(body)
        if row.reminder:
            text.append("\n── system reminder ──\n", style("wire-view--muted"))
            text.append(row.reminder, style("wire-view--mark-reminder"))
        return text
