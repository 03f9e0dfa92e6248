"""Each origin's state (engine/providers/state.py `carried_by`): made in C when every state carries one
origin, as a pass over them otherwise; the same map either way, the last state carrying an origin winning."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from engine.messages import AiMessage
from engine.providers.state import State, carried_by


def _state(n: int, origins: tuple[int, ...]) -> State:
    return State(AiMessage(f"m{n}", "user", "user_input", f"text {n}", n), n, origins, 3)


def _plain(states: list[State]) -> dict[int, State]:
    return {origin: s for s in states for origin in s.origins}


def test_one_origin_each_maps_each_origin_to_its_state_the_last_winning():
    states = [_state(0, (0,)), _state(1, (1,)), _state(2, (0,))]
    mapped = carried_by(states)
    assert mapped == {0: states[2], 1: states[1]}
    assert mapped[0] is states[2]


def test_merged_and_originless_states_are_mapped_by_a_pass():
    # two origins and none: as many origins as states, which alone must not pass for one each
    states = [_state(0, (0, 1)), _state(1, ()), _state(2, (2,))]
    assert carried_by(states) == {0: states[0], 1: states[0], 2: states[2]}


@given(st.lists(st.lists(st.integers(0, 6), max_size=3).map(tuple), max_size=12))
def test_the_map_is_the_plain_pass(origin_lists):
    states = [_state(n, origins) for n, origins in enumerate(origin_lists)]
    mapped = carried_by(states)
    assert mapped == _plain(states)
    assert all(mapped[o] is s for o, s in _plain(states).items())
