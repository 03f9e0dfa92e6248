"""The cyclic collector's holders (playground/app/pacing.py): counted, so that no holder turns it on under
another."""

from __future__ import annotations

import gc

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


def test_a_paced_loop_collects_every_so_many_steps_once_the_heap_grew(monkeypatch: pytest.MonkeyPatch):
    collected: list[int] = []
    monkeypatch.setattr(pacing.gc, "collect", lambda: collected.append(1) or 0)
    monkeypatch.setattr(pacing.gc, "get_objects", lambda: [None] * 100)  # 100 objects tracked
    monkeypatch.setattr(pacing.gc, "get_count", lambda: (25, 0, 0))  # a quarter more since a collection
    assert sum(1 for _ in paced_collection(range(7), every=3)) == 7
    assert len(collected) == 2
    monkeypatch.setattr(pacing.gc, "get_count", lambda: (24, 0, 0))  # less: a full walk would find little
    assert sum(1 for _ in paced_collection(range(7), every=3)) == 7
    assert len(collected) == 2


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
