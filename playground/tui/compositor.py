"""Textual's compositor, made to draw a partial update from the widgets under a changed region only.

Textual draws a partial update from every widget that overlaps the bounding box of the changed regions.
An edit changes the slider (left), the wire (middle), the budget (right) and the events (bottom): their
box is the whole screen, so each edit drew all ~90 widgets of the main screen, most of them unchanged
(the twelve policy groups alone ~5 ms). Only the spans of the changed regions are written to the terminal,
so a widget that overlaps none of them contributes nothing to the update: skipping it changes no output
(`tests/tui/test_tui_compositor.py` compares the two on real edits).

Relies on `Compositor._get_renders(crop)` reading `crop` only as `if crop` and `crop.overlaps(clip)`
(textual 8.2.8, pinned in pyproject.toml).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, cast

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip


class _AnyOf:
    """A crop that overlaps what any of the changed regions overlaps."""

    __slots__ = ("_regions",)

    def __init__(self, regions: list[Region]) -> None:
        self._regions = regions

    def __bool__(self) -> bool:
        return True

    def overlaps(self, other: Region) -> bool:
        return any(region.overlaps(other) for region in self._regions)


class ChangedOnlyCompositor(Compositor):
    def __init__(self) -> None:
        super().__init__()
        self._changed: list[Region] | None = None  # the changed regions, during a partial update

    def render_partial_update(self) -> ChopsUpdate | None:
        self._changed = list(self._dirty_regions)
        try:
            return super().render_partial_update()
        finally:
            self._changed = None

    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        if self._changed and crop is not None:
            crop = cast(Any, _AnyOf(self._changed))
        return super()._get_renders(crop)
