"""`Playground`: the policy, fences and step as widgets; the build result as HTML views.

Inputs are observed on `value`; each edit rebuilds at once (a build takes milliseconds; sliders send
one value on release, text boxes on enter) and redraws the `HTML` views. The current step is built with
the summaries the series has replayed so far and rebuilt when the series, filling in the background
in short slices, finds it lacked one (as the TUI does). Nothing here decides anything: the engine
builds, the application layer (`playground.app.workspace`, `playground.app.compare`) tracks inputs and
compares, `html` renders, the widgets only edit inputs.

A Playground shows as its widgets and, for a saved notebook, GitHub or nbviewer, as a static HTML view
of the same build (`_repr_mimebundle_`). Repeated rows (cards, events, the step chart) are HTML, not a
widget each; `close()` releases every widget model.
"""

from __future__ import annotations

import asyncio
import time
import warnings
from collections.abc import Iterator
from html import escape
from pathlib import Path
from typing import Any

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
    effective_policy,
    write_atomic,
)
from playground.app.building import run_build, series_steps
from playground.app.compare import compare_builds
from playground.app.explain import summarization_verdict
from playground.app.lessons import side_lesson
from playground.app.recorded import AS_RECORDED_POLICY, RecordSetup
from playground.app.views import StepSample
from playground.app.workspace import Workspace
from playground.notebook import data
from playground.notebook.layout import PlaygroundLayout, close_tree
from playground.notebook.lesson import LessonView
from playground.notebook.schedule import Debouncer, Scheduler, loop_scheduler
from playground.notebook.sources import FencesInput, PathLike, PolicyInput, SessionInput, open_sources
from playground.notebook.timeline import SeriesRunner
from playground.web import views as html
from playground.web.exports import REPORT, export

__all__ = ["Playground"]

CHART_EVERY = 0.5  # seconds between redraws of the step chart while the series fills in
QUIET = 0.3  # seconds after an edit or a step move before the step series goes on filling in


