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

import gc
import threading
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
COLLECT_EVERY = 2_000  # steps between two full collections while a step loop holds the collector off

_lock = threading.Lock()
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
    """`items`, with the cyclic collector held off while they are made and one full collection every
    `every` items (24% of a 8,000-message replay's time went to its automatic scans, more per step the
    later the step)."""
    hold_collector()
    try:
        for count, item in enumerate(items, start=1):
            yield item
            if count % every == 0:
                gc.collect()
    finally:
        let_go_of_collector()
