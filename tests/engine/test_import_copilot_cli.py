"""GitHub Copilot CLI events.jsonl and session folders."""

from __future__ import annotations

import json
from pathlib import Path

from engine.importers import detect_format, import_file, import_text

SESSION = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "real-sessions"
    / "copilot-cli"
    / "0cb916db-26aa-40f2-86b5-1ba81b225fd2"
)


def test_a_session_folder_imports_what_the_model_received_with_each_calls_usage() -> None:
    result = import_file(SESSION)
    assert result.format == "copilot-cli"
    assert result.title == "What does the test suite cover?"
    # counted by hand (fixture built from copilot-sdk's session-events.ts): 25 events; 2 user messages,
    # 4 assistant messages (3 tool requests), 3 tool results (1 failed), 1 compaction, 4 assistant.usage
    assert result.came_in() == {
        "systemPrompts": 0,
        "userTurns": 2,
        "assistantTurns": 4,
        "toolCalls": 3,
        "toolResults": 3,
        "thoughts": 1,
        "summaries": 1,
        "images": 0,
        "callsWithUsage": 4,
        "otherBilledCalls": 1,
    }
    assert result.skipped_lines["tool.execution_start"] == [6, 7, 19]
    assert result.problems == [] and result.unpaired == []
    first = result.messages[0]
    assert first.content.endswith("\n\nWhat does the test suite cover?")  # transformedContent: what was sent
    usage = [(m.meta("usage")["promptTokens"], m.meta("usage")["cacheReadTokens"]) for m in result.messages
             if m.meta("usage")]  # fmt: skip
    assert usage == [(18342, 0), (18560, 18020), (2400, 0), (2480, 2380)]
    assert result.other_calls[0]["why"] == "the compaction's own call"
    failed = [m for m in result.messages if m.meta("is_error")]
    assert [m.content for m in failed] == ["1 failed, 3 passed"]
    assert result.session["model"] == "claude-sonnet-4.5" and result.session["copilotVersion"] == "0.0.407"


def test_the_events_file_alone_is_detected() -> None:
    assert detect_format(SESSION / "events.jsonl") == "copilot-cli"


def test_usage_for_a_call_with_no_message_is_an_other_call() -> None:
    data = {"model": "gpt-5", "apiCallId": "x", "inputTokens": 10, "outputTokens": 2}
    usage = {"type": "assistant.usage", "id": "e1", "data": data}
    start = {"type": "session.start", "id": "e0", "data": {"sessionId": "s", "producer": "copilot-agent"}}
    asked = {"type": "user.message", "id": "e00", "data": {"content": "hello"}}
    result = import_text("\n".join(json.dumps(e) for e in (start, asked, usage)), name="events.jsonl")
    assert result.other_calls[0]["why"] == "assistant.usage with no message of its apiCallId"
    assert result.other_calls[0]["promptTokens"] == 10


def test_a_sub_agents_events_are_its_own_and_its_usage_an_other_call() -> None:
    lines = (SESSION / "events.jsonl").read_text().splitlines()
    sub = [
        {"type": "user.message", "id": "s1", "agentId": "explore-1", "data": {"content": "look around"}},
        {"type": "assistant.message", "id": "s2",
         "data": {"messageId": "x", "content": "ok", "parentToolCallId": "t"}},
        {"type": "assistant.usage", "id": "s3", "agentId": "explore-1",
         "data": {"model": "gpt-5-mini", "inputTokens": 900, "outputTokens": 12}},
    ]  # fmt: skip
    result = import_text("\n".join([*lines[:3], *map(json.dumps, sub), *lines[3:]]), name="events.jsonl")
    assert result.skipped_lines["sub-agent user.message (agentId / parentToolCallId)"] == [4]
    assert result.skipped_lines["sub-agent assistant.message (agentId / parentToolCallId)"] == [5]
    assert result.came_in()["userTurns"] == 2 and result.came_in()["assistantTurns"] == 4
    assert [c["why"] for c in result.other_calls] == ["a sub-agent's call", "the compaction's own call"]
