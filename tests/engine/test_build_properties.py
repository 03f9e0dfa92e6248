"""Properties that hold for any session and any valid policy: the invariants, and pairs never split."""

from __future__ import annotations

import math
from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import assemble
from engine.build import build_context
from engine.host_tokenizers import MockTokenizer
from engine.invariants import check_invariants
from engine.messages import AiMessage
from engine.pipeline import final_order
from engine.policy import define_context_policy
from engine.providers import working_memory
from engine.stage_cache import forget_earlier_builds

WORDS = st.text(alphabet="abc xyz,.", min_size=0, max_size=60)


@st.composite
def sessions(draw) -> list[AiMessage]:
    messages = [AiMessage("sys", "system", "system_prompt", "You are careful.")]
    for turn in range(draw(st.integers(1, 6))):
        messages.append(AiMessage(f"u{turn}", "user", "user_input", draw(WORDS) or "go"))
        for g in range(draw(st.integers(0, 4))):
            call_id = f"c{turn}_{g}"
            call = {"id": call_id, "type": "function", "function": {"name": "grep", "arguments": '{"q":"x"}'}}
            messages.append(
                AiMessage(f"a{turn}_{g}", "assistant", "tool_calls", "", metadata={"tool_calls": [call]})
            )
            if draw(st.booleans()) or g == 0:  # some calls stay unanswered (orphans)
                output = "x" * draw(st.integers(0, 900))
                messages.append(
                    AiMessage(
                        f"t{turn}_{g}",
                        "tool",
                        "tool_output",
                        output,
                        metadata={"tool_call_id": call_id, "tool_name": "grep"},
                    )
                )
        if draw(st.booleans()):
            messages.append(AiMessage(f"f{turn}", "assistant", "final_answer", draw(WORDS) or "done"))
    return messages


policies = st.fixed_dictionaries(
    {
        "budget": st.fixed_dictionaries(
            {
                "maxTokens": st.integers(400, 6000),
                "reservedForResponse": st.just(100),
                "workingMemoryBudgetPercentage": st.sampled_from([0.3, 0.5, 0.7, 1.0]),
            }
        ),
        "toolHistory": st.fixed_dictionaries(
            {
                "strategy": st.sampled_from(["per-run", "per-pair", "none"]),
                "retentionMode": st.sampled_from(["drop", "compress"]),
                "maxPairTokens": st.integers(50, 600),
                "maxOutputSummaryTokens": st.just(40),
            }
        ),
        "workingMemory": st.fixed_dictionaries(
            {"minToolInteractionsToKeep": st.integers(0, 2), "toolPairingSearchRange": st.integers(1, 10)}
        ),
        "summarization": st.fixed_dictionaries(
            {
                "triggerThreshold": st.sampled_from([0.05, 0.5, 0.7]),
                "failureBehavior": st.sampled_from(["fail-fast", "continue-if-within-budget"]),
            }
        ),
        "contextTrace": st.just({"enabled": True}),
    }
)


def _checked_order(states, kept=None):
    """The final order, checked against every state read and sorted by (block, index) (spec §5.5)."""
    final = final_order(states, kept)
    block = {"system_prompt": 0, "history_summary": 1}
    every = sorted((s for s in list(states) if s.kept), key=lambda s: (block.get(s.message.type, 2), s.index))
    assert [id(s) for s in final] == [id(s) for s in every]
    return final


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), policies)
def test_any_build_keeps_pairs_together_and_its_trace_consistent(messages, layer):
    with patch.object(assemble, "final_order", _checked_order):
        result = build_context(messages, define_context_policy(layer), tokenizer=MockTokenizer(5, 10, 4))
    if result.error is not None:
        assert result.error.code in ("TOOL_HISTORY_OVERFLOW", "SUMMARIZATION_FAILED")
        return
    counted = result.count_dropped()  # before the decisions are made: without them
    failures = {f.id for f in check_invariants(result).errors}
    assert failures <= {"C6_FINAL_TOKENS_WITHIN_BUDGET"}  # must-keep or forced groups may overflow
    if "C6_FINAL_TOKENS_WITHIN_BUDGET" in failures:
        assert any(e.kind == "overflow" for e in result.events)
    kept_calls = {c["id"] for m in result.messages if m.type == "tool_calls" for c in m.tool_calls}
    kept_outputs = {m.tool_call_id for m in result.messages if m.type == "tool_output"}
    assert kept_outputs <= kept_calls  # no output without its call
    for message in result.messages:  # no call without its outputs
        if message.type == "tool_calls":
            assert {c["id"] for c in message.tool_calls} <= kept_outputs
    assert len(result.decisions) >= len(messages)
    assert counted == result.dropped_count() == sum(1 for d in result.decisions if not d.kept)
    assert [d.message_id for d in result.decisions[: len(messages)]] == [m.id for m in messages]


def _reads_every_message(real_floors):
    """Working memory's floors with nothing ever ruled out: P2 and P3 then read every older message (P2 every
    message, not only its candidates)."""

    def floors(states):
        real = real_floors(states)
        never = [-math.inf] * len(states)
        every = list(range(len(states)))
        strategies = [working_memory._text_strategy(s.message) for s in states]
        counts = (len(states), len(every), real.compressed_count)
        return working_memory._Floors(never, never, real.compressed_indices, every, strategies, *counts)

    return floors


def _decided(result) -> list[tuple]:
    return [(d.message_id, d.kept, d.phase, d.strategy, d.tokens) for d in result.decisions]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    sessions(),
    policies,
    st.sampled_from([0.05, 0.3, 0.6]),
    st.integers(0, 3),
    st.integers(0, 2),
    st.booleans(),
)
def test_working_memory_stopping_once_nothing_left_fits_keeps_what_reading_every_message_keeps(
    messages, layer, wm_share, min_groups, keep_runs, summarize
):
    """Also with groups kept whole older than compressed messages, P3 forced by the minimum, and no summary
    (which would hide working memory's decisions)."""
    layer = {
        **layer,
        "summarization": {
            **layer["summarization"],
            "triggerThreshold": layer["summarization"]["triggerThreshold"] if summarize else 1.0,
        },
        "budget": {**layer["budget"], "workingMemoryBudgetPercentage": wm_share},
        "toolHistory": {
            **layer["toolHistory"],
            "keepLatestRuns": keep_runs,
            "keepLatestToolPairs": keep_runs,
        },
        "workingMemory": {**layer["workingMemory"], "minToolInteractionsToKeep": min_groups},
    }
    policy, tokenizer = define_context_policy(layer), MockTokenizer(5, 10, 4)
    forget_earlier_builds()
    stopping = build_context(messages, policy, tokenizer=tokenizer, now=0)
    forget_earlier_builds()
    with patch.object(working_memory, "_floors", _reads_every_message(working_memory._floors)):
        reading_all = build_context(messages, policy, tokenizer=tokenizer, now=0)
    assert stopping.error == reading_all.error
    assert [m.to_dict() for m in stopping.messages] == [m.to_dict() for m in reading_all.messages]
    assert _decided(stopping) == _decided(reading_all)
    assert [e.title for e in stopping.events] == [e.title for e in reading_all.events]
