"""Which messages a build sent as written, read from its wire alone, and the user requests a replay lost,
step by step: each equals what every decision of the build says, over random sessions and policies."""

from __future__ import annotations

import gc
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.messages import AiMessage
from engine.pipeline import Pipeline
from engine.policy import define_context_policy
from engine.replay import iter_session_steps
from engine.requests_lost import RequestsLost
from engine.result import BuildResult, as_written
from engine.stage_cache import forget_earlier_builds
from tests.engine.test_replay_incremental import NOW, POLICIES, sessions
from tests.engine.test_stage_reuse import TOKENIZER

TYPES = ("user_input", "tool_output", "tool_calls", "final_answer", "system_prompt", "history_summary")


def _from_every_decision(result: BuildResult, message_type: str) -> tuple[int, list[int], list[str]]:
    """`sent_as_written` as all the build's decisions tell it (made first, so it reads them)."""
    of_type = [d for d in result.decisions if d.index >= 0 and d.type == message_type]
    ranks = [rank for rank, d in enumerate(of_type) if as_written(d)]
    return len(of_type), ranks, [d.message_id for d in of_type]


def _repeat_some_ids(messages: list[AiMessage], data: st.DataObject) -> list[AiMessage]:
    """Some user requests take an earlier one's id (real sessions repeat ids; the loader keeps them)."""
    users = [k for k, m in enumerate(messages) if m.type == "user_input"]
    if len(users) < 2 or not data.draw(st.booleans(), label="repeat ids"):
        return messages
    out = list(messages)
    for k in users[1:]:
        if data.draw(st.booleans()):
            out[k] = replace(out[k], id=messages[users[0]].id)
    return out


@settings(max_examples=60, deadline=None)
@given(messages=sessions(), layer=POLICIES, data=st.data())
def test_the_messages_sent_as_written_read_from_the_wire_are_those_every_decision_tells(
    messages, layer, data
):
    messages = _repeat_some_ids(messages, data)
    policy = define_context_policy(layer)
    forget_earlier_builds()
    for step in iter_session_steps(messages, policy, tokenizer=TOKENIZER, now=NOW):
        result = step.result
        from_wire = {}
        for message_type in TYPES:
            found = result.sent_as_written(message_type)
            ids = [found.id_of(rank) for rank in range(found.count)]
            from_wire[message_type] = (found.count, list(found.ranks), ids)
        assert not result._all_made()  # the wire's reading made no decision list
        assert {t: _from_every_decision(result, t) for t in TYPES} == from_wire, step.number


def _lost_as_every_decision_tells(results: list[BuildResult]) -> list[tuple[int, list[str]]]:
    """Per step: the user requests not sent as written, counted, and those no earlier step lost, by id."""
    lost_before: set[str] = set()
    out = []
    for result in results:
        users = [d for d in result.decisions if d.index >= 0 and d.type == "user_input"]
        lost = [d.message_id for d in users if not as_written(d)]
        out.append((len(lost), [i for i in lost if i not in lost_before]))
        lost_before.update(lost)
    return out


@settings(max_examples=60, deadline=None)
@given(messages=sessions(), layer=POLICIES, data=st.data())
def test_a_replays_lost_requests_are_those_its_decisions_tell_step_by_step(messages, layer, data):
    messages = _repeat_some_ids(messages, data)
    forget_earlier_builds()
    options: dict[str, Any] = {"tokenizer": TOKENIZER, "now": NOW}
    ledger, results, told = RequestsLost(), [], []
    for step in iter_session_steps(messages, define_context_policy(layer), **options):
        count, newly = ledger.step(step.result)
        told.append((count, list(newly)))
        results.append(step.result)
    assert told == _lost_as_every_decision_tells(results)
    assert ledger.ids == {i for _, newly in told for i in newly}



def test_a_replays_builds_go_as_it_goes_on_without_the_cycle_collector() -> None:
    """Each step's run (its states and lists, which the result's decision readers hold) is freed when the
    next step replaces the result, not at the next collection: a paced replay collects every 2,000 steps.
    A closure over the run in the removal index it keeps made a cycle, and every run of a replay lived."""
    from tests.engine.test_cost import _sample

    messages, policy, options = _sample("summarization_trigger")
    alive = []
    gc.collect()
    gc.disable()
    try:
        for step in iter_session_steps(messages, policy, **options):
            assert step.result.sent_as_written("user_input").count >= 1
            assert all(step.result.decision_for(m.id) for m in messages[: step.point.message_count])
            alive.append(sum(isinstance(o, Pipeline) for o in gc.get_objects()))
    finally:
        gc.enable()
    assert len(alive) == 13 and max(alive) <= 3, alive
