"""`Playground`: the policy, fences and step as widgets; the build result as HTML views.

The flow is ipywidgets' `interactive_output`: inputs are observed on `value`, a debounced `refresh`
builds once with the latest inputs and redraws the `HTML` views. Nothing here decides anything: the
engine builds (`engine.replay.build_at_step`), `html` renders, the widgets only edit inputs.
"""

from __future__ import annotations

from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

import ipywidgets as W

from engine.build import build_context
from engine.errors import EngineError
from engine.fences import FenceRegistry, as_registry, dump_fences
from engine.messages import AiMessage
from engine.observation import InMemoryObservationStore
from engine.policy import ContextPolicy, PolicyFileError, dump_policy, get_defaults_profile, write_atomic
from engine.replay import StepBuild, build_at_step, build_step, iter_session_steps, with_persisted
from engine.result import BuildResult
from engine.ticks import step_points, tick_for
from playground.explain import summarization_verdict
from playground.notebook.controls import PolicyControls
from playground.notebook.fences import FenceEditor
from playground.notebook.schedule import Debouncer, Scheduler, loop_scheduler
from playground.notebook.sources import FencesInput, PathLike, PolicyInput, SessionInput, open_sources
from playground.notebook.timeline import SeriesRunner, StepSample, Timeline
from playground.notebook.views import ResultViews

__all__ = ["Playground"]


