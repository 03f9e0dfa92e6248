"""Near the trigger, summarization counts every kept message's content at each step; a replay's step takes
the counts of the messages the last step counted (`engine.matched_runs`) and must still give what a first
build of that step gives, a special token included (linnkit's count raises and the provider is skipped)."""

from __future__ import annotations

import pytest

from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.replay import build_step, iter_session_steps, with_persisted
from engine.stage_cache import forget_earlier_builds
from engine.tokens import DefaultTokenizer


def _session(special_at: int | None) -> list[AiMessage]:
    out = [AiMessage("sys", "system", "system_prompt", "You are a careful agent.", 0)]
    for turn in range(150):
        question = f"question {turn} about the ledger totals " * 3
        if turn == special_at:
            question += "<|endoftext|>"
        out.append(AiMessage(f"u{turn}", "user", "user_input", question, turn))
        out.append(
            AiMessage(f"f{turn}", "assistant", "final_answer", f"answer {turn}: round half up " * 4, turn)
        )
    return out


@pytest.mark.parametrize(
    ("max_tokens", "threshold", "special_at", "counted", "fired"),
    [(8000, 0.7, None, 69, 0), (12000, 0.5, None, 30, 1), (8000, 0.7, 120, 39, 0)],
)
def test_each_replayed_steps_content_count_is_a_first_builds(
    max_tokens, threshold, special_at, counted, fired
):
    messages = _session(special_at)
    layer = {"budget": {"maxTokens": max_tokens, "reservedForResponse": 100}}
    policy = define_context_policy(layer | {"summarization": {"triggerThreshold": threshold}})
    options = {"tokenizer": DefaultTokenizer(), "detail": False, "now": 0}
    forget_earlier_builds()
    steps = list(iter_session_steps(messages, policy, **options))
    checks = [s.result.summarization_check for s in steps]
    assert sum(c is not None and c["contentTokens"] is not None for c in checks) == counted
    assert sum(c is not None and c["fired"] for c in checks) == fired
    failed = [s.number for s in steps if any("disallowed special token" in w for w in s.result.warnings)]
    assert (failed[:1], len(failed)) == (([121], 30) if special_at is not None else ([], 0))
    made = []
    for step in steps:
        history = with_persisted(messages, step.point.message_count, made)
        forget_earlier_builds()
        fresh = build_step(history, policy, step.tick, **options)
        assert (step.result.summarization_check, step.result.events, step.result.warnings) == (
            fresh.summarization_check,
            fresh.events,
            fresh.warnings,
        ), step.number
        if step.persisted is not None:
            made.append((step.point.message_count, step.persisted))
