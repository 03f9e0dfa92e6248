"""The invisible worker host: builds and timeline series run here, off the UI thread, and come back as
messages (`BuildFinished`, `TimelineProgress`) that bubble to the main screen. A long session's series
runs in a forked child process (`playground.app.forked`), a short one's in a thread."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator

from textual import work
from textual.widget import Widget
from textual.worker import get_current_worker

from playground.app.building import (
    BuildOutcome,
    BuildRequest,
    Persisted,
    TimelineRequest,
    checked,
    for_series_job,
    run_build,
    series_job,
    series_steps,
)
from playground.app.forked import FORK_FROM, ReplayProcess, can_fork
from playground.app.views import StepSample
from playground.tui.messages import BuildFinished, ProvidersChecked, TimelineProgress
from playground.tui.priority import UiPriority

# seconds between progress messages: each costs the screen a repaint of the timeline, a pass over its steps
PROGRESS_EVERY = 0.2
COUNT_FIRST = 5_000  # messages: a session shorter than this has its dropped messages counted before showing
# seconds a build's check waits after the paint's grace: edits in a row (a held key) skip the checks of all
# but the last, which would otherwise take the GIL from the next edit
CHECK_QUIET = 0.05


class Builder(Widget):
    """`build(request)`, `check(outcome)` and `timeline(request)`; the newest build and series win."""

    DEFAULT_CSS = "Builder { display: none; }"
    fork_from = FORK_FROM  # messages from which the series runs in a child process (when this OS forks)

    def __init__(self, priority: UiPriority) -> None:
        super().__init__()
        self._priority = priority
        self._engine = threading.Lock()  # one build at a time, main builds and timeline steps alike
        self.timeline_version = 0
        self._newest = 0  # the generation of the newest build requested
        self._process = ReplayProcess(every=PROGRESS_EVERY)  # a long session's series runs there

    def on_unmount(self) -> None:
        self._process.close()

    def build(self, request: BuildRequest) -> None:
        """Build `request`; the newest request wins (a burst of them skips those superseded before their
        turn). The build is posted unchecked: the screen starts its provider check (`check`) once it shows
        it."""
        self._newest = request.generation
        self._build(request)

    # a description, or Textual would repr the request (the whole session: ~17 ms on 600 messages)
    @work(thread=True, exclusive=True, group="build", exit_on_error=False, description="build")
    def _build(self, request: BuildRequest) -> None:
        worker = get_current_worker()
        with self._engine:
            if worker.is_cancelled:
                return
            # a long session's dropped messages are counted after the build is on screen (a step's first
            # count reads every entry: ~50 ms on 64,000 messages); the title says so meanwhile
            outcome = run_build(request, check=False, count=len(request.messages) < COUNT_FIRST)
        self.post_message(BuildFinished(outcome))

    @work(thread=True, group="check", exit_on_error=False, description="provider check")
    def check(self, outcome: BuildOutcome) -> None:
        """The provider check of a build on screen (and a long session's count of dropped messages), made
        once the build is painted and `CHECK_QUIET` has passed, outside the engine's lock: made at once, it
        took the GIL from the UI thread putting the build on the widgets. Left out when a newer build is on
        its way."""

        def superseded() -> bool:
            return outcome.generation < self._newest

        self._priority.wait(superseded)
        time.sleep(CHECK_QUIET)  # a key that comes meanwhile holds the priority again, and likely supersedes
        self._priority.wait(superseded)
        if not superseded():
            self.post_message(ProvidersChecked(checked(outcome)))

    def stop_timeline(self) -> None:
        """Stop the running series (at its next step) and make any late progress from it stale."""
        self.timeline_version += 1
        self.workers.cancel_group(self, "timeline")

    def timeline(self, request: TimelineRequest) -> None:
        self.stop_timeline()
        self._timeline(request, self.timeline_version)

    @work(thread=True, exclusive=True, group="timeline", exit_on_error=False, description="step series")
    def _timeline(self, request: TimelineRequest, version: int) -> None:
        worker = get_current_worker()
        points, summaries = list(request.known), list(request.known_summaries)  # the steps it resumes after
        sent = sent_summaries = 0  # what earlier messages carried

        def send(done: bool) -> None:
            nonlocal sent, sent_summaries
            new, made = points[sent:], summaries[sent_summaries:]
            self.post_message(TimelineProgress(version, sent, new, done, made))
            sent, sent_summaries = len(points), len(summaries)

        def stopped() -> bool:
            return worker.is_cancelled

        def pause() -> None:
            self._priority.wait(stopped)

        for batch in self._series_batches(request, stopped, pause):
            for point, persisted in batch:
                points.append(point)
                if persisted is not None:
                    summaries.append(persisted)
            send(False)
        if not worker.is_cancelled:
            send(True)

    def _series_batches(
        self, request: TimelineRequest, stopped: Callable[[], bool], pause: Callable[[], None]
    ) -> Iterator[list[tuple[StepSample, Persisted | None]]]:
        """The series' steps, a batch every `PROGRESS_EVERY` seconds; a long session's from a child
        process, which never takes the GIL from the UI (`playground.app.forked`)."""
        if len(request.messages) >= self.fork_from and can_fork():
            pause()  # the first job forks (~10 ms holding the GIL): not while the user waits for the screen
            yield from self._process.run(series_job, for_series_job(request), request.messages, stopped)
            return
        batch: list[tuple[StepSample, Persisted | None]] = []
        last = time.monotonic()
        for step in series_steps(request, stopped, self._engine, pause):
            batch.append(step)
            if time.monotonic() - last >= PROGRESS_EVERY:
                yield batch
                batch, last = [], time.monotonic()
        if batch:
            yield batch
