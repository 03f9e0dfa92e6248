"""Claude Code `--output-format stream-json` runs: read as transcripts, sub-agents apart, totals kept."""

from __future__ import annotations

import json
from pathlib import Path

from engine.importers import detect_format, import_file, import_text

STREAM = (
    Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "claude-code-stream" / "stream.jsonl"
)


def test_a_run_imports_the_main_conversation_with_each_calls_usage() -> None:
    assert detect_format(STREAM) == "claude-code-stream"
    result = import_file(STREAM)
    # counted by hand (fixture built from the Agent SDK's SDKMessage types): 15 lines; main thread 1
    # user prompt, 3 calls (msg_01A over 3 lines: thinking, Glob, Read; msg_01B: Task; msg_01C: answer)
    assert result.came_in() == {
        "systemPrompts": 0,
        "userTurns": 1,
        "assistantTurns": 3,
        "toolCalls": 3,
        "toolResults": 3,
        "thoughts": 1,
        "summaries": 0,
        "images": 0,
        "callsWithUsage": 3,
        "otherBilledCalls": 2,
    }
    assert result.conversations == 2
    assert result.skipped_lines == {
        "stream:init": [1],
        "sidechain (a sub-agent's own conversation)": [9, 10, 11, 12],
        "stream:result (success)": [15],
    }
    assert result.session["tools"][:3] == ["Task", "Bash", "Glob"]
    assert result.session["model"] == "claude-sonnet-4-5-20250929"
    # the calls on messages plus the sub-agent's calls add up to the result's modelUsage
    calls = [m.metadata["usage"] for m in result.messages if m.metadata and "usage" in m.metadata]
    calls += result.other_calls
    totals = result.session["result"]["modelUsage"]["claude-sonnet-4-5-20250929"]
    assert sum(c["outputTokens"] for c in calls) == totals["outputTokens"] == 353
    assert sum(c["cacheReadTokens"] for c in calls) == totals["cacheReadInputTokens"]
    assert sum(c["promptTokens"] for c in calls) == 21 + 35300 + 22680


def test_the_sub_agent_is_the_second_conversation() -> None:
    result = import_file(STREAM, conversation=1)
    assert [m.type for m in result.messages] == ["user_input", "tool_calls", "tool_output", "final_answer"]
    assert result.messages[0].content == "What does util.greet do?"


def test_partial_stream_events_and_bad_lines_are_counted_with_their_line_numbers() -> None:
    lines = STREAM.read_text().splitlines()
    delta = {"type": "stream_event", "event": {"type": "content_block_delta"}, "session_id": "s", "uuid": "x"}
    text = "\n".join([lines[0], json.dumps(delta), "{not json", *lines[1:]])
    result = import_text(text, name="run.jsonl")
    assert result.format == "claude-code-stream"
    assert result.skipped_lines["stream:stream_event"] == [2]
    assert [str(p) for p in result.problems] == [
        "run.jsonl:3: invalid JSON (Expecting property name enclosed in double quotes at column 2)"
    ]


def test_a_transcript_is_not_claimed() -> None:
    line = {"type": "user", "sessionId": "s", "uuid": "u", "message": {"role": "user", "content": "hi"}}
    assert detect_format(json.dumps(line)) == "claude-code"


REAL = STREAM.parent / "basic_query.ndjson"  # a real `claude -p` run of Claude Code 2.1.7: 3 lines


def test_a_real_one_call_run_takes_its_final_output_count_from_the_result() -> None:
    result = import_file(REAL)
    assert result.format == "claude-code-stream" and result.problems == []
    # no user line: the prompt is not echoed; the one call's message says output_tokens 5, the result 25
    assert [(m.role, m.type, m.content) for m in result.messages] == [("assistant", "final_answer", "4")]
    assert result.title is None
    usage = result.messages[0].meta("usage")
    assert (usage["callId"], usage["model"]) == ("msg_01Y1Lo6gYUXN71XaAq7sjUPm", "claude-opus-4-5-20251101")
    assert (usage["promptTokens"], usage["cacheWriteTokens"], usage["outputTokens"]) == (21580, 21570, 25)
    assert result.skipped_lines == {"stream:init": [1], "stream:result (success)": [3]}
    assert result.session["claude_code_version"] == "2.1.7"
    assert result.session["result"]["total_cost_usd"] == 0.1354875
    assert "outputTokensNotOnMessages" not in result.session["result"]


def test_output_the_result_counts_beyond_a_runs_messages_is_kept_apart() -> None:
    lines = STREAM.read_text().splitlines()
    closing = json.loads(lines[-1])
    # every call's output in the file: main thread 160 + 70 + 41, the sub-agent's 60 + 22; a result above
    # them all (as the CLI's own is, above its messages' counts) keeps the difference apart
    closing["usage"]["output_tokens"] = 160 + 70 + 41 + 60 + 22 + 7
    result = import_text("\n".join([*lines[:-1], json.dumps(closing)]), name="run.jsonl")
    assert result.session["result"]["outputTokensNotOnMessages"] == 7
    assert [m.meta("usage")["outputTokens"] for m in result.messages if m.meta("usage")] == [
        m.meta("usage")["outputTokens"] for m in import_file(STREAM).messages if m.meta("usage")
    ]


def test_a_run_without_its_echoed_prompt_keeps_every_call_of_its_thread() -> None:
    # stream-json echoes the prompt only with --replay-user-messages; its lines name no parent, and read as
    # roots, the first calls looked like rewound branches (all but the last call and its tool calls lost)
    lines = STREAM.read_text(encoding="utf-8").splitlines()
    assert json.loads(lines[1])["type"] == "user"
    result = import_text("\n".join([lines[0], *lines[2:]]))
    assert result.format == "claude-code-stream"
    came_in = result.came_in()
    assert (came_in["userTurns"], came_in["assistantTurns"], came_in["toolCalls"]) == (0, 3, 3)
    assert (came_in["toolResults"], came_in["thoughts"], came_in["callsWithUsage"]) == (3, 1, 3)
    assert result.unpaired == []
    assert "abandoned branch (rewound)" not in result.skipped_lines


def test_the_json_array_of_a_verbose_run_reads_as_its_lines() -> None:
    # `claude -p --output-format json --verbose` (and Qwen Code's `-o json`) print the same messages as
    # one array; element N is reported as line N + 1
    elements = [json.loads(line) for line in STREAM.read_text(encoding="utf-8").splitlines() if line]
    text = json.dumps(elements, indent=2)
    assert detect_format(text) == "claude-code-stream"
    result, from_lines = import_text(text), import_file(STREAM)
    assert result.came_in() == from_lines.came_in()
    assert [m.to_dict() for m in result.messages] == [m.to_dict() for m in from_lines.messages]
    assert result.skipped_lines == from_lines.skipped_lines
