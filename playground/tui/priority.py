"""The user before the background.

While a key's effect is on its way to the screen, the background replays (the step series, the session
cost) wait between their steps, and Python's cyclic garbage collector is off. Both otherwise land in the
middle of a keypress: a replay thread takes the GIL in turns with the UI (a build and a paint then take
about twice as long), and a full collection on a long session takes tens of milliseconds.

`hold(seconds)` is called on every key and click, and with a longer failsafe when a build is requested;
`release()` once the requested build is painted. Workers call `wait()` between steps (never while holding
the engine lock, which the user's build may need).
"""

from __future__ import annotations

import gc
import time
from collections.abc import Callable

from textual.app import App

KEY_HOLD = 0.15  # a key that does not lead to a build (scrolling, moving focus) holds this long
BUILD_HOLD = 1.0  # a requested build holds until it is painted, or this long at most
POLL = 0.002  # how often a waiting worker looks again


class UiPriority:
    def __init__(self, app: App[object]) -> None:
        self._app = app
        self._until = 0.0  # time.monotonic() until which the background waits
        self._gc_was_enabled = False

    @property
    def busy(self) -> bool:
        return time.monotonic() < self._until

    def hold(self, seconds: float) -> None:
        """The user did something: the background waits for `seconds`, or until `release()`."""
        self._until = max(self._until, time.monotonic() + seconds)
        if gc.isenabled():
            gc.disable()
            self._gc_was_enabled = True
        self._app.set_timer(seconds, self._expire)

    def release(self) -> None:
        """What the user waited for is on screen: the background may go on."""
        self._until = 0.0
        self._expire()

    def _expire(self) -> None:
        if not self.busy and self._gc_was_enabled:
            self._gc_was_enabled = False
            gc.enable()

    def wait(self, stop: Callable[[], bool] = lambda: False) -> None:
        """In a worker thread: return once the user is not waiting (or at once when `stop()` is true)."""
        while self.busy and not stop():
            time.sleep(POLL)

    def polite(self, stop: Callable[[], bool]) -> Callable[[], bool]:
        """`stop` for a background replay that checks it between steps: wait for the user first."""

        def check() -> bool:
            self.wait(stop)
            return stop()

        return check
