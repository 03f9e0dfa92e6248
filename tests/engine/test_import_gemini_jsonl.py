"""Gemini CLI's JSONL recording: replayed as the CLI replays it ($set, $rewindTo, rewritten messages)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.importers import UnknownFormatError, detect_format, import_file, import_text

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "gemini-cli"
HEADER = {"sessionId": "s1", "projectHash": "p" * 64, "startTime": "2026-04-23T12:00:00Z", "kind": "main"}


def jsonl(*records: dict) -> str:
    return "\n".join(json.dumps(r) for r in records)


def test_the_real_recording_imports_each_message_once_with_its_final_record() -> None:
    path = DATA / "gemini.jsonl"
    assert detect_format(path) == "gemini-cli-jsonl"
    result = import_file(path)
    # counted by hand: 28 lines; 6 gemini messages (5 written twice), 3 user, 2 info, 11 $set lines
    assert result.came_in() == {
        "systemPrompts": 0,
        "userTurns": 3,
        "assistantTurns": 6,
        "toolCalls": 12,
        "toolResults": 12,
        "thoughts": 7,
        "summaries": 0,
        "images": 0,
        "callsWithUsage": 6,
        "otherBilledCalls": 0,
    }
    assert result.skipped_lines["earlier record of a message written again"] == [6, 9, 12, 15, 24]
    assert result.skipped["metadata update ($set)"] == 11
    assert result.skipped_lines["info notice (shown by the CLI, not sent to the model)"] == [2, 27]
    assert result.problems == [] and result.unpaired == []
    usage = [m.metadata["usage"] for m in result.messages if m.metadata and "usage" in m.metadata]
    # the README's sums over distinct calls: input 202586 (cached 48951), output 2152 + thoughts 2141
    assert sum(u["promptTokens"] for u in usage) == 202586
    assert sum(u["cacheReadTokens"] for u in usage) == 48951
    assert sum(u["outputTokens"] for u in usage) == 2152 + 2141
    assert result.session["sessionId"] == "0ab84937-9fe7-4284-986a-33c832af0b6a"
    assert result.session["lastUpdated"] == "2026-04-23T12:58:35.591Z"  # the last $set


def test_rewind_drops_the_message_and_what_follows_and_a_checkpoint_replaces_all() -> None:
    text = jsonl(
        HEADER,
        {"id": "u1", "timestamp": "2026-04-23T12:00:01Z", "type": "user", "content": [{"text": "first"}]},
        {"id": "g1", "timestamp": "2026-04-23T12:00:02Z", "type": "gemini", "content": "one"},
        {"id": "u2", "timestamp": "2026-04-23T12:00:03Z", "type": "user", "content": "second"},
        {"id": "g2", "timestamp": "2026-04-23T12:00:04Z", "type": "gemini", "content": "two"},
        {"$rewindTo": "u2"},
        {"id": "u3", "timestamp": "2026-04-23T12:00:05Z", "type": "user", "content": "instead"},
        {"$set": {"summary": "A titled session"}},
    )
    result = import_text(text, name="s.jsonl")
    assert result.format == "gemini-cli-jsonl"
    assert [(m.id, m.content) for m in result.messages] == [("u1", "first"), ("g1", "one"), ("u3", "instead")]
    assert result.skipped_lines["message undone by a rewind"] == [4, 5]
    assert result.title == "A titled session"

    checkpoint = {
        "$set": {"messages": [{"id": "c1", "timestamp": "x", "type": "user", "content": "restart"}]}
    }
    result = import_text(text + "\n" + json.dumps(checkpoint), name="s.jsonl")
    assert [m.content for m in result.messages] == ["restart"]
    assert result.skipped_lines["message replaced by a checkpoint"] == [2, 3, 7]


def test_the_older_single_document_is_not_claimed() -> None:
    doc = {**HEADER, "messages": [{"id": "u1", "timestamp": "t", "type": "user", "content": "hi"}]}
    assert detect_format(json.dumps(doc)) == "gemini-cli"


def test_a_recording_cut_mid_line_imports_up_to_the_cut_and_names_the_line() -> None:
    text = (DATA / "gemini.jsonl").read_text()
    cut = text[: text.index('"type":"gemini"', text.index("1b8df650"))]  # line 20 cut while being written
    result = import_text(cut, name="session.jsonl")
    assert result.format == "gemini-cli-jsonl"
    assert [str(p) for p in result.problems] == [
        "session.jsonl:20: invalid JSON (Expecting property name enclosed in double quotes at column 85)"
    ]
    assert result.came_in()["userTurns"] == 2 and result.came_in()["toolCalls"] == 10


def test_a_history_the_cli_rebuilt_brings_its_calls_results_and_thoughts_from_the_content_parts() -> None:
    # `updateMessagesFromHistory` writes the turns it rebuilt: a call and a thought as parts of a gemini turn,
    # the call's result as a user turn of functionResponse parts; a reply's `tokens` may still be null
    call = {"functionCall": {"id": "read-1", "name": "read_file", "args": {"path": "a.py"}}}
    response = {"functionResponse": {"id": "read-1", "name": "read_file", "response": {"output": "x = 1"}}}
    recorded = {
        "id": "g1",
        "timestamp": "2026-04-23T12:00:02Z",
        "type": "gemini",
        "content": "",
        "toolCalls": [{"id": "ls-1", "name": "ls", "args": {}, "result": [
            {"functionResponse": {"id": "ls-1", "name": "ls", "response": {"output": "a.py"}}}]}],
        "tokens": None,
    }  # fmt: skip
    messages = [
        {"id": "u1", "timestamp": "2026-04-23T12:00:01Z", "type": "user", "content": [{"text": "look"}]},
        recorded,
        {
            "id": "r1",
            "timestamp": "2026-04-23T12:00:03Z",
            "type": "user",
            "content": [recorded["toolCalls"][0]["result"][0]],
        },
        {
            "id": "g2",
            "timestamp": "2026-04-23T12:00:04Z",
            "type": "gemini",
            "content": [{"text": "weighing it", "thought": True}, call],
        },
        {"id": "r2", "timestamp": "2026-04-23T12:00:05Z", "type": "user", "content": [response]},
        {"id": "g3", "timestamp": "2026-04-23T12:00:06Z", "type": "gemini", "content": [{"text": "x is 1"}]},
    ]
    result = import_text(jsonl(HEADER, {"$set": {"messages": messages}}), name="s.jsonl")
    assert result.problems == [] and result.unpaired == []
    assert [(m.id, m.type, m.content) for m in result.messages] == [
        ("u1", "user_input", "look"),
        ("g1", "tool_calls", ""),
        ("g1-result-ls-1", "tool_output", "a.py"),  # the user turn repeating it adds nothing
        ("g2-thought-0", "thought", "weighing it"),
        ("g2", "tool_calls", ""),
        ("r2-result-read-1", "tool_output", "x = 1"),
        ("g3", "final_answer", "x is 1"),
    ]
    assert result.messages[4].tool_calls[0]["function"] == {
        "name": "read_file",
        "arguments": '{"path":"a.py"}',
    }


def test_a_saved_chat_checkpoint_is_the_history_as_sent_with_calls_paired_by_name() -> None:
    history = [
        {"role": "user", "parts": [{"text": "This is the Gemini CLI. We are setting up the context."}]},
        {"role": "model", "parts": [{"text": "Got it."}]},
        {"role": "user", "parts": [{"text": "read both"}]},
        {"role": "model", "parts": [{"text": "planning", "thought": True},
                                    {"functionCall": {"name": "read_file", "args": {"path": "a"}}},
                                    {"functionCall": {"name": "read_file", "args": {"path": "b"}}}]},
        {"role": "user", "parts": [{"functionResponse": {"name": "read_file", "response": {"output": "A"}}},
                                   {"functionResponse": {"name": "read_file", "response": {"error": "b?"}}}]},
        {"role": "model", "parts": [{"text": "a says A"}]},
    ]  # fmt: skip
    for document in ({"history": history, "authType": "oauth-personal"}, history):
        result = import_text(json.dumps(document, indent=2), name="checkpoint-work.json")
        assert result.format == "gemini-checkpoint"
        assert result.problems == [] and result.unpaired == []
        assert [(m.type, m.content) for m in result.messages] == [
            ("user_input", "This is the Gemini CLI. We are setting up the context."),
            ("final_answer", "Got it."),
            ("user_input", "read both"),
            ("thought", "planning"),
            ("tool_calls", ""),
            ("tool_output", "A"),
            ("tool_output", "b?"),
            ("final_answer", "a says A"),
        ]
        calls = [c["id"] for c in result.messages[4].tool_calls]
        assert calls == ["gc-4-call-1", "gc-4-call-2"]
        assert [m.metadata["tool_call_id"] for m in result.messages[5:7]] == calls
    only_user = [{"role": "user", "parts": [{"text": "hi"}]}]
    assert detect_format(json.dumps({"history": only_user})) == "gemini-checkpoint"
    with pytest.raises(UnknownFormatError):  # a bare list of user turns could be anyone's
        detect_format(json.dumps(only_user))


def test_the_prompt_log_is_the_users_turns_of_one_session_the_last_by_default() -> None:
    def logged(session: str, n: int, said: str) -> dict:
        return {"sessionId": session, "messageId": n, "type": "user", "message": said,
                "timestamp": f"2025-07-25T14:2{n}:00.000Z"}  # fmt: skip

    log = [logged("s-one", 0, "Hello"), logged("s-one", 1, "/chat save first"), logged("s-one", 2, "Sum up"),
           logged("s-two", 0, "What changed?")]  # fmt: skip
    text = json.dumps(log)
    assert detect_format(text) == "gemini-logs"
    last = import_text(text, name="logs.json")
    assert (last.conversations, [m.content for m in last.messages]) == (2, ["What changed?"])
    first = import_text(text, name="logs.json", conversation=0)
    assert [(m.type, m.content) for m in first.messages] == [
        ("user_input", "Hello"),
        ("user_input", "Sum up"),
    ]
    assert first.skipped_lines == {"a command to the CLI (not sent to the model)": [2]}


@pytest.mark.parametrize(
    ("key", "value", "reason"),
    [
        ("type", 7, "type: must be a message type (a string), got a number"),
        ("thoughts", "Defining Project Scope", "thoughts: must be a list, got a string"),
        ("thoughts", [["Defining"]], "thoughts[0]: must be a thought (an object), got an array"),
        ("thoughts", [{"subject": 7}], "thoughts[0].subject: must be text, got a number"),
        ("toolCalls", {"id": "c1"}, "toolCalls: must be a list, got an object"),
    ],
)
def test_a_message_field_of_a_wrong_type_is_said_and_the_message_left_out(key, value, reason) -> None:
    # the last record of message cda8a342 (line 14): its thoughts were dropped (a string, a list read as no
    # thought), or the message taken for a newer kind, and nothing named the line
    path = DATA / "gemini.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[13])
    record[key] = value
    spoiled = "\n".join([*lines[:13], json.dumps(record), *lines[14:]])
    result = import_text(spoiled, name="gemini.jsonl")
    assert [(p.line, p.reason) for p in result.problems] == [(14, f"messages[4].{reason}; left out")]
    kept = [m.id for m in import_file(path).messages if not m.id.startswith("cda8a342")]
    assert [m.id for m in result.messages] == kept
    assert len(result.messages) == 25


def test_a_message_id_that_is_not_text_is_said_and_its_record_left_out() -> None:
    # line 14 writes message cda8a342 again (its final record); with a number for its id it was counted as
    # an unknown record, the earlier writing of line 12 read in its place, and no problem named the line
    lines = (DATA / "gemini.jsonl").read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[13])
    record["id"] = 12345
    result = import_text("\n".join([*lines[:13], json.dumps(record), *lines[14:]]), name="gemini.jsonl")
    assert [(p.line, p.reason) for p in result.problems] == [
        (14, "id: must be a message id (a string), got a number; left out")
    ]
    without = import_text("\n".join([*lines[:13], "", *lines[14:]]), name="gemini.jsonl")
    assert [(m.id, m.content) for m in result.messages] == [(m.id, m.content) for m in without.messages]
    assert len(result.messages) == 26
