"""Python's cyclic garbage collector, held off while something time-critical runs, by more than one holder.

A replay keeps its session, the stages' last runs and the persisted summaries alive, almost nothing it
drops is cyclic, and the collector's automatic scans went over all of that ever more often as the session
grew: a step loop holds it off and collects at a steady pace instead (`replay` through
`playground.cli.progress`, `diff` and the benchmarks pace it the same way). The TUI holds it off while a key's
effect is on its way to the screen (`playground.tui.priority`).

Holders are counted, so that a replay thread finishing while the user holds the collector (or the other
way round) never turns it on under the other, and the last to let go turns it on again only if it was on
when the first took it.
"""

from __future__ import annotations

import ctypes
import gc
import sys
from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

from engine.forksafe import fork_safe_lock

T = TypeVar("T")
COLLECT_EVERY = 2_000  # steps between two collections of the objects made since the last one
YOUNG = 1  # the generations a paced collection walks: those of the objects made since the last one
TRIM_EVERY = 100  # steps between two returns of the C heap's free pages to the system


def _heap_trimmer() -> Callable[[int], int] | None:
    """glibc's `malloc_trim`, where the C library has one. A long replay frees a step's lists of the
    session's length (hundreds of KB each) between long-lived objects, and glibc keeps such freed memory
    in the middle of its heap: at 32,000 messages the heap held 20-35 MB free. Giving its pages back every
    TRIM_EVERY steps: peak RSS at step 8,000 of a 32,000-message tight replay 177 -> 170 MB."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # another C library (musl has none)
        return None


_trim_heap = _heap_trimmer()

_lock = fork_safe_lock()
_holders = 0
_was_enabled = False  # the collector's state when the first holder took it


def hold_collector() -> None:
    """Turn the automatic collector off until every holder has called `let_go_of_collector()`."""
    global _holders, _was_enabled
    with _lock:
        if _holders == 0:
            _was_enabled = gc.isenabled()
            gc.disable()
        _holders += 1


def let_go_of_collector() -> None:
    global _holders
    with _lock:
        _holders -= 1
        if _holders == 0 and _was_enabled:
            gc.enable()


def paced_collection(items: Iterable[T], every: int = COLLECT_EVERY) -> Iterator[T]:
    """`items`, with the cyclic collector held off while they are made (24% of a 8,000-message replay's
    time went to its automatic scans, more per step the later the step). Every `every` items, the objects
    made since the last collection are collected (`YOUNG`): cycles a step dropped go, and those still
    alive move to the oldest generation, which no paced collection walks. A full collection walks every
    object, the session's included: in a 32,000-message replay each took 0.13-0.47 s (1.1 s of 23 s in
    all) and found nothing after the first (325 objects), so the old objects are left to the collector's
    own pace once the loop is done. Every TRIM_EVERY items the C heap's free pages go back to the system
    (`_heap_trimmer`)."""
    hold_collector()
    try:
        for count, item in enumerate(items, start=1):
            yield item
            if count % TRIM_EVERY == 0 and _trim_heap is not None:
                _trim_heap(0)
            if count % every == 0:
                gc.collect(YOUNG)
    finally:
        let_go_of_collector()
