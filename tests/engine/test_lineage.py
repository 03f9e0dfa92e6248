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


def test_a_list_only_the_lineage_holds_is_kept_as_a_spare_and_past_the_newest_spares_let_go():
    lineage.forget()
    held = grown([], ["a", "b"])
    longer = grown(held, ["c"])
    dropped = [grown([], [f"x{i}"]) for i in range(lineage.SPARES + 2)]
    del dropped[:]  # nobody keeps them: no one can ever ask about them again
    last = grown([], ["z"])
    with lineage._LOCK:
        lineage._sweep()  # as every SWEEP_EVERY lists made, or when no spare is close to one to make
    assert [items for items, _ in lineage._LINES.values()] == [held, longer, last]
    spares = [[f"x{i}"] for i in range(2, lineage.SPARES + 2)]  # the newest SPARES of those
    assert [items for line in lineage._SPARES.values() for items in line] == spares
    assert known(held) and known(longer) and shared_at_least(held, longer) == 2


def test_a_list_grown_on_a_line_reuses_a_spare_of_that_line_and_leaves_every_held_list_as_it_was():
    lineage.forget()
    first = grown([], list(range(100)))
    second = grown(first, [100])
    spare_id = id(first)
    del first  # now only the lineage holds it: a spare, 100 items of the line
    third = grown(second, [101, 102])
    assert id(third) == spare_id  # the spare, extended by the three items it lacked
    assert third == list(range(103)) and second == list(range(101))
    assert same_line(second, third) and shared_at_least(second, third) == 101


def test_a_spare_of_the_line_a_list_forked_from_is_cut_at_the_fork_before_it_is_extended():
    lineage.forget()
    first = grown([], list(range(10)))
    second = grown(first, [10, 11])
    fork = forked(second, 8, ["a", "b"])  # shares 8 items with `first` and `second`
    spare_ids = {id(first), id(second)}  # either serves: both start with the 8 items the fork kept
    del first, second
    made = grown(fork, ["c"])
    assert id(made) in spare_ids and made == [*range(8), "a", "b", "c"]
    assert fork == [*range(8), "a", "b"]
    other = grown([], ["q"])  # a list of another line: its spares never start it
    del other
    assert grown(grown([], ["r"]), ["s"]) == ["r", "s"]


@settings(max_examples=200, deadline=None)
@given(ops=OPS, drops=st.lists(st.integers(0, 50), max_size=30))
def test_lists_made_from_spares_hold_what_a_copy_would_and_no_held_list_changes(ops, drops):
    lineage.forget()
    made: list[list[int] | None] = [[]]
    expected: list[tuple[int, ...]] = [()]
    drops_at = {d % len(ops): d for d in drops}
    for number, (kind, pick, items) in enumerate(ops):
        alive = [i for i, m in enumerate(made) if m is not None]
        base = made[alive[pick % len(alive)]]
        cut = pick % (len(base) + 1)
        if kind == "grow":
            made.append(grown(base, items))
            expected.append((*base, *items))
        elif kind == "head":
            made.append(head(base, cut))
            expected.append(tuple(base[:cut]))
        else:
            made.append(forked(base, cut, items))
            expected.append((*base[:cut], *items))
        if number in drops_at and len(alive) > 1:  # let one go: it may become a spare
            made[alive[drops_at[number] % len(alive)]] = None
        for m, e in zip(made, expected, strict=True):
            assert m is None or tuple(m) == e
    held = [m for m in made if m is not None]
    for a in held:
        for b in held:
            known_alike = shared_at_least(a, b)
            assert a[:known_alike] == b[:known_alike]
