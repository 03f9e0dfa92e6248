"""The cyclic collector's holders (playground/app/pacing.py): counted, so that no holder turns it on under
another."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Iterator

import pytest

from playground.app import pacing
from playground.app.pacing import hold_collector, let_go_of_collector, paced_collection


def test_the_collector_is_on_again_only_when_the_last_holder_lets_go() -> None:
    hold_collector()
    steps = paced_collection(range(3))
    assert next(steps) == 0 and not gc.isenabled()
    let_go_of_collector()  # the first holder is done while the replay still runs
    assert not gc.isenabled()
    assert list(steps) == [1, 2]
    assert gc.isenabled()


def test_a_collector_the_host_turned_off_stays_off() -> None:
    gc.disable()
    try:
        assert list(paced_collection(range(2))) == [0, 1]
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_paced_loop_collects_the_young_generations_every_so_many_steps(monkeypatch: pytest.MonkeyPatch):
    collected: list[int] = []
    monkeypatch.setattr(pacing.gc, "collect", lambda generation=2: collected.append(generation) or 0)
    assert sum(1 for _ in paced_collection(range(7), every=3)) == 7
    assert collected == [pacing.YOUNG, pacing.YOUNG]  # after items 3 and 6, never a full walk


def test_a_cycle_a_step_dropped_is_collected_by_the_paced_loop() -> None:
    gc.collect()  # nothing young left over from earlier tests

    class Node:
        pass

    def dropping_cycles() -> Iterator[int]:
        for item in range(4):
            node = Node()
            node.self = node  # a cycle: reference counting alone never frees it
            held.append(weakref.ref(node))
            yield item

    held: list[weakref.ref[Node]] = []
    steps = paced_collection(dropping_cycles(), every=4)
    assert [next(steps) for _ in range(4)] == [0, 1, 2, 3] and not gc.isenabled()
    assert all(ref() is not None for ref in held)  # no collection yet
    assert next(steps, None) is None  # the loop collected after its fourth item, before it ended
    assert [ref() for ref in held[:3]] == [None] * 3  # the fourth was still in use then


def test_a_loop_left_unfinished_lets_go_when_closed() -> None:
    steps = paced_collection(range(5))
    next(steps)
    assert not gc.isenabled()
    steps.close()
    assert gc.isenabled()


def test_a_paced_loop_gives_the_heaps_free_pages_back_every_so_many_steps(monkeypatch: pytest.MonkeyPatch):
    trims: list[int] = []
    monkeypatch.setattr(pacing, "_trim_heap", lambda pad: trims.append(pad) or 1)
    assert sum(1 for _ in paced_collection(range(2 * pacing.TRIM_EVERY + 1))) == 2 * pacing.TRIM_EVERY + 1
    assert trims == [0, 0]
    monkeypatch.setattr(pacing, "_trim_heap", None)  # a C library without malloc_trim: nothing to call
    assert sum(1 for _ in paced_collection(range(pacing.TRIM_EVERY))) == pacing.TRIM_EVERY


def test_glibcs_trim_is_found_and_runs() -> None:
    if pacing._trim_heap is None:
        pytest.skip("this C library has no malloc_trim")
    assert pacing._trim_heap(0) in (0, 1)  # 1: memory was given back
