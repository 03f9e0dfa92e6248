"""Importers: real Claude Code transcripts, hand-written OpenAI / Anthropic / Claude Code inputs."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from engine.importers import (
    ImportResult,
    Problem,
    UnknownFormatError,
    detect_format,
    format_names,
    import_file,
    import_text,
)
from engine.messages import AiMessage
from engine.session import dump_session_text, parse_session_text

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
REAL = SHARED / "real-sessions" / "claude-code"
needs_real = pytest.mark.skipif(
    not (REAL / "short.jsonl").is_file(),
    reason=f"real sessions not found at {REAL} (shared/ beside the clone)",
)


def jsonl(*entries: object) -> str:
    return "\n".join(e if isinstance(e, str) else json.dumps(e) for e in entries) + "\n"


def dicts(result: ImportResult) -> list[dict]:
    return [m.to_dict() for m in result.messages]


def tool_pairs(messages: list[AiMessage]) -> int:
    """Asserts every call has exactly one output with its id, and returns the number of pairs."""
    outputs = Counter(m.tool_call_id for m in messages if m.type == "tool_output")
    calls = [c["id"] for m in messages if m.type == "tool_calls" for c in m.tool_calls]
    assert all(outputs[cid] == 1 for cid in calls), (calls, outputs)
    assert sorted(calls) == sorted(outputs)
    return len(calls)


def assert_round_trip(result: ImportResult) -> None:
    assert [
        AiMessage.from_dict(json.loads(json.dumps(m.to_dict()))) for m in result.messages
    ] == result.messages


# -- real Claude Code transcripts ---------------------------------------------------------------------
@needs_real
def test_short_transcript() -> None:
    result = import_file(REAL / "short.jsonl")
    assert result.format == "claude-code"
    assert [(m.type, m.id[:8]) for m in result.messages] == [
        ("user_input", "7d48cbd2"),
        ("thought", "c228f841"),
        ("final_answer", "d4ad15f7"),
        ("tool_calls", "194d33b0"),
        ("tool_output", "ff80d82a"),
        ("tool_output", "2618ef5d"),
        ("user_input", "c06a9fe4"),
    ]
    assert result.skipped == {
        "file-history-snapshot": 1,
        "progress": 3,
        "empty_text": 1,
        "system:local_command": 2,
    }
    assert result.skipped_lines["progress"] == [2, 3, 9]
    assert tool_pairs(result.messages) == 2
    assert result.unpaired == [] and result.problems == []
    assert result.title == "mix phx.server doesnt seem to start"
    assert result.session["sessionId"] == "55604662-cf2a-4331-851a-ec234028f8ca"


@needs_real
def test_short_transcript_message_details() -> None:
    messages = import_file(REAL / "short.jsonl").messages
    thought, calls, rejected, interrupted = messages[1], messages[3], messages[4], messages[6]
    assert thought.content.startswith("The user is having trouble starting their Phoenix server.")
    assert thought.meta("reasoning_details")[0]["signature"].startswith("EsMCCkYICxgCKkDuNR00")
    assert thought.meta("source") == {
        "line": 6,
        "model": "claude-opus-4-6",
        "messageId": "msg_01MKH1ccEGrZGNPvu8pYiiQa",
    }
    assert [(c["id"], c["function"]["name"]) for c in calls.tool_calls] == [
        ("toolu_0116Hyi5v8ut7Ffb7d8qV1Sc", "Bash"),
        ("toolu_01FdQ8qTyVyZjE3Kw4dguQGx", "Glob"),
    ]
    assert (
        calls.tool_calls[0]["function"]["arguments"]
        == '{"command":"mix phx.server 2>&1 | head -80","timeout":30000}'
    )
    assert calls.meta("usage") == {
        "provider": "anthropic",
        "model": "claude-opus-4-6",
        "promptTokens": 3 + 13835 + 11515,  # Anthropic's input_tokens leaves out the cache read and write
        "cacheReadTokens": 11515,
        "cacheWriteTokens": 13835,
        "cacheWrite": {"5m": 0, "1h": 13835},
        "outputTokens": 13,
        "reasoningTokens": None,
        "callId": "msg_01MKH1ccEGrZGNPvu8pYiiQa",
        "raw": {
            "input_tokens": 3,
            "cache_creation_input_tokens": 13835,
            "cache_read_input_tokens": 11515,
            "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 13835},
            "output_tokens": 13,
            "service_tier": "standard",
            "inference_geo": "not_available",
        },
    }
    assert "usage" not in calls.meta("source")
    assert calls.timestamp == 1770757921117
    assert rejected.meta("is_error") is True and rejected.meta("tool_name") == "Bash"
    assert rejected.raw_output == rejected.content
    assert interrupted.content == "[Request interrupted by user for tool use]"
    assert interrupted.meta("interrupted") is True


@needs_real
def test_tool_heavy_transcript() -> None:
    result = import_file(REAL / "tool_heavy.jsonl")
    assert result.counts() == {
        "user_input": 7,  # 4 the user wrote; the caveat (isMeta), /mcp and its output: sent to the model
        "thought": 1,
        "final_answer": 1,
        "tool_calls": 4,
        "tool_output": 6,
    }
    generated = [
        (m.meta("generated"), m.meta("source")["line"]) for m in result.messages if m.meta("generated")
    ]
    assert generated == [("meta", 20), ("local_command", 21), ("local_command", 22)]
    assert tool_pairs(result.messages) == 6
    assert result.skipped == {
        "file-history-snapshot": 3,
        "progress": 10,
        "queue-operation": 2,
        "system:local_command": 2,
        "empty_text": 1,
    }
    assert result.unpaired == [] and result.problems == []
    assert len({m.id for m in result.messages}) == len(result.messages)
    assert result.session["slug"] == "dazzling-imagining-barto"


@needs_real
def test_tool_heavy_merges_a_turn_written_around_its_results() -> None:
    """msg_019BN3FR: tool_use (line 34), its result (36), a second tool_use (37), its result (38)."""
    messages = import_file(REAL / "tool_heavy.jsonl").messages
    start = next(i for i, m in enumerate(messages) if m.id.startswith("9c0157de"))
    turn = messages[start : start + 3]
    assert [m.type for m in turn] == ["tool_calls", "tool_output", "tool_output"]
    assert [c["function"]["name"] for c in turn[0].tool_calls] == ["Read", "WebFetch"]
    assert [m.meta("tool_name") for m in turn[1:]] == ["Read", "WebFetch"]
    assert turn[0].meta("usage")["outputTokens"] == 173  # the call's last line: one call, counted once


@needs_real
@pytest.mark.parametrize("name", ["short.jsonl", "tool_heavy.jsonl"])
def test_real_transcripts_detect_and_round_trip(name: str) -> None:
    assert detect_format(REAL / name) == "claude-code"
    assert detect_format(str(REAL / name)) == "claude-code"
    assert_round_trip(import_file(REAL / name))


# -- hand-written Claude Code ------------------------------------------------------------------------
def cc_user(uuid: str, content: object, **extra: object) -> dict:
    return {
        "type": "user",
        "uuid": uuid,
        "timestamp": "2026-01-01T00:00:00.000Z",
        "message": {"role": "user", "content": content},
        **extra,
    }


def cc_assistant(uuid: str, msg_id: str, blocks: list, **extra: object) -> dict:
    message = {"id": msg_id, "role": "assistant", "model": "claude-x", "content": blocks}
    return {"type": "assistant", "uuid": uuid, "message": message, **extra}


CC_SAMPLE = jsonl(
    {"type": "summary", "summary": "Someone else's session", "leafUuid": "elsewhere"},
    cc_user("u1", "Fix the build", gitBranch="main"),
    cc_assistant(
        "a1",
        "msg_1",
        [
            {"type": "thinking", "thinking": "Look first.", "signature": "sig"},
            {"type": "text", "text": "Looking."},
            {"type": "tool_use", "id": "t1", "name": "Read", "input": {"path": "a.py"}},
            {"type": "tool_use", "id": "t2", "name": "Bash", "input": {"command": "make"}},
        ],
    ),
    "{not json",
    cc_user(
        "u2",
        [
            {
                "type": "tool_result",
                "tool_use_id": "t1",
                "content": [
                    {"type": "text", "text": "print(1)"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "QUJD"},
                    },
                ],
            },
            {"type": "tool_result", "tool_use_id": "t9", "content": "late", "is_error": True},
            {"type": "text", "text": "also check b.py"},
        ],
    ),
    cc_assistant("side", "msg_s", [{"type": "text", "text": "sub-agent"}], isSidechain=True),
    cc_assistant("syn", "msg_x", [{"type": "text", "text": "No response requested."}])
    | {"message": {"model": "<synthetic>", "content": []}},
    {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": "b1",
        "compactMetadata": {"trigger": "manual", "preTokens": 1234},
    },
    cc_user("s1", "This session is being continued. Summary: fixed a.py.", isCompactSummary=True),
    {"type": "summary", "summary": "Fixing the build", "leafUuid": "u3"},
    cc_user("u3", "thanks", gitBranch="feature"),
    [1, 2],
)


def test_claude_code_hand_written_sample() -> None:
    result = import_text(CC_SAMPLE)
    assert result.format == "claude-code"
    assert [(m.id, m.role, m.type, m.content) for m in result.messages] == [
        ("u1", "user", "user_input", "Fix the build"),
        ("a1", "assistant", "thought", "Look first."),
        ("a1#1", "assistant", "final_answer", "Looking."),
        ("a1#2", "assistant", "tool_calls", ""),
        ("u2", "tool", "tool_output", "print(1)\n\n[image: image/png, 3 bytes]"),  # image: placeholder
        ("u2#1", "tool", "tool_output", "late"),
        ("u2#2", "user", "user_input", "also check b.py"),
        ("s1", "system", "history_summary", "This session is being continued. Summary: fixed a.py."),
        ("u3", "user", "user_input", "thanks"),
    ]
    assert [str(p) for p in result.problems] == [
        "<text>:4: invalid JSON (Expecting property name enclosed in double quotes at column 2)",
        "<text>:12: expected a JSON object, found list",
    ]
    assert result.skipped_lines == {
        "session_title": [1, 10],
        "sidechain (a sub-agent's own conversation)": [6],
        "synthetic": [7],
        "system:compact_boundary": [8],
    }
    assert result.unpaired == ["t2", "t9"]
    assert result.title == "Fixing the build"


def test_claude_code_tool_result_blocks_and_compaction_metadata() -> None:
    messages = {m.id: m for m in import_text(CC_SAMPLE).messages}
    assert messages["u2"].metadata == {
        "tool_call_id": "t1",
        "raw_output": "print(1)\n\n[image: image/png, 3 bytes]",
        "tool_name": "Read",
        "images": [{"media_type": "image/png", "base64Chars": 4}],
        "source": {"line": 5},
    }
    assert messages["u2#1"].meta("is_error") is True and "tool_name" not in messages["u2#1"].metadata
    assert messages["a1"].meta("reasoning_details") == [
        {"type": "reasoning.text", "signature": "sig", "format": "anthropic-claude-v1"}
    ]
    summary = messages["s1"].metadata
    replaced = ["u1", "a1", "a1#1", "a1#2", "u2", "u2#1", "u2#2"]
    assert summary["replacedMessageIds"] == replaced
    assert summary["originalMessageCount"] == 7 and summary["summarySeq"] == 0
    assert summary["includedOldSummary"] is False
    assert summary["source"] == {"line": 9, "compactMetadata": {"trigger": "manual", "preTokens": 1234}}
    chars = sum(len(messages[i].content) for i in replaced)
    assert summary["compressionRatio"] == round(len(messages["s1"].content) / chars, 4)
    assert messages["u3"].meta("source") == {"line": 11, "gitBranch": "feature"}
    assert messages["u1"].timestamp == 1767225600000
    assert messages["a1"].timestamp == 3  # no timestamp in the line: its line number


def test_claude_code_system_prompt_argument() -> None:
    result = import_text(CC_SAMPLE, system_prompt="You are Claude Code.")
    assert result.messages[0].to_dict() == {
        "id": "system-prompt",
        "role": "system",
        "type": "system_prompt",
        "content": "You are Claude Code.",
        "timestamp": 1767225600000,
    }
    assert_round_trip(result)


# -- OpenAI ------------------------------------------------------------------------------------------
OA_MESSAGES = [
    {"role": "developer", "content": "Be terse."},
    {
        "role": "user",
        "content": [
            {"type": "text", "text": "What is this?"},
            {"type": "image_url", "image_url": {"url": "https://x/cat.png"}},
        ],
    },
    {
        "role": "assistant",
        "content": "Let me look.",
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "vision", "arguments": {"q": "cat"}}}
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "a cat"},
    {
        "role": "assistant",
        "content": "A cat.",
        "reasoning_content": "Feline.",
        "reasoning_details": [{"type": "reasoning.text", "text": "Feline."}],
    },
]

OA_EXPECTED = [
    {
        "id": "oa-0",
        "role": "system",
        "type": "system_prompt",
        "content": "Be terse.",
        "timestamp": 0,
        "metadata": {"source": {"role": "developer"}},
    },
    {
        "id": "oa-1",
        "role": "user",
        "type": "user_input",
        "content": "What is this?",
        "timestamp": 1,
        "metadata": {"images": [{"url": "https://x/cat.png"}]},
    },
    {
        "id": "oa-2",
        "role": "assistant",
        "type": "tool_calls",
        "content": "Let me look.",
        "timestamp": 2,
        "metadata": {
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "vision", "arguments": '{"q":"cat"}'}}
            ]
        },
    },
    {
        "id": "oa-3",
        "role": "tool",
        "type": "tool_output",
        "content": "a cat",
        "timestamp": 3,
        "metadata": {"tool_call_id": "c1", "raw_output": "a cat", "tool_name": "vision"},
    },
    {"id": "oa-4", "role": "assistant", "type": "thought", "content": "Feline.", "timestamp": 4},
    {
        "id": "oa-4#1",
        "role": "assistant",
        "type": "final_answer",
        "content": "A cat.",
        "timestamp": 4,
        "metadata": {"reasoning_details": [{"type": "reasoning.text", "text": "Feline."}]},
    },
]


def test_openai_array() -> None:
    result = import_text(json.dumps(OA_MESSAGES, indent=2))
    assert result.format == "openai"
    assert dicts(result) == OA_EXPECTED
    assert result.problems == [] and result.unpaired == [] and result.conversations == 1
    assert result.title == "What is this?"
    assert_round_trip(result)


def test_openai_jsonl_of_messages_with_a_malformed_line() -> None:
    text = jsonl(
        *OA_MESSAGES[:3], "{broken", OA_MESSAGES[3], OA_MESSAGES[4], {"role": "wizard", "content": "?"}
    )
    result = import_text(text, "openai", name="chat.jsonl")
    assert dicts(result) == OA_EXPECTED
    assert [str(p) for p in result.problems] == [
        "chat.jsonl:4: invalid JSON (Expecting property name enclosed in double quotes at column 2)",
    ]
    # a role no chat format has, after the model's last message: bookkeeping, left out and named
    assert result.unknown == {"role 'wizard'": (None, [7])}
    assert result.skipped_lines["unknown role 'wizard'"] == [7]


def test_openai_array_problem_has_the_line_of_its_element() -> None:
    text = json.dumps([OA_MESSAGES[1], 7, {"role": "tool", "content": "orphan"}], indent=2)
    result = import_text(text, "openai")
    assert [(p.line, p.reason) for p in result.problems] == [
        (17, "expected a JSON object, found int"),
        (18, "tool message without a tool_call_id"),
    ]
    assert result.unpaired == ["oa-1"]


def test_openai_fine_tuning_lines() -> None:
    conversations = [
        {
            "messages": [
                {"role": "user", "content": f"q{i}"},
                {"role": "assistant", "content": f"a{i}", "weight": 0},
            ]
        }
        for i in range(3)
    ]
    text = jsonl(conversations[0], "not json", conversations[1], conversations[2])
    result = import_text(text, conversation=1)
    assert result.conversations == 3
    assert result.session == {"line": 3}
    assert dicts(result) == [
        {"id": "oa-0", "role": "user", "type": "user_input", "content": "q1", "timestamp": 0},
        {
            "id": "oa-1",
            "role": "assistant",
            "type": "final_answer",
            "content": "a1",
            "timestamp": 1,
            "metadata": {"source": {"weight": 0}},
        },
    ]
    assert [p.line for p in result.problems] == [2]
    assert import_text(text, conversation=-1).messages[0].content == "q2"
    with pytest.raises(
        ValueError, match=r"^conversation 3 is out of range: <text> holds 3 conversation\(s\)$"
    ):
        import_text(text, conversation=3)


def test_openai_request_with_response() -> None:
    request = {"model": "gpt-x", "messages": [{"role": "user", "content": "hi"}]}
    response = {"id": "chatcmpl-1", "choices": [{"message": {"role": "assistant", "content": "hello"}}]}
    result = import_text(jsonl(request, response))
    assert [(m.id, m.type, m.content) for m in result.messages] == [
        ("oa-0", "user_input", "hi"),
        ("oa-1", "final_answer", "hello"),
    ]
    assert result.session == {"model": "gpt-x", "line": 1}


# -- Anthropic ---------------------------------------------------------------------------------------
AN_REQUEST = {
    "model": "claude-x",
    "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}],
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Use the tool.", "signature": "s1"},
                {"type": "tool_use", "id": "tu1", "name": "weather", "input": {"city": "Paris"}},
                {"type": "tool_use", "id": "tu2", "name": "clock", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "tu1",
                    "content": [{"type": "text", "text": "18C"}, {"type": "text", "text": "sunny"}],
                },
                {"type": "tool_result", "tool_use_id": "tu2", "content": "noon", "is_error": False},
            ],
        },
        {"role": "assistant", "content": "18C and sunny at noon."},
    ],
}

AN_EXPECTED = [
    {"id": "an-system", "role": "system", "type": "system_prompt", "content": "Be brief.", "timestamp": 0},
    {"id": "an-0", "role": "user", "type": "user_input", "content": "Weather in Paris?", "timestamp": 0},
    {
        "id": "an-1",
        "role": "assistant",
        "type": "thought",
        "content": "Use the tool.",
        "timestamp": 1,
        "metadata": {
            "reasoning_details": [
                {"type": "reasoning.text", "signature": "s1", "format": "anthropic-claude-v1"}
            ]
        },
    },
    {
        "id": "an-1#1",
        "role": "assistant",
        "type": "tool_calls",
        "content": "",
        "timestamp": 1,
        "metadata": {
            "tool_calls": [
                {
                    "id": "tu1",
                    "type": "function",
                    "function": {"name": "weather", "arguments": '{"city":"Paris"}'},
                },
                {"id": "tu2", "type": "function", "function": {"name": "clock", "arguments": "{}"}},
            ]
        },
    },
    {
        "id": "an-2",
        "role": "tool",
        "type": "tool_output",
        "content": "18C\n\nsunny",
        "timestamp": 2,
        "metadata": {"tool_call_id": "tu1", "raw_output": "18C\n\nsunny", "tool_name": "weather"},
    },
    {
        "id": "an-2#1",
        "role": "tool",
        "type": "tool_output",
        "content": "noon",
        "timestamp": 2,
        "metadata": {"tool_call_id": "tu2", "raw_output": "noon", "tool_name": "clock", "is_error": False},
    },
    {
        "id": "an-3",
        "role": "assistant",
        "type": "final_answer",
        "content": "18C and sunny at noon.",
        "timestamp": 3,
    },
]


def test_anthropic_request_object() -> None:
    result = import_text(json.dumps(AN_REQUEST, indent=2))
    assert result.format == "anthropic"
    assert dicts(result) == AN_EXPECTED
    assert result.session == {"model": "claude-x"}
    assert tool_pairs(result.messages) == 2
    assert_round_trip(result)


def test_anthropic_request_problem_has_its_line() -> None:
    request = {**AN_REQUEST, "messages": [*AN_REQUEST["messages"], {"role": "robot", "content": "?"}]}
    result = import_text(json.dumps(request, indent=2), name="req.json")
    assert [str(p) for p in result.problems] == ["req.json:70: messages[4]: unknown role 'robot'"]
    assert dicts(result) == AN_EXPECTED


def test_anthropic_list_of_requests_with_a_response() -> None:
    first = {"system": "S", "messages": [{"role": "user", "content": "one"}]}
    response = {
        "id": "msg_9",
        "type": "message",
        "role": "assistant",
        "content": [{"type": "text", "text": "uno"}],
        "model": "claude-x",
        "usage": {"input_tokens": 5, "output_tokens": 2},
    }
    second = {"system": "S", "messages": [{"role": "user", "content": "two"}]}
    result = import_text(json.dumps([first, response, second]), conversation=0)
    assert result.conversations == 2
    assert [m.to_dict() for m in result.messages][2] == {
        "id": "msg_9",
        "role": "assistant",
        "type": "final_answer",
        "content": "uno",
        "timestamp": 1,
        "metadata": {
            "source": {"model": "claude-x"},
            "usage": {
                "provider": "anthropic",
                "model": "claude-x",
                "promptTokens": 5,
                "cacheReadTokens": 0,
                "cacheWriteTokens": 0,
                "cacheWrite": {"5m": 0, "1h": 0},
                "outputTokens": 2,
                "reasoningTokens": None,
                "callId": "msg_9",
                "raw": {"input_tokens": 5, "output_tokens": 2},
            },
        },
    }
    assert [
        m.content for m in import_text(json.dumps([first, response, second]), conversation=1).messages
    ] == ["S", "two"]


def test_anthropic_jsonl_of_messages_with_a_malformed_line() -> None:
    text = jsonl(
        {"role": "user", "content": "hi"},
        '{"role": "assistant", "content": [',
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": "x"},
                {"type": "text", "text": "  "},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "ghost", "content": "?"}]},
    )
    result = import_text(text, name="m.jsonl")
    assert result.format == "anthropic"
    assert [(m.id, m.type) for m in result.messages] == [
        ("an-0", "user_input"),
        ("an-1", "thought"),
        ("an-2", "tool_output"),
    ]
    assert [str(p) for p in result.problems] == ["m.jsonl:2: invalid JSON (Expecting value at column 35)"]
    assert result.skipped_lines == {"empty_text": [3]}
    assert result.unpaired == ["ghost"]


# -- detection -----------------------------------------------------------------------------------------
def test_detect_each_format(tmp_path: Path) -> None:
    linn = [{"id": "m1", "role": "user", "type": "user_input", "content": "hi", "timestamp": 0}]
    cases = {
        "claude-code": CC_SAMPLE,
        "openai": json.dumps(OA_MESSAGES),
        "anthropic": json.dumps(AN_REQUEST),
        "linn-session": json.dumps({"messages": linn}),
    }
    for expected, text in cases.items():
        assert detect_format(text) == expected
        path = tmp_path / f"{expected}.json"
        path.write_text(text, encoding="utf-8")
        assert detect_format(path) == expected
    assert detect_format(jsonl({"kind": "linn-session", "version": 1}, *linn)) == "linn-session"
    assert detect_format(jsonl({"messages": [{"role": "user", "content": "x"}]})) == "openai"
    assert (
        detect_format(jsonl({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a"}]}))
        == "anthropic"
    )


def test_detect_and_import_refusals(tmp_path: Path) -> None:
    supported = ", ".join(format_names())
    with pytest.raises(UnknownFormatError) as caught:
        detect_format('{"hello": "world"}')
    assert str(caught.value) == f"<text>: unrecognised transcript format; supported: {supported}"
    session = tmp_path / "s.json"
    session.write_text(
        json.dumps([{"id": "m1", "role": "user", "type": "user_input", "content": "hi"}]), encoding="utf-8"
    )
    with pytest.raises(
        ValueError, match="is already a linn session: open it as it is .*, no import needed$"
    ):
        import_file(session)
    with pytest.raises(ValueError) as caught:
        import_text("[]", "csv")
    assert str(caught.value) == f"unknown format 'csv'; choose one of {supported}"
    with pytest.raises(ValueError, match="^<text> has its own system prompt; leave out system_prompt$"):
        import_text(json.dumps(OA_MESSAGES), system_prompt="x")


def test_problem_text() -> None:
    assert str(Problem("a.jsonl", 3, "bad")) == "a.jsonl:3: bad"
    assert str(Problem("a.json", None, "bad")) == "a.json: bad"


def test_unmapped_blocks_are_kept_small_and_counted() -> None:
    big = {"type": "web_search_tool_result", "tool_use_id": "srv1", "content": "x" * 2000}
    message = {
        "role": "assistant",
        "content": [
            {"type": "server_tool_use", "id": "srv1", "name": "web_search", "input": {}},
            big,
            {"type": "text", "text": "Found it."},
        ],
    }
    result = import_text(jsonl({"role": "user", "content": "search"}, message), "anthropic")
    assert result.messages[-1].to_dict() == {
        "id": "an-1",
        "role": "assistant",
        "type": "final_answer",
        "content": "Found it.",
        "timestamp": 1,
        "metadata": {
            "unmappedBlocks": [
                {"type": "server_tool_use", "id": "srv1", "name": "web_search", "input": {}},
                {"type": "web_search_tool_result", "omittedChars": len(json.dumps(big))},
            ]
        },
    }
    assert result.skipped_lines == {"block:server_tool_use": [2], "block:web_search_tool_result": [2]}


def test_jsonl_lines_end_at_newline_only() -> None:
    text = jsonl(cc_user("u1", "one\u2028two\x0cthree")).replace("\\u2028", "\u2028")
    assert "\u2028" in text
    result = import_text(text.replace("\n", "\r\n"))
    assert [m.content for m in result.messages] == ["one\u2028two\x0cthree"]
    assert result.problems == []


@needs_real
def test_imported_transcript_saves_and_loads_as_a_session() -> None:
    result = import_file(REAL / "tool_heavy.jsonl")
    loaded = parse_session_text(dump_session_text(result.messages, {"kind": "linn-session", "version": 1}))
    assert loaded.problems == []
    assert loaded.messages == result.messages
