"""A line-API list of wire rows: only the lines on screen are drawn, so 10,000 messages scroll freely."""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from typing import ClassVar

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

from playground.app.views import WireRow, line_starts, position_of, tokens_long

ROLES = ("system", "user", "assistant", "tool")
MARKS = ("fence", "summary", "compressed", "degraded", "truncated", "reminder", "assembled")


class WireList(ScrollView, can_focus=True):
    """Two lines per card (header, first line of text), a third for a reminder; one per dropped message."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor(-1)", "Previous", show=False, id="wire.up", tooltip="Previous message"),
        Binding("down", "cursor(1)", "Next", show=False, id="wire.down", tooltip="Next message"),
        Binding("pageup", "page(-1)", "Page up", show=False, id="wire.page_up", tooltip="One screen up"),
        Binding(
            "pagedown", "page(1)", "Page down", show=False, id="wire.page_down", tooltip="One screen down"
        ),
        Binding("home", "first", "First", show=False, id="wire.first", tooltip="First message"),
        Binding("end", "last", "Last", show=False, id="wire.last", tooltip="Last message"),
        Binding("enter", "select", "Select", id="wire.select", tooltip="Select this message"),
    ]

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        *(f"wire-view--role-{r}" for r in ROLES),
        *(f"wire-view--mark-{m}" for m in MARKS),
        "wire-view--header",
        "wire-view--dropped",
        "wire-view--cursor",
        "wire-view--muted",
    }
    """`wire-view--role-<role>`, `wire-view--mark-<mark>`, header, dropped, cursor and muted."""

    cursor: reactive[int] = reactive(0, init=False)
    """Index of the highlighted row."""

    class RowHighlighted(Message):
        def __init__(self, row: WireRow | None) -> None:
            super().__init__()
            self.row = row

    class RowSelected(Message):
        def __init__(self, row: WireRow) -> None:
            super().__init__()
            self.row = row

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.rows: Sequence[WireRow] = []
        self._starts: list[int] = [0]
        # Drawn lines by what they show (the row, its line, width, cursor, focus and theme), not by position:
        # another step or policy moves most rows but changes few, and drawing a line costs ~0.5 ms.
        self._cache: LRUCache[tuple[WireRow, int, int, bool, bool, str], Strip] = LRUCache(1024)

    def set_rows(self, rows: Sequence[WireRow]) -> None:
        """Replace the rows, keeping the cursor on the same message when it is still there. Rows made as
        they are read (`WireRows`) are read only where the list is drawn."""
        if isinstance(rows, list) and rows == self.rows:
            return  # an unchanged wire (another step or policy with the same result): nothing to draw
        current = self.highlighted
        self.rows = rows
        self._starts = line_starts(rows)
        self._set_virtual_height(self._starts[-1])
        found = position_of(rows, current.message_id) if current is not None and current.message_id else None
        self.set_reactive(WireList.cursor, found or 0)
        self.refresh()
        self._show_cursor()

    def _set_virtual_height(self, height: int) -> None:
        """Another step or policy changes the number of lines: the screen is re-laid out only when the
        scrollbar appears or goes (a layout pass repaints every widget, ~40 ms on a long session)."""
        size = Size(self.size.width, height)
        if self.size.height == 0 or (height > self.container_size.height) != self.show_vertical_scrollbar:
            self.virtual_size = size
            return
        self.set_reactive(WireList.virtual_size, size)
        if self.show_vertical_scrollbar:
            self.vertical_scrollbar.window_virtual_size = height
            self.vertical_scrollbar.refresh()
        self.scroll_y = self.validate_scroll_y(self.scroll_y)

    def _show_cursor(self) -> None:
        if self.rows:
            top, height = self._starts[self.cursor], self.rows[self.cursor].height
            self.scroll_to_region(Region(0, top, 1, height), animate=False, x_axis=False)
        self.post_message(self.RowHighlighted(self.highlighted))

    @property
    def highlighted(self) -> WireRow | None:
        return self.rows[self.cursor] if 0 <= self.cursor < len(self.rows) else None

    def validate_cursor(self, cursor: int) -> int:
        return min(max(cursor, 0), max(len(self.rows) - 1, 0))

    def watch_cursor(self) -> None:
        self.refresh()  # lines are cached, so only the two changed rows are drawn again
        self._show_cursor()

    def row_at(self, line: int) -> int:
        """Index of the row drawn on virtual line `line`."""
        return bisect_right(self._starts, line) - 1

    def action_cursor(self, delta: int) -> None:
        self.cursor += delta

    def action_page(self, direction: int) -> None:
        line = self._starts[self.cursor] + direction * max(1, self.size.height)
        self.cursor = self.row_at(min(max(line, 0), self._starts[-1] - 1))

    def action_first(self) -> None:
        self.cursor = 0

    def action_last(self) -> None:
        self.cursor = len(self.rows) - 1

    def action_select(self) -> None:
        if (row := self.highlighted) is not None:
            self.post_message(self.RowSelected(row))

    def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not self.rows:
            return
        line = offset.y + self.scroll_offset.y
        if line < self._starts[-1]:
            self.cursor = self.row_at(line)
            self.action_select()

    def render_line(self, y: int) -> Strip:
        line = y + self.scroll_offset.y
        width = self.size.width
        if line >= self._starts[-1] or width <= 0:
            return Strip.blank(width, self.rich_style)
        index = self.row_at(line)
        row, sub, current = self.rows[index], line - self._starts[index], index == self.cursor
        key = (row, sub, width, current, self.has_focus, self.app.theme)
        if key not in self._cache:
            text = self._row_line(row, sub, width)
            if current:  # only the background, so the role and mark colours stay readable
                text.stylize(Style(bgcolor=self._style("cursor").bgcolor))
            self._cache[key] = Strip(text.render(self.app.console), text.cell_len).crop_extend(
                0, width, self.rich_style
            )
        return self._cache[key].apply_offsets(0, line)

    def _style(self, name: str) -> Style:
        return self.get_component_rich_style(f"wire-view--{name}")

    def role_style(self, role: str) -> Style:
        return self._style(f"role-{role}" if role in ROLES else "muted")

    def mark_style(self, mark: str) -> Style:
        kind = mark.split(":")[0]
        return self._style(f"mark-{kind}" if kind in MARKS else "muted")

    def _row_line(self, row: WireRow, sub: int, width: int) -> Text:
        if row.kind == "dropped":
            return self._dropped_line(row, width)
        role = self.role_style(row.role)
        text = Text("▌", role, no_wrap=True, end="")
        if sub == 0:
            text.append(f" {row.role}", role + Style(bold=True))
            details = [row.type] + ([f"{tokens_long(row.tokens)} tok"] if row.tokens is not None else [])
            text.append(" · " + " · ".join(details), self._style("header"))
            for mark in row.marks:
                text.append(f" {mark.upper()}", self.mark_style(mark))
            if len(row.source_ids) > 1:
                text.append(f" · carries {len(row.source_ids)}", self._style("muted"))
            if row.message_id:
                text.append(f" · {row.message_id}", self._style("muted"))
        elif sub == 1:
            text.append(" " + (first_line(row.text, width) or "(empty)"))
        else:
            reminder = row.reminder.replace("<system-reminder>", "").replace("</system-reminder>", "")
            text.append(" ⟪reminder⟫ " + first_line(reminder, width), self._style("mark-reminder"))
        text.truncate(width, overflow="ellipsis")
        return text

    def _dropped_line(self, row: WireRow, width: int) -> Text:
        target = f" → {row.replaced_by}" if row.replaced_by else ""
        label = f"┄ dropped · {row.role} {row.type} {row.message_id} · {row.reason}{target} "
        text = Text(label.ljust(width, "┄"), self._style("dropped"), no_wrap=True, end="")
        text.truncate(width, overflow="ellipsis")
        return text


def first_line(text: str, width: int) -> str:
    """The first non-blank line of `text`, cut near `width` (the caller adds the ellipsis)."""
    return text.lstrip()[: width * 4].partition("\n")[0][: width + 1]
