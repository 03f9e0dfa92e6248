"""The user before the background.

While a key's effect is on its way to the screen, the background replays (the step series, the session
cost) wait between their steps, and Python's cyclic garbage collector is off. Both otherwise land in the
middle of a keypress: a replay thread takes the GIL in turns with the UI (a build and a paint then take
about twice as long), and a full collection on a long session takes tens of milliseconds.

From a build request to its result on the widgets, the screen is not repainted either (Textual's
`batch_update`), at most for `PAINT_HOLD`: a paint in between would only show a half-updated screen and
take the GIL from the build (one paint of this screen costs 10-20 ms).

`hold(seconds)` is called on every key and click, and with a longer failsafe when a build is requested;
`release(PAINT_GRACE)` once the requested build is applied to the widgets (Textual paints it within the
next frames; it has no public "painted" signal, and a callback after the next refresh can run before the
widgets have asked for their repaint). Workers call `wait()` between steps (never while holding the
engine lock, which the user's build may need).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import AbstractContextManager

from textual.app import App

from playground.app.pacing import hold_collector, let_go_of_collector

KEY_HOLD = 0.15  # a key that does not lead to a build (scrolling, moving focus) holds this long
BUILD_HOLD = 1.0  # a requested build holds until it is painted, or this long at most
PAINT_GRACE = 0.1  # from a build applied to the widgets to its paint (two to three frames at 60 fps)
PAINT_HOLD = 0.08  # a build slower than this shows the edit's own changes (the slider) first
POLL = 0.002  # how often a waiting worker looks again
UPDATES_ASKED = 0.002  # the widgets a handler changed ask for their repaint within this time


class UiPriority:
    def __init__(self, app: App[object]) -> None:
        self._app = app
        self._until = 0.0  # time.monotonic() until which the background waits
        self._holds_collector = False
        self._paint_hold: AbstractContextManager[None] | None = None  # an open `App.batch_update()`

    @property
    def busy(self) -> bool:
        return time.monotonic() < self._until

    def hold(self, seconds: float) -> None:
        """The user did something: the background waits for `seconds`, or until `release()`."""
        self._until = max(self._until, time.monotonic() + seconds)
        if not self._holds_collector:
            hold_collector()
            self._holds_collector = True
        self._app.set_timer(seconds, self._expire)

    def hold_paint(self) -> None:
        """A build is on its way: no repaint until `release()` (or `PAINT_HOLD`)."""
        if self._paint_hold is None:
            self._paint_hold = self._app.batch_update()
            self._paint_hold.__enter__()
            self._app.set_timer(PAINT_HOLD, self._end_paint_hold)

    def _end_paint_hold(self) -> None:
        hold, self._paint_hold = self._paint_hold, None
        if hold is not None:
            hold.__exit__(None, None, None)
            if self._app.is_running and self._app.screen_stack:
                self._app.screen.check_idle()  # its idle handler paints what was asked for meanwhile

    def release(self, after: float = 0.0) -> None:
        """What the user waited for is on the widgets: the screen may be repainted now, and the background
        go on in `after` seconds (once it is painted). Cuts a longer hold short."""
        self._end_paint_hold()
        self._until = time.monotonic() + after
        if after > 0:
            self._app.set_timer(after, self._expire)
        else:
            self._expire()

    def release_soon(self, after: float) -> None:
        """`release(after)` once the widgets the caller just changed have asked for their repaint: each
        asks when its own message queue is idle, after the caller's handler; a paint at once would show
        only some of them, the rest a frame (16.7 ms) later."""
        hold = self._paint_hold
        self._app.set_timer(UPDATES_ASKED, lambda: self._release_unless_held_again(hold, after))

    def _release_unless_held_again(self, hold: AbstractContextManager[None] | None, after: float) -> None:
        if self._paint_hold is None or self._paint_hold is hold:  # not a newer key's hold
            self.release(after)

    def _expire(self) -> None:
        left = self._until - time.monotonic()
        if left > 0:  # a timer may fire a little before the hold's end by this clock: look again then
            if self._app.is_running:
                self._app.set_timer(left, self._expire)
                return
            self._until = 0.0  # no timer runs after the app: never leave the collector off behind us
        if self._holds_collector:
            self._holds_collector = False
            let_go_of_collector()

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