class Playground(PlaygroundLayout):
    """The playground in a notebook: `Playground("s.jsonl", policy="p.yaml", fences="f.yaml")`.

    `session` is a JSONL path, `run:ID` (a stored run; `store` the audit store's path), a loaded `Session`
    or a list of messages (AiMessage or dicts). `policy`
    (a file, a ContextPolicy or a camelCase dict layer) and `fences` (a file, a registry or descriptors)
    replace the session header's. `debounce` is a delay in seconds between the last edit and the
    rebuild; 0 (the default) builds at once, inside the edit. `.policy`, `.fences`, `.result` are the
    current objects; the other keyword arguments go to `build_context`.
    """

    def __init__(
        self,
        session: SessionInput,
        policy: PolicyInput = None,
        fences: FencesInput = None,
        *,
        defaults: str = "seed",
        debounce: float = 0.0,
        scheduler: Scheduler | None = None,
        show_dropped: bool = False,
        copy: str = "zh",
        now: int | None = None,
        tokenizer: TokenizerPort | None = None,
        summarizer: SummarizerPort | None = None,
        calibration: PathLike | None = None,
        tools: PathLike | None = None,
        store: PathLike | None = None,
    ) -> None:
        self.sources = open_sources(session, policy, fences, defaults, store)
        inputs = self.sources.inputs(defaults, copy)
        setup = RecordSetup.load(calibration, tools)  # a recorded session's calibration and missing tools
        inputs.calibration, inputs.given_offset = setup.calibration, setup.given_offset
        self.workspace = Workspace(inputs, now=now, tokenizer=tokenizer, summarizer=summarizer)
        self.observations = self.workspace.inputs.observation_store  # full texts of cut tool outputs
        self.builds = 0
        self._result: BuildResult | None = None
        self._series_stale = True
        self._inputs_version = 0
        self._closed = False
        self._cost_pending = False
        self._chart_shown = 0.0
        self._lesson_checked = -1  # the inputs version the lesson was last checked under
        self._provisional = False  # the shown build lacks summaries the series has not replayed yet
        self._rebuild_wanted = False
        self._baseline: BuildResult | None = None  # the build before the edit being answered
        self._edited: tuple[str, tuple[str, ...] | None] | None = None  # ("policy", path) or ("fences", None)
        self._debouncer = Debouncer(self.refresh, debounce, scheduler or loop_scheduler)
        self._later = scheduler or (loop_scheduler if _loop_running() else None)  # no loop: all at once
        self._series = SeriesRunner(self._series_steps, self._show_series, self._later, chunk=64)
        path = self.workspace.inputs.session.path
        found, problem = side_lesson(path) if path is not None else (None, None)
        if problem is not None:
            warnings.warn(problem, stacklevel=2)  # shown under the cell; the session opens without it
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
        """The result for the current inputs (a pending rebuild runs first, and the steps before the
        current one are replayed when the shown build still lacks their summaries)."""
        self._debouncer.flush()
        if self._provisional:
            self._series.finish()
        self._update_cost()
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

    def trace(self, message_id: str) -> str:
        """Show why `message_id` was kept or dropped in the trace explorer; its HTML."""
        return self.views.trace_message(message_id)

    # -- compare ----------------------------------------------------------------------------------

    def pin(self) -> None:
        """Pin the current build as A; the compare view lists what the builds after it change."""
        self.workspace.pin(self.result)
        self._show_comparison()

    def unpin(self) -> None:
        self.workspace.unpin()
        self._show_comparison()

    def compare(self, policy_b: ContextPolicy | dict[str, Any], *, step: int | None = None) -> Any:
        """What a build under `policy_b` (a policy, or a camelCase layer over the current one) adds, drops
        and re-counts against A (the pinned build, else the current one), as a DataFrame
        (`playground.notebook.data.comparison_frame`); the widgets are left as they are."""
        ws = self.workspace
        if not isinstance(policy_b, ContextPolicy):
            policy_b = effective_policy(policy_b, ws.policy, ws.defaults)
        a = ws.pinned.result if ws.pinned is not None else self.result
        return data.comparison_frame(compare_builds(a, self.build(policy_b, step=step)))

    def _show_comparison(self) -> None:
        # the session's cost, and A vs B (computed once a policy): it replays the session, so in a kernel
        # it runs after the edit's views are shown (reading `.result` runs it at once)
        self._cost_pending = True
        if self._later is None:
            self._update_cost()
        else:
            self._later(0, self._update_cost)
        pinned = self.workspace.pinned
        if pinned is None or self._result is None:
            self.compare_view.value = (
                "<span class='lp-muted'>pin A to compare the builds after it with it</span>"
            )
            return
        comparison = compare_builds(pinned.result, self._result)
        self.compare_view.value = html.comparison(comparison, self.workspace.changes_since_pin())

    # -- data out ---------------------------------------------------------------------------------

    def decisions_frame(self) -> Any:
        """The current build's decisions, one row per message, as a pandas DataFrame."""
        return data.decisions_frame(self.result)

    def events_frame(self) -> Any:
        """The current build's events as a pandas DataFrame."""
        return data.events_frame(self.result)

    def steps_frame(self) -> Any:
        """Tokens per step and per category, with the markers, as a pandas DataFrame indexed by step."""
        return data.steps_frame(self.series)

    def plot_steps(self, width: int = 720) -> data.StepChart:
        """The step series as a chart object (SVG, stacked by category, the current step marked)."""
        return data.StepChart(tuple(self.series), self.step, width, tuple(self._opened_with()))

    # -- export -----------------------------------------------------------------------------------

    def export_yaml(self, path: PathLike, only_changed: bool = True) -> Path:
        """Write the policy as YAML, atomically; refuses to write over the session (or fence) file."""
        text = dump_policy(self.policy, only_changed=only_changed, defaults=self.defaults)
        guarded = [p for p in (self.sources.session_path, self.sources.fences_path) if p is not None]
        return write_atomic(path, text, protected=guarded)

    def export_report(self, path: PathLike) -> Path:
        """Write the self-contained HTML report of the shown step (wire, budget, step chart, policy),
        atomically; never over the session, policy or fence file it was opened with."""
        return export(self.workspace, REPORT, path, self._opened_with())

    def export_fences_yaml(self, path: PathLike) -> Path:
        """Write the fence descriptors as YAML, atomically; never over the session or policy file."""
        guarded = [p for p in (self.sources.session_path, self.sources.policy_path) if p is not None]
        return write_atomic(path, dump_fences(self.fences or FenceRegistry()), protected=guarded)

    def _opened_with(self) -> list[Path]:
        """The session, policy and fence files the playground was opened with."""
        sources = (self.sources.session_path, self.sources.policy_path, self.sources.fences_path)
        return [p for p in sources if p is not None]

    def _export_clicked(self, _button: Any = None) -> None:
        try:
            written = self.export_yaml(self.export_path.value, self.export_only_changed.value)
        except (PolicyFileError, OSError) as err:
            self.export_status.value = f'<span style="color:#dc2626">{escape(str(err))}</span>'
            return
        self.export_status.value = f"wrote {escape(str(written))}"

    # -- rebuilding -------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Build with the current inputs and redraw (what an edit calls)."""
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
        self._note_unchanged(result)
        if self.lesson is not None and self._lesson_checked != self._inputs_version:
            # it replays the whole session: a step move cannot change its verdict, and an edit shows first
            self._lesson_checked = self._inputs_version
            if self._later is None:
                self.lesson.check()
            else:
                self._later(0, self._check_lesson)
        if self._series_stale:
            self._series_stale = False
            self._series.start(self.step_count, delay=QUIET)
        else:
            self.timeline.show(self._series.samples, self._series.total)  # unchanged: nothing is sent

    def _update_cost(self) -> None:
        if self._cost_pending and not self._closed:
            self._cost_pending = False
            self.cost.update()

    def _check_lesson(self) -> None:
        if self.lesson is not None and self._lesson_checked == self._inputs_version and not self._closed:
            self.lesson.check()

    def _note_unchanged(self, result: BuildResult) -> None:
        """Beside the edited control: say when the edit changed nothing at the shown step (the application
        layer's comparison of the builds decides; the final word waits for a build with every summary)."""
        if self._edited is None or self._baseline is None:
            return
        where, path = self._edited
        same = compare_builds(self._baseline, result).identical
        text = ""
        if same:
            text = f"no change at step {self.step}: the model receives the same messages and tokens"
            if not self.step_count:
                text = "no change: the model receives the same messages and tokens"
        if where == "policy":
            self.controls.note(path, text)
        else:
            self.fence_editor.note(text)
        if not self._provisional:
            self._edited = self._baseline = None

    def _build_current(self) -> BuildResult:
        """The workspace's build of its step: with the summaries earlier steps made, from the series when
        it has replayed them, else by replaying up to the step here."""
        request = self.workspace.build_request(policy_changed=self._series_stale)
        outcome = run_build(request)
        if outcome.result is None:
            raise EngineError(outcome.error or "build failed")
        self._provisional = not request.summaries_complete
        return outcome.result

    def _lesson_reset(self, policy: ContextPolicy) -> None:
        self.policy = policy

    def record(self, store: PathLike | None = None) -> str:
        """Keep a replay under the current policy in the audit store (`runs`); the run's id."""
        from playground.notebook.sweeps import record

        return record(self.workspace, store)

    def as_recorded(self) -> None:
        """The policy that rebuilds what the agent itself sent (a recorded session: beside the record)."""
        self.policy = AS_RECORDED_POLICY

    def _policy_edited(self) -> None:
        self._remember_edit("policy", self.controls.last_edited)
        self._inputs_changed()

    def _fences_edited(self) -> None:
        self._remember_edit("fences", None)
        self.controls.sync()  # a renamed kind may change the fence fields' choices
        self._inputs_changed()

    def _remember_edit(self, where: str, path: tuple[str, ...] | None) -> None:
        if self._edited is None or self._edited != (where, path):
            self._baseline = self._result
        self._edited = (where, path)

    def _step_moved(self) -> None:
        self.workspace.set_step(self.timeline.step)
        self._edited = self._baseline = None
        self.controls.note(None, "")
        self._series.hold(QUIET)
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
        """The series behind the chart (`playground.app.building.series_steps`); it records the summaries it
        makes in the workspace for the step builds."""
        version, request = self._inputs_version, self.workspace.timeline_request()
        samples, summaries = list(request.known), list(request.known_summaries)  # the steps it resumes after
        yield from samples
        for sample, persisted in series_steps(request):
            samples.append(sample)
            if persisted is not None:
                summaries.append(persisted)
            if version == self._inputs_version:
                verdict = self.workspace.record_series(samples, summaries)
                if verdict == "rebuild":
                    self._rebuild_wanted = True
                elif verdict == "complete":
                    self._provisional = False
            yield sample

    def _show_series(self, samples: list[StepSample], total: int) -> None:
        """Redraw the chart as the series fills in: at most every CHART_EVERY seconds (a long session's
        chart is tens of kB; redrawing it each slice would keep the browser busy), and at the end."""
        if self._rebuild_wanted:  # the shown step now has the summaries the steps before it made
            self._rebuild_wanted = False
            self.refresh()
            return
        now = time.monotonic()
        if len(samples) >= total or now - self._chart_shown >= CHART_EVERY:
            self._chart_shown = now
            self.timeline.show(samples, total)

    def close(self) -> None:
        """Close every widget of this Playground (their models leave the kernel and the page) and stop
        the background series. The Playground's data (`result`, `policy`, frames) stay usable."""
        self._debouncer.cancel()
        self._series.cancel()
        close_tree(self.widget)
        for layout in vars(self.controls.layouts).values():  # the shared row layouts of unopened groups
            layout.close()
        self._closed = True


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True
