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

from engine import (
    AiMessage,
    BuildResult,
    ContextPolicy,
    EngineError,
    FenceRegistry,
    PolicyFileError,
    SummarizerPort,
    TokenizerPort,
    as_registry,
    build_at_step,
    build_context,
    dump_fences,
    dump_policy,
    write_atomic,
)
from playground import html_views as html
from playground.building import Persisted, run_build, series_steps
from playground.compare import compare_builds
from playground.explain import summarization_verdict
from playground.lessons import load_lesson_for
from playground.notebook.controls import PolicyControls
from playground.notebook.cost import CostView
from playground.notebook.fences import FenceEditor
from playground.notebook.lesson import LessonView
from playground.notebook.schedule import Debouncer, Scheduler, loop_scheduler
from playground.notebook.sources import FencesInput, PathLike, PolicyInput, SessionInput, open_sources
from playground.notebook.timeline import SeriesRunner, Timeline
from playground.notebook.views import ResultViews
from playground.views import StepSample
from playground.workspace import DEFAULTS_PROFILES, Workspace

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
        copy: str = "zh",
        now: int | None = None,
        tokenizer: TokenizerPort | None = None,
        summarizer: SummarizerPort | None = None,
    ) -> None:
        self.sources = open_sources(session, policy, fences, defaults)
        self.workspace = Workspace(
            self.sources.inputs(defaults, copy), now=now, tokenizer=tokenizer, summarizer=summarizer
        )
        self.observations = self.workspace.inputs.observation_store  # full texts of cut tool outputs
        self.builds = 0
        self._result: BuildResult | None = None
        self._series_stale = True
        self._inputs_version = 0
        self._debouncer = Debouncer(self.refresh, debounce, scheduler or loop_scheduler)
        later = None if debounce <= 0 else scheduler or loop_scheduler
        self._series = SeriesRunner(self._series_steps, self._show_series, later)
        path = self.workspace.inputs.session.path
        found = load_lesson_for(path) if path is not None else None
        self.lesson = LessonView(found, self.workspace, self._lesson_reset) if found is not None else None
        self._make_widgets(show_dropped)
        self.refresh()

    # -- current objects --------------------------------------------------------------------------

    @property
    def messages(self) -> list[AiMessage]:
        """The session, with the fences of an edited kind re-placed by its descriptor."""
        return self.workspace.messages

    @property
    def defaults(self) -> str:
        return self.workspace.defaults

    @defaults.setter
    def defaults(self, name: str) -> None:
        self.defaults_switch.value = name

    @property
    def policy(self) -> ContextPolicy:
        return self.workspace.policy

    @policy.setter
    def policy(self, policy: ContextPolicy) -> None:
        self.workspace.set_policy(policy)
        self.controls.sync()
        self._inputs_changed()

    @property
    def fences(self) -> FenceRegistry | None:
        return self.workspace.fences

    @fences.setter
    def fences(self, fences: FencesInput) -> None:
        self.workspace.set_fences([(None, d) for d in as_registry(fences) or ()])
        self.fence_editor.sync()
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
        return len(self.workspace.points)

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
        ws = self.workspace
        if (policy is None or policy == ws.policy) and (step is None or step == ws.step):
            return self._build_current()
        policy = policy or ws.policy
        options = ws.options.kwargs()
        if not ws.points:
            return build_context(ws.messages, policy, **options)
        tools, name = ws.available_tools, policy.checkpoint.trigger_tool_name
        return build_at_step(
            ws.messages, step or self.step, policy, checkpoint_tool_name=name, max_steps=ws.max_steps,
            available_tools=tools, **options,
        )[2]  # fmt: skip

    # -- compare ----------------------------------------------------------------------------------

    def pin(self) -> None:
        """Pin the current build as A; the compare view lists what the builds after it change."""
        self.workspace.pin(self.result)
        self._show_comparison()

    def unpin(self) -> None:
        self.workspace.unpin()
        self._show_comparison()

    def _show_comparison(self) -> None:
        self.cost.update()  # the session's cost, and A vs B (computed once a policy)
        pinned = self.workspace.pinned
        if pinned is None or self._result is None:
            self.compare.value = ""
            return
        comparison = compare_builds(pinned.result, self._result)
        self.compare.value = html.comparison(comparison, self.workspace.changes_since_pin())

    # -- export -----------------------------------------------------------------------------------

    def export_yaml(self, path: PathLike, only_changed: bool = True) -> Path:
        """Write the policy as YAML, atomically; refuses to write over the session (or fence) file."""
        text = dump_policy(self.policy, only_changed=only_changed, defaults=self.defaults)
        guarded = [p for p in (self.sources.session_path, self.sources.fences_path) if p is not None]
        return write_atomic(path, text, protected=guarded)

    def export_report(self, path: PathLike) -> Path:
        """Write the self-contained HTML report of the shown step (wire, budget, step chart, policy),
        atomically; never over the session."""
        return self.workspace.export("html-report", path)

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
            result = self._build_current()
        except EngineError as err:
            self.status.value = f'<span style="color:#dc2626">not rebuilt: {escape(str(err))}</span>'
            return
        self._result = result
        self.builds += 1
        self.views.show(result)
        self.timeline.show_verdict(summarization_verdict(result))
        self._show_header()
        self._show_comparison()
        if self.lesson is not None:
            self.lesson.check()
        if self._series_stale:
            self._series_stale = False
            self._series.start(self.step_count)
        else:
            self.timeline.show(self._series.samples, self._series.total)

    def _build_current(self) -> BuildResult:
        """The workspace's build of its step: with the summaries earlier steps made, from the series when
        it has replayed them, else by replaying up to the step here."""
        ws = self.workspace
        request = ws.build_request(policy_changed=self._series_stale)
        if request.summaries_complete:
            outcome = run_build(request)
            if outcome.result is None:
                raise EngineError(outcome.error or "build failed")
            return outcome.result
        options = ws.options.kwargs()
        name = ws.policy.checkpoint.trigger_tool_name
        return build_at_step(
            ws.messages, ws.step or 1, ws.policy, checkpoint_tool_name=name, max_steps=ws.max_steps,
            available_tools=ws.available_tools, **options,
        )[2]  # fmt: skip

    def _lesson_reset(self, policy: ContextPolicy) -> None:
        self.policy = policy

    def _policy_edited(self) -> None:
        self._inputs_changed()

    def _fences_edited(self) -> None:
        self.controls.sync()  # a renamed kind may change the fence fields' choices
        self._inputs_changed()

    def _step_moved(self) -> None:
        self.workspace.set_step(self.timeline.step)
        self._debouncer.trigger()

    def _defaults_switched(self, name: str) -> None:
        if name != self.workspace.defaults:
            self.workspace.switch_defaults(name)
            self.controls.sync()
            self._inputs_changed()

    def _inputs_changed(self) -> None:
        self._series_stale = True
        self._inputs_version += 1
        self.timeline.set_count(self.step_count)
        self._debouncer.trigger()

    def _series_steps(self) -> Iterator[StepSample]:
        """The series behind the chart (`playground.building.series_steps`); it records the summaries it
        makes in the workspace for the step builds."""
        version, request = self._inputs_version, self.workspace.timeline_request()
        summaries: list[Persisted] = []
        for sample, persisted in series_steps(request):
            if persisted is not None:
                summaries.append(persisted)
            if version == self._inputs_version:
                self.workspace.record_series(sample.step, summaries)
            yield sample

    def _show_series(self, samples: list[StepSample], total: int) -> None:
        self.timeline.show(samples, total)

    # -- widgets ----------------------------------------------------------------------------------

    def _make_widgets(self, show_dropped: bool) -> None:
        self.controls = PolicyControls(self.workspace, on_change=self._policy_edited)
        self.fence_editor = FenceEditor(self.workspace, on_change=self._fences_edited)
        self.views = ResultViews(show_dropped=show_dropped)
        self.timeline = Timeline(self.step_count)
        self.timeline.slider.observe(lambda _c: self._step_moved(), "value")
        self.defaults_switch = W.ToggleButtons(
            options=DEFAULTS_PROFILES, value=self.workspace.defaults, description="defaults"
        )
        self.defaults_switch.observe(lambda change: self._defaults_switched(change["new"]), "value")
        self.pin_button = W.Button(description="pin A", icon="thumb-tack", tooltip="pin this build as A")
        self.pin_button.on_click(lambda _b: self.pin())
        self.unpin_button = W.Button(description="unpin", tooltip="forget build A")
        self.unpin_button.on_click(lambda _b: self.unpin())
        self.compare = W.HTML()
        self.cost = CostView(self.workspace)
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
        tools = W.HBox([self.defaults_switch, self.pin_button, self.unpin_button])
        body = W.HBox([left, middle, right])
        lesson = [self.lesson.widget] if self.lesson is not None else []
        parts = [self.title, *lesson, self.status, tools, body, self.compare, self.timeline.widget]
        parts += [self.cost.widget, fences]
        return W.VBox(parts)

    def _show_header(self) -> None:
        count, step = self.step_count, self.step
        self.timeline.describe(self.workspace.points[step - 1] if count else None, count)
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
