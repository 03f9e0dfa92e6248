"""Debounced, latest-wins rebuilds on the kernel's event loop, with no threads.

Slider moves arrive as comm messages on the kernel's asyncio loop. Each one cancels the pending rebuild
and schedules a new one `delay` seconds later, so a burst of moves costs one build. A delay of 0 (tests,
scripts) runs the work at once; so does a call made where no event loop runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol

__all__ = ["Debouncer", "Handle", "Scheduler", "loop_scheduler"]


class Handle(Protocol):
    def cancel(self) -> None: ...


Scheduler = Callable[[float, Callable[[], None]], Handle | None]
"""`schedule(delay, callback)` runs `callback` later and returns something to cancel it with; returning
None means it ran the callback already."""


def loop_scheduler(delay: float, callback: Callable[[], None]) -> Handle | None:
    """Schedule on the running asyncio loop (the kernel's); run now when there is none."""
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        callback()
        return None
    return loop.call_later(delay, callback)


class Debouncer:
    """Calls `action` once, `delay` seconds after the last `trigger()`; `delay <= 0` calls it at once."""

    def __init__(self, action: Callable[[], None], delay: float, scheduler: Scheduler | None = None) -> None:
        self.action = action
        self.delay = delay
        self.scheduler = scheduler or loop_scheduler
        self._pending: Handle | None = None

    @property
    def pending(self) -> bool:
        return self._pending is not None

    def trigger(self) -> None:
        self.cancel()
        if self.delay <= 0:
            self.action()
            return
        self._pending = self.scheduler(self.delay, self._fire)

    def flush(self) -> None:
        """Run a pending action now."""
        if self._pending is not None:
            self.cancel()
            self.action()

    def cancel(self) -> None:
        if self._pending is not None:
            self._pending.cancel()
            self._pending = None

    def _fire(self) -> None:
        self._pending = None
        self.action()
