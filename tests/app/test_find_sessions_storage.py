"""`sweep` and `calibrate` take an OpenCode storage root as one transcript, not as a folder of files."""

from __future__ import annotations

from pathlib import Path

from playground.app.inputs import find_sessions

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions"


def test_a_storage_root_is_one_session_and_other_folders_are_walked() -> None:
    storage = DATA / "opencode" / "storage"
    sessions, skipped = find_sessions([storage, DATA / "pi"])
    assert sessions == [
        storage,
        DATA / "pi" / "large-session.jsonl",
        DATA / "pi" / "v3-branch-compaction.jsonl",
    ]
    assert skipped == [DATA / "pi" / "LICENSE.badlogic-pi-mono"]
