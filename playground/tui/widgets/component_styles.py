"""A widget's component styles as Rich styles, kept across repaints.

Textual forgets its copy of a widget's component styles on every `refresh()`, and making one again costs
0.1-0.3 ms (it blends the backgrounds of every ancestor). The budget bar, the slider and the timeline ask
for several on every edit, after a refresh. A kept style is used until Textual restyles the widget: its
public `notify_style_update()` hook (called whenever its styles are applied again: a theme, a class, focus,
an ancestor's change) clears them (`TextLines` calls `clear`), so a kept style is never stale.
"""

from __future__ import annotations

from rich.style import Style
from textual.widget import Widget


class ComponentStyles:
    """`styles(name)` is `widget.get_component_rich_style(name)`, kept until `clear()` (a restyle)."""

    def __init__(self, widget: Widget) -> None:
        self._widget = widget
        self._kept: dict[str, Style] = {}

    def __call__(self, name: str) -> Style:
        kept = self._kept.get(name)
        if kept is None:
            kept = self._kept[name] = self._widget.get_component_rich_style(name)
        return kept

    def clear(self) -> None:
        self._kept.clear()
