"""Importers keep what the provider counted: one usage per model call, on the call's last message; billed
calls no imported message carries are `other_calls`; bad usage is a named problem, never a sample."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.importers import import_file, import_text
from engine.session import dump_session_text, parse_session_text

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "real-sessions"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"real sessions not found at {SHARED}")


def jsonl(*entries: object) -> str:
    return "\n".join(json.dumps(e) for e in entries) + "\n"


def cc_line(uuid: str, parent: str | None, message: dict, **extra) -> dict:
    return {
        "type": message["role"],
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": "s",
        "message": message,
        "timestamp": "2026-01-01T00:00:00Z",
        **extra,
    }


def usage(inp: int, read: int = 0, write: int = 0, out: int = 1) -> dict:
    return {
        "input_tokens": inp,
        "cache_read_input_tokens": read,
        "cache_creation_input_tokens": write,
        "output_tokens": out,
    }


def test_claude_code_call_over_several_lines_counts_once_with_its_last_usage() -> None:
    text = jsonl(
        cc_line("u1", None, {"role": "user", "content": "hi"}),
        cc_line(
            "a1",
            "u1",
            {
                "role": "assistant",
                "id": "msg_A",
                "model": "claude-opus-4-6",
                "content": [{"type": "thinking", "thinking": "hm"}],
                "usage": usage(3, 100, 20, 1),
            },
        ),
        cc_line(
            "a2",
            "a1",
            {
                "role": "assistant",
                "id": "msg_A",
                "model": "claude-opus-4-6",
                "content": [{"type": "text", "text": "hello"}],
                "usage": usage(3, 100, 20, 57),
            },
        ),
    )
    result = import_text(text, "claude-code", name="t.jsonl")
    marked = [
        (m.id, m.meta("usage")["promptTokens"], m.meta("usage")["outputTokens"])
        for m in result.messages
        if m.meta("usage")
    ]
    assert marked == [("a2", 123, 57)]
    assert result.other_calls == [] and result.problems == []


def test_claude_code_abandoned_branch_calls_are_billed_other_calls() -> None:
    def reply(uuid: str, parent: str, msg_id: str, tokens: int) -> dict:
        return cc_line(
            uuid,
            parent,
            {
                "role": "assistant",
                "id": msg_id,
                "model": "claude-haiku-4-5",
                "content": [{"type": "text", "text": uuid}],
                "usage": usage(tokens),
            },
        )

    text = jsonl(
        cc_line("u0", None, {"role": "user", "content": "start"}),
        reply("a0", "u0", "msg_0", 5),
        cc_line("u1", "a0", {"role": "user", "content": "first try"}),
        reply("a1", "u1", "msg_old", 10),
        cc_line("u2", "a0", {"role": "user", "content": "second try"}),  # a rewind: a second child of a0
        reply("a2", "u2", "msg_new", 12),
    )
    result = import_text(text, "claude-code", name="t.jsonl")
    assert [m.id for m in result.messages] == ["u0", "a0", "u2", "a2"]
    assert [m.id for m in result.messages if m.meta("usage")] == ["a0", "a2"]
    assert [(c["callId"], c["why"], c["line"], c["promptTokens"]) for c in result.other_calls] == [
        ("msg_old", "abandoned branch (rewound)", 4, 10)
    ]


def test_claude_code_bad_usage_is_a_named_problem_and_no_usage() -> None:
    text = jsonl(
        cc_line("u1", None, {"role": "user", "content": "hi"}),
        cc_line(
            "a1",
            "u1",
            {
                "role": "assistant",
                "id": "msg_A",
                "model": "claude-opus-4-6",
                "content": [{"type": "text", "text": "x"}],
                "usage": {"input_tokens": -1, "output_tokens": 2},
            },
        ),
    )
    result = import_text(text, "claude-code", name="t.jsonl")
    assert [str(p) for p in result.problems] == [
        "t.jsonl:2: usage.input_tokens: negative (-1); the call is treated as unrecorded"
    ]
    assert not any(m.meta("usage") for m in result.messages)


def test_claude_code_microcompact_boundary_is_reported_with_what_it_cleared() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "Read", "input": {"file_path": "a.py"}}
    result_block = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x = 1\n" * 200}
    boundary = {
        "type": "system",
        "subtype": "microcompact_boundary",
        "uuid": "b1",
        "parentUuid": "u2",
        "content": "Context microcompacted",
        "microcompactMetadata": {"trigger": "auto", "tokensSaved": 1200, "compactedToolIds": ["toolu_1"]},
    }
    text = jsonl(
        cc_line("u1", None, {"role": "user", "content": "read a.py"}),
        cc_line("a1", "u1", {"role": "assistant", "id": "m1", "content": [call], "usage": usage(10)}),
        cc_line("u2", "a1", {"role": "user", "content": [result_block]}),
        boundary,
        cc_line("a2", "b1", {"role": "assistant", "id": "m2", "content": [{"type": "text", "text": "ok"}]}),
    )
    result = import_text(text, "claude-code", name="t.jsonl")
    assert result.skipped_lines == {
        "system:microcompact_boundary: Claude Code cleared 1 earlier tool results (1200 tokens) from here "
        "on; imported whole, so the calls recorded after it are smaller than their replay": [4]
    }
    assert [m.type for m in result.messages] == ["user_input", "tool_calls", "tool_output", "final_answer"]
    assert result.messages[2].content == "x = 1\n" * 200


def _codex(*lines: tuple[str, dict]) -> str:
    return jsonl(*({"timestamp": "2025-09-25T21:12:14Z", "type": t, "payload": p} for t, p in lines))


TOKENS = {
    "type": "token_count",
    "info": {
        "last_token_usage": {"input_tokens": 900, "cached_input_tokens": 512, "output_tokens": 30},
        "total_token_usage": {"input_tokens": 900},
    },
}
CALL = {"type": "function_call", "name": "shell", "arguments": "{}", "call_id": "c1"}
OUTPUT = {"type": "function_call_output", "call_id": "c1", "output": "ok"}
USER = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "go"}]}
ANSWER = {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "done"}]}


@pytest.mark.parametrize(
    "layout", ["before", "after", "after the output"], ids=["0.40", "0.104-0.125", "0.140+"]
)
def test_codex_token_count_is_its_calls_usage_either_side_of_the_items(layout: str) -> None:
    tokens2 = json.loads(json.dumps(TOKENS))
    tokens2["info"]["last_token_usage"]["input_tokens"] = 1000
    tokens2["info"]["total_token_usage"]["input_tokens"] = 1900
    context = ("turn_context", {"model": "gpt-5-codex"})
    first = [("event_msg", TOKENS), ("response_item", CALL), ("response_item", OUTPUT)]
    second = [("event_msg", tokens2), ("response_item", ANSWER)]
    if layout == "after":
        first, second = [first[1], first[0], first[2]], second[::-1]
    elif layout == "after the output":  # the call's tool ran before its response's count was written
        first, second = first[1:] + first[:1], second[::-1]
    text = _codex(("response_item", USER), context, *first, context, *second)
    result = import_text(text, "codex", name="r.jsonl")
    marked = [
        (m.type, m.meta("usage")["promptTokens"], m.meta("usage")["model"])
        for m in result.messages
        if m.meta("usage")
    ]
    assert marked == [("tool_calls", 900, "gpt-5-codex"), ("final_answer", 1000, "gpt-5-codex")]
    assert result.messages[1].meta("usage")["cacheReadTokens"] == 512
    assert result.other_calls == []


def test_codex_repeated_token_count_is_no_new_call() -> None:
    text = _codex(
        ("response_item", USER), ("response_item", ANSWER), ("event_msg", TOKENS), ("event_msg", TOKENS)
    )
    result = import_text(text, "codex", name="r.jsonl")
    assert sum(1 for m in result.messages if m.meta("usage")) == 1
    assert result.skipped_lines == {"event_msg token_count repeating the last one": [4]}
    assert result.other_calls == []


def test_codex_token_usage_records_are_the_calls_usage_and_token_counts_then_echoes() -> None:
    # 0.147+: a token_usage_record per response; the token_count beside it must not count the call twice
    used = {"input_tokens": 700, "cached_input_tokens": 600, "output_tokens": 12}
    record = {"response_id": "resp_1", "usage": used}
    text = _codex(("response_item", USER), ("response_item", ANSWER), ("token_usage_record", record),
                  ("event_msg", TOKENS))  # fmt: skip
    result = import_text(text, "codex", name="r.jsonl")
    usage = [m.meta("usage") for m in result.messages if m.meta("usage")]
    assert [(u["promptTokens"], u["cacheReadTokens"], u["outputTokens"]) for u in usage] == [(700, 600, 12)]
    assert result.unknown == {}
    asked = {**USER, "content": [{"type": "input_text", "text": 'why is "type":"token_usage_record" here?'}]}
    quoted = _codex(("response_item", asked), ("response_item", ANSWER), ("event_msg", TOKENS))
    counted = [
        m.meta("usage")["promptTokens"] for m in import_text(quoted, "codex").messages if m.meta("usage")
    ]
    assert counted == [900]  # a message that quotes the line type is no such line


def test_codex_remote_compaction_keeps_every_listed_user_message_and_a_sealed_summary() -> None:
    first = {**USER, "content": [{"type": "input_text", "text": "first ask"}]}
    last = {**USER, "content": [{"type": "input_text", "text": "latest ask"}]}
    sealed = {"type": "compaction", "encrypted_content": "gAAAA" + "x" * 95}
    compacted = {"message": "", "replacement_history": [first, last, sealed]}
    text = _codex(("response_item", first), ("response_item", ANSWER), ("response_item", last),
                  ("compacted", compacted), ("response_item", ANSWER))  # fmt: skip
    result = import_text(text, "codex", name="r.jsonl")
    summary = next(m for m in result.messages if m.type == "history_summary")
    assert summary.content == "[encrypted compaction summary: 100 characters the transcript cannot show]"
    replaced = set(summary.meta("replacedMessageIds"))
    kept_users = [m.content for m in result.messages if m.type == "user_input" and m.id not in replaced]
    assert kept_users == ["first ask", "latest ask"]


@pytest.mark.parametrize("encrypted", ["gAAAAB...", None], ids=["encrypted", "summary only"])
def test_codex_reasoning_returned_encrypted_is_carried(encrypted: str | None) -> None:
    reasoning = {
        "type": "reasoning",
        "summary": [{"type": "summary_text", "text": "**Looking**"}],
        "encrypted_content": encrypted,
    }
    tokens = json.loads(json.dumps(TOKENS))
    tokens["info"]["last_token_usage"]["reasoning_output_tokens"] = 16  # of its 30 output tokens
    text = _codex(("response_item", USER), ("response_item", reasoning), ("response_item", CALL),
                  ("event_msg", tokens))  # fmt: skip
    result = import_text(text, "codex", name="r.jsonl")
    used = result.messages[-1].meta("usage")
    assert (used["reasoningTokens"], used.get("reasoningCarried", False)) == (16, encrypted is not None)
    reloaded = parse_session_text(dump_session_text(result.messages), "s.jsonl").messages
    assert reloaded[-1].meta("usage") == used


def test_a_usage_whose_reasoning_carried_is_not_a_boolean_is_unrecorded() -> None:
    from engine.usage import UsageProblem, read_usage

    good = read_usage({"provider": "openai", "promptTokens": 10, "outputTokens": 1, "reasoningCarried": True})
    assert not isinstance(good, UsageProblem) and good.reasoning_carried
    bad = read_usage({"provider": "openai", "promptTokens": 10, "outputTokens": 1, "reasoningCarried": "yes"})
    assert (
        str(bad)
        == "usage.reasoningCarried: expected true or false, not 'yes'; the call is treated as unrecorded"
    )


def test_gemini_tokens_go_on_the_reply() -> None:
    doc = {
        "sessionId": "s",
        "projectHash": "p",
        "messages": [
            {"id": "u", "type": "user", "content": "hi"},
            {
                "id": "g",
                "type": "gemini",
                "content": "hello",
                "model": "gemini-2.5-flash",
                "tokens": {"input": 40, "output": 5, "cached": 8, "thoughts": 2, "tool": 0, "total": 47},
            },
            {"id": "g2", "type": "gemini", "content": "x", "tokens": {"input": "many", "output": 1}},
        ],
    }
    result = import_text(json.dumps(doc), "gemini-cli", name="s.json")
    got = result.messages[1].meta("usage")
    assert (got["promptTokens"], got["cacheReadTokens"], got["outputTokens"], got["reasoningTokens"]) == (
        40,
        8,
        7,
        2,
    )
    assert [str(p) for p in result.problems] == [
        "s.json: messages[2].tokens: input: not a number (str); the call is treated as unrecorded"
    ]


def test_usage_survives_export_and_reload() -> None:
    text = _codex(("response_item", USER), ("response_item", ANSWER), ("event_msg", TOKENS))
    result = import_text(text, "codex", name="r.jsonl")
    again = parse_session_text(dump_session_text(result.messages, header=result.header("r.jsonl")), "s.jsonl")
    assert [m.meta("usage") for m in again.messages] == [m.meta("usage") for m in result.messages]


@needs_shared
def test_real_transcripts_carry_every_call() -> None:
    long = import_file(SHARED / "claude-code" / "long_session.jsonl")
    assert sum(1 for m in long.messages if m.meta("usage")) == 217  # distinct message ids with usage
    files = {Path(c["file"]).name: 0 for c in long.other_calls}
    for call in long.other_calls:
        files[Path(call["file"]).name] += 1
    assert files == {"agent-aac57f5.jsonl": 3, "agent-acompact-946d2b.jsonl": 1}
    assert long.header("long_session.jsonl")["recordedCalls"] == long.other_calls
    rollout = import_file(SHARED / "codex" / "rollout-small.jsonl")
    assert sum(1 for m in rollout.messages if m.meta("usage")) == 35  # 35 token_count events with info


def test_claude_code_partial_compaction_keeps_its_preserved_messages_and_reads_their_copies_once() -> None:
    answer = {"role": "assistant", "id": "m2", "content": [{"type": "text", "text": "9"}]}
    kept = {"anchorUuid": "s1", "uuids": ["u2", "a2"]}
    boundary = {"type": "system", "subtype": "compact_boundary", "uuid": "b1", "parentUuid": None,
                "compactMetadata": {"trigger": "manual", "preservedMessages": kept}}  # fmt: skip
    summary = cc_line("s1", "b1", {"role": "user", "content": "Summary: facts 1-8"}, isCompactSummary=True)
    text = jsonl(
        cc_line("u1", None, {"role": "user", "content": "remember 1-8"}),
        cc_line("a1", "u1", {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": "ok"}]}),
        cc_line("u2", "a1", {"role": "user", "content": "and 9"}),
        cc_line("a2", "u2", answer),
        boundary,
        summary,
        cc_line("u2", "a1", {"role": "user", "content": "and 9"}),  # the preserved lines, written again
        cc_line("a2", "u2", answer),
        cc_line("u3", "a2", {"role": "user", "content": "what now?"}),
        cc_line("a3", "u3", {"role": "assistant", "id": "m3", "content": [{"type": "text", "text": "done"}]}),
    )
    result = import_text(text, "claude-code", name="t.jsonl")
    assert [m.id for m in result.messages] == ["u1", "a1", "u2", "a2", "s1", "u3", "a3"]
    assert result.messages[4].meta("replacedMessageIds") == ["u1", "a1"]
    again = "written again with its uuid (a compaction keeps it; the first is read)"
    assert result.skipped_lines[again] == [7, 8] and "abandoned branch (rewound)" not in result.skipped_lines


def test_gemini_zero_token_placeholders_are_left_out_not_problems() -> None:
    zero = {"input": 0, "output": 0, "cached": 0, "thoughts": 0, "tool": 0, "total": 0}
    counted = {"input": 900, "output": 20, "cached": 0, "thoughts": 5, "tool": 0, "total": 925}
    doc = {"sessionId": "s", "projectHash": "p", "messages": [
        {"id": "u1", "type": "user", "content": "hi"},
        {"id": "g1", "type": "gemini", "content": "thinking…", "tokens": zero, "model": "gemini-2.5-pro"},
        {"id": "u2", "type": "user", "content": "and?"},
        {"id": "g2", "type": "gemini", "content": "done", "tokens": counted, "model": "gemini-2.5-pro"},
    ]}  # fmt: skip
    result = import_text(json.dumps(doc), "gemini-cli", name="s.json")
    assert result.problems == []
    reason = "usage of 0 prompt tokens (a placeholder): the call is treated as unrecorded"
    assert result.skipped_lines[reason] == [2]
    assert [m.id for m in result.messages if m.meta("usage")] == ["g2"]


def test_claude_code_permission_mode_lines_are_known_bookkeeping() -> None:
    text = jsonl(
        {"type": "permission-mode", "permissionMode": "plan", "sessionId": "s"},
        cc_line("u1", None, {"role": "user", "content": "hi"}),
        cc_line("a1", "u1", {"role": "assistant", "id": "m1", "content": [{"type": "text", "text": "yo"}]}),
    )
    result = import_text(text, "claude-code", name="t.jsonl")
    assert result.unknown == {} and result.skipped_lines == {"permission-mode": [1]}
