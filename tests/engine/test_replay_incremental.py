"""A replay carries each stage's last run into the next step (and appends to its lists): every step it makes
equals a fresh `build` of that step from empty memories, over random sessions and policies."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import event, given, settings
from hypothesis import strategies as st

from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.replay import build_step, iter_session_steps, with_persisted
from engine.stage_cache import forget_earlier_builds
from engine.tokens import DefaultTokenizer
from tests.engine.test_stage_reuse import TOKENIZER, comparable

NOW = 1_700_000_000_000
WORDS = ("parse", "the", "ledger", "rounding", "totals", "invoice", "cache", "retry", "schema", "field")


def _text(draw: st.DrawFn, most: int) -> str:
    return " ".join(draw(st.lists(st.sampled_from(WORDS), min_size=1, max_size=most)))


@st.composite
def sessions(draw: st.DrawFn) -> list[AiMessage]:
    """Turns of a user input, tool groups (parallel calls, the checkpoint tool, a missing output) and an
    answer; outputs and answers long enough that a small budget summarizes and compresses."""
    out = [AiMessage("sys", "system", "system_prompt", "You are a careful coding agent.", 0)]
    for turn in range(draw(st.integers(1, 9))):
        out.append(AiMessage(f"u{turn}", "user", "user_input", _text(draw, 12), turn))
        for group in range(draw(st.integers(0, 4))):
            name = draw(st.sampled_from(("read_file", "read_file", "grep", "context_checkpoint")))
            ids = [f"c{turn}_{group}_{k}" for k in range(draw(st.integers(1, 2)))]
            calls = [
                {"id": i, "type": "function", "function": {"name": name, "arguments": json.dumps({"q": i})}}
                for i in ids
            ]
            meta: dict[str, Any] = {"tool_calls": calls}
            out.append(AiMessage(f"a{turn}_{group}", "assistant", "tool_calls", "", turn, meta))
            for i in ids if draw(st.integers(0, 9)) else ids[:-1]:
                body = _text(draw, 60) * draw(st.integers(1, 30))
                meta = {"tool_call_id": i, "tool_name": name}
                out.append(AiMessage(f"t{i}", "tool", "tool_output", body, turn, meta))
        answer = _text(draw, 60) * draw(st.integers(1, 12))
        out.append(AiMessage(f"f{turn}", "assistant", "final_answer", answer, turn))
    return out


POLICIES = st.fixed_dictionaries(
    {
        "budget": st.fixed_dictionaries(
            {"maxTokens": st.integers(1_000, 4_000), "reservedForResponse": st.integers(100, 600)}
        ),
        "summarization": st.fixed_dictionaries({"triggerThreshold": st.floats(0.1, 0.8)}),
        "toolHistory": st.fixed_dictionaries(
            {
                "strategy": st.sampled_from(("per-pair", "per-run", "none")),
                "retentionMode": st.sampled_from(("compress", "drop")),
                "keepLatestToolPairs": st.integers(0, 3),
                "keepLatestRuns": st.integers(0, 2),
            }
        ),
    }
)


@settings(max_examples=60, deadline=None)
@given(messages=sessions(), layer=POLICIES, detail=st.booleans(), data=st.data())
def test_every_replayed_step_equals_a_fresh_build_of_it(messages, layer: dict[str, Any], detail, data):
    policy = define_context_policy(layer)
    options = {"tokenizer": TOKENIZER, "now": NOW, "detail": detail}
    forget_earlier_builds()
    steps = list(iter_session_steps(messages, policy, **options))
    event(f"summaries persisted: {min(sum(s.persisted is not None for s in steps), 3)}+")
    picked = data.draw(st.sets(st.integers(1, len(steps)), min_size=1, max_size=4), label="steps")
    for number in sorted(picked):
        step = steps[number - 1]
        made = [(s.point.message_count, s.persisted) for s in steps[: number - 1] if s.persisted is not None]
        history = with_persisted(messages, step.point.message_count, made)
        forget_earlier_builds()
        # a tokenizer with nothing counted: the replay's counts (its created messages counted once, before
        # their ids are scoped; P2's answers kept by metadata) are checked against fresh ones
        fresh = build_step(history, policy, step.tick, **options | {"tokenizer": DefaultTokenizer()})
        assert [e.id for e in history if e.type == "history_summary"] == list(step.carried_ids)
        assert comparable(step.result) == comparable(fresh), number


@settings(max_examples=20, deadline=None)
@given(messages=sessions(), layer=POLICIES)
def test_every_step_equals_a_fresh_build_while_outputs_fork_and_lists_are_handed_on(messages, layer):
    """Each step's compression output grows or forks the last step's (`engine.lineage`: the next stage
    compares only past the fork) and purification hands on what left, and its event, while those stay the
    same: every step of the replay, not a few, is compared with a fresh build of it."""
    policy = define_context_policy(layer)
    options = {"tokenizer": TOKENIZER, "now": NOW, "detail": False}
    forget_earlier_builds()
    steps = list(iter_session_steps(messages, policy, **options))
    made = []
    for step in steps:
        history = with_persisted(messages, step.point.message_count, made)
        forget_earlier_builds()
        fresh_options = options | {"tokenizer": DefaultTokenizer()}
        fresh = build_step(history, policy, step.tick, **fresh_options)
        assert comparable(step.result) == comparable(fresh), step.number
        if step.persisted is not None:
            made.append((step.point.message_count, step.persisted))
