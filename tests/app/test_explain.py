"""Why a step made a summary or not, in words both front ends show (playground.app.explain)."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.policy import effective_policy, set_value
from engine.replay import iter_session_steps
from engine.session import load_session
from engine.summarizer import FailingSummarizer
from playground.app.explain import summarization_verdict

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "summarization_trigger.jsonl"
REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real-sessions" / "claude-code"


@pytest.fixture(scope="module")
def sample():
    session = load_session(SAMPLE)
    return session.messages, effective_policy(session.header.data["contextPolicy"])


def last_verdict(messages, policy, **options) -> str:
    return summarization_verdict(list(iter_session_steps(messages, policy, **options))[-1].result)


def test_each_stage_of_the_trigger_says_its_numbers(sample):
    messages, policy = sample
    steps = list(iter_session_steps(messages, policy))
    assert summarization_verdict(steps[0].result) == (
        "no summary: stage 1, kept 85 ÷ remaining 2415 = 4% < trigger 50%"
    )
    assert summarization_verdict(steps[11].result) == (
        "no summary: stage 2, content-only count 1248 < threshold 1250"
    )
    assert summarization_verdict(steps[12].result) == "summary made: 19 messages (1109 tok) → 162 tok"
    higher = set_value(policy, ("summarization", "triggerThreshold"), 0.8)
    assert last_verdict(messages, higher) == "no summary: stage 2, kept 1469 < 0.9 × threshold 2000"


def test_a_failing_summarizer_is_named(sample):
    messages, policy = sample
    failing = FailingSummarizer("model unavailable")
    failed = last_verdict(messages, policy, summarizer=failing)
    assert failed == "no summary: the build failed (SUMMARIZATION_FAILED)"


def test_a_real_transcript_over_budget_says_the_trigger_was_skipped():
    if not REAL.is_dir():
        pytest.skip(f"real sessions not found at {REAL}")
    from engine.importers import import_file

    messages = import_file(REAL / "long_session.jsonl", None).messages
    policy = effective_policy({"budget": {"maxTokens": 16000}})
    verdicts = [summarization_verdict(s.result) for s in iter_session_steps(messages, policy, detail=False)]
    over = "no summary: skipped, the context is already over budget ("
    skipped = [v for v in verdicts if v.startswith(over)]
    assert len(skipped) > len(verdicts) // 2
    assert not [v for v in verdicts if v.startswith("summary made")]
