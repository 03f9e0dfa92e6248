"""`Playground`: the policy, fences and step as widgets; the build result as HTML views.

The flow is ipywidgets' `interactive_output`: inputs are observed on `value`, a debounced `refresh`
builds once with the latest inputs and redraws the `HTML` views. Nothing here decides anything: the
engine builds, `html` renders, the widgets only edit inputs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from html import escape
from pathlib import Path
from typing import Any

import ipywidgets as W

from engine.build import build_context
from engine.errors import EngineError
from engine.fences import FenceRegistry, as_registry, dump_fences, load_fences, parse_fences
from engine.messages import AiMessage
from engine.policy import (
    ContextPolicy,
    PolicyFileError,
    dump_policy,
    effective_policy,
    load_policy,
    write_atomic,
)
from engine.result import BuildResult
from engine.session import Session, SessionHeader, load_session
from playground.notebook import html
from playground.notebook.controls import PolicyControls
from playground.notebook.fences import FenceEditor
from playground.notebook.schedule import Debouncer, Scheduler, loop_scheduler
from playground.notebook.timeline import SeriesRunner, Steps, StepSample, Timeline

__all__ = ["Playground"]

PathLike = str | os.PathLike[str]
SessionInput = PathLike | Session | Sequence[AiMessage | dict[str, Any]]


class Playground:
    """The playground in a notebook: `Playground("s.jsonl", policy="p.yaml", fences="f.yaml")`.

    `session` is a JSONL path, a loaded `Session` or a list of messages (AiMessage or dicts). `policy`
    (a file, a ContextPolicy or a camelCase dict layer) and `fences` (a file or a registry) replace the
    session header's. `debounce` is the delay in seconds between the last edit and the rebuild; 0 builds
    at once, in the same call (tests). `.policy`, `.fences`, `.result` are the current objects.
    """

    def __init__(
        self,
        session: SessionInput,
        policy: PathLike | ContextPolicy | dict[str, Any] | None = None,
        fences: PathLike | FenceRegistry | Sequence[Any] | None = None,
        *,
        defaults: str = "seed",
        debounce: float = 0.3,
        scheduler: Scheduler | None = None,
        max_steps: int | None = None,
        now: int | None = None,
        tokenizer: Any = None,
        summarizer: Any = None,
        show_dropped: bool = False,
    ) -> None:
        loaded = _session_of(session)
        header = loaded.header
        self.session_path = loaded.path
        self.fence_file = Path(fences) if isinstance(fences, str | os.PathLike) else None
        self.messages = list(loaded.messages)
        self.header = header
        self.defaults = defaults
        self.builds = 0
        self._build_options = {"tokenizer": tokenizer, "summarizer": summarizer, "now": now}
        self._result: BuildResult | None = None
        self._series_stale = True
        self._steps = Steps(self.messages, max_steps or (header.max_steps if header else None))
        self._notes = [str(p) for p in loaded.problems]
        self._debouncer = Debouncer(self.refresh, debounce, scheduler or loop_scheduler)
        self._series = SeriesRunner(
            self._sample_at, self._show_series, None if debounce <= 0 else scheduler or loop_scheduler
        )
        self._make_widgets(_policy_of(policy, header, defaults), _fences_of(fences, header), show_dropped)
        self._export_path.value = str(_default_export_path(policy, self.session_path))
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
    def fences(self, fences: FenceRegistry | None) -> None:
        self.fence_editor.set_registry(as_registry(fences))
        self._inputs_changed()

    @property
    def result(self) -> BuildResult:
        """The result for the current inputs (a pending rebuild runs first)."""
        self._debouncer.flush()
        assert self._result is not None, "the first build failed; see .status"
        return self._result

    @property
    def step(self) -> int:
        return self.timeline.step

    @step.setter
    def step(self, step: int) -> None:
        self.timeline.slider.value = step

    @property
    def series(self) -> list[StepSample]:
        """Tokens per step under the current inputs (as far as built)."""
        return list(self._series.samples)

    # -- export -----------------------------------------------------------------------------------

    def export_yaml(self, path: PathLike, only_changed: bool = True) -> Path:
        """Write the policy as YAML, atomically; refuses to write over the session (or fence) file."""
        text = dump_policy(self.policy, only_changed=only_changed, defaults=self.defaults)
        return write_atomic(path, text, protected=self._protected())

    def export_fences_yaml(self, path: PathLike) -> Path:
        """Write the fence descriptors as YAML, atomically; never over the session file."""
        text = dump_fences(self.fences or FenceRegistry())
        return write_atomic(path, text, protected=[self.session_path] if self.session_path else [])

    def _protected(self) -> list[PathLike]:
        return [p for p in (self.session_path, self.fence_file) if p is not None]

    def _export_clicked(self, _button: Any = None) -> None:
        try:
            written = self.export_yaml(self._export_path.value, self._export_only_changed.value)
        except (PolicyFileError, OSError) as err:
            self._export_status.value = f'<span style="color:#dc2626">{escape(str(err))}</span>'
            return
        self._export_status.value = f"wrote {escape(str(written))}"

    # -- rebuilding -------------------------------------------------------------------------------

    def refresh(self) -> None:
        """Build with the current inputs and redraw (what the debouncer calls)."""
        try:
            result = self._build(self.step)
        except EngineError as err:
            self.status.value = f'<span style="color:#dc2626">not rebuilt: {escape(str(err))}</span>'
            return
        self._result = result
        self.builds += 1
        self._render(result)
        if self._series_stale:
            self._series_stale = False
            self._series.start(self._step_count())
        else:
            self.timeline.show(self._series.samples, self._series.total)

    def _inputs_changed(self) -> None:
        self._series_stale = True
        self.timeline.set_count(self._step_count())
        self._debouncer.trigger()

    def _build(self, step: int) -> BuildResult:
        policy = self.policy
        prefix, tick = self._steps.inputs(step, policy.checkpoint.trigger_tool_name)
        return build_context(prefix, policy, fences=self.fences, tick=tick, **self._build_options)

    def _sample_at(self, step: int) -> StepSample:
        return StepSample.of(step, self._build(step))

    def _step_count(self) -> int:
        return len(self._steps.points(self.policy.checkpoint.trigger_tool_name))

    def _show_series(self, samples: list[StepSample], total: int) -> None:
        self.timeline.show(samples, total)

    # -- widgets ----------------------------------------------------------------------------------

    def _make_widgets(
        self, policy: ContextPolicy, registry: FenceRegistry | None, show_dropped: bool
    ) -> None:
        self.controls = PolicyControls(
            policy, defaults=self.defaults, on_change=lambda _p: self._inputs_changed()
        )
        self.fence_editor = FenceEditor(registry, on_change=lambda _r: self._inputs_changed())
        self.timeline = Timeline(self._step_count())
        self.timeline.slider.observe(lambda _c: self._debouncer.trigger(), "value")
        self.title = W.HTML()
        self.status = W.HTML()
        scroll = W.Layout(max_height="760px", overflow="auto")
        self.wire = W.HTML(layout=scroll)
        self.budget = W.HTML()
        self.events = W.HTML()
        self.trace = W.HTML()
        self.show_dropped = W.Checkbox(show_dropped, description="show dropped messages", indent=False)
        self.show_dropped.observe(lambda _c: self._render_wire(), "value")
        self.trace_picker = W.Dropdown(description="trace", options=[], layout=W.Layout(width="100%"))
        self.trace_picker.observe(lambda _c: self._render_trace(), "value")
        self._export_path = W.Text(description="export to", continuous_update=False)
        self._export_only_changed = W.Checkbox(True, description="only changed", indent=False)
        export = W.Button(description="Export", icon="save", tooltip="write the policy YAML (atomically)")
        export.on_click(self._export_clicked)
        self._export_button = export
        self._export_status = W.HTML()
        self.widget = self._layout()
        for widget, name in ((self.wire, "wire"), (self.budget, "budget"), (self.timeline.slider, "step")):
            widget.add_class(f"lp-{name}-view")  # stable hooks for browser tests

    def _layout(self) -> W.VBox:
        self.controls.accordion.layout = W.Layout(max_height="640px", overflow="auto")
        left = W.VBox(
            [
                self.controls.widget,
                W.HBox([self._export_path, self._export_only_changed, self._export_button]),
                self._export_status,
            ],
            layout=W.Layout(width="36%"),
        )
        middle = W.VBox([W.HTML("<b>WIRE</b>"), self.show_dropped, self.wire], layout=W.Layout(width="40%"))
        right = W.VBox(
            [
                W.HTML("<b>BUDGET</b>"),
                self.budget,
                W.HTML("<b>EVENTS</b>"),
                self.events,
                self.trace_picker,
                self.trace,
            ],
            layout=W.Layout(width="24%"),
        )
        fences = W.Accordion([self.fence_editor.widget], titles=("Fences",))
        fences.selected_index = 0 if self.fences else None
        return W.VBox([self.title, self.status, W.HBox([left, middle, right]), self.timeline.widget, fences])

    def _render(self, result: BuildResult) -> None:
        self.budget.value = html.budget_bar(result.tokens, result.summarization_check)
        self.events.value = html.events_list(result)
        self._render_wire()
        self._update_trace_options(result)
        count = self._step_count()
        point = self._steps.points(self.policy.checkpoint.trigger_tool_name)
        self.timeline.describe(point[min(self.step, count) - 1] if count else None, count)
        self.title.value = self._title(count)
        notes = "".join(f"<div>{escape(n)}</div>" for n in self._notes[:5])
        self.status.value = f'<div style="color:#b45309">{notes}</div>' if notes else ""

    def _render_wire(self) -> None:
        if self._result is not None:
            self.wire.value = html.wire_cards(self._result, show_dropped=self.show_dropped.value)

    def _render_trace(self) -> None:
        chosen = self.trace_picker.value
        if self._result is not None and chosen:
            self.trace.value = html.trace_view(self._result, chosen)

    def _update_trace_options(self, result: BuildResult) -> None:
        options = [(_decision_label(d), d.message_id) for d in result.decisions]
        chosen = self.trace_picker.value
        self.trace_picker.options = options
        ids = [value for _, value in options]
        if chosen in ids:
            self.trace_picker.value = chosen
        elif ids:
            self.trace_picker.value = ids[-1]
        self._render_trace()

    def _title(self, count: int) -> str:
        name = (self.header.title if self.header else None) or (
            self.session_path.name if self.session_path else "in-memory session"
        )
        lesson = self.header.lesson if self.header else None
        step = f"step {self.step}/{count}" if count else "whole session"
        line = f"<b>linn-playground</b> · {escape(name)} ({len(self.messages)} msgs) · defaults: "
        line += f"{escape(self.defaults)} · {step}"
        return line + (
            f"<div style='color:#475569;white-space:pre-line'>{escape(lesson)}</div>" if lesson else ""
        )

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def _decision_label(decision: Any) -> str:
    where = "new" if decision.index < 0 else f"#{decision.index}"
    fate = "kept" if decision.kept else "dropped"
    return f"{where} {decision.role}·{decision.type} {decision.message_id} ({fate})"


# -- inputs --------------------------------------------------------------------------------------


def _session_of(session: SessionInput) -> Session:
    if isinstance(session, Session):
        return session
    if isinstance(session, str | os.PathLike):
        return load_session(session)
    messages = [m if isinstance(m, AiMessage) else AiMessage.from_dict(m) for m in session]
    return Session(None, None, messages)


def _policy_of(policy: Any, header: SessionHeader | None, defaults: str) -> ContextPolicy:
    if isinstance(policy, ContextPolicy):
        return policy
    if isinstance(policy, str | os.PathLike):
        return load_policy(policy, defaults=defaults)
    layer = policy if policy is not None else (header.context_policy if header else None)
    return effective_policy(layer or {}, None, defaults)


def _fences_of(fences: Any, header: SessionHeader | None) -> FenceRegistry | None:
    if isinstance(fences, str | os.PathLike):
        return load_fences(fences)
    if fences is not None:
        return as_registry(fences)
    listed = header.fences if header else None
    return parse_fences(listed, "session header") if listed else None


def _default_export_path(policy: Any, session_path: Path | None) -> Path:
    if isinstance(policy, str | os.PathLike):
        return Path(policy)
    if session_path is not None:
        return session_path.with_name(f"{session_path.stem}.policy.yaml")
    return Path("policy.yaml")
