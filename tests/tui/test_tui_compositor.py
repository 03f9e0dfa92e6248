"""The main screen's compositor (playground/tui/compositor.py) draws a partial update from the widgets under
a changed region only, and writes exactly what Textual's own compositor would."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console
from rich.segment import Segment
from textual._compositor import ChopsUpdate, Compositor

from playground.inputs import load_inputs
from playground.tui.app import PlaygroundApp, make_app
from playground.tui.compositor import ChangedOnlyCompositor
from tests.tui.test_tui_app import settle
from tests.tui_session import write_session


def written(update: ChopsUpdate | None) -> list[Segment]:
    if update is None:
        return []
    console = Console(width=160, height=48, force_terminal=True, color_system="truecolor")
    return list(update.__rich_console__(console, console.options))


def test_partial_updates_write_what_textual_would_from_fewer_widgets(tmp_path: Path, monkeypatch) -> None:
    compared: list[tuple[int, bool, int, int]] = []  # regions, same output, widgets drawn: ours, Textual's
    ours = ChangedOnlyCompositor.render_partial_update

    def both(self: ChangedOnlyCompositor) -> ChopsUpdate | None:
        regions = set(self._dirty_regions)
        if not regions:
            return ours(self)
        drawn: list[int] = []
        get_renders = Compositor._get_renders

        def counted(compositor: Compositor, crop=None):  # type: ignore[no-untyped-def]
            renders = list(get_renders(compositor, crop))
            drawn.append(len(renders))
            return renders

        monkeypatch.setattr(Compositor, "_get_renders", counted)
        textuals = Compositor.render_partial_update(self)  # every widget in the changed regions' box
        self._dirty_regions.update(regions)
        self._cuts = None  # made afresh while ours draws: they must still be every widget's
        update = ours(self)
        monkeypatch.setattr(Compositor, "_get_renders", get_renders)
        kept_cuts, self._cuts = self._cuts, None
        compared.append((len(regions), written(update) == written(textuals), drawn[1], drawn[0]))
        assert kept_cuts == self.cuts
        return update

    monkeypatch.setattr(ChangedOnlyCompositor, "render_partial_update", both)

    async def main(app: PlaygroundApp) -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(app, pilot)
            app.main.action_focus_field("budget.maxTokens")
            for key in ("left", "left", "left_square_bracket", "d", "right"):
                await pilot.press(key)
                await app.workers.wait_for_complete()
                await pilot.pause(0.15)

    asyncio.run(main(make_app(load_inputs(write_session(tmp_path)))))
    assert compared and all(same for _, same, _, _ in compared)
    drawn = [(ours, textuals) for _, _, ours, textuals in compared]
    assert any(ours * 2 < textuals for ours, textuals in drawn)  # an edit changes distant regions
    assert all(ours <= textuals for ours, textuals in drawn)
