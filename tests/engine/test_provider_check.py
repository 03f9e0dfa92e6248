"""The provider check of the wire: what OpenAI and Anthropic would reject, including linnkit's two
faithful cases of a tool call sent without its result."""

from __future__ import annotations

from pathlib import Path

from engine.build import build_context
from engine.invariants import check_invariants
from engine.policy import effective_policy
from engine.provider_check import check_anthropic, check_openai, check_wire
from engine.session import load_session
from engine.wire import to_anthropic

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


def _call(call_id: str) -> dict:
    return {"id": call_id, "type": "function", "function": {"name": "grep", "arguments": '{"q": 1}'}}


def test_a_well_formed_wire_passes_both():
    wire = [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": "find it"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
        {"role": "tool", "tool_call_id": "c1", "content": "a"},
        {"role": "tool", "tool_call_id": "c2", "content": "b"},
        {"role": "assistant", "content": "found"},
    ]
    assert check_wire(wire) == []


def test_unanswered_misplaced_and_stray_results():
    wire = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [_call("c1"), _call("c2")]},
        {"role": "tool", "tool_call_id": "c1", "content": "a"},
        {"role": "user", "content": "and?"},
        {"role": "tool", "tool_call_id": "c2", "content": "late"},
        {"role": "tool", "tool_call_id": "zz", "content": "stray"},
        {"role": "assistant", "content": None},
    ]
    assert [str(p) for p in check_openai(wire)] == [
        "OpenAI would reject this request: call c2 has no result",
        "OpenAI would reject this request: the result of call c2 is not right after it",
        "OpenAI would reject this request: tool result 5 answers no call (zz)",
        "OpenAI would reject this request: assistant message 6 has no content and no tool calls",
    ]
    # Anthropic merges the user text into the results' turn: c2 is answered there, after the text
    assert [p.message for p in check_anthropic(wire)] == [
        "tool_result for zz follows no tool_use",
        "user turn 2 has text before its tool results",
        "assistant turn 3 is empty",
    ]
    # the projection, when the caller made it already, is checked as is (not made again)
    assert check_wire(wire, to_anthropic(wire)) == check_wire(wire)
    assert [p.message for p in check_anthropic(wire, {"system": "", "messages": []})] == [
        "there is no user or assistant message"
    ]


def test_blank_text_and_empty_request_for_anthropic():
    assert [p.message for p in check_anthropic([{"role": "user", "content": "  "}])] == [
        "user turn 0 has a blank text block"
    ]
    assert [p.message for p in check_anthropic([{"role": "system", "content": "x"}])] == [
        "there is no user or assistant message"
    ]


def _build(messages, policy):
    return build_context(messages, effective_policy({**policy, "contextTrace": {"enabled": True}}))


def test_always_keep_tool_calls_sends_calls_without_results():
    session = load_session(SAMPLES / "tool_loop_runs.jsonl")
    result = _build(
        session.messages, {"budget": {"maxTokens": 6000}, "mustKeep": {"alwaysKeepTypes": ["tool_calls"]}}
    )
    first = str(result.provider_problems[0])
    assert first == "OpenAI would reject this request: call call_Bcp93xq4dAO8UVAvsriC3bYW has no result"
    assert "C10_TOOL_PAIR_DECISIONS_STAY_TOGETHER" in {f.id for f in check_invariants(result).errors}


def test_checkpoint_group_with_an_unanswered_parallel_call():
    session = load_session(SAMPLES / "checkpoint_midtask.jsonl")
    extra = {"id": "c_extra", "type": "function", "function": {"name": "run_python", "arguments": "{}"}}
    messages = [
        m.with_metadata(tool_calls=[*m.tool_calls, extra]) if m.id == "m031" else m for m in session.messages
    ]
    result = _build(messages, session.header.context_policy)
    assert "checkpoint_trim_before" in result.strategies_applied
    assert [str(p) for p in result.provider_problems] == [
        "OpenAI would reject this request: call c_extra has no result",
        "Anthropic would reject this request: call c_extra has no result",
    ]
    failures = {f.id: f.message for f in check_invariants(result).errors}
    assert failures["C10_TOOL_PAIR_DECISIONS_STAY_TOGETHER"] == (
        "tool call c_extra is kept without an output (the session has none for it)"
    )


def test_default_sample_is_accepted_by_both():
    session = load_session(SAMPLES / "tool_loop_runs.jsonl")
    assert _build(session.messages, session.header.context_policy or {}).provider_problems == []
