"""`matched_runs` splits a list into runs of the last list and new items: the runs are what the last list
holds there, and a replay-like change (a few left out, a few added) is found as a few runs."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.matched_runs import LOOK_AHEAD, NO_ID, matched_runs


def _check_segments(ids: list[int], known: list[int]) -> list[tuple[int, int, int]]:
    segments = matched_runs(ids, known)
    assert [p for p, _, _ in segments] == [0, *[p + n for p, _, n in segments[:-1]]][: len(segments)]
    assert sum(n for _, _, n in segments) == len(ids)
    for position, start, length in segments:
        if start < 0:
            assert length == 1
        else:
            assert ids[position : position + length] == known[start : start + length]
            assert NO_ID not in known[start : start + length]
    return segments


@settings(max_examples=300, deadline=None)
@given(
    known=st.lists(st.integers(1, 5_000), unique=True, max_size=400),
    order=st.permutations(range(400)),
    extra=st.lists(st.integers(5_001, 6_000), unique=True, max_size=30),
    stale=st.lists(st.integers(0, 399), max_size=10),
)
def test_any_list_is_split_into_runs_the_last_list_holds_and_new_items(known, order, extra, stale):
    ids = [known[i] for i in order if i < len(known)][: len(known) // 2] + extra
    known = list(known)
    for position in stale:
        if position < len(known):
            known[position] = NO_ID  # an item that must be read anew
    _check_segments(ids, known)


@settings(max_examples=300, deadline=None)
@given(
    size=st.integers(0, 3_000),
    gaps=st.lists(st.tuples(st.integers(0, 3_000), st.integers(1, 200)), max_size=5),
    added=st.integers(0, 40),
)
def test_a_replays_next_list_is_a_run_per_stretch_kept_and_an_item_per_new_one(size, gaps, added):
    known = list(range(1, size + 1))
    left_out: set[int] = set()
    for at, length in gaps:
        left_out.update(range(at, at + length))
    kept = [x for i, x in enumerate(known) if i not in left_out]
    ids = kept + list(range(10_000, 10_000 + added))
    segments = _check_segments(ids, known)
    new = [p for p, start, _ in segments if start < 0]
    assert new[-added or len(new) :] == list(range(len(kept), len(ids)))
    stretches = 1 + sum(1 for a, b in zip(kept, kept[1:], strict=False) if b != a + 1) if kept else 0
    longest = run = 0
    for index in range(size):
        run = run + 1 if index in left_out else 0
        longest = max(longest, run)
    if longest < LOOK_AHEAD:  # each kept item is found a little ahead
        assert (len(new), len(segments)) == (added, stretches + added)
    else:  # past a long stretch left out, a kept item may be read anew until misses call for an index
        assert len(new) <= added + LOOK_AHEAD + 1
