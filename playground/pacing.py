"""A step loop with Python's cyclic garbage collector held off, collecting at a steady pace instead.

A replay keeps its session, the stages' last runs and the persisted summaries alive, almost nothing it
drops is cyclic, and the collector's automatic scans went over all of that ever more often as the session
grew. `replay` (`playground.progress`), `diff` and the benchmarks pace it the same way.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator
from typing import TypeVar

T = TypeVar("T")
COLLECT_EVERY = 2_000  # steps between two full collections while a step loop holds the collector off


def paced_collection(items: Iterable[T], every: int = COLLECT_EVERY) -> Iterator[T]:
    """`items`, with the cyclic collector held off while they are made and one full collection every
    `every` items (24% of a 8,000-message replay's time went to its automatic scans, more per step the
    later the step). Inside another paced loop it changes nothing: the outer loop paces."""
    if not gc.isenabled():
        yield from items
        return
    gc.disable()
    try:
        for count, item in enumerate(items, start=1):
            yield item
            if count % every == 0:
                gc.collect()
    finally:
        gc.enable()
