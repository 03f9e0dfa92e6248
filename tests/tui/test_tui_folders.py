"""A transcript folder opens in the real app like a file: the Cline task below, by its root."""

from __future__ import annotations

from pathlib import Path

from textual.pilot import Pilot

from playground.tui.app import PlaygroundApp
from playground.tui.widgets.timeline import Timeline
from tests.tui.test_tui_app import run

TASK = Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "cline" / "1767225600000"


def test_a_cline_task_folder_opens_at_its_last_step() -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        main = app.main
        assert main.result is not None and main.result.error is None
        assert len(main.query_one(Timeline).points) == 4  # one step per recorded model call
        top = str(main.query_one("TopBar").render())
        assert top.startswith("linn-playground ─ Add a --verbose flag to src/app.py (13 msgs)")

    run(TASK, scenario)
