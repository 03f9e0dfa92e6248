"""Cline / Roo Code / Kilo Code task folders: messages as sent, usage from ui_messages, bad parts."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from engine.importers import FolderError, detect_format, import_file, import_text
from playground.cli.main import main

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


def test_metrics_on_the_message_are_its_usage_the_cache_outside_the_prompt(tmp_path: Path) -> None:
    # Cline's Task.ts: prompt = the request's inputTokens (tokensIn), cached = its cache write + read
    root = copy_task(tmp_path)
    history = json.loads((root / "api_conversation_history.json").read_text())
    history[-1]["metrics"] = {"tokens": {"prompt": 400, "completion": 30, "cached": 16000}, "cost": 0.01}
    (root / "api_conversation_history.json").write_text(json.dumps(history))
    usage = [m.metadata["usage"] for m in import_file(root).messages if m.metadata and "usage" in m.metadata]
    assert [(u["provider"], u["promptTokens"], u["cacheReadTokens"], u["outputTokens"]) for u in usage] == [
        ("anthropic", 16400, 16000, 30)
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


def test_roo_code_openai_protocol_counts_the_cache_writes_inside_tokens_in_too(tmp_path: Path) -> None:
    # a real Roo-family request (IBM Bob): 3090 = 2 uncached + 476 written + 2612 read (Roo's cost.ts)
    root = copy_task(tmp_path)
    ui = json.loads((root / "ui_messages.json").read_text())
    for message in ui:
        if message.get("say") == "api_req_started":
            info = json.loads(message["text"])
            counts = {"tokensIn": 3090, "tokensOut": 121, "cacheWrites": 476, "cacheReads": 2612}
            message["text"] = json.dumps({**info, **counts, "apiProtocol": "openai"})
    (root / "ui_messages.json").write_text(json.dumps(ui))
    usage = [m.metadata["usage"] for m in import_file(root).messages if m.metadata and "usage" in m.metadata]
    fields = ("promptTokens", "cacheReadTokens", "cacheWriteTokens", "outputTokens")
    assert {tuple(u[k] for k in fields) for u in usage} == {(3090, 2612, 476, 121)}


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


# Cline 3.x with native tool calls, in the shape of a real task (Jan 2026, not redistributable): no `ts`,
# `modelInfo` and `metrics` on assistant messages, each call's result stored as a text block
CLINE_3X = [
    {"role": "user", "content": [{"type": "text", "text": "<task>\nTidy the deck code\n</task>"}]},
    {"role": "assistant", "modelInfo": {"modelId": "claude-opus-4-5-20251101", "providerId": "anthropic"},
     "metrics": {"tokens": {"prompt": 10, "completion": 814, "cached": 8972}},
     "content": [{"type": "thinking", "thinking": "Read first.", "signature": "sig", "summary": []},
                 {"type": "text", "text": "Let me read the files.", "reasoning_details": [], "call_id": ""},
                 {"type": "tool_use", "id": "toolu_A", "name": "read_file", "input": {"path": "Deck.cs"}},
                 {"type": "tool_use", "id": "toolu_B", "name": "read_file", "input": {"path": "Hand.cs"}}]},
    {"role": "user", "content": [
        {"type": "text", "text": "[read_file for 'Deck.cs'] Result:\npublic class Deck {}"},
        {"type": "text", "text": "Tool [read_file] was not executed because a tool has already been used in "
                                 "this message. Only one tool may be used per message."},
        {"type": "text", "text": "<environment_details>\n# Current Mode\nACT MODE\n</environment_details>"}]},
    {"role": "assistant", "modelInfo": {"modelId": "claude-opus-4-5-20251101", "providerId": "anthropic"},
     "metrics": {"tokens": {"prompt": 10, "completion": 572, "cached": 12426}},
     "content": [{"type": "tool_use", "id": "toolu_C", "name": "attempt_completion",
                  "input": {"result": "ok"}}]},
]  # fmt: skip


def test_a_cline_3x_history_alone_is_detected_and_its_text_results_answer_their_calls() -> None:
    text = json.dumps(CLINE_3X)
    assert detect_format(text) == "cline"
    result = import_text(text, name="api_conversation_history.json")
    outputs = [(m.meta("tool_call_id"), m.meta("tool_name"), m.content[:28]) for m in result.messages
               if m.type == "tool_output"]  # fmt: skip
    assert outputs == [
        ("toolu_A", "read_file", "[read_file for 'Deck.cs'] Re"),
        ("toolu_B", "read_file", "Tool [read_file] was not exe"),
    ]
    users = [m.content for m in result.messages if m.type == "user_input"]
    assert users[1] == "<environment_details>\n# Current Mode\nACT MODE\n</environment_details>"
    assert result.unpaired == ["toolu_C"]  # the task ended on it
    # no ui_messages to pair: the cache write and read, known only together, are taken as read
    usage = [m.meta("usage") for m in result.messages if m.meta("usage")]
    assert [(u["promptTokens"], u["cacheReadTokens"], u["outputTokens"]) for u in usage] == [
        (8982, 8972, 814), (12436, 12426, 572)]  # fmt: skip


def test_metrics_that_agree_with_ui_messages_take_its_cache_write_and_read_apart(tmp_path: Path) -> None:
    root = tmp_path / "1769064454592"
    root.mkdir()
    (root / "api_conversation_history.json").write_text(json.dumps(CLINE_3X))
    requests = [
        {"tokensIn": 10, "tokensOut": 814, "cacheWrites": 8972, "cacheReads": 0, "cost": 0.076},
        {"tokensIn": 10, "tokensOut": 572, "cacheWrites": 3454, "cacheReads": 8972, "cost": 0.040},
    ]
    ui = [{"ts": 1769064454600 + i, "type": "say", "say": "api_req_started", "text": json.dumps(r)}
          for i, r in enumerate(requests)]  # fmt: skip
    (root / "ui_messages.json").write_text(json.dumps(ui))
    usage = [m.meta("usage") for m in import_file(root).messages if m.meta("usage")]
    assert [(u["promptTokens"], u["cacheWriteTokens"], u["cacheReadTokens"]) for u in usage] == [
        (8982, 8972, 0), (12436, 3454, 8972)]  # fmt: skip


def test_text_results_of_multi_line_questions_and_of_subagents_answer_their_calls(tmp_path, capsys) -> None:
    def use(call_id: str, name: str) -> dict:
        return {"type": "tool_use", "id": call_id, "name": name, "input": {}}

    question = "[ask_followup_question for 'Which file?\n- a.py\n- b.py'] Result:\n<answer>\na.py\n</answer>"
    history = [
        {"role": "user", "content": [{"type": "text", "text": "<task>fix it</task>"}]},
        {"role": "assistant", "content": [use("t1", "ask_followup_question")]},
        {"role": "user", "content": [{"type": "text", "text": question}]},
        {"role": "assistant", "content": [use("t2", "use_subagents")]},
        {"role": "user", "content": [{"type": "text", "text": "[subagents] Result:\nTotal: 2"}]},
        {"role": "assistant", "content": [use("t3", "read_file")]},
        {"role": "user", "content": [{"type": "text", "text": "[TASK RESUMPTION] go on"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "done"}]},
    ]
    path = tmp_path / "api_conversation_history.json"
    path.write_text(json.dumps(history), encoding="utf-8")
    result = import_file(path, "cline")
    results = [m for m in result.messages if m.type == "tool_output"]
    outputs = [(m.tool_call_id, m.content.splitlines()[0]) for m in results]
    assert outputs == [("t1", "[ask_followup_question for 'Which file?"), ("t2", "[subagents] Result:")]
    assert result.unpaired == ["t3"]
    session = tmp_path / "s.jsonl"
    assert main(["import", str(path), "--from", "cline", "-o", str(session)]) == 0
    capsys.readouterr()
    assert main(["validate", str(session)]) == 0  # the interrupted call is a warning
    assert "call t3 has no result: the user spoke next (the call was interrupted)" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("index", "block", "value", "reason"),
    [
        (1, 1, {"type": 7}, "[1].content[1].type: must be a block type (a string), got a number"),
        (4, 3, {"type": "text", "text": None}, "[4].content[3].text: must be text (a string), got null"),
        (2, 1, "x", "[2].content[1]: must be a content block (an object), got a string"),
    ],
)
def test_a_block_of_a_wrong_type_is_said_and_its_message_left_out(index, block, value, reason) -> None:
    # a block with no type was kept as an unmapped note (the assistant's text gone), a text that is not text
    # was dropped (the user's feedback gone), and nothing was said
    history = json.loads((TASK / "api_conversation_history.json").read_text(encoding="utf-8"))
    if isinstance(value, dict):
        history[index]["content"][block].update(value)
    else:
        history[index]["content"][block] = value
    result = import_text(json.dumps(history), name="api_conversation_history.json")
    assert [str(p) for p in result.problems] == [f"api_conversation_history.json: {reason}; left out"]
    clean = import_file(TASK / "api_conversation_history.json")
    assert len(clean.messages) == 13
    kept = [m.id for m in clean.messages if m.id.split("#")[0] != f"cline-{index}"]
    assert [m.id for m in result.messages] == kept
