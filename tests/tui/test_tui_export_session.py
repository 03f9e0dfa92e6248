"""The export screen writes the session, or the shown step's wire, for other tools (driven with Pilot);
the session file imports back to the same messages."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from textual.pilot import Pilot
from textual.widgets import RadioButton

from engine.importers import import_file
from engine.wire import anthropic_turns
from playground.app.inputs import load_inputs
from playground.tui.app import PlaygroundApp, make_app
from playground.tui.screens.export import ExportScreen
from playground.tui.screens.main import MainScreen
from tests.tui_session import write_session

SIZE = (160, 48)


async def _settle(app: PlaygroundApp, pilot: Pilot) -> None:
    for _ in range(4):
        await app.workers.wait_for_complete()
        await pilot.pause()


async def _export(app: PlaygroundApp, pilot: Pilot, kind: str) -> None:
    await pilot.press("ctrl+s")
    await pilot.pause()
    assert isinstance(app.screen, ExportScreen)
    next(r for r in app.screen.query(RadioButton) if r.name == kind).value = True
    await pilot.pause()
    await pilot.press("enter")
    await pilot.pause()
    assert isinstance(app.screen, MainScreen)


def test_the_session_and_the_shown_wire_are_written_for_other_tools(tmp_path: Path) -> None:
    session = write_session(tmp_path)
    app = make_app(load_inputs(session))

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await _settle(app, pilot)
            await _export(app, pilot, "session-otel")
            await _export(app, pilot, "wire-anthropic")

    asyncio.run(main())
    back = import_file(tmp_path / "sales.otel.json")
    assert [m.to_dict() for m in back.messages] == [m.to_dict() for m in app.workspace.messages]
    request = json.loads((tmp_path / "sales.step.anthropic.json").read_text())
    wire = app.workspace._shown_wire()
    assert len(request["messages"]) == len(anthropic_turns(wire))
    assert request["system"] == wire[0]["content"]
