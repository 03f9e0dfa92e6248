"""Replay as linnkit's runtime lives it: a summary is made once, persisted, and carried by later steps."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.messages import AiMessage
from engine.policy import effective_policy
from engine.replay import PlannedStep, build_at_step, iter_session_steps, run_replay
from engine.session import load_session
from engine.summarizer import FailingSummarizer, FixedSummarizer

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "summarization_trigger.jsonl"


def _repeated(messages: list[AiMessage], times: int) -> list[AiMessage]:
    """The session's conversation said `times` times over, with fresh ids (one system prompt)."""
    out = [m for m in messages if m.type == "system_prompt"]
    for k in range(times):
        for message in messages:
            if message.type == "system_prompt":
                continue
            data = message.to_dict()
            data["id"] = f"{message.id}~{k}"
            out.append(AiMessage.from_dict(data))
    return out


@pytest.fixture(scope="module")
def four_times():
    session = load_session(SAMPLE)
    policy = effective_policy(session.header.data["contextPolicy"])
    return _repeated(session.messages, 4), policy


def test_the_four_times_sample_summarizes_only_where_a_summary_is_made(four_times):
    messages, policy = four_times
    steps = list(iter_session_steps(messages, policy))
    made = [s.number for s in steps if "S" in s.markers]
    assert len(steps) == 49
    assert made == [13, 21, 29, 37, 45]
    assert [s.number for s in steps if s.persisted is not None] == made
    # the sawtooth: each summary cuts the kept context, which then grows again
    tokens = [s.result.tokens.final_tokens for s in steps]
    assert all(tokens[n - 1] < tokens[n - 2] for n in made)
    assert all(tokens[n] > tokens[n - 1] for n in made if n < len(steps))
    # every later step carries exactly the latest summaries made so far, in creation order
    ids = [s.persisted.id for s in steps if s.persisted]
    assert len(set(ids)) == len(ids)
    assert steps[20].carried_ids == (ids[0],)
    assert steps[-1].carried_ids == tuple(ids)


def test_a_step_record_counts_the_carried_summaries_the_earlier_records_made(four_times):
    """`replay --json`'s record names the summary a step made and counts those it was given (the earlier
    records' `summaryMade`), so no record grows with the number of summaries."""
    messages, policy = four_times
    records = [s.summary() for s in iter_session_steps(messages, policy)]
    made = [r["summaryMade"] for r in records if r["summaryMade"]]
    assert len(made) == 5
    for number, record in enumerate(records):
        assert record["summariesCarried"] == sum(1 for r in records[:number] if r["summaryMade"])
    assert records[-1]["summariesCarried"] == 5


def test_a_carried_summary_is_on_the_wire_and_replaces_what_it_listed(four_times):
    messages, policy = four_times
    steps = list(iter_session_steps(messages, policy))
    first = steps[12].persisted
    later = steps[15].result
    assert first.id in later.kept_ids
    assert first.metadata["summarySeq"] == 1
    replaced = set(first.metadata["replacedMessageIds"])
    assert replaced and not replaced & set(later.kept_ids)


def test_build_at_step_uses_the_summaries_persisted_before_it(four_times):
    messages, policy = four_times
    steps = list(iter_session_steps(messages, policy))
    _, tick, result = build_at_step(messages, 16, policy)
    assert result.wire == steps[15].result.wire
    assert tick.step_count == steps[15].tick.step_count
    with pytest.raises(IndexError, match="step 0 is outside 1..49"):
        build_at_step(messages, 0, policy)


def test_a_failed_step_persists_nothing_and_later_steps_still_run(four_times):
    messages, policy = four_times
    plan = [PlannedStep(upto, None) for upto in (26, 40, 52)]
    failing = list(run_replay(messages, plan, policy, summarizer=FailingSummarizer("down"), now=5))
    assert [s.result.error.code if s.result.error else None for s in failing] == [
        "SUMMARIZATION_FAILED",
        "SUMMARIZATION_FAILED",
        "SUMMARIZATION_FAILED",
    ]
    assert [s.persisted for s in failing] == [None, None, None]
    working = list(run_replay(messages, plan, policy, summarizer=FixedSummarizer("short"), now=5))
    assert working[0].persisted is not None and working[0].persisted.timestamp == 5
    assert working[1].carried_ids == (working[0].persisted.id,)


def test_a_plan_must_move_forward(four_times):
    messages, policy = four_times
    with pytest.raises(ValueError, match="replay step 2: upto 4 must increase"):
        list(run_replay(messages, [PlannedStep(4, None), PlannedStep(4, None)], policy))


def test_one_step_rebuilt_from_the_persisted_summaries_equals_the_replayed_one(four_times):
    from engine.replay import build_step, with_persisted

    messages, policy = four_times
    steps = list(iter_session_steps(messages, policy))
    made = [(s.point.message_count, s.persisted) for s in steps if s.persisted]
    step = steps[30]
    history = with_persisted(messages, step.point.message_count, made)
    assert [m.id for m in history if m.type == "history_summary"] == list(step.carried_ids)
    again = build_step(history, policy, step.tick)
    assert again.kept_ids == step.result.kept_ids
    assert again.wire == step.result.wire


def test_created_ids_are_scoped_by_the_summaries_held_and_never_meet_a_persisted_summary():
    session = load_session(SAMPLE.parent / "tool_loop_runs.jsonl")
    tight = {
        "budget": {"maxTokens": 1600, "reservedForResponse": 200},
        "summarization": {"triggerThreshold": 0.3},
    }
    policy = effective_policy(session.header.data["contextPolicy"] | tight)
    known = {m.id for m in session.messages}
    full = list(iter_session_steps(session.messages, policy))
    replaced: set[str] = set()  # what the summaries persisted so far replaced
    scopes, met = set(), 0
    for step in full:
        summaries = {*step.carried_ids, step.persisted.id if step.persisted else None}
        ids_in = {m.id for m in step.result.preprocessed}
        created = {i for i in ids_in if i not in known and i not in summaries}
        scope = f":e{len(step.carried_ids)}:"
        assert all(scope in i for i in created), step.number
        assert not created & replaced, step.number
        if step.persisted is not None:
            ids = set(step.persisted.metadata["replacedMessageIds"])
            met += any(scope in i for i in ids)  # the summary replaced created messages of its scope
            replaced |= ids
        if created:
            scopes.add(scope)
    assert {":e0:", ":e1:"} <= scopes and met  # created messages before and after a summary


def test_a_detail_free_series_has_the_same_numbers():
    session = load_session(SAMPLE.parent / "tool_loop_runs.jsonl")
    policy = effective_policy(session.header.data["contextPolicy"])
    full = list(iter_session_steps(session.messages, policy))
    light = list(iter_session_steps(session.messages, policy, detail=False))
    assert [s.result.tokens for s in light] == [s.result.tokens for s in full]
    assert [s.markers for s in light] == [s.markers for s in full]
    assert [s.result.wire for s in light] == [s.result.wire for s in full]
    assert light[-1].result.decisions == () and full[-1].result.decisions


def test_a_carried_summary_card_says_so(four_times):
    messages, policy = four_times
    steps = list(iter_session_steps(messages, policy))
    made = steps[12].result
    carried = steps[15].result
    made_card = next(c for c in made.cards if c.type == "history_summary")
    carried_card = next(c for c in carried.cards if c.type == "history_summary")
    assert made_card.marks == ("summary",)
    assert carried_card.marks == ("summary", "carried")
