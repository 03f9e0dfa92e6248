"""The step slider and the tokens-per-step chart.

A step is one LLM call of the session (`engine.ticks.step_points`): the build at step k sees the prefix
that call saw, the summaries earlier steps made, and its tick, so summaries and reminders fire as they
would have. The chart replays the session step by step; `SeriesRunner` pulls that replay in slices on the
kernel's loop so slider moves are not held up, and a newer run replaces an older one (latest wins). With
no scheduler it runs it all at once (tests, scripts).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Iterator, Sequence
from html import escape

import ipywidgets as W

from engine import StepPoint
from playground.app.views import StepSample
from playground.notebook.schedule import Handle, Scheduler
from playground.web.charts import step_chart
from playground.web.views import STYLE

__all__ = ["SeriesRunner", "StepSample", "Timeline"]

CHART_WIDTH = 640


class Timeline:
    """The step slider, a line about the step, and the chart."""

    def __init__(self, count: int) -> None:
        last = max(count, 1)
        self.slider = W.IntSlider(
            value=last,
            min=1,
            max=last,
            description="step",
            continuous_update=False,
            disabled=count <= 1,
            layout=W.Layout(width="420px"),
        )
        self.info = W.HTML()
        self.verdict = W.HTML()  # why the shown step made a summary or not
        self.chart = W.HTML()
        self.marker = W.HTML()  # the current step, drawn over the chart: a step move resends only this
        self.widget = W.VBox([W.HBox([self.slider, self.info]), self.verdict, self.marker, self.chart])

    @property
    def step(self) -> int:
        return self.slider.value

    def set_count(self, count: int) -> None:
        """Another number of steps (fences moved, another checkpoint tool): the slider stays in range."""
        last = max(count, 1)
        if self.slider.max != last:
            self.slider.max = last
            self.slider.disabled = count <= 1

    def describe(self, point: StepPoint | None, count: int) -> None:
        if point is None:
            self.info.value = "<span style='color:#64748b'>whole session (no LLM call in it)</span>"
            return
        action = point.action_id or "the call the session awaits"
        self.info.value = escape(
            f"step {self.step}/{count} · run {point.run_index} · call {point.step_in_run} · "
            f"stepCount {point.node_step} · {point.message_count} messages · next: {action}"
        )

    def show_verdict(self, text: str) -> None:
        self.verdict.value = f"<span style='color:#64748b'>{escape(text)}</span>"

    def show(self, samples: Sequence[StepSample], total: int) -> None:
        building = f"<div style='color:#64748b'>building {len(samples)}/{total}</div>"
        made = sum("S" in s.markers for s in samples)
        count = f"<div style='color:#64748b'>summaries made over the session: {made}</div>"
        progress = building if len(samples) < total else count
        self.chart.value = (
            f"{STYLE}<div class='lp-view'>{step_chart(samples, width=CHART_WIDTH)}{progress}</div>"
        )
        self.show_marker(len(samples), total)

    def show_marker(self, built: int, total: int) -> None:
        """A band over the current step's bar (the chart has one slot per step built so far)."""
        if not built or self.step > built:
            self.marker.value = ""
            return
        slot = CHART_WIDTH / built
        self.marker.value = (
            "<div style='position:relative;height:0'><div class='lp-current-marker' title='current step' "
            f"style='position:absolute;top:4px;left:{(self.step - 1) * slot:.2f}px;"
            f"width:{max(slot, 2):.2f}px;"
            "height:92px;box-sizing:border-box;border:2px solid var(--jp-ui-font-color0,#0f172a);"
            "pointer-events:none;z-index:1'></div></div>"
        )


class SeriesRunner:
    """Pulls the samples of one replay, at most `chunk` at a time and no longer than `slice_seconds` (so
    an edit waiting behind a slice waits at most about one step build); `start` drops the run before it."""

    def __init__(
        self,
        steps: Callable[[], Iterator[StepSample]],
        on_progress: Callable[[list[StepSample], int], None],
        scheduler: Scheduler | None = None,
        chunk: int = 8,
        slice_seconds: float = 0.015,
    ) -> None:
        self.steps, self.on_progress = steps, on_progress
        self.scheduler, self.chunk, self.slice_seconds = scheduler, chunk, slice_seconds
        self.samples: list[StepSample] = []
        self.total = 0
        self._handle: Handle | None = None
        self._run = 0
        self._iterator: Iterator[StepSample] = iter(())

    @property
    def done(self) -> bool:
        return len(self.samples) >= self.total

    def start(self, total: int, delay: float = 0.0) -> None:
        """A new replay of `total` steps, its first slice `delay` seconds from now (a burst of edits
        restarts it each time and so never waits behind it)."""
        self.cancel()
        self._run += 1
        self.samples, self.total = [], total
        self._iterator = self.steps()
        if self.scheduler is None:
            self.finish()
            return
        run = self._run  # the first slice runs after the edit's views are sent, not inside the edit
        self._handle = self.scheduler(delay, lambda: self._next(run))

    def hold(self, delay: float) -> None:
        """Put the next slice off by `delay` seconds (the user is moving something: answer them first)."""
        if self._handle is not None and self.scheduler is not None:
            self._handle.cancel()
            run = self._run
            self._handle = self.scheduler(delay, lambda: self._next(run))

    def finish(self) -> None:
        """Replay the steps still missing now."""
        if not self.done:
            self.cancel()
            self._pull(self.total)
            self.on_progress(self.samples, self.total)

    def cancel(self) -> None:
        if self._handle is not None:
            self._handle.cancel()
            self._handle = None

    def _pull(self, count: int) -> None:
        for sample in itertools.islice(self._iterator, max(0, min(count, self.total - len(self.samples)))):
            self.samples.append(sample)

    def _next(self, run: int) -> None:
        self._handle = None
        if run != self._run:
            return
        deadline, pulled = time.perf_counter() + self.slice_seconds, 0
        while pulled < self.chunk and not self.done and time.perf_counter() < deadline:
            before = len(self.samples)
            self._pull(1)
            if len(self.samples) == before:  # the replay ended early
                self.total = len(self.samples)
            pulled += 1
        self.on_progress(self.samples, self.total)
        if not self.done and self.scheduler is not None:
            self._handle = self.scheduler(0, lambda: self._next(run))
