"""Textual's compositor, made to draw a partial update from the widgets under a changed region only.

Textual draws a partial update from every widget whose clip (the visible area of its container) overlaps
the bounding box of the changed regions. An edit changes the slider (left), the wire (middle), the budget
(right) and the events (bottom): their box is the whole screen, so each edit drew all ~90 widgets of the
main screen, most of them unchanged; and as the clip of a field is the whole policy panel, a change to one
slider drew all twelve policy groups. Only the spans of the changed regions are written to the terminal,
so a widget whose visible area overlaps none of them contributes nothing to the update: skipping it
changes no output (`tests/tui/test_tui_compositor.py` compares the two on real edits).

Relies on `Compositor._get_renders` reading the widgets to draw from `visible_widgets` (textual 8.2.8,
pinned in pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget


class ChangedOnlyCompositor(Compositor):
    def __init__(self) -> None:
        super().__init__()
        self._changed: list[Region] | None = None  # the changed regions, during a partial update
        self._drawing = False  # its widgets being drawn: `visible_widgets` leaves out the unchanged ones

    def render_partial_update(self) -> ChopsUpdate | None:
        self._changed = list(self._dirty_regions)
        try:
            return super().render_partial_update()
        finally:
            self._changed = None

    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        if not self._changed:
            return super()._get_renders(crop)
        # Drawn here, at once, while `visible_widgets` leaves out the unchanged ones; everything else that
        # reads it (the line cuts the compositor caches, mouse hits) must see every widget.
        self._drawing = True
        try:
            return list(super()._get_renders(crop))
        finally:
            self._drawing = False

    @property
    def visible_widgets(self) -> dict[Widget, tuple[Region, Region]]:
        widgets = super().visible_widgets
        if not self._drawing:
            return widgets
        changed = self._changed or []
        return {
            widget: (region, clip)
            for widget, (region, clip) in widgets.items()
            if any(area.overlaps(region.intersection(clip)) for area in changed)
        }
