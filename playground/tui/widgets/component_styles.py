"""A widget's component styles as Rich styles, kept across repaints.

Textual forgets its copy of a widget's component styles on every `refresh()`, and making one again costs
0.1-0.3 ms (it blends the backgrounds of every ancestor). The budget bar, the slider and the timeline ask
for several on every edit, after a refresh. A kept style is used as long as Textual's component styles
object is the same one: Textual makes new ones whenever it restyles the widget or an ancestor (a theme, a
class, focus), so a kept style is never stale.
"""

from __future__ import annotations

from rich.style import Style
from textual.widget import Widget


class ComponentStyles:
    """`styles(name)` is `widget.get_component_rich_style(name)`, kept until the widget is restyled."""

    def __init__(self, widget: Widget) -> None:
        self._widget = widget
        self._kept: dict[str, tuple[object, Style]] = {}

    def __call__(self, name: str) -> Style:
        source = self._widget._component_styles.get(name)  # replaced by Textual whenever it restyles
        kept = self._kept.get(name)
        if kept is None or kept[0] is not source:
            kept = self._kept[name] = (source, self._widget.get_component_rich_style(name))
        return kept[1]
