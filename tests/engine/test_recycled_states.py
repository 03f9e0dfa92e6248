"""A build's states list is made from an earlier build's list that nobody holds any more, put back to the new
starting states: where a provider owned a state, where working memory placed a run of twins, and past where
the two starting lists part. A list still held, or one whose positions moved, is never taken."""

from __future__ import annotations

import pytest

from engine.lanes import MAIN, memory_lane
from engine.lineage import forked, grown
from engine.messages import AiMessage
from engine.providers import recycled_states
from engine.providers.recycled_states import build_states
from engine.providers.state import KEEP_WM, WORKING_MEMORY, Origin, Span, State, own
from engine.stage_cache import forget_earlier_builds


@pytest.fixture(autouse=True)
def _fresh():
    forget_earlier_builds()
    yield
    forget_earlier_builds()


def _states(first: int, count: int) -> list[State]:
    return [
        State(AiMessage(f"m{i}", "user", "user_input", f"text {i}"), i, (i,), 3, shared=True)
        for i in range(first, first + count)
    ]


def _changed(states, twins: list[State]) -> None:
    """What the providers do to a build's list: own two states, place a run of twins over positions 3..5."""
    own(states, 1).keep(KEEP_WM, WORKING_MEMORY, "text_conversation")
    own(states, 8)
    states[3:6] = twins
    states.spans.append(Span([3, 4, 5], twins, 9, lambda counter: None, [id(t) for t in twins], 0, 3))


def test_a_released_list_is_put_back_to_the_grown_starting_list():
    first = grown([], _states(0, 10))
    states = build_states(Origin(first), [3] * 10, None)
    _changed(states, _states(100, 3))
    made = id(states)
    del states  # the build's result let go of it
    second = grown(first, _states(10, 4))
    again = build_states(Origin(second, first, 10), [3] * 14, None)
    assert id(again) == made  # the very list, not a copy
    assert len(again) == 14 and all(a is b for a, b in zip(again, second, strict=True))
    assert again.owned == [] and again.spans == [] and again.origin.states is second


def test_a_list_is_cut_where_a_forked_starting_list_parts_from_its_own():
    first = grown([], _states(0, 10))
    states = build_states(Origin(first), [3] * 10, None)
    _changed(states, _states(100, 3))
    del states
    second = forked(first, 4, _states(50, 3))  # a user input's step: a group four messages in changed
    again = build_states(Origin(second, first, 4), [3] * 7, None)
    assert [s.message.id for s in again] == ["m0", "m1", "m2", "m3", "m50", "m51", "m52"]
    assert all(a is b for a, b in zip(again, second, strict=True))


def test_a_list_still_held_is_not_taken():
    first = grown([], _states(0, 10))
    held = build_states(Origin(first), [3] * 10, None)
    own(held, 2)
    before = list(held)
    again = build_states(Origin(grown(first, _states(10, 1))), [3] * 11, None)
    assert again is not held
    assert list(held) == before and held.owned == [2]


def test_a_list_whose_positions_moved_is_not_taken():
    first = grown([], _states(0, 10))
    states = build_states(Origin(first), [3] * 10, None)
    states.owned = None  # a summary replaced states: any position may hold anything
    made = id(states)
    del states
    again = build_states(Origin(grown(first, _states(10, 1))), [3] * 11, None)
    assert id(again) != made
    assert recycled_states._RECENT[MAIN][-1] is again


def test_a_list_of_another_line_is_not_taken():
    states = build_states(Origin(grown([], _states(0, 10))), [3] * 10, None)
    made = id(states)
    del states
    other = grown([], _states(200, 10))  # another session: no item known to be shared
    again = build_states(Origin(other), [3] * 10, None)
    assert id(again) != made and all(a is b for a, b in zip(again, other, strict=True))


def test_a_list_of_another_memory_lane_is_not_taken():
    """The TUI's step series and cost replay build in lanes of their own beside the user's builds: each lane
    takes its own lane's lists only."""
    first = grown([], _states(0, 10))
    with memory_lane("series"):
        states = build_states(Origin(first), [3] * 10, None)
    made = id(states)
    del states
    again = build_states(Origin(grown(first, _states(10, 1))), [3] * 11, None)
    assert id(again) != made
    with memory_lane("series"):
        other = forked(first, 10, _states(20, 2))  # shares its first ten states with the series' list
        assert id(build_states(Origin(other), [3] * 12, None)) == made
