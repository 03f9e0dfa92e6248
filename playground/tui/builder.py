"""The invisible worker host: builds and timeline series run here, off the UI thread, and come back as
messages (`BuildFinished`, `TimelineProgress`) that bubble to the main screen."""

from __future__ import annotations

import threading
import time

from textual import work
from textual.widget import Widget
from textual.worker import get_current_worker

from playground.app.building import BuildRequest, TimelineRequest, checked, run_build, series_steps
from playground.tui.messages import BuildFinished, ProvidersChecked, TimelineProgress
from playground.tui.priority import UiPriority

# seconds between progress messages: each costs the screen a repaint of the timeline, a pass over its steps
PROGRESS_EVERY = 0.2


class Builder(Widget):
    """`build(request)` and `timeline(request)`; only the newest of each kind is kept."""

    DEFAULT_CSS = "Builder { display: none; }"

    def __init__(self, priority: UiPriority) -> None:
        super().__init__()
        self._priority = priority
        self._engine = threading.Lock()  # one build at a time, main builds and timeline steps alike
        self.timeline_version = 0

    # a description, or Textual would repr the request (the whole session: ~17 ms on 600 messages)
    @work(thread=True, exclusive=True, group="build", exit_on_error=False, description="build")
    def build(self, request: BuildRequest) -> None:
        """Build; a burst of requests skips the ones superseded before their turn. The build is posted
        before its provider check, which is made outside the engine's lock."""
        worker = get_current_worker()
        with self._engine:
            if worker.is_cancelled:
                return
            outcome = run_build(request, check=False)
        self.post_message(BuildFinished(outcome))
        if outcome.result is not None and not worker.is_cancelled:
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
        last = time.monotonic()

        def send(done: bool) -> None:
            nonlocal sent, sent_summaries, last
            new, made = points[sent:], summaries[sent_summaries:]
            self.post_message(TimelineProgress(version, sent, new, done, made))
            sent, sent_summaries, last = len(points), len(summaries), time.monotonic()

        def stopped() -> bool:
            return worker.is_cancelled

        def pause() -> None:
            self._priority.wait(stopped)

        for point, persisted in series_steps(request, stopped, self._engine, pause):
            points.append(point)
            if persisted is not None:
                summaries.append(persisted)
            if time.monotonic() - last >= PROGRESS_EVERY:
                send(False)
        if not worker.is_cancelled:
            send(True)
