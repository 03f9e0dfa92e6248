"""`serve` starts each browser tab's app with the inputs the terminal was given."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

from playground.web.serve import app_command


def test_the_tab_command_carries_every_input_file_and_the_conversation(tmp_path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    files = {"--policy": "p.yaml", "--fences": None, "--calibration": "cal.yaml", "--tools": "tools.json",
             "--system-prompt": None}  # fmt: skip
    command = app_command(Path("/s/session.jsonl"), "seed", "en", files, 2)
    assert shlex.split(command) == [
        sys.executable, "-m", "playground.cli", "/s/session.jsonl", "--defaults", "seed", "--copy", "en",
        "--policy", str(tmp_path / "p.yaml"), "--calibration", str(tmp_path / "cal.yaml"),
        "--tools", str(tmp_path / "tools.json"), "--conversation", "2",
    ]  # fmt: skip
