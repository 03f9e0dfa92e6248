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
RUN = SESSION.parent / "phase1-task-20260730-0156-2144.json"  # a real `copilot -p --output-format json` run


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


def test_a_real_prompt_runs_event_stream_imports_each_reasoning_once_and_its_skills_as_generated() -> None:
    result = import_file(RUN)
    assert result.format == "copilot-cli"
    assert result.title == "Invoke skill `shepherd-task-from-assignment-to-ready` with these inputs:"
    # counted by hand from the 1,125 lines: 3 user.message (2 with a skill `source`), 8 assistant.message
    # (7 with one toolRequest each, 7 with reasoningText), 7 tool.execution_complete; no assistant.usage
    assert result.came_in() == {
        "systemPrompts": 0,
        "userTurns": 3,
        "assistantTurns": 8,
        "toolCalls": 7,
        "toolResults": 7,
        "thoughts": 7,
        "summaries": 0,
        "images": 0,
        "callsWithUsage": 0,
        "otherBilledCalls": 0,
    }
    assert result.problems == [] and result.unpaired == []
    assert len(result.messages) == 25
    first = result.messages[0]
    assert first.content.startswith("<current_datetime>2026-07-30T01:56:54.005+00:00</current_datetime>\n\n"
                                    "Invoke skill `shepherd-task-from-assignment-to-ready`")  # fmt: skip
    call = result.messages[2].meta("tool_calls")[0]
    assert (call["id"], call["function"]["name"]) == ("toolu_bdrk_01UdgbuinVXd2RVbudraZ7v8", "skill")
    assert result.messages[3].meta("tool_call_id") == "toolu_bdrk_01UdgbuinVXd2RVbudraZ7v8"
    skills = [m.meta("generated") for m in result.messages if m.meta("generated")]
    assert skills == ["skill-shepherd-task-from-assignment-to-ready",
                      "skill-shepherd-task-approve-workflows-and-wait-for-completion"]  # fmt: skip
    assert result.messages[-1].type == "final_answer"
    assert result.messages[-1].content.startswith("All CI checks pass and no review comments exist.")
    # the CLI writes each reasoning twice: as the message's reasoningText and as an event after it
    repeats = [24, 166, 491, 554, 740, 998, 1119]  # every assistant.reasoning line (grep)
    assert result.skipped_lines["assistant.reasoning repeating its message's reasoningText"] == repeats
    assert len(result.skipped_lines["assistant.tool_call_delta"]) == 654
    assert result.skipped_lines["result (the run's exit code, premium requests and durations)"] == [1125]
    assert result.session["sessionId"] == "17b7a2f5-bf46-4ba8-b9a0-6f990aa14e48"  # from the result line
    assert result.session["model"] == "claude-sonnet-4.6"  # from its messages: no session.start


def test_each_shutdowns_model_metrics_are_summed_into_the_session() -> None:
    # an events.jsonl keeps no assistant.usage (ephemeral); each exit writes a session.shutdown with the
    # usage since the CLI entered the session, so a resumed session's shutdowns add up
    def shutdown(count: int, tokens: int) -> dict:
        usage = {"inputTokens": tokens, "outputTokens": tokens // 100, "cacheReadTokens": tokens // 2,
                 "cacheWriteTokens": 0, "reasoningTokens": 0}  # fmt: skip
        metrics = {"claude-opus-4.7": {"requests": {"count": count, "cost": count}, "usage": usage}}
        return {"type": "session.shutdown", "id": f"x{count}", "data": {"shutdownType": "routine",
                "totalPremiumRequests": count, "modelMetrics": metrics}}  # fmt: skip

    lines = (SESSION / "events.jsonl").read_text().splitlines()
    text = "\n".join([*lines, json.dumps(shutdown(3, 90000)), json.dumps(shutdown(2, 30000))])
    result = import_text(text, name="events.jsonl")
    assert result.session["modelMetrics"] == {
        "claude-opus-4.7": {"inputTokens": 120000, "outputTokens": 1200, "cacheReadTokens": 60000,
                            "cacheWriteTokens": 0, "reasoningTokens": 0, "requests": 5}}  # fmt: skip
    # the fixture's own last line is a shutdown without modelMetrics (as the fixture was written)
    assert result.skipped_lines["session.shutdown"] == [len(lines), len(lines) + 1, len(lines) + 2]


def test_a_prompt_run_without_session_start_takes_its_model_from_tools_updated() -> None:
    # a real `copilot -p --output-format json` run (2026-03): no session.start; the model is named by the
    # ephemeral session.tools_updated event only
    events = [
        {"type": "session.tools_updated", "data": {"model": "gpt-5.4"}, "id": "e1", "ephemeral": True},
        {"type": "user.message", "data": {"content": "Respond with just the word hello."}, "id": "e2"},
        {"type": "assistant.turn_start", "data": {"turnId": "0"}, "id": "e21"},
        {
            "type": "assistant.message",
            "data": {"messageId": "m", "content": "hello", "toolRequests": [], "outputTokens": 31},
            "id": "e3",
        },
    ]
    result = import_text("\n".join(json.dumps(e) for e in events), name="events.jsonl")
    assert result.format == "copilot-cli" and result.session["model"] == "gpt-5.4"
    assert [m.type for m in result.messages] == ["user_input", "final_answer"]


