"""OpenCode storage folders, opened by their root: a fixture folder written from OpenCode's message-v2
schema (no public storage folder was found), counted by hand; and the folder walk's bounds."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from engine.importers import import_file
from engine.safe_input import InputError
from playground.cli.main import main

ROOT = Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "opencode" / "storage"


def test_the_most_recent_session_as_opencode_sends_it() -> None:
    result = import_file(ROOT)
    assert result.format == "opencode" and result.conversations == 2 and result.unpaired == []
    assert result.title == "Fix the failing date test"
    assert [m.type for m in result.messages] == [
        "user_input",
        "thought",
        "tool_calls",
        "tool_output",
        "tool_output",
        "tool_calls",
        "tool_output",
        "user_input",
        "history_summary",
        "tool_calls",
        "tool_output",
    ]
    contents = [m.content for m in result.messages]
    assert contents[0].startswith("test_dates.py fails since yesterday, fix it\n\nCalled the Read tool")
    assert result.messages[0].meta("generated") == "synthetic"
    assert contents[4] == "[Old tool result content cleared]"  # a compacted result
    assert result.messages[6].meta("is_error") is True
    assert contents[7] == "What did we do so far?"
    assert contents[10] == "[Tool execution was interrupted]"
    summary = result.messages[8]
    assert summary.meta("replacedMessageIds") == [m.id for m in result.messages[:7]]


def test_each_step_keeps_its_usage_and_the_summarizing_call_is_billed_apart() -> None:
    result = import_file(ROOT)
    assert [m.meta("usage")["promptTokens"] for m in result.messages if m.meta("usage")] == [
        10023,
        10405,
        1196,
    ]
    (summarizer,) = result.other_calls
    assert (summarizer["promptTokens"], summarizer["outputTokens"]) == (10404, 160)


def test_what_is_left_out_and_a_missing_part_folder_are_said() -> None:
    result = import_file(ROOT)
    assert result.skipped == {
        "assistant message with error ProviderAuthError (by message index)": 1,
        "message with no parts (by message index)": 1,
        "part:patch (by message index)": 1,
    }
    assert [str(p) for p in result.problems] == [
        f"{ROOT}: part/msg_95521cc00001ZM07GcDYAneK54: missing: the message's parts are not there"
    ]
    older = import_file(ROOT, conversation=0)
    assert [(m.type, m.content) for m in older.messages] == [("user_input", "hello")]


def test_symbolic_links_are_not_followed(tmp_path: Path) -> None:
    root = tmp_path / "storage"
    shutil.copytree(ROOT, root)
    session = "ses_6aade4081ffe216ygZUgcUQdR1"
    os.symlink(root, root / "session" / "9f3c1e2b7a" / "loop")  # a loop back to the root
    os.symlink("/etc/hostname", root / "message" / session / "msg_zzz.json")  # a file outside the root
    result = import_file(root)
    notes = [str(p) for p in result.problems]
    assert f"{root}: session/9f3c1e2b7a/loop: a symbolic link, not followed" in notes
    assert f"{root}: message/{session}/msg_zzz.json: a symbolic link, not followed" in notes
    assert len(result.messages) == 11


def test_a_folder_that_is_not_a_storage_root_is_one_line(tmp_path: Path, capsys) -> None:
    assert main(["import", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"error: {tmp_path}: not a transcript folder of a format we read "
        "(folders: copilot-cli, cline, openhands-v1, opencode)\n"
    )
    assert main(["build", str(tmp_path)]) == 2
    assert capsys.readouterr().err.count("\n") == 1


def test_build_opens_the_storage_root(capsys) -> None:
    assert main(["build", str(ROOT), "--json"]) in (0, 1)
    assert '"wire"' in capsys.readouterr().out


def test_the_walk_is_bounded(tmp_path: Path, monkeypatch) -> None:
    from engine.importers import opencode_storage

    monkeypatch.setattr(opencode_storage, "MAX_FILES", 5)
    with pytest.raises(InputError, match=r"more than 5 files in the storage folder$"):
        import_file(ROOT)
