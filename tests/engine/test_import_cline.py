"""Cline / Roo Code / Kilo Code task folders: messages as sent, usage from ui_messages, bad parts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.importers import FolderError, detect_format, import_file

TASK = Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "cline" / "1767225600000"


def copy_task(tmp_path: Path) -> Path:
    return Path(shutil.copytree(TASK, tmp_path / "1767225600000"))


def test_a_task_folder_opens_by_its_root_with_each_requests_usage() -> None:
    result = import_file(TASK)
    assert result.format == "cline"
    assert result.title == "Add a --verbose flag to src/app.py"
    # counted by hand (fixture built from Cline's ClineStorageMessage / ClineApiReqInfo): 8 history
    # messages; 4 assistant messages (4 tool_use blocks, 1 thinking, 2 texts), 4 tool results, 1 image
    assert result.came_in() == {
        "systemPrompts": 0,
        "userTurns": 3,
        "assistantTurns": 5,
        "toolCalls": 4,
        "toolResults": 4,
        "thoughts": 1,
        "summaries": 0,
        "images": 1,
        "callsWithUsage": 4,
        "otherBilledCalls": 0,
    }
    assert result.problems == [] and result.unpaired == []
    usage = [m.metadata["usage"] for m in result.messages if m.metadata and "usage" in m.metadata]
    # api_req_started: tokensIn + cacheWrites + cacheReads per request (Anthropic units)
    assert [u["promptTokens"] for u in usage] == [
        12 + 14210,
        6 + 380 + 14210,
        9 + 1650 + 14590,
        3 + 120 + 16240,
    ]
    assert [u["outputTokens"] for u in usage] == [96, 210, 61, 24]
    assert usage[0]["model"] == "anthropic/claude-sonnet-4.5"
    calls = [c["function"]["name"] for m in result.messages for c in m.tool_calls]
    assert calls == ["read_file", "replace_in_file", "execute_command", "attempt_completion"]


def test_the_history_file_alone_is_claimed_by_cline_not_by_anthropic() -> None:
    path = TASK / "api_conversation_history.json"
    assert detect_format(path) == "cline"
    result = import_file(path)
    assert result.came_in()["toolCalls"] == 4 and result.came_in()["callsWithUsage"] == 0


def test_metrics_on_the_message_are_its_usage_openai_units(tmp_path: Path) -> None:
    root = copy_task(tmp_path)
    history = json.loads((root / "api_conversation_history.json").read_text())
    history[-1]["metrics"] = {"tokens": {"prompt": 16400, "completion": 30, "cached": 16000}, "cost": 0.01}
    (root / "api_conversation_history.json").write_text(json.dumps(history))
    usage = [m.metadata["usage"] for m in import_file(root).messages if m.metadata and "usage" in m.metadata]
    assert [(u["provider"], u["promptTokens"], u["cacheReadTokens"]) for u in usage] == [
        ("openai", 16400, 16000)
    ]


def test_roo_code_openai_protocol_counts_the_cache_inside_tokens_in(tmp_path: Path) -> None:
    root = copy_task(tmp_path)
    ui = json.loads((root / "ui_messages.json").read_text())
    for message in ui:
        if message.get("say") == "api_req_started":
            info = json.loads(message["text"])
            message["text"] = json.dumps(
                {**info, "tokensIn": 20000, "cacheReads": 15000, "apiProtocol": "openai"}
            )
    (root / "ui_messages.json").write_text(json.dumps(ui))
    usage = [m.metadata["usage"] for m in import_file(root).messages if m.metadata and "usage" in m.metadata]
    assert {(u["promptTokens"], u["cacheReadTokens"]) for u in usage} == {(20000, 15000)}


def test_a_missing_ui_messages_file_is_one_problem_naming_it(tmp_path: Path) -> None:
    root = copy_task(tmp_path)
    (root / "ui_messages.json").unlink()
    result = import_file(root)
    assert [str(p) for p in result.problems] == [
        f"{root / 'ui_messages.json'}: missing part file; usage not read"
    ]
    assert result.came_in()["toolCalls"] == 4 and result.came_in()["callsWithUsage"] == 0


def test_requests_that_do_not_match_the_messages_are_not_paired(tmp_path: Path) -> None:
    root = copy_task(tmp_path)
    ui = json.loads((root / "ui_messages.json").read_text())
    (root / "ui_messages.json").write_text(json.dumps([m for m in ui if m.get("ts") != 1767225616100]))
    result = import_file(root)
    assert [str(p) for p in result.problems] == [
        f"{root / 'api_conversation_history.json'}: 3 api_req_started with tokens in ui_messages.json for 4 "
        "assistant messages: usage not paired"
    ]


def test_a_folder_with_only_the_ui_file_is_not_a_task(tmp_path: Path) -> None:
    root = copy_task(tmp_path)
    (root / "api_conversation_history.json").unlink()
    with pytest.raises(FolderError, match="not a transcript folder of a format we read"):
        import_file(root)


def test_a_history_file_linked_from_outside_the_folder_is_not_read(tmp_path: Path) -> None:
    root = copy_task(tmp_path)
    outside = tmp_path / "elsewhere.json"
    (root / "api_conversation_history.json").rename(outside)
    (root / "api_conversation_history.json").symlink_to(outside)
    with pytest.raises(FolderError) as caught:
        import_file(root)
    assert str(caught.value) == (
        f"{root / 'api_conversation_history.json'}: a symlink out of the folder (to {outside}); not followed"
    )
