"""Widgets drawn from lines of Rich `Text` through Textual's line API.

Textual paints a widget's `render()` through its Content pipeline (convert, wrap, format, resolve every
span's style), ~1-3 ms for the budget bar, on every edit. A `TextLines` widget gives its lines instead
(`text_lines()`); each is turned into segments by Rich once per refresh, cropped to the content width,
never wrapped (Textual pads a short line with the background, as it does a rendered one): ~0.2 ms. The
cells are those the Content pipeline draws, character and style (`test_tui_widgets.py` compares them).
"""

from __future__ import annotations

from typing import Any

from rich.style import Style
from rich.text import Text
from textual.strip import Strip
from textual.widget import Widget

from playground.tui.widgets.component_styles import ComponentStyles


class TextLines(Widget):
    """Subclasses give `text_lines()`; a `refresh()`, a restyle (its own or an ancestor's: theme, class,
    focus) or a new width makes them again when next drawn. `component_style(name)` gives their spans'
    styles, kept across repaints (`ComponentStyles`)."""

    _strips: tuple[int, Style, list[Strip]] | None = None  # the width, base style and lines drawn

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.component_style = ComponentStyles(self)

    def text_lines(self) -> list[Text]:
        raise NotImplementedError

    def refresh(self, *regions: Any, **kwargs: Any) -> TextLines:
        self._strips = None
        return super().refresh(*regions, **kwargs)

    def notify_style_update(self) -> None:
        self._strips = None
        self.component_style.clear()
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        width = self.content_size.width
        if self._strips is None or self._strips[0] != width:
            base, console = self.rich_style, self.app.console  # rich_style walks every ancestor: once
            lines = []
            for row, line in enumerate(self.text_lines()):
                # Rich leaves a line's own style off the segments when it has no spans: put it under them.
                under = base + console.get_style(line.style)
                strip = Strip(line.render(console, end="")).apply_style(under)
                lines.append(strip.crop(0, width).apply_offsets(0, row))
            self._strips = (width, base, lines)
        _, base, strips = self._strips
        return strips[y] if y < len(strips) else Strip.blank(width, base)
