"""The wire formatter (spec §5.6, one test per table row) and the Anthropic projection `to_anthropic`."""

from __future__ import annotations

import pytest

from engine.host_tokenizers import MockTokenizer
from engine.messages import AiMessage
from engine.wire import format_message, to_anthropic
from tests.pipeline_helpers import answer, build, call, calls, fence, output, policy, registry, sys, user

SIDECAR = [{"type": "reasoning.text", "text": "why"}]
GEMINI_CALL = {**call("c1"), "extra_content": {"google": {"thought_signature": "sig"}}}


def message(type: str, content: str = "text", role: str | None = None, **metadata) -> AiMessage:
    roles = {"system_prompt": "system", "history_summary": "system", "tool_output": "tool"}
    assistant = {"thought", "final_answer", "tool_code", "tool_calls", "task_completion"}
    role = role or roles.get(type) or ("assistant" if type in assistant else "user")
    return AiMessage("m", role, type, content, metadata=metadata or None)


def test_tool_calls_row():
    assert format_message(calls("m", GEMINI_CALL)) == {
        "role": "assistant",
        "content": None,  # empty content becomes null
        "tool_calls": [GEMINI_CALL],  # extra_content passes through untouched
    }
    with_sidecars = calls("m", call("c1"), content="let me look", reasoning_details=SIDECAR)
    with_sidecars = with_sidecars.with_metadata(provider_empty_replay_field=True)
    assert format_message(with_sidecars) == {
        "role": "assistant",
        "content": "let me look",
        "tool_calls": [call("c1")],
        "reasoning_details": SIDECAR,
        "provider_empty_replay_field": True,
    }
    assert "reasoning_details" not in format_message(calls("m", call("c1"), reasoning_details=[]))


def test_tool_calls_with_an_empty_list_lose_the_key():
    # spec §5.6: `content or None`, and the port drops linnkit's `tool_calls: []`
    assert format_message(calls("m", content="")) == {"role": "assistant", "content": None}


def test_tool_calls_without_a_list_are_not_sent():
    assert format_message(AiMessage("m", "assistant", "tool_calls", "hm", metadata={})) is None


def test_final_answer_row():
    assert format_message(answer("m", "done")) == {"role": "assistant", "content": "done"}
    flagged = answer("m", "done", reasoning_details=SIDECAR, provider_empty_replay_field=True)
    assert format_message(flagged) == {
        "role": "assistant",
        "content": "done",
        "reasoning_details": SIDECAR,
        "provider_empty_replay_field": True,
    }


def test_tool_output_row():
    assert format_message(output("m", "c1", "ok")) == {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    assert format_message(message("tool_output", "ok")) is None  # no tool_call_id: dropped


@pytest.mark.parametrize(
    ("type", "role"),
    [
        ("system_prompt", "system"),
        ("user_input", "user"),
        ("task_request", "user"),
        ("task_completion", "assistant"),
    ],
)
def test_plain_rows(type, role):
    assert format_message(message(type)) == {"role": role, "content": "text"}


def test_history_summary_row():
    assert format_message(message("history_summary", "sum")) == {"role": "system", "content": "sum"}


def test_thought_row():
    assert format_message(message("thought", "hmm")) == {"role": "assistant", "content": "<think>hmm</think>"}
    tagged = "<think>already</think> tagged"
    assert format_message(message("thought", tagged)) == {"role": "assistant", "content": tagged}


def test_context_injection_row():
    fences = registry(
        {"kind": "clock", "llmRole": "system", "placement": "after-system", "lifetime": "turn-only"}
    )
    injected = fence("m", "clock", "noon", "after-system", role="user", tz="UTC")
    assert format_message(injected, fences) == {"role": "system", "content": '<clock tz="UTC">noon</clock>'}
    assert format_message(fence("m", "other", "x", "after-system"), fences) is None  # unregistered
    assert format_message(injected) is None  # no registry


def test_tool_code_row():
    code = message("tool_code", "", tool_name="python", args={"code": "print('中')"})
    assert format_message(code) == {
        "role": "assistant",
        "content": '<tool_code>{"name":"python","arguments":{"code":"print(\'中\')"}}</tool_code>',
    }
    assert format_message(message("tool_code", "x", tool_name="python")) is None
    assert format_message(message("tool_code", "x", args={})) is None


@pytest.mark.parametrize("type", ["context_before", "context_after", "document_fragment", "image"])
def test_legacy_rows_are_dropped(type):
    assert format_message(message(type)) is None


def test_a_legacy_message_costs_budget_but_is_not_sent():
    legacy = message("document_fragment", "doc").with_(id="d1")
    result = build([sys(), legacy, user("u1")], policy(), tokenizer=MockTokenizer(10))
    assert result.kept_ids == ("sys", "d1", "u1")
    assert result.tokens.final_tokens == 30
    assert result.wire == (
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "user u1"},
    )
    assert result.warnings == ("d1: kept but not sent: the wire formatter drops document_fragment",)
    assert (result.decision_for("d1").kept, result.decision_for("d1").wire_index) == (True, None)


# -- to_anthropic -----------------------------------------------------------------------------------


def test_to_anthropic():
    wire = [
        {"role": "system", "content": "You are helpful."},
        {"role": "system", "content": "[summary]"},
        {"role": "user", "content": "find x"},
        {"role": "user", "content": "<memory>m</memory>"},
        {
            "role": "assistant",
            "content": "looking",
            "tool_calls": [
                call("c1", "search", '{"q":"x"}'),
                call("c2", "raw", "not json"),
                call("c3", "list", "[1]"),
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
        {"role": "tool", "tool_call_id": "c3", "content": "r3"},
        {"role": "user", "content": "thanks"},
        {"role": "assistant", "content": None, "tool_calls": [call("c4", "noargs", "")]},
    ]
    assert to_anthropic(wire) == {
        "system": "You are helpful.\n\n[summary]",
        "messages": [
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "find x"},
                    {"type": "text", "text": "<memory>m</memory>"},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "looking"},
                    {"type": "tool_use", "id": "c1", "name": "search", "input": {"q": "x"}},
                    {"type": "tool_use", "id": "c2", "name": "raw", "input": {"_raw": "not json"}},
                    {"type": "tool_use", "id": "c3", "name": "list", "input": {"_value": [1]}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "c1", "content": "r1"},
                    {"type": "tool_result", "tool_use_id": "c2", "content": "r2"},
                    {"type": "tool_result", "tool_use_id": "c3", "content": "r3"},
                    {"type": "text", "text": "thanks"},
                ],
            },
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "c4", "name": "noargs", "input": {}}],
            },
        ],
    }


def test_to_anthropic_of_a_build():
    messages = [sys(), user("u1"), calls("a1", call("c1")), output("t1", "c1", "r1"), user("u2")]
    result = build(messages, policy(), tokenizer=MockTokenizer(10))
    projected = to_anthropic(result.wire)
    assert projected["system"] == "You are helpful."
    assert [m["role"] for m in projected["messages"]] == ["user", "assistant", "user"]
    assert projected["messages"][2]["content"] == [
        {"type": "tool_result", "tool_use_id": "c1", "content": "r1"},
        {"type": "text", "text": "user u2"},
    ]
