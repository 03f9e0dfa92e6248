"""Lists of one line (`engine.lineage`) are told to start alike by their lengths: that must never say so of
two lists that do not, whatever order they are made in."""

from __future__ import annotations

import threading

from hypothesis import given, settings
from hypothesis import strategies as st

from engine import lineage
from engine.lineage import forked, grown, head, known, same_line, shared_at_least
from engine.preprocess.base import common_prefix, starts_with


def test_a_list_grown_from_its_lines_longest_joins_the_line_and_one_grown_from_a_shorter_does_not():
    first = grown([], ["a", "b"])
    second = grown(first, ["c"])
    assert second == ["a", "b", "c"] and type(second) is list and known(second) and not known(["a", "b"])
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


def test_a_forked_list_is_compared_only_past_the_items_it_kept():
    class Loud:
        def __init__(self, loud: bool) -> None:
            self.loud = loud

        def __eq__(self, other: object) -> bool:
            assert not self.loud, "an item before the fork was compared"
            return False

        __hash__ = object.__hash__

    items = [Loud(True) for _ in range(4)]
    last = grown([], [*items, Loud(False)])
    fork = forked(last, 4, [Loud(False), Loud(False)])
    assert shared_at_least(last, fork) == 4 and not same_line(last, fork)
    assert common_prefix(last, fork) == 4 and common_prefix(grown(fork, ["x"]), last) == 4


def test_of_two_threads_growing_the_same_longest_list_only_one_joins_its_line():
    base = grown([], range(1000))
    made: list[list[str]] = []
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
    st.tuples(
        st.sampled_from(("grow", "head", "fork")), st.integers(0, 50), st.lists(st.integers(0, 2), max_size=3)
    ),
    min_size=1,
    max_size=40,
)


@settings(max_examples=200, deadline=None)
@given(ops=OPS)
def test_lists_said_to_share_a_line_start_alike_whatever_is_made_from_what(ops):
    made: list[list[int]] = [[]]
    for kind, pick, items in ops:
        base = made[pick % len(made)]
        cut = pick % (len(base) + 1)
        if kind == "grow":
            made.append(grown(base, items))
        else:
            made.append(head(base, cut) if kind == "head" else forked(base, cut, items))
    for a in made:
        for b in made:
            if same_line(a, b):
                shorter, longer = sorted((a, b), key=len)
                assert longer[: len(shorter)] == shorter
            known = shared_at_least(a, b)
            assert a[:known] == b[:known] and known <= min(len(a), len(b))
            assert starts_with(a, b) == (a[: len(b)] == b and len(b) <= len(a))
            assert common_prefix(a, b) == next(
                (i for i, (x, y) in enumerate(zip(a, b, strict=False)) if x != y), min(len(a), len(b))
            )


def test_a_list_made_long_ago_is_of_no_known_line_and_compared_as_any_list():
    first = grown([], ["a", "b"])
    later = grown(first, ["c"])
    others = [grown([], ["other"]) for _ in range(lineage.KEPT)]  # held: a list held by none is let go
    assert all(map(known, others))
    assert not known(first) and not same_line(first, later)
    assert starts_with(later, first) and common_prefix(first, later) == 2
    again = grown(first, ["d"])  # its line forgotten: a line of its own, never the old line's
    assert not same_line(again, later) and not starts_with(again, later)


def test_a_list_only_the_lineage_holds_is_let_go_and_one_held_elsewhere_stays_known():
    lineage.forget()
    held = grown([], ["a", "b"])
    longer = grown(held, ["c"])
    grown([], ["x"])  # nobody keeps it: no one can ever ask about it
    grown([], ["y"])  # the next list made lets it go (this one too, once another is made)
    assert [items for items, _ in lineage._LINES.values()] == [held, longer, ["y"]]
    assert known(held) and known(longer) and shared_at_least(held, longer) == 2
