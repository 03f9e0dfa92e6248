"""The notebook opens a transcript folder by its root, as the CLI and the TUI do."""

from __future__ import annotations

from pathlib import Path

from playground.notebook import Playground

SESSION = Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "copilot-cli"
FOLDER = SESSION / "0cb916db-26aa-40f2-86b5-1ba81b225fd2"


def test_a_copilot_session_folder_opens_by_its_root() -> None:
    playground = Playground(str(FOLDER))
    messages = playground.workspace.messages
    assert len(messages) == 11 and messages[-1].content == "3 passed, 1 failed."
    origin = playground.workspace.header.to_dict()["importedFrom"]
    assert origin == {"file": str(FOLDER), "format": "copilot-cli"}