def test_an_abort_is_an_event_and_a_repeated_system_message_is_not_added_again() -> None:
    # Copilot CLI 1.0.64: `abort` (the user stopped a turn) has no area in its type; the system prompt is
    # written again for each interaction, the same prompt sent in its place
    prompt = {"type": "system.message", "data": {"role": "system", "content": "You are Copilot."}}
    events = [
        {**prompt, "id": "e0"},
        {"type": "user.message", "data": {"content": "first"}, "id": "e1"},
        {"type": "assistant.turn_start", "data": {"turnId": "1"}, "id": "e2"},
        {"type": "abort", "data": {"reason": "user_initiated"}, "id": "e3"},
        {**prompt, "id": "e4"},
        {"type": "user.message", "data": {"content": "sorry, wrong chat"}, "id": "e5"},
    ]
    result = import_text("\n".join(json.dumps(e) for e in events), name="events.jsonl")
    assert result.problems == []
    assert [m.type for m in result.messages] == ["system_prompt", "user_input", "user_input"]
    assert result.skipped_lines["abort"] == [4]
    assert result.skipped_lines["system.message repeating the system prompt"] == [5]


def test_a_one_call_sessions_shutdown_totals_are_that_calls_usage() -> None:
    # Copilot CLI 1.0.68 (a real session's counts): one request, its assistant.usage not kept on disk
    metrics = {"gpt-5.4-mini": {"requests": {"count": 1, "cost": 0.33},
                                "usage": {"inputTokens": 15517, "outputTokens": 45, "cacheReadTokens": 0,
                                          "cacheWriteTokens": 0, "reasoningTokens": 30}}}  # fmt: skip
    events = [
        {"type": "session.start", "id": "e0", "data": {"sessionId": "s", "copilotVersion": "1.0.68"}},
        {"type": "user.message", "id": "e1", "data": {"content": "hello"}},
        {"type": "assistant.message", "id": "e2", "data": {"content": "hi", "toolRequests": []}},
        {"type": "session.shutdown", "id": "e3", "data": {"modelMetrics": metrics}},
    ]
    result = import_text("\n".join(json.dumps(e) for e in events), name="events.jsonl")
    usage = result.messages[-1].meta("usage")
    assert (usage["model"], usage["promptTokens"], usage["outputTokens"]) == ("gpt-5.4-mini", 15517, 45)
    two = [*events[:3], events[2], events[3]]  # two replies, one request counted: nothing is guessed
    assert not any(m.meta("usage") for m in import_text("\n".join(json.dumps(e) for e in two)).messages)


def test_input_tokens_include_the_cache_write_which_is_kept_as_such() -> None:
    # a real Copilot CLI 1.0.55 events.jsonl (qiaolei81/copilot-session-viewer, MIT,
    # __tests__/fixtures/sessions/copilot-cli/session-demo/events.jsonl, its session.shutdown line): each
    # model's inputTokens is its tokenDetails' input + cache read + cache write (8 + 54,064 + 27,594 and
    # 17 + 13,964 + 3,069), so the cache write is part of the prompt, not plain input; the same repository's
    # 1.0.49 session-medium/events.jsonl agrees (48,243 = 4 + 24,072 + 24,167)
    real = {"claude-opus-4.7-1m-internal": {"inputTokens": 81666, "outputTokens": 521,
                                            "cacheReadTokens": 54064, "cacheWriteTokens": 27594,
                                            "reasoningTokens": 0, "input": 8},
            "claude-haiku-4.5": {"inputTokens": 17050, "outputTokens": 226, "cacheReadTokens": 13964,
                                 "cacheWriteTokens": 3069, "reasoningTokens": 0, "input": 17}}  # fmt: skip
    for c in real.values():
        assert c["inputTokens"] == c["input"] + c["cacheReadTokens"] + c["cacheWriteTokens"]
    # a one-call session with such counts: the call's usage keeps the cache write
    usage = {k: v for k, v in real["claude-haiku-4.5"].items() if k != "input"}
    events = [
        {"type": "session.start", "id": "e0", "data": {"sessionId": "s", "copilotVersion": "1.0.55-1"}},
        {"type": "user.message", "id": "e1", "data": {"content": "hello"}},
        {"type": "assistant.message", "id": "e2", "data": {"content": "hi", "toolRequests": []}},
        {"type": "session.shutdown", "id": "e3",
         "data": {"modelMetrics": {"claude-haiku-4.5": {"requests": {"count": 1}, "usage": usage}}}},
    ]  # fmt: skip
    text = "\n".join(json.dumps(e) for e in events)
    got = import_text(text, name="events.jsonl").messages[-1].meta("usage")
    assert (got["promptTokens"], got["cacheReadTokens"], got["cacheWriteTokens"]) == (17050, 13964, 3069)
    # the fixture's assistant.usage lines count the same way (18,342 = 322 + 18,020 written)
    first = next(m for m in import_file(SESSION).messages if m.meta("usage"))
    assert (first.meta("usage")["promptTokens"], first.meta("usage")["cacheWriteTokens"]) == (18342, 18020)
    # a cache write the input cannot hold is named, not taken
    bad = {**usage, "cacheWriteTokens": 5000}
    events[3]["data"]["modelMetrics"]["claude-haiku-4.5"]["usage"] = bad
    result = import_text("\n".join(json.dumps(e) for e in events), name="events.jsonl")
    assert not result.messages[-1].meta("usage")
    assert any("cacheWriteTokens" in str(p) for p in result.problems)
