"""Lists of one line (`engine.lineage`) are told to start alike by their lengths: that must never say so of
two lists that do not, whatever order they are made in."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.lineage import Grown, grown, head, same_line
from engine.preprocess.base import common_prefix, starts_with


def test_a_list_grown_from_its_lines_longest_joins_the_line_and_one_grown_from_a_shorter_does_not():
    first = grown([], ["a", "b"])
    second = grown(first, ["c"])
    assert second == ["a", "b", "c"] and type(second) is Grown
    assert same_line(first, second)
    fork = grown(first, ["x"])  # `first` is no longer the line's longest: its items past it differ
    assert not same_line(fork, second) and not same_line(fork, first)
    assert starts_with(second, first) and not starts_with(fork, second)
    assert common_prefix(fork, second) == 2


def test_a_prefix_joins_the_line_of_the_list_it_is_cut_from():
    whole = grown(grown([], [1, 2]), [3, 4])
    cut = head(whole, 3)
    assert cut == [1, 2, 3] and same_line(cut, whole)
    assert starts_with(whole, cut) and common_prefix(cut, whole) == 3
    assert not same_line(head([1, 2, 3], 2), whole)  # cut from a plain list: a line of its own
    assert not same_line(grown(cut, [9]), whole)  # grown from a member that is not the longest


def test_lists_of_one_line_are_told_without_reading_their_items():
    class Loud:
        def __eq__(self, other: object) -> bool:
            raise AssertionError("an item was compared")

        __hash__ = object.__hash__

    items = [Loud() for _ in range(5)]
    short = grown([], items[:3])
    long = grown(short, items[3:])
    assert starts_with(long, short) and common_prefix(short, long) == 3 and common_prefix(long, short) == 3


def test_of_two_threads_growing_the_same_longest_list_only_one_joins_its_line():
    base = grown([], range(1000))
    made: list[Grown] = []
    gate = threading.Barrier(2)

    def grow(item: str) -> None:
        gate.wait()
        made.append(grown(base, [item]))

    threads = [threading.Thread(target=grow, args=(name,)) for name in ("x", "y")]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(same_line(base, m) for m in made) == [False, True]
    assert not same_line(made[0], made[1])


OPS = st.lists(
    st.tuples(st.sampled_from(("grow", "head")), st.integers(0, 50), st.lists(st.integers(0, 2), max_size=3)),
    min_size=1,
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(ops=OPS)
def test_lists_said_to_share_a_line_start_alike_whatever_is_made_from_what(ops):
    made: list[list[int]] = [[]]
    for kind, pick, items in ops:
        base = made[pick % len(made)]
        made.append(grown(base, items) if kind == "grow" else head(base, pick % (len(base) + 1)))
    for a in made:
        for b in made:
            if same_line(a, b):
                shorter, longer = sorted((a, b), key=len)
                assert longer[: len(shorter)] == shorter
            assert starts_with(a, b) == (a[: len(b)] == b and len(b) <= len(a))
            assert common_prefix(a, b) == next(
                (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
            )