class Playground:
    """The playground in a notebook: `Playground("s.jsonl", policy="p.yaml", fences="f.yaml")`.

    `session` is a JSONL path, a loaded `Session` or a list of messages (AiMessage or dicts). `policy`
    (a file, a ContextPolicy or a camelCase dict layer) and `fences` (a file, a registry or descriptors)
    replace the session header's. `debounce` is the delay in seconds between the last edit and the
    rebuild; 0 builds at once, inside the edit (tests). `.policy`, `.fences`, `.result` are the current
    objects; the other keyword arguments go to `build_context`.
    """

    def __init__(
        self,
        session: SessionInput,
        policy: PolicyInput = None,
        fences: FencesInput = None,
        *,
        defaults: str = "seed",
        debounce: float = 0.3,
        scheduler: Scheduler | None = None,
        show_dropped: bool = False,
        **build_options: Any,
    ) -> None:
        self.sources = open_sources(session, policy, fences, defaults)
        self.messages = self.sources.messages
        self.defaults = defaults
        self.builds = 0
        self.observations = InMemoryObservationStore()  # full texts of tool outputs cut to previews
        self._build_options = {
            "honour_fence_descriptors": get_defaults_profile(defaults).honour_fence_descriptors,
            "observation_store": self.observations,
            **build_options,
        }
        self._points = step_points(self.messages, self.sources.policy.checkpoint.trigger_tool_name)
        self._result: BuildResult | None = None
        self._series_stale = True
        # summaries the series' replay made under the current inputs, and how many steps it covered
        self._summaries: list[tuple[int, AiMessage]] = []
        self._summaries_through = 0
        self._inputs_version = 0
        self._debouncer = Debouncer(self.refresh, debounce, scheduler or loop_scheduler)
        later = None if debounce <= 0 else scheduler or loop_scheduler
        self._series = SeriesRunner(self._series_steps, self._show_series, later)
        self._make_widgets(show_dropped)
        self.refresh()

    # -- current objects --------------------------------------------------------------------------

    @property
    def policy(self) -> ContextPolicy:
        return self.controls.policy

    @policy.setter
    def policy(self, policy: ContextPolicy) -> None:
        self.controls.set_policy(policy)
        self._inputs_changed()

    @property
    def fences(self) -> FenceRegistry | None:
        return self.fence_editor.registry

    @fences.setter
    def fences(self, fences: FencesInput) -> None:
        self.fence_editor.set_registry(as_registry(fences))
        self._inputs_changed()

    @property
    def result(self) -> BuildResult:
        """The result for the current inputs (a pending rebuild runs first)."""
        self._debouncer.flush()
        if self._result is None:
            raise RuntimeError(f"no build yet: {self.status.value}")
        return self._result

    @property
    def step(self) -> int:
        """The 1-based step (LLM call) the views show; the last by default."""
        return self.timeline.step

    @step.setter
    def step(self, step: int) -> None:
        self.timeline.slider.value = step

    @property
    def step_count(self) -> int:
        return len(self._points)

    @property
    def series(self) -> list[StepSample]:
        """Tokens per step under the current inputs (steps not built yet are built first)."""
        self._debouncer.flush()
        self._series.finish()
        return list(self._series.samples)

    def jump(self, mark: str, direction: int = 1) -> int:
        """Go to the next (1) or previous (-1) step marked `mark` ("S", "C", "R", or "over" for over
        budget) and return it; stays where it is when there is none that way."""
        samples = self.series
        here = self.step - 1
        order = range(here + 1, len(samples)) if direction > 0 else range(here - 1, -1, -1)
        for index in order:
            sample = samples[index]
            hit = sample.final_tokens > sample.total_budget if mark == "over" else mark in sample.markers
            if hit:
                self.step = sample.step
                break
        return self.step

    def build(self, policy: ContextPolicy | None = None, *, step: int | None = None) -> BuildResult:
        """A build with another policy or at another step; the widgets are left as they are."""
        return self._build(step or self.step, policy or self.policy)[0]

    # -- export -----------------------------------------------------------------------------------

    def export_yaml(self, path: PathLike, only_changed: bool = True) -> Path:
        """Write the policy as YAML, atomically; refuses to write over the session (or fence) file."""
        text = dump_policy(self.policy, only_changed=only_changed, defaults=self.defaults)
        guarded = [p for p in (self.sources.session_path, self.sources.fences_path) if p is not None]
        return write_atomic(path, text, protected=guarded)

    def export_fences_yaml(self, path: PathLike) -> Path:
        """Write the fence descriptors as YAML, atomically; never over the session file."""
        guarded = [self.sources.session_path] if self.sources.session_path else []
        return write_atomic(path, dump_fences(self.fences or FenceRegistry()), protected=guarded)

    def _export_clicked(self, _button: Any = None) -> None:
        try:
            written = self.export_yaml(self.export_path.value, self.export_only_changed.value)
        except (PolicyFileError, OSError) as err:
            self.export_status.value = f'<span style="color:#dc2626">{escape(str(err))}</span>'
            return
        self.export_status.value = f"wrote {escape(str(written))}"

    # -- rebuilding -------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Build with the current inputs and redraw (what the debouncer calls)."""
        try:
            result = self.build()
        except EngineError as err:
            self.status.value = f'<span style="color:#dc2626">not rebuilt: {escape(str(err))}</span>'
            return
        self._result = result
        self.builds += 1
        self.views.show(result)
        self.timeline.show_verdict(summarization_verdict(result))
        self._show_header()
        if self._series_stale:
            self._series_stale = False
            self._series.start(self.step_count)
        else:
            self.timeline.show(self._series.samples, self._series.total)

    def _edited(self, _new_value: Any) -> None:
        self._inputs_changed()

    def _inputs_changed(self) -> None:
        self._series_stale = True
        self._inputs_version += 1
        self._summaries, self._summaries_through = [], 0
        self._points = step_points(self.messages, self.policy.checkpoint.trigger_tool_name)
        self._debouncer.trigger()

    def _step_options(self) -> dict[str, Any]:
        sources = self.sources
        return {
            "fences": self.fences,
            "max_steps": sources.max_steps,
            "available_tools": sources.available_tools,
            **self._build_options,
        }

    def _build(self, step: int, policy: ContextPolicy) -> tuple[BuildResult, str]:
        """The build at a step (with the summaries earlier steps made) and its timeline markers; the whole
        session when it has no LLM call."""
        options = self._step_options()
        if not self._points:
            return build_context(self.messages, policy, fences=self.fences, **self._build_options), ""
        name = policy.checkpoint.trigger_tool_name
        if policy is self.policy and self._summaries_through >= step - 1:  # the series knows them
            point = self._points[step - 1]
            tick = tick_for(point, options["max_steps"], options["available_tools"])
            history = with_persisted(self.messages, point.message_count, self._summaries)
            result = build_step(step, history, policy, tick, fences=self.fences, **self._build_options)
        else:
            point, tick, result = build_at_step(
                self.messages, step, policy, checkpoint_tool_name=name, **options
            )
        return result, StepBuild(step, point, tick, result).markers

    def _series_steps(self) -> Iterator[StepSample]:
        """The replay behind the chart; it records the summaries it makes for the step builds."""
        version, policy = self._inputs_version, self.policy
        steps = iter_session_steps(
            self.messages, policy, checkpoint_tool_name=policy.checkpoint.trigger_tool_name, detail=False,
            **self._step_options(),
        )  # fmt: skip
        for built in steps:
            if version == self._inputs_version:
                if built.persisted is not None:
                    self._summaries.append((built.point.message_count, built.persisted))
                self._summaries_through = built.number
            yield StepSample.of(built.number, built.result, built.markers)

    def _show_series(self, samples: list[StepSample], total: int) -> None:
        self.timeline.show(samples, total)

    # -- widgets ----------------------------------------------------------------------------------

    def _make_widgets(self, show_dropped: bool) -> None:
        self.controls = PolicyControls(self.sources.policy, defaults=self.defaults, on_change=self._edited)
        self.fence_editor = FenceEditor(self.sources.fences, on_change=self._edited)
        self.views = ResultViews(show_dropped=show_dropped)
        self.timeline = Timeline(self.step_count)
        self.timeline.slider.observe(lambda _c: self._debouncer.trigger(), "value")
        self.timeline.slider.add_class("lp-step-view")
        self.title = W.HTML()
        self.status = W.HTML()
        self.export_path = W.Text(
            str(self.sources.export_path), description="export to", continuous_update=False
        )
        self.export_only_changed = W.Checkbox(True, description="only changed", indent=False)
        self.export_button = W.Button(description="Export", icon="save", tooltip="write the policy YAML")
        self.export_button.on_click(self._export_clicked)
        self.export_status = W.HTML()
        self.widget = self._layout()

    def _layout(self) -> W.VBox:
        self.controls.accordion.layout = W.Layout(max_height="640px", overflow="auto")
        export = W.HBox([self.export_path, self.export_only_changed, self.export_button])
        left = W.VBox([self.controls.widget, export, self.export_status], layout=W.Layout(width="36%"))
        middle, right = self.views.middle(), self.views.right()
        middle.layout, right.layout = W.Layout(width="40%"), W.Layout(width="24%")
        fences = W.Accordion([self.fence_editor.widget], titles=("Fences",))
        fences.selected_index = 0 if self.fences else None
        return W.VBox([self.title, self.status, W.HBox([left, middle, right]), self.timeline.widget, fences])

    def _show_header(self) -> None:
        count, step = self.step_count, self.step
        self.timeline.describe(self._points[step - 1] if count else None, count)
        where = f"step {step}/{count}" if count else "whole session"
        line = f"<b>linn-playground</b> · {escape(self.sources.title)} ({len(self.messages)} msgs) · "
        line += f"defaults: {escape(self.defaults)} · {where}"
        lesson = self.sources.lesson
        if lesson:
            line += f"<div style='color:#475569;white-space:pre-line'>{escape(lesson)}</div>"
        self.title.value = line
        notes = "".join(f"<div>{escape(note)}</div>" for note in self.sources.notes[:5])
        self.status.value = f'<div style="color:#b45309">{notes}</div>' if notes else ""

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)
