"""Each origin's position in a list of starting states (engine/providers/origin_positions.py): a list that
extends or forks from a kept one gets its map from that one's, and it must be the map a pass over the whole
list makes; and one message's state read through it is the state the map of every state gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.lineage import forked, grown
from engine.messages import AiMessage
from engine.providers import origin_positions as module
from engine.providers.origin_positions import origin_positions
from engine.providers.state import State


def _state(n: int, origins: tuple[int, ...]) -> State:
    return State(AiMessage(f"m{n}", "user", "user_input", f"turn {n}", n), n, origins, 1, shared=True)


def _whole_pass(states: list[State]) -> dict[int, int]:
    return {origin: position for position, state in enumerate(states) for origin in state.origins}


def test_a_grown_list_reads_only_its_tail_and_the_kept_map_is_left_as_it_was(monkeypatch):
    read_from = []
    original = module._add

    def spied(states, start, positions):
        read_from.append(start)
        return original(states, start, positions)

    monkeypatch.setattr(module, "_add", spied)
    module.forget()
    first = grown([], [_state(0, (0,)), _state(1, (1, 2)), _state(2, (3,))])
    positions = origin_positions(first)
    assert positions == {0: 0, 1: 1, 2: 1, 3: 2} and origin_positions(first) is positions
    longer = grown(first, [_state(3, (4,))])
    assert origin_positions(longer) == {0: 0, 1: 1, 2: 1, 3: 2, 4: 3}
    assert positions == {0: 0, 1: 1, 2: 1, 3: 2}  # handed out: never changed
    forked_back = forked(longer, 1, [_state(5, (1, 5))])  # the group at 1 was made anew
    assert origin_positions(forked_back) == {0: 0, 1: 1, 5: 1}
    assert read_from == [0, 3, 1]


def test_an_origin_carried_twice_keeps_the_last_and_such_a_list_is_not_a_base():
    module.forget()
    first = grown([], [_state(0, (0, 1)), _state(1, (2,))])
    origin_positions(first)
    twice = grown(first, [_state(2, (1,))])
    assert origin_positions(twice) == {0: 0, 1: 2, 2: 1}
    back = forked(twice, 2, [_state(3, (3,))])  # cut before the second carrier: the first one's again
    assert origin_positions(back) == {0: 0, 1: 0, 2: 1, 3: 2}


ORIGINS = st.lists(st.integers(0, 30), min_size=1, max_size=3).map(tuple)
OPS = st.lists(
    st.tuples(st.sampled_from(("grow", "fork")), st.integers(0, 40), st.lists(ORIGINS, max_size=4)),
    min_size=1,
    max_size=25,
)


@settings(max_examples=200, deadline=None)
@given(ops=OPS)
def test_maps_taken_from_kept_ones_equal_a_whole_pass_over_grown_and_forked_lists(ops):
    module.forget()
    made = [grown([], [_state(0, (0,))])]
    handed = []
    for kind, pick, tails in ops:
        base = made[pick % len(made)]
        more = [_state(100 + i, origins) for i, origins in enumerate(tails)]
        made.append(grown(base, more) if kind == "grow" else forked(base, pick % (len(base) + 1), more))
        positions = origin_positions(made[-1])
        handed.append((positions, dict(positions)))
        assert positions == _whole_pass(made[-1])
    assert all(positions == copy for positions, copy in handed)  # none was changed afterwards
