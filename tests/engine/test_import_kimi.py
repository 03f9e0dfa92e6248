"""Kimi CLI and Kimi Code wire logs: wire files from MoonshotAI/kimi-code's own test fixtures (MIT; the
kimi-cli ones from its legacy-migration tests), counted by hand, and a Kimi Code fixture of ours written
from agent-core's record types (tool calls, an interrupted call, undo, compaction)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.importers import import_file, import_text
from engine.importers.detect import detect_text
from engine.importers.registry import Sniff, importers

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "kimi"
LARGE = DATA / "kimi-cli-large-100msgs.wire.jsonl"
HOOK = DATA / "kimi-cli-with-tool-calls.wire.jsonl"
MAIN = DATA / "kimi-code-sample-main.wire.jsonl"
COMPACTION = DATA / "kimi-code-sample-compaction.wire.jsonl"
OURS = DATA / "kimi-code-tools-undo-compaction.wire.jsonl"


def test_kimi_cli_streamed_steps_with_tools_running_while_the_call_streams() -> None:
    result = import_file(LARGE)
    assert result.format == "kimi" and result.problems == [] and result.unpaired == []
    came = result.came_in()
    # 2 TurnBegin, 16 StepBegin (one streamed nothing), 28 ToolCall, 28 ToolResult, 15 StatusUpdate
    assert (came["userTurns"], came["assistantTurns"], came["toolCalls"], came["toolResults"]) == (
        2,
        15,
        28,
        28,
    )
    assert came["thoughts"] == 15 and came["callsWithUsage"] == 15
    assert result.skipped == {
        "ApprovalRequest": 1,
        "ApprovalResponse": 1,
        "TurnEnd": 1,
        "empty model call": 1,
    }
    output = next(m for m in result.messages if m.type == "tool_output")
    assert output.content.startswith(
        "<system>Found 5 matches for pattern `.agents/skills/example-task/**/*`.</system>\n"
    )
    usage = next(m.meta("usage") for m in result.messages if m.meta("usage"))
    assert (usage["promptTokens"], usage["cacheReadTokens"], usage["callId"]) == (
        12561,
        1536,
        "chatcmpl-fixture-0001",
    )


def test_a_blocked_call_is_worded_as_kimi_cli_sends_it() -> None:
    result = import_file(HOOK)
    assert [(m.type, m.content) for m in result.messages] == [
        ("user_input", "run echo hi"),
        ("tool_calls", ""),
        ("tool_output", "<system>ERROR: Shell blocked by hook</system>"),
        ("final_answer", "OK, shell was blocked."),
    ]
    assert result.messages[2].meta("is_error") is True


def test_kimi_code_records_system_prompt_messages_and_compaction() -> None:
    main = import_file(MAIN)
    assert [(m.type, m.content) for m in main.messages] == [
        ("system_prompt", "You are Kimi."),
        ("user_input", "hi"),
        ("final_answer", "hello"),
    ]
    assert main.messages[2].meta("usage")["promptTokens"] == 10
    compacted = import_file(COMPACTION)
    assert [m.type for m in compacted.messages] == [
        "system_prompt",
        "user_input",
        "final_answer",
        "history_summary",
        "user_input",
    ]
    assert compacted.messages[3].meta("replacedMessageIds") == [compacted.messages[2].id]


def test_kimi_code_loop_events_interrupted_call_undo_and_usage() -> None:
    result = import_file(OURS)
    assert result.problems == [] and result.unpaired == []
    assert [m.type for m in result.messages] == [
        "system_prompt",
        "user_input",
        "thought",
        "tool_calls",
        "tool_output",
        "tool_output",
        "tool_calls",
        "tool_output",
        "final_answer",
        "user_input",
        "history_summary",
        "final_answer",
    ]
    assert result.messages[2].content == "Check the logs and the handler."  # streamed pieces joined
    assert result.messages[5].content == (
        "<system>ERROR: Tool execution failed. Tool output is empty.</system>\nFile is empty."
    )
    assert result.messages[7].content.startswith(
        "Tool execution was interrupted before its result was recorded."
    )
    assert [m.meta("usage")["promptTokens"] for m in result.messages if m.meta("usage")] == [
        1840,
        1912,
        2180,
        410,
    ]
    assert result.skipped["removed by context.undo"] == 2  # the undone question and its unfinished answer
    assert result.session["model"] == "kimi-k2.5"


@pytest.mark.parametrize("path", [LARGE, HOOK, MAIN, COMPACTION, OURS], ids=lambda p: p.name)
def test_only_the_kimi_importer_claims_a_wire_log(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert [i.name for i in importers() if i.detect(Sniff.of(text, path.name))] == ["kimi"]
    assert detect_text(text) == "kimi"


CONTEXT = DATA / "kimi-cli-large-100msgs.context.jsonl"
IMAGE = DATA / "kimi-cli-with-image.context.jsonl"


def test_kimi_cli_context_is_the_context_as_sent() -> None:
    # counted by hand: 1 _system_prompt, 3 user, 22 assistant (20 with tool_calls, each with a think part),
    # 34 tool calls, 34 tool messages, 26 _checkpoint and 44 _usage lines
    result = import_file(CONTEXT)
    assert result.format == "kimi-context" and result.problems == [] and result.unpaired == []
    came = result.came_in()
    assert (came["systemPrompts"], came["userTurns"], came["assistantTurns"]) == (1, 3, 22)
    assert (came["toolCalls"], came["toolResults"], came["thoughts"]) == (34, 34, 22)
    assert result.skipped == {"_checkpoint": 26, "_usage (the context's size, not a call's usage)": 44}
    assert result.messages[0].content == "You are an AI agent. (system prompt elided in fixture)"


def test_kimi_cli_context_media_are_placeholders() -> None:
    messages = import_file(IMAGE).messages
    assert messages[1].content == "Describe this image.\n[image: image/png, 3 bytes]"
    assert sum(len(m.meta("images") or ()) for m in messages) == 2


@pytest.mark.parametrize("path", sorted(DATA.glob("*.context.jsonl")), ids=lambda p: p.name)
def test_only_the_kimi_context_importer_claims_a_context_file(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    sniff = Sniff.of(text, path.name)  # the generic chat importers, tried last, also see chat messages
    assert [i.name for i in importers() if not i.generic and i.detect(sniff)] == ["kimi-context"]
    assert detect_text(text) == "kimi-context"


@pytest.mark.parametrize(
    ("number", "change", "reason"),
    [
        (11, lambda r: r["event"].update(toolCallId=["call_1"]),
         "event.toolCallId: must be a tool call id (a string), got an array"),
        (17, lambda r: r.update(event=7), "event: must be an object, got a number"),
        (17, lambda r: r["event"].update(type=None),
         "event.type: must be a loop event type (a string), got null"),
        (9, lambda r: r["event"]["part"].update(text={"text": "Reading"}),
         "event.part.text: must be text (a string), got an object"),
        (8, lambda r: r["event"]["part"].update(type=["think"]),
         "event.part.type: must be a part type (a string), got an array"),
        (27, lambda r: r.update(count="1"), "count: must be a number of turns, got a string"),
    ],
    ids=["call id a list", "event a number", "event type null", "text an object", "part type a list",
         "undo count a string"],
)  # fmt: skip
def test_a_loop_event_of_a_wrong_type_is_said_and_left_out(number, change, reason) -> None:
    # a call id that is not one answered no call (its result dropped as Kimi Code drops a stray one); an
    # event that is not one, or has no type, ended no step: each was only counted as a skipped line; a part
    # whose text is not text, or has no type, was dropped; an undo whose count is not one undid nothing
    lines = OURS.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[number - 1])
    change(record)
    spoiled = "\n".join([*lines[: number - 1], json.dumps(record), *lines[number:]])
    blank = "\n".join([*lines[: number - 1], "", *lines[number:]])
    result = import_text(spoiled, name="wire.jsonl")
    assert [(p.line, p.reason) for p in result.problems] == [(number, f"{reason}; left out")]
    without = import_text(blank, name="wire.jsonl")
    assert [(m.type, m.content) for m in result.messages] == [(m.type, m.content) for m in without.messages]
    assert len(result.messages) == {11: 11, 27: 14}.get(number, 12)


def test_a_kimi_cli_content_part_of_a_wrong_type_is_said_and_left_out() -> None:
    # the text part of a step was read as "" (its answer gone) and nothing named the line
    lines = HOOK.read_text(encoding="utf-8").splitlines()
    record = json.loads(lines[9])
    record["message"]["payload"]["text"] = None
    result = import_text("\n".join([*lines[:9], json.dumps(record), *lines[10:]]), name="wire.jsonl")
    assert [(p.line, p.reason) for p in result.problems] == [
        (10, "message.payload.text: must be text (a string), got null; left out")
    ]
    clean = import_file(HOOK)
    assert [m.content for m in clean.messages if m.type == "final_answer"] == ["OK, shell was blocked."]
    assert [m.type for m in result.messages] == [m.type for m in clean.messages if m.type != "final_answer"]
