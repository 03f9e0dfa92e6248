"""The main screen: policy and fences on the left, the wire in the middle, the budget on the right,
events and the timeline below. Its handlers own the workspace; its workers only build and post."""

from __future__ import annotations

import gc
from typing import ClassVar

from textual import events, on
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Footer, Input, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from engine import BUILTIN_PRICES, BuildResult, FenceError, control_for, dump_policy
from playground.app.building import BuildOutcome, Persisted
from playground.app.compare import compare_builds
from playground.app.costing import CostRequest, price_choice
from playground.app.diffing import policy_sources
from playground.app.explain import summarization_verdict
from playground.app.lessons import LessonError, LessonRun, StepView, build_view, side_lesson, start_policy
from playground.app.views import StepSample, tokens_long
from playground.app.workspace import Workspace
from playground.tui.builder import Builder
from playground.tui.keys import MAIN_BINDINGS, STEP_KEYS
from playground.tui.messages import BuildFinished, ProvidersChecked, TimelineProgress
from playground.tui.panels.compare_panel import ComparePanel
from playground.tui.panels.fence_panel import FencePanel
from playground.tui.panels.policy_field import PolicyField
from playground.tui.panels.policy_panel import PolicyGroup, PolicyPanel
from playground.tui.panels.top_bar import TopBar, TopBarState
from playground.tui.priority import BUILD_HOLD, PAINT_GRACE, UiPriority
from playground.tui.screens.diff import DiffScreen
from playground.tui.screens.fence_form import NEW_FENCE, FenceForm
from playground.tui.screens.trace import TraceScreen
from playground.tui.widgets import BudgetBar, EventsView, Timeline, WireView
from playground.tui.widgets.cost_pane import CostCompare, CostPane
from playground.tui.widgets.lesson_pane import LessonPane
from playground.tui.widgets.record_chart import RecordChart
from playground.tui.widgets.slider import Slider

Path = tuple[str, ...]
SLOW_BUILD = 0.1  # seconds


def _event_lines(result: BuildResult, problems: tuple[str, ...]) -> tuple[object, ...]:
    """What the events view shows of a build (with why a provider would reject its wire)."""
    reminder = result.reminder
    return result.events, reminder.hit_rule_ids, reminder.texts, result.warnings, result.error, problems


class MainScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = MAIN_BINDINGS

    def __init__(self, workspace: Workspace, priority: UiPriority) -> None:
        super().__init__()
        self.workspace = workspace
        self.priority = priority
        self.result: BuildResult | None = None
        self.provider_problems: tuple[str, ...] = ()  # of `result`: why OpenAI or Anthropic would reject it
        self.shown_generation = 0
        self._status = ("starting", "$text-muted")
        self._slow_build: Timer | None = None  # shows "building…" when a build takes longer than SLOW_BUILD
        # the running series' steps and summaries so far, as its progress messages bring them
        self._series: tuple[list[StepSample], list[Persisted]] = ([], [])
        path = workspace.inputs.session.path
        self.lesson, self._lesson_problem = side_lesson(path) if path is not None else (None, None)

    def compose(self) -> ComposeResult:
        yield TopBar(id="top-bar")
        with Horizontal(id="body"):
            with TabbedContent(id="left"):
                with TabPane("Policy", id="tab-policy"):
                    yield PolicyPanel(self.workspace.policy, id="policy")
                with TabPane("Fences", id="tab-fences"):
                    yield FencePanel(id="fences")
            with TabbedContent(id="middle"):
                with TabPane("Wire", id="tab-wire"):
                    yield WireView(id="wire")
                with TabPane("Compare", id="tab-compare"):
                    yield CostCompare(id="cost-compare")
                    yield ComparePanel(id="compare")
            with Vertical(id="right"):
                yield Static("BUDGET", classes="section-title")
                yield BudgetBar(id="budget")
                yield CostPane(self.priority, id="cost")
                if self.lesson is not None:
                    yield LessonPane(LessonRun(self.lesson), id="lesson")
        with Vertical(id="bottom"):
            yield EventsView(id="events")
            yield Timeline(id="timeline")
            yield RecordChart(id="record-chart")
        yield Footer()
        yield Builder(self.priority)

    def on_mount(self) -> None:
        self._show_fences()
        self._show_placeholder_timeline()
        self._policy_changed()
        self.query_one(WireView).query_one("WireList").focus()
        if self._lesson_problem is not None:
            self.notify(self._lesson_problem, severity="warning", timeout=10)
        calls = len(self.workspace.record.own_calls)
        if calls and self.workspace.inputs.calibration is None:
            self.notify(
                f"This session kept the provider's counts of {calls} calls: g rebuilds it as recorded; "
                "`linn-playground calibrate` fits a calibration to open it with (--calibration).",
                timeout=8,
            )

    # -- building --------------------------------------------------------------------------------
    def asks_for_a_build(self, key: events.Key) -> bool:
        """Whether `key` moves a policy slider or the step: the app then holds the paint of the moved knob
        or step until the build is ready (one paint instead of two, ~8 ms sooner)."""
        focused = self.focused
        if isinstance(focused, Slider) and key.key in Slider.VALUE_KEYS:
            return True
        if isinstance(focused, Timeline) and key.key in Timeline.STEP_KEYS:
            return True
        return key.key in STEP_KEYS and not isinstance(focused, Input)

    def request_build(self, *, policy_changed: bool = True) -> None:
        builder = self.query_one(Builder)
        if policy_changed:  # its numbers are stale now; stop it so it does not slow this build down
            builder.stop_timeline()
        if self._slow_build is None:  # a build shown within a few frames needs no "building…" flash
            self._slow_build = self.set_timer(SLOW_BUILD, lambda: self._set_status("building…"))
        self.priority.hold(BUILD_HOLD)  # until this build is painted
        self.priority.hold_paint()
        builder.build(self.workspace.build_request(policy_changed=policy_changed))

    @on(BuildFinished)
    def _build_finished(self, message: BuildFinished) -> None:
        outcome = message.outcome
        if outcome.generation <= self.shown_generation:
            return
        self.shown_generation = outcome.generation
        if outcome.generation == self.workspace.generation:
            if self._slow_build is not None:
                self._slow_build.stop()
                self._slow_build = None
            self.priority.release_soon(PAINT_GRACE)  # paint it, then let the background go on
        if outcome.result is None:
            self._set_status(
                f"the engine refused the policy: {outcome.error}; the last build is kept", "$error"
            )
            return
        previous, result = self.result, outcome.result
        # an unchecked build keeps the last one's problems until its own check arrives (`ProvidersChecked`,
        # a few ms later): mostly the same, and the status line does not blink
        problems = outcome.problems if outcome.checked else self.provider_problems
        before = _event_lines(previous, self.provider_problems) if previous is not None else None
        self.result, self.provider_problems = result, problems
        self.query_one(WireView).show(
            result, anthropic=outcome.anthropic, dropped=outcome.dropped, wait_for_count=not outcome.checked
        )
        if not outcome.checked:
            self.query_one(Builder).check(outcome)
        self.query_one(Timeline).show_note(summarization_verdict(result, tokens_long))
        if before != _event_lines(result, problems):
            self.query_one(EventsView).show(result, problems)  # a new list re-lays out the screen
        self._show_comparison()
        self._check_lesson()
        self._show_build_status(outcome)
        if previous is None:
            # What is alive once the first build is on screen (the session, its token counts, the widgets)
            # lives as long as the app: keep it out of the collector's full scans, which on a long session
            # took 100-170 ms each, every few seconds, in the middle of keypresses.
            self.call_after_refresh(gc.freeze)
        if outcome.request.policy_changed:  # paint the build first, then recompute the series
            self.call_after_refresh(self.query_one(Builder).timeline, self.workspace.timeline_request())

    def _show_build_status(self, outcome: BuildOutcome) -> None:
        result = outcome.result
        if result is None:
            return
        error, pending = result.error, outcome.generation < self.workspace.generation
        if error or not pending:
            ready = "ready" if outcome.request.summaries_complete else "ready · replaying earlier steps…"
            if error:
                self._set_status(f"build failed: {error.code}", "$error")
            else:
                self._show_ready(ready)

    @on(ProvidersChecked)
    def _providers_checked(self, message: ProvidersChecked) -> None:
        outcome = message.outcome
        if self.result is not outcome.result:  # a newer build is shown already
            return
        self.query_one(WireView).set_checked(outcome.anthropic, outcome.dropped)
        if outcome.problems == self.provider_problems:
            return
        before = _event_lines(self.result, self.provider_problems)
        self.provider_problems = outcome.problems
        if before != _event_lines(self.result, outcome.problems):
            self.query_one(EventsView).show(self.result, outcome.problems)
        self._show_build_status(outcome)

    @on(TimelineProgress)
    def _timeline_progress(self, message: TimelineProgress) -> None:
        if message.version != self.query_one(Builder).timeline_version:
            return
        if message.start == 0:
            self._series = ([], [])
        samples, summaries = self._series
        if message.start != len(samples):  # not the next part of the series this screen holds
            return
        samples.extend(message.points)
        summaries.extend(message.summaries)
        verdict = self.workspace.record_series(samples, summaries)
        if verdict == "rebuild":
            self.request_build(policy_changed=False)  # now with the summaries earlier steps made
        elif verdict == "complete" and self.shown_generation == self.workspace.generation and self.result:
            if self.result.error is None:
                self._show_ready("ready")
        timeline, steps = self.query_one(Timeline), len(self.workspace.points)
        if len(timeline.points) == steps:  # the new steps replace what was shown for them
            timeline.fill(message.start, message.points, final=message.done)
        else:
            rest = [StepSample.pending(n) for n in range(len(samples) + 1, steps + 1)]
            timeline.show([*samples, *rest])  # its own step: a key press may not be handled here yet

    def _show_placeholder_timeline(self) -> None:
        points = [StepSample.pending(n) for n in range(1, len(self.workspace.points) + 1)]
        self.query_one(Timeline).show(points, self.workspace.step)

    @on(Worker.StateChanged)
    def _worker_failed(self, event: Worker.StateChanged) -> None:
        if event.state == WorkerState.ERROR:
            self._set_status(f"{event.worker.group} failed: {event.worker.error!r}", "$error")
            self.notify(str(event.worker.error), title=f"{event.worker.group} failed", severity="error")

    # -- policy ----------------------------------------------------------------------------------
    def _policy_changed(self) -> None:
        problems = self.workspace.problems()
        self._sync_policy(problems)
        if problems:
            fields = ", ".join(".".join(path) for path in problems)
            self._set_status(f"invalid {fields}: the last build is kept", "$error")
            self.priority.release()
            return
        self.request_build()

    def _sync_policy(self, problems: dict[Path, str]) -> None:
        fences = self.workspace.fences.kinds() if self.workspace.fences else []
        errors = {**problems, **self.workspace.refused}
        self.query_one(PolicyPanel).sync(self.workspace.policy, self.workspace.changed(), errors, fences)

    @on(PolicyField.Edited)
    def _edited(self, event: PolicyField.Edited) -> None:
        changed = self.workspace.edit(event.path, event.value)
        if event.path in self.workspace.refused:
            self.query_one(PolicyPanel).refused(event.path, event.value, self.workspace.refused[event.path])
            self.priority.release()  # no build follows: paint the refusal now
            return
        if changed:
            self._policy_changed()
        else:
            self._sync_policy(self.workspace.problems())
            self.priority.release()

    @on(PolicyField.ResetRequested)
    def _reset_field(self, event: PolicyField.ResetRequested) -> None:
        self.workspace.reset_field(event.path)
        self._policy_changed()

    @on(PolicyGroup.ResetRequested)
    def _reset_group(self, event: PolicyGroup.ResetRequested) -> None:
        self.action_reset_group(event.key)

    def action_reset_group(self, group: str) -> None:
        self.workspace.reset_group(group)
        self._policy_changed()

    def action_reset_all(self) -> None:
        self.workspace.reset_all()
        self._policy_changed()
        self.notify("every policy field is back at its default")

    def action_switch_defaults(self) -> None:
        self.workspace.switch_defaults("linnkit-0.21" if self.workspace.defaults == "seed" else "seed")
        self._policy_changed()

    def action_toggle_copy(self) -> None:
        ws = self.workspace
        ws.set_copy("en" if ws.copy == "zh" else "zh")
        self._policy_changed()  # like a policy edit: every step's reminders and summaries change
        language = "English" if ws.copy == "en" else "中文 (zh)"
        self.notify(f"tool summaries and built-in reminders now in {language}")

    def action_focus_field(self, key: str) -> None:
        self.query_one("#left", TabbedContent).active = "tab-policy"
        self.query_one(PolicyPanel).focus_field(control_for(tuple(key.split("."))).path)

    def policy_loaded(self) -> None:
        self._policy_changed()

    # -- the lesson ------------------------------------------------------------------------------
    def _check_lesson(self) -> None:
        """Evaluate the lesson's current step on the whole session under this policy, off the UI thread."""
        if self.lesson is None:
            return
        pane = self.query_one(LessonPane)
        pane.checking = True
        pane.refresh_lesson()
        ws = self.workspace
        policy, generation, options = ws.policy, ws.generation, ws.options.kwargs()

        def check() -> None:
            view = build_view(
                ws.messages, policy, max_steps=ws.max_steps, available_tools=ws.available_tools, **options
            )
            self.app.call_from_thread(self._lesson_checked, view, generation)

        self.run_worker(check, thread=True, group="lesson", exclusive=True)

    def _lesson_checked(self, view: StepView, generation: int) -> None:
        if generation != self.workspace.generation:
            return  # a newer policy is being built; its check follows
        pane = self.query_one(LessonPane)
        if pane.run.update(view):
            pane.hint_shown = False
        pane.checking = False
        pane.refresh_lesson()

    def action_lesson_hint(self) -> None:
        if self.lesson is not None:
            self.query_one(LessonPane).toggle_hint()

    def action_lesson_reset(self) -> None:
        if self.lesson is None:
            return
        pane = self.query_one(LessonPane)
        ws = self.workspace
        try:
            policy = start_policy(pane.run.lesson, ws.inputs.policy, ws.defaults)
        except LessonError as error:  # a start the engine refuses: said, the policy left as it is
            self.notify(str(error), severity="error", timeout=10)
            return
        pane.run.reset()
        ws.set_policy(policy)
        pane.refresh_lesson()
        self.policy_loaded()

    def action_as_recorded(self) -> None:
        """Rebuild what the agent sent, to set beside what the provider counted (a recorded session)."""
        if not self.workspace.record.own_calls:
            self.notify("this session kept no provider usage: there is no record to compare with", timeout=3)
        if self.workspace.use_as_recorded():
            self.policy_loaded()

    # -- fences ----------------------------------------------------------------------------------
    def _show_fences(self) -> None:
        self.query_one(FencePanel).show(self.workspace.fences, self.workspace.fence_messages())

    def fences_changed(self) -> None:
        self._show_fences()
        self._policy_changed()

    @on(FencePanel.EditRequested)
    def _edit_fence(self, event: FencePanel.EditRequested) -> None:
        ws = self.workspace
        if event.mode == "duplicate" and event.kind:
            try:
                ws.duplicate_fence(event.kind)
            except FenceError as error:
                self.notify(str(error), severity="error")
                return
            self.fences_changed()
            return
        if event.mode == "edit" and event.kind and ws.fences and (current := ws.fences.get(event.kind)):
            title, start, apply = (
                f"Edit fence {event.kind}",
                current,
                lambda d: ws.replace_fence(event.kind, d),
            )
        else:
            title, start, apply = "New fence", NEW_FENCE, ws.add_fence
        self.app.push_screen(FenceForm(title, start, apply), lambda d: self.fences_changed() if d else None)

    def action_fence(self, mode: str) -> None:
        self.query_one("#left", TabbedContent).active = "tab-fences"  # where the new or edited kind shows
        self.query_one(FencePanel).action_request(mode)

    def action_fence_delete(self) -> None:
        self.query_one(FencePanel).action_delete()

    @on(FencePanel.DeleteRequested)
    def _delete_fence(self, event: FencePanel.DeleteRequested) -> None:
        self.workspace.remove_fence(event.kind)
        self.fences_changed()
        self.notify(f"fence kind {event.kind} deleted; its session fences are now unregistered")

    # -- steps, wire, compare, trace -------------------------------------------------------------
    @on(Timeline.StepChanged)
    def _step_changed(self, event: Timeline.StepChanged) -> None:
        self.query_one(RecordChart).select(event.step)
        if self.workspace.set_step(event.step):
            self._update_top_bar()
            self.request_build(policy_changed=False)
        else:
            self.priority.release()

    def action_step(self, delta: int) -> None:
        self.query_one(Timeline).action_move(delta)

    def action_toggle_dropped(self) -> None:
        self.query_one(WireView).action_toggle_dropped()

    def action_toggle_shape(self) -> None:
        self.query_one(WireView).action_toggle_shape()

    def action_toggle_compare(self) -> None:
        self._show_middle(
            "tab-wire" if self.query_one("#middle", TabbedContent).active == "tab-compare" else "tab-compare"
        )

    def _show_middle(self, tab: str) -> None:
        """Switch the middle panel and focus its list (focus left in the other tab would switch back)."""
        self.query_one("#middle", TabbedContent).active = tab
        target = self.query_one(ComparePanel).table if tab == "tab-compare" else self.query_one("WireList")
        target.focus()

    def action_pin(self) -> None:
        if self.result is None:
            self.notify("no build to pin yet", severity="warning")
            return
        self.workspace.pin(self.result)
        self._show_comparison()
        self._show_middle("tab-compare")
        self.notify("pinned the current build as A")

    def action_unpin(self) -> None:
        self.workspace.unpin()
        self._show_comparison()

    def _show_comparison(self) -> None:
        pinned, result = self.workspace.pinned, self.result
        panel = self.query_one(ComparePanel)
        self.query_one(BudgetBar).show(
            result.tokens if result else None, pinned.result.tokens if pinned else None
        )
        self._update_top_bar()
        self.query_one(CostPane).track(self.workspace)  # the session's cost under this policy (and A's)
        if pinned is None or result is None:
            panel.clear()
            return
        panel.show(compare_builds(pinned.result, result), self.workspace.changes_since_pin())

    @on(WireView.MessageSelected)
    def _message_selected(self, event: WireView.MessageSelected) -> None:
        self.open_trace(event.message_id)

    @on(EventsView.EventSelected)
    def _event_selected(self, event: EventsView.EventSelected) -> None:
        if event.event.message_ids:
            self.open_trace(event.event.message_ids[0])

    def action_trace(self) -> None:
        message_id = self.query_one(WireView).highlighted_message_id
        if message_id is None:
            self.notify("highlight a message in the wire view first", severity="warning")
            return
        self.open_trace(message_id)

    def action_diff(self) -> None:
        """The session under A (the pinned policy, else the one it opened with) and the current policy."""
        ws = self.workspace
        pinned = ws.pinned
        price, _ = price_choice(BUILTIN_PRICES, ws.header.model_id, None)
        record = ws.record if ws.record.own_calls else None
        request = CostRequest(
            tuple(ws.messages), ws.policy, ws.options, ws.max_steps, ws.available_tools, "openai", price,
            record, BUILTIN_PRICES, ws.inputs.calibration, ws.inputs.given_offset,
        )  # fmt: skip
        label_a = f"pinned policy (step {pinned.step})" if pinned else "the policy the session opened with"
        policy_a = pinned.policy if pinned else ws.inputs.policy
        self.app.push_screen(DiffScreen(*policy_sources(request, policy_a, label_a, "the current policy")))

    def open_trace(self, message_id: str) -> None:
        if self.result is not None:
            changed = dump_policy(self.workspace.policy, True, defaults=self.workspace.defaults)
            self.app.push_screen(TraceScreen(self.result, message_id, changed))

    # -- status ----------------------------------------------------------------------------------
    def _set_status(self, text: str, style: str = "$text-muted") -> None:
        self._status = (text, style)
        self._update_top_bar()

    def _show_ready(self, ready: str) -> None:
        """`ready`, in red with the first reason when a provider would reject the wire."""
        if self.provider_problems:
            self._set_status(f"{ready} · {self.provider_problems[0]}", "$error")
        else:
            self._set_status(ready, "$success")

    def _update_top_bar(self) -> None:
        ws = self.workspace
        self.query_one(TopBar).state = TopBarState(
            ws.title,
            len(ws.messages),
            ws.defaults,
            ws.step,
            len(ws.points),
            len(ws.changed()),
            ws.pinned is not None,
            *self._status,
            ws.copy,
        )
