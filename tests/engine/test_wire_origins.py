"""The origins of one type a wire carries, taken over from the last build's answer where it sent the same
states (`engine.wire_origins`), equal a fresh read of every wire state, and read only the new states."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import wire_origins
from engine.lineage import grown
from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.providers.state import State
from engine.replay import iter_session_steps
from engine.result import as_written
from engine.stage_cache import forget_earlier_builds
from engine.wire_origins import wire_origins as origins_of
from tests.engine.test_cost import _sample
from tests.engine.test_replay_incremental import NOW, POLICIES, sessions
from tests.engine.test_stage_reuse import TOKENIZER

KINDS = ("user_input", "tool_output", "final_answer")


def _fresh(session, states, kind):
    wire_origins.forget()
    return origins_of(session, states, kind)


def _state(message: AiMessage, index: int, origins: tuple[int, ...], *, kept=True, phase="working_memory"):
    return State(message, index, origins, 10, "keep_working_memory", phase, None, kept=kept, shared=True)


def _message(i: int, kind: str) -> AiMessage:
    return AiMessage(f"m{i}", "user" if kind == "user_input" else "assistant", kind, f"text {i}", i)


def test_runs_of_states_the_last_build_sent_are_taken_over_and_only_new_states_are_read(monkeypatch):
    session = grown([], [_message(i, "user_input" if i % 3 == 0 else "final_answer") for i in range(300)])
    phases = ["summarization" if i == 30 else "working_memory" for i in range(300)]
    states = [_state(m, i, (i,), phase=phases[i]) for i, m in enumerate(session)]
    wire_origins.forget()
    first = origins_of(session, states[:200], "user_input")
    assert first.origins == list(range(0, 200, 3)) and first.own_written.count(False) == 1
    read: list[int] = []
    real_read = wire_origins._read

    def spy(session, state, kind, found):
        read.append(state.index)
        real_read(session, state, kind, found)

    monkeypatch.setattr(wire_origins, "_read", spy)
    # the window slid: the first 20 states left, 100 new ones came, and one in the middle is a new object
    moved = states[20:300]
    moved[49] = _state(session[69], 69, (69,), phase="summarization")
    later = grown(session, [])  # the next step's list, of the same line
    taken = origins_of(later, moved, "user_input")
    assert sorted(read) == [69, *range(200, 300)]
    monkeypatch.setattr(wire_origins, "_read", real_read)
    again = _fresh(later, moved, "user_input")
    assert taken == again
    flags = dict(zip(taken.origins, taken.own_written, strict=True))
    assert (flags[30], flags[66], flags[69], flags[72]) == (False, True, False, True)


def test_a_session_of_another_line_is_read_again():
    session = [_message(i, "user_input") for i in range(100)]
    other = [_message(i, "final_answer" if i == 5 else "user_input") for i in range(100)]
    states = [_state(m, i, (i,)) for i, m in enumerate(session)]
    wire_origins.forget()
    assert 5 in origins_of(session, states, "user_input").origins
    assert 5 not in origins_of(other, states, "user_input").origins  # the same states, other types


def test_a_created_summary_carries_no_origin_and_merged_states_carry_theirs_of_the_type():
    session = grown([], [_message(0, "user_input"), _message(1, "final_answer"), _message(2, "user_input")])
    summary = _state(_message(9, "history_summary"), -1, (0, 1), phase="summarization")
    merged = _state(_message(8, "final_answer"), 1, (1, 2))
    found = _fresh(session, [summary, merged], "user_input")
    assert (found.origins, found.counts, found.own_written) == ([2], [0, 1], [True])


@settings(max_examples=40, deadline=None)
@given(messages=sessions(), layer=POLICIES, kind=st.sampled_from(KINDS))
def test_asked_for_one_type_at_every_step_the_wire_tells_what_every_decision_tells(messages, layer, kind):
    """As a replay's cost asks: one type, every step, each answer taken over from the last step's."""
    forget_earlier_builds()
    for step in iter_session_steps(messages, define_context_policy(layer), tokenizer=TOKENIZER, now=NOW):
        found = step.result.sent_as_written(kind)
        of_type = [d for d in step.result.decisions if d.index >= 0 and d.type == kind]
        assert found.count == len(of_type)
        assert list(found.ranks) == [rank for rank, d in enumerate(of_type) if as_written(d)], step.number


@pytest.mark.parametrize("name", ["summarization_trigger", "long_chat_overflow", "checkpoint_midtask"])
def test_over_a_sample_asked_at_every_step_the_taken_answers_are_those_every_decision_tells(name):
    messages, policy, options = _sample(name)
    forget_earlier_builds()
    steps = 0
    for step in iter_session_steps(messages, policy, **options):
        found = step.result.sent_as_written("user_input")  # before the decisions: read from the wire
        of_type = [d for d in step.result.decisions if d.index >= 0 and d.type == "user_input"]
        assert list(found.ranks) == [rank for rank, d in enumerate(of_type) if as_written(d)], step.number
        steps += 1
    assert steps >= 5
