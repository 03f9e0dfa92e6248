"""The notebook playground driven without a kernel: set widget values, assert on HTML, numbers, `.policy`."""

from __future__ import annotations

import asyncio
import json
import math
import re
import subprocess
import sys
from pathlib import Path

import ipywidgets as W
import pytest
import yaml

from engine.build import build_context
from engine.fences import FenceDescriptor, FenceRegistry
from engine.messages import AiMessage
from engine.policy import PolicyFileError, control_for, define_context_policy, policy_controls
from engine.result import BuildResult, Decision, ReminderOutcome, TokenAccount
from engine.session import SessionHeader, save_session
from playground.app.inputs import SAMPLES_DIR
from playground.app.views import StepSample
from playground.notebook import INSTALL_HINT, Playground
from playground.notebook.app import QUIET
from playground.notebook.schedule import Debouncer, loop_scheduler
from playground.notebook.timeline import SeriesRunner
from playground.web import views as html
from playground.web.charts import step_chart

NNBSP = "\u202f"


def msg(id: str, role: str, type: str, content: str = "", **metadata) -> AiMessage:
    return AiMessage(id=id, role=role, type=type, content=content, timestamp=0, metadata=metadata or None)


def tool_loop(calls: int, output: str = "row " * 60) -> list[AiMessage]:
    """A system prompt, one user request and `calls` tool round trips."""
    out = [
        msg("s", "system", "system_prompt", "You are careful."),
        msg("u1", "user", "user_input", "analyse"),
    ]
    for i in range(calls):
        call = {
            "id": f"c{i}",
            "type": "function",
            "function": {"name": "run_sql", "arguments": f'{{"q": {i}}}'},
        }
        out.append(msg(f"a{i}", "assistant", "tool_calls", "", tool_calls=[call]))
        out.append(msg(f"t{i}", "tool", "tool_output", output, tool_call_id=f"c{i}", tool_name="run_sql"))
    return out


def two_runs() -> list[AiMessage]:
    """Two user turns of three tool calls each, then a pending call."""
    first = tool_loop(3)
    second = [msg("u2", "user", "user_input", "and now by region")]
    for i in range(3, 6):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "run_sql", "arguments": "{}"}}
        second.append(msg(f"a{i}", "assistant", "tool_calls", "", tool_calls=[call]))
        second.append(
            msg(f"t{i}", "tool", "tool_output", "ok " * 40, tool_call_id=f"c{i}", tool_name="run_sql")
        )
    return first + second


def playground(messages=None, policy=None, **kwargs) -> Playground:
    return Playground(messages or two_runs(), policy, debounce=0, now=0, **kwargs)


# -- import hint ------------------------------------------------------------------------------------


def test_import_without_ipywidgets_gives_the_install_hint():
    code = (
        "import sys; sys.modules['ipywidgets'] = None\n"
        "import playground.web.views\n"  # the renderers need no ipywidgets
        "try:\n"
        "    from playground.notebook import Playground\n"
        "except ImportError as err:\n"
        "    print(err)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "the notebook playground needs ipywidgets; install it with: " + INSTALL_HINT
    assert INSTALL_HINT == "pip install 'linn-playground[notebook]'"


# -- policy controls --------------------------------------------------------------------------------


def test_every_policy_field_has_a_control_of_its_kind():
    pg = playground()
    assert pg.controls.editors == {}  # no group opened yet: no row made
    assert len(pg.controls.accordion.children) == 12
    for index in range(12):
        pg.controls.accordion.selected_index = index
    assert set(pg.controls.editors) == {spec.path for spec in policy_controls()}
    budget = pg.controls.input(("budget", "reservedForResponse"))
    assert isinstance(budget, W.IntSlider)
    share = pg.controls.input(("budget", "workingMemoryBudgetPercentage"))
    assert isinstance(share, W.FloatSlider) and share.readout_format == ".2f"
    strategy = pg.controls.input(("toolHistory", "strategy"))
    assert isinstance(strategy, W.Dropdown) and strategy.options == ("per-pair", "per-run", "none")
    assert isinstance(pg.controls.input(("contextTrace", "enabled")), W.Checkbox)
    assert isinstance(pg.controls.input(("mustKeep", "alwaysKeepTypes")), W.SelectMultiple)
    assert isinstance(pg.controls.input(("mustKeep", "alwaysKeepFenceKinds")), W.TagsInput)
    assert isinstance(pg.controls.input(("mustKeep", "truncationRules")), W.Textarea)
    assert isinstance(pg.controls.input(("checkpoint", "triggerToolName")), W.Text)


def test_max_tokens_slides_on_the_log_scale_the_control_description_asks_for():
    pg = playground()
    slider = pg.controls.input(("budget", "maxTokens"))
    assert control_for(("budget", "maxTokens")).log_scale
    assert isinstance(slider, W.FloatLogSlider)
    assert (slider.base, slider.min, slider.max, slider.value) == (10, 3, 6, 120000)
    assert slider.readout_format == ",.0f"
    # 12 000 sits a third of the way along the track, not at 1.1 %
    assert (math.log10(12000) - slider.min) / (slider.max - slider.min) == pytest.approx(0.36, abs=0.01)
    slider.value = 12022.6  # where a drag lands: the policy gets the field's step
    assert pg.policy.budget.max_tokens == 12000
    assert pg.result.tokens.max_tokens == 12000


def test_moving_a_slider_rebuilds_and_marks_the_field():
    pg = playground()
    builds = pg.builds
    pg.controls.input(("budget", "maxTokens")).value = 8000
    assert pg.builds == builds + 1
    assert pg.policy.budget.max_tokens == 8000
    assert pg.result.tokens.total_budget == 8000 - 2400
    assert f'<td>max tokens</td><td class="lp-num">8{NNBSP}000</td>' in pg.views.budget.value
    assert f'<td>budget</td><td class="lp-num">5{NNBSP}600</td>' in pg.views.budget.value
    assert "●" in pg.controls.editor(("budget", "maxTokens")).label.value
    assert "●" not in pg.controls.editor(("budget", "reservedForResponse")).label.value
    assert pg.controls.accordion.titles[:2] == ("Budget ●", "Tool history")


def test_the_wire_view_follows_the_policy():
    pg = playground()
    assert pg.views.wire.value.count('class="lp-card"') == 15
    pg.controls.input(("toolHistory", "retentionMode")).value = "drop"
    assert (
        pg.views.wire.value.count('class="lp-card"') == 15
    )  # per-run keeps the latest run and the one before
    pg.controls.input(("toolHistory", "keepLatestRuns")).value = 0
    assert pg.views.wire.value.count('class="lp-card"') == 9
    assert pg.result.events[0].title == "tool history: 3 group(s) dropped (tool_history_drop)"
    assert '<div class="lp-dropped"' not in pg.views.wire.value
    pg.views.show_dropped.value = True
    dropped = re.findall(r'<div class="lp-dropped" data-id="([^"]+)">', pg.views.wire.value)
    assert dropped == ["a0", "t0", "a1", "t1", "a2", "t2"]
    assert "┄ dropped · assistant · tool_calls a0 · dropped_by_tool_history_drop</div>" in pg.views.wire.value
    # a dropped line stands where the message stood: before the second user request
    assert pg.views.wire.value.index('data-id="t2"') < pg.views.wire.value.index('data-id="u2"')


def test_reset_buttons_bring_fields_back():
    pg = playground()
    pg.controls.input(("budget", "maxTokens")).value = 8000
    pg.controls.input(("budget", "reservedForResponse")).value = 1000
    pg.controls.editor(("budget", "maxTokens")).reset_button.click()
    assert pg.policy.budget.max_tokens == 120000
    assert pg.controls.input(("budget", "maxTokens")).value == 120000
    assert pg.policy.budget.reserved_for_response == 1000
    assert pg.result.tokens.max_tokens == 120000
    pg.controls.reset_all_button.click()
    assert pg.policy == define_context_policy(None)
    assert pg.controls.accordion.titles[0] == "Budget"


def test_a_policy_the_engine_refuses_is_refused_when_the_playground_opens():
    # it opened, then `.result` raised a RuntimeError whose text was the status line's HTML
    with pytest.raises(PolicyFileError) as refused:
        playground(policy={"budget": {"maxTokens": 1000}})
    reason = "reservedForResponse must be > 0 and < maxTokens"
    assert str(refused.value) == f"policy: budget.reservedForResponse: {reason}"


def test_an_engine_config_problem_is_shown_and_keeps_the_last_result():
    pg = playground()
    before = pg.result
    pg.controls.input(("budget", "reservedForResponse")).value = 0
    editor = pg.controls.editor(("budget", "reservedForResponse"))
    assert "reservedForResponse must be &gt; 0 and &lt; maxTokens" in editor.error.value
    assert pg.status.value.startswith('<span style="color:#dc2626">not rebuilt: Invalid AgentContextManager')
    assert pg.result is before
    pg.controls.input(("budget", "reservedForResponse")).value = 100
    assert editor.error.value == ""
    assert pg.result.tokens.reserved_for_response == 100


def test_bad_json_is_reported_and_changes_nothing():
    pg = playground()
    builds = pg.builds
    editor = pg.controls.editor(("mustKeep", "truncationRules"))
    editor.input.value = "[{"
    assert editor.error.value.startswith('<span class="lp-error">not valid JSON: ')
    assert pg.builds == builds
    editor.input.value = '[{"fenceKind": "memory-context", "maxBudgetFraction": 0.1, "strategyName": "tail"}]'
    assert pg.policy.must_keep.truncation_rules[0].fence_kind == "memory-context"
    assert pg.builds == builds + 1


def test_optional_fields_have_a_set_toggle():
    pg = playground()
    editor = pg.controls.editor(("summarization", "agentId"))
    assert (editor.toggle.value, editor.input.disabled, editor.input.value) == (
        False,
        True,
        "history_compression",
    )
    editor.toggle.value = True
    assert pg.policy.summarization.agent_id == "history_compression"
    editor.input.value = "my_summarizer"
    assert pg.policy.summarization.agent_id == "my_summarizer"
    editor.toggle.value = False
    assert pg.policy.summarization.agent_id is None


def test_setting_the_policy_from_code_updates_the_widgets():
    pg = playground()
    pg.policy = define_context_policy({"budget": {"maxTokens": 9000}, "toolHistory": {"strategy": "none"}})
    assert pg.controls.input(("budget", "maxTokens")).value == 9000
    assert pg.controls.input(("toolHistory", "strategy")).value == "none"
    assert pg.result.tokens.max_tokens == 9000


def test_a_loaded_value_beyond_the_slider_range_widens_it():
    pg = playground(policy={"budget": {"maxTokens": 2000000, "reservedForResponse": 200000}})
    slider = pg.controls.input(("budget", "maxTokens"))  # a log slider: its bounds are exponents
    assert (10**slider.max, slider.value) == (pytest.approx(2000000), 2000000)
    linear = pg.controls.input(("budget", "reservedForResponse"))
    assert (linear.max, linear.value) == (200000, 200000)


# -- steps ------------------------------------------------------------------------------------------


def test_the_step_slider_builds_the_prefix_each_call_saw():
    pg = playground()
    assert (pg.timeline.slider.max, pg.step) == (7, 7)  # six calls and the pending one
    pg.step = 2
    assert [card.message_id for card in pg.result.cards] == ["s", "u1", "a0", "t0"]
    assert pg.timeline.info.value.startswith(
        "step 2/7 · run 1 · call 2 · stepCount 4 · 4 messages · next: a1"
    )
    assert "step 2/7" in pg.title.value


def test_the_series_has_one_sample_per_step():
    pg = playground()
    samples = pg.series
    assert [s.step for s in samples] == list(range(1, 8))
    assert samples[-1].final_tokens == pg.result.tokens.final_tokens
    assert pg.timeline.chart.value.count("<rect ") == 7
    pg.controls.input(("budget", "maxTokens")).value = 5000
    assert [s.total_budget for s in pg.series] == [2600] * 7


def test_step_markers_come_from_the_result():
    messages = tool_loop(12)
    policy = define_context_policy({"systemReminder": {"thresholds": {"toolCallStreak": 3}}})
    pg = playground(messages, policy)
    marked = [s.step for s in pg.series if "R" in s.markers]
    assert marked and all(step > 3 for step in marked)


# -- fences -----------------------------------------------------------------------------------------


def test_fence_editor_edits_the_registry():
    fences = FenceRegistry([FenceDescriptor("memory-context", "user", "before-current-user", "persisted")])
    messages = two_runs() + [
        AiMessage("f1", "user", "context_injection", "likes tea", 0, {"fenceKind": "memory-context"})
    ]
    pg = playground(messages, fences=fences)
    assert pg.fences.kinds() == ["memory-context"]
    assert any("fence:memory-context" in card.marks for card in pg.result.cards)
    row = pg.fence_editor.add()
    assert pg.fences.kinds() == ["memory-context", "new-fence-1"]
    row.kind.value = "Bad Kind"
    assert pg.fence_editor.error.value == (
        '<span style="color:#dc2626">row 2: Fence kind &quot;Bad Kind&quot; must be kebab-case.</span>'
    )
    assert pg.fences.kinds() == ["memory-context", "new-fence-1"]
    row.kind.value = "selected-file"
    assert pg.fences.kinds() == ["memory-context", "selected-file"]
    pg.fence_editor.rows[0].llm_role.value = "system"
    assert pg.fences.get("memory-context").llm_role == "system"
    pg.fence_editor.rows[0].delete.click()
    assert pg.fences.kinds() == ["selected-file"]
    assert not any("fence:memory-context" in card.marks for card in pg.result.cards)
    assert fences.kinds() == ["memory-context"]  # the caller's registry is left alone


def test_a_bad_budget_fraction_names_the_field():
    pg = playground(fences=[FenceDescriptor("memory-context", "user", "before-current-user", "persisted")])
    pg.fence_editor.rows[0].fraction.value = "lots"
    assert "row 1: maxBudgetFraction: must be a number (got &#x27;lots&#x27;)" in pg.fence_editor.error.value
    pg.fence_editor.rows[0].fraction.value = "0.25"
    assert pg.fences.get("memory-context").max_budget_fraction == 0.25


# -- files ------------------------------------------------------------------------------------------


def write_session(path: Path, messages, **header) -> Path:
    save_session(messages, path, header=SessionHeader.create(**header))
    return path


def test_session_file_header_policy_and_export(tmp_path):
    session = write_session(
        tmp_path / "s.jsonl", two_runs(), title="Two runs", contextPolicy={"budget": {"maxTokens": 9000}}
    )
    pg = Playground(session, debounce=0, now=0)
    assert pg.policy.budget.max_tokens == 9000
    assert "Two runs (15 msgs)" in pg.title.value
    assert pg.export_path.value == str(tmp_path / "s.policy.yaml")
    pg.controls.input(("toolHistory", "keepLatestRuns")).value = 3
    written = pg.export_yaml(tmp_path / "p.yaml")
    assert yaml.safe_load(written.read_text()) == {
        "budget": {"maxTokens": 9000},
        "toolHistory": {"keepLatestRuns": 3},
    }
    full = yaml.safe_load(pg.export_yaml(tmp_path / "full.yaml", only_changed=False).read_text())
    assert len(full) == 13 and full["toolHistory"]["keepLatestRuns"] == 3
    with pytest.raises(PolicyFileError, match="refusing to overwrite a protected file"):
        pg.export_yaml(session)
    assert session.read_text().startswith('{"kind":"linn-session"')


def test_export_button_writes_and_reports(tmp_path):
    session = write_session(tmp_path / "s.jsonl", two_runs())
    pg = Playground(session, policy={"budget": {"maxTokens": 7000}}, debounce=0, now=0)
    pg.export_button.click()
    assert pg.export_status.value == f"wrote {tmp_path / 's.policy.yaml'}"
    assert yaml.safe_load((tmp_path / "s.policy.yaml").read_text()) == {"budget": {"maxTokens": 7000}}
    pg.export_path.value = str(session)
    pg.export_button.click()
    assert "refusing to overwrite a protected file" in pg.export_status.value


def test_policy_and_fence_files(tmp_path):
    session = write_session(tmp_path / "s.jsonl", two_runs(), contextPolicy={"budget": {"maxTokens": 9000}})
    (tmp_path / "p.yaml").write_text("budget:\n  maxTokens: 5000\n")
    (tmp_path / "f.yaml").write_text(
        "fences:\n- kind: memory-context\n  llmRole: user\n"
        "  placement: before-current-user\n  lifetime: persisted\n"
    )
    pg = Playground(session, policy=tmp_path / "p.yaml", fences=tmp_path / "f.yaml", debounce=0, now=0)
    assert pg.policy.budget.max_tokens == 5000  # the file replaces the header's policy
    assert pg.fences.kinds() == ["memory-context"]
    assert pg.export_path.value == str(tmp_path / "p.yaml")
    with pytest.raises(PolicyFileError):
        pg.export_yaml(tmp_path / "f.yaml")
    pg.export_fences_yaml(tmp_path / "f2.yaml")
    assert "kind: memory-context" in (tmp_path / "f2.yaml").read_text()


# -- debouncing -------------------------------------------------------------------------------------


class FakeScheduler:
    """Records scheduled callbacks; `run()` fires the ones not cancelled."""

    def __init__(self) -> None:
        self.handles: list[FakeHandle] = []

    def __call__(self, delay, callback):
        handle = FakeHandle(callback, delay)
        self.handles.append(handle)
        return handle

    @property
    def live(self) -> list[FakeHandle]:
        return [h for h in self.handles if not h.cancelled and not h.fired]

    def run(self) -> None:
        while self.live:
            self.live[0].fire()


class FakeHandle:
    def __init__(self, callback, delay: float = 0.0) -> None:
        self.callback, self.delay, self.cancelled, self.fired = callback, delay, False, False

    def cancel(self) -> None:
        self.cancelled = True

    def fire(self) -> None:
        self.fired = True
        self.callback()


def test_slider_moves_pile_up_into_one_build():
    scheduler = FakeScheduler()
    pg = Playground(two_runs(), debounce=0.3, scheduler=scheduler, now=0)
    scheduler.run()  # the first series
    builds = pg.builds
    slider = pg.controls.input(("budget", "maxTokens"))
    for value in (5000, 6000, 7000):
        slider.value = value
    assert pg.builds == builds
    assert len(scheduler.live) == 1
    scheduler.run()
    assert pg.builds == builds + 1
    assert pg.result.tokens.max_tokens == 7000


def test_reading_the_result_runs_a_pending_build():
    scheduler = FakeScheduler()
    pg = Playground(two_runs(), debounce=0.3, scheduler=scheduler, now=0)
    pg.controls.input(("budget", "maxTokens")).value = 6000
    assert pg.result.tokens.max_tokens == 6000
    assert not pg._debouncer.pending


def test_debouncer_with_no_delay_runs_at_once():
    calls = []
    debouncer = Debouncer(lambda: calls.append(1), 0, FakeScheduler())
    debouncer.trigger()
    debouncer.trigger()
    assert calls == [1, 1]


def test_series_runner_builds_in_slices_and_latest_wins():
    scheduler = FakeScheduler()
    seen: list[tuple[int, int]] = []
    runner = SeriesRunner(
        lambda: (StepSample(step, step * 10, 100, 70.0, "") for step in range(1, 100)),
        lambda samples, total: seen.append((len(samples), total)),
        scheduler,
        chunk=3,
    )
    runner.start(7)
    assert seen == []  # the first slice runs after the edit that started the run
    scheduler.live[0].fire()
    assert seen == [(3, 7)]
    runner.start(5)  # a newer run: the old one never continues
    scheduler.run()
    assert seen == [(3, 7), (3, 5), (5, 5)]
    assert [s.final_tokens for s in runner.samples] == [10, 20, 30, 40, 50]
    assert runner.done


def test_edits_and_step_moves_put_the_series_off_until_the_user_pauses():
    scheduler = FakeScheduler()
    pg = Playground(tool_loop(30), scheduler=scheduler, now=0)
    scheduler.run()
    pg._series.chunk = 4  # a slice makes at most 4 of the 31 steps
    pg.controls.input(("budget", "maxTokens")).value = 9000  # built at once; the series waits
    waiting = pg._series._handle
    assert waiting.delay == QUIET and pg._series.samples == []
    pg.controls.input(("budget", "maxTokens")).value = 8000  # another edit restarts that wait
    assert waiting.cancelled and pg._series._handle.delay == QUIET
    pg._series._handle.fire()  # one slice of the new series
    assert 0 < len(pg._series.samples) < pg.step_count
    pg.step = 3  # a step move: the next slice is put off again, the samples made so far stay
    made = len(pg._series.samples)
    assert pg._series._handle.delay == QUIET and len(pg._series.samples) == made
    scheduler.run()
    assert pg._series.done and pg.series[2].final_tokens == pg.result.tokens.final_tokens


# -- renderers --------------------------------------------------------------------------------------

EVIL = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def evil_result():
    call = {"id": "c<1>", "type": "function", "function": {"name": EVIL, "arguments": EVIL}}
    messages = [
        msg("s", "system", "system_prompt", EVIL),
        msg("u<b>", "user", "user_input", EVIL),
        msg("a1", "assistant", "tool_calls", EVIL, tool_calls=[call]),
        msg("t1", "tool", "tool_output", EVIL, tool_call_id="c<1>", tool_name=EVIL),
        msg("f1", "user", "context_injection", EVIL, fenceKind="memory-context", fenceAttrs={"src": EVIL}),
    ]
    fences = [FenceDescriptor("memory-context", "user", "before-current-user", "persisted")]
    return build_context(messages, {"contextTrace": {"enabled": True}}, fences=fences, now=0)


def test_renderers_escape_all_session_text():
    result = evil_result()
    pages = [
        html.wire_cards(result, show_dropped=True),
        html.trace_view(result, "u<b>"),
        html.events_list(result),
        html.budget_bar(result.tokens, result.summarization_check),
    ]
    for page in pages:
        body = page.removeprefix(html.STYLE)
        assert "<script" not in body and "<img" not in body and "<b>trace u<b>" not in body
    assert "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in pages[0]
    assert "<b>trace u&lt;b&gt;</b>" in pages[1]


def test_cards_show_role_tokens_marks_and_calls():
    result = evil_result()
    page = html.wire_cards(result)
    card = next(c for c in result.cards if c.type == "tool_calls")
    assert f'<div class="lp-card" style="--lp-role:#059669" data-index="{card.index}" data-id="a1">' in page
    assert f"tool_calls · {card.tokens} tok · #{card.index}" in page
    assert '<div class="lp-call">&lt;script&gt;' in page
    assert '<span class="lp-mark" style="background:#0891b2">fence:memory-context</span>' in page


def test_long_content_is_clipped():
    result = build_context([msg("s", "system", "system_prompt", "x" * 5000)], None, now=0)
    page = html.wire_cards(result, limit=100)
    assert "x" * 100 + f'<span class="lp-more">… 4{NNBSP}900 more characters</span>' in page


def test_budget_bar_orders_categories_and_draws_the_trigger():
    assert html.category_order(
        {"summary": 1, "fence:b": 2, "core": 3, "fence:a": 4, "other": 5, "user": 0}
    ) == [
        "core",
        "fence:a",
        "fence:b",
        "summary",
        "other",
    ]
    result = build_context(two_runs(), {"budget": {"maxTokens": 10000, "reservedForResponse": 1000}}, now=0)
    page = html.budget_bar(result.tokens, result.summarization_check)
    assert '<div class="lp-reserved" style="width:10.000%"></div>' in page
    assert 'title="summarization trigger" style="left:63.000%;' in page  # 0.7 × 9000 of 10000


def test_the_reminder_text_is_highlighted_on_its_card():
    policy = define_context_policy({"systemReminder": {"thresholds": {"toolCallStreak": 3}}})
    pg = playground(tool_loop(3), policy)
    reminder = pg.result.reminder
    assert reminder.hit_rule_ids
    assert '<span class="lp-reminder">' in pg.views.wire.value
    assert '<span class="lp-mark" style="background:#db2777">reminder</span>' in pg.views.wire.value


def test_trace_view_lists_decision_and_events():
    pg = playground(policy={"toolHistory": {"retentionMode": "drop", "keepLatestRuns": 0}})
    pg.views.trace_picker.value = "t0"
    assert "<tr><td>fate</td><td>dropped</td></tr>" in pg.views.trace.value
    assert "<tr><td>reason</td><td>dropped_by_tool_history_drop</td></tr>" in pg.views.trace.value
    assert "tool history: 3 group(s) dropped (tool_history_drop)" in pg.views.trace.value


def test_step_chart_draws_one_bar_per_step():
    samples = [StepSample(1, 100, 1000, 700.0, ""), StepSample(2, 1200, 1000, 700.0, "SR")]
    svg = step_chart(samples, current=2, width=200)
    assert svg.count("<rect ") == 2
    assert "<title>step 2: 1\u202f200 tok SR</title>" in svg
    assert 'fill="#0f172a"><title>step 2' in svg  # the current step
    assert 'fill="#64748b"><title>step 1' in svg
    assert step_chart([]) == '<div class="lp-muted">no steps</div>'


def test_tokens_text_groups_thousands():
    assert html.tokens_text(18412) == f"18{NNBSP}412"
    assert html.tokens_text(999.6) == f"1{NNBSP}000"


# -- sources and other entry points -----------------------------------------------------------------


def test_in_memory_session_with_policy_and_fence_files(tmp_path):
    (tmp_path / "p.yaml").write_text("budget:\n  maxTokens: 5000\n")
    (tmp_path / "f.yaml").write_text(
        "- kind: memory-context\n  llmRole: user\n  placement: before-current-user\n  lifetime: persisted\n"
    )
    pg = Playground(two_runs(), tmp_path / "p.yaml", tmp_path / "f.yaml", debounce=0, now=0)
    assert pg.policy.budget.max_tokens == 5000
    assert pg.fences.kinds() == ["memory-context"]
    assert pg.export_path.value == str(tmp_path / "p.yaml")
    assert "in-memory session (15 msgs)" in pg.title.value


def test_header_steps_tools_and_load_problems(tmp_path):
    session = tmp_path / "s.jsonl"
    write_session(session, tool_loop(12), title="Streak", maxSteps=28, availableTools=["context_checkpoint"])
    with session.open("a") as handle:
        handle.write('{"id": "m1", "role": "user", "type": "tool_calls"}\n')
    pg = Playground(session, debounce=0, now=0)
    assert (pg.sources.max_steps, pg.sources.available_tools) == (28, ("context_checkpoint",))
    assert pg.status.value == (
        f'<div style="color:#b45309"><div>{session}:28: role/type: unknown role/type pair '
        "&quot;user&quot;/&quot;tool_calls&quot;; &quot;tool_calls&quot; goes with role assistant</div></div>"
    )
    # the budget warning fires from stepCount floor(28 × 0.9) = 25 on, as the checkpoint tool is available
    assert pg.result.reminder.hit_rule_ids == ("context_budget_warning",)  # step 13: stepCount 26
    pg.step = 12  # stepCount 24
    assert pg.result.reminder.hit_rule_ids == ()


def test_build_with_another_policy_leaves_the_widgets_alone():
    pg = playground()
    builds, policy = pg.builds, pg.policy
    other = pg.build(define_context_policy({"budget": {"maxTokens": 3000}}), step=2)
    assert other.tokens.max_tokens == 3000
    assert [card.message_id for card in other.cards] == ["s", "u1", "a0", "t0"]
    assert (pg.builds, pg.policy, pg.step) == (builds, policy, 7)


def test_linnkit_defaults_profile_marks_against_its_own_defaults():
    pg = playground(defaults="linnkit-0.21")
    assert pg.policy.budget.max_tokens == 232000
    assert pg.policy.tool_history.retention_mode == "drop"
    assert "●" not in pg.controls.editor(("budget", "maxTokens")).label.value
    assert "defaults: linnkit-0.21" in pg.title.value


def test_a_session_without_llm_calls_builds_whole():
    pg = playground([msg("s", "system", "system_prompt", "hi")])
    assert pg.step_count == 0 and pg.timeline.slider.disabled
    assert [card.message_id for card in pg.result.cards] == ["s"]
    assert "whole session" in pg.title.value
    assert pg.series == []


def test_loop_scheduler_runs_at_once_without_a_loop_and_later_within_one():
    calls: list[str] = []
    assert loop_scheduler(1.0, lambda: calls.append("now")) is None
    assert calls == ["now"]

    async def inside() -> None:
        handle = loop_scheduler(60.0, lambda: calls.append("later"))
        assert handle is not None
        handle.cancel()

    asyncio.run(inside())
    assert calls == ["now"]


def test_a_fence_template_keeps_its_newlines():
    fences = [FenceDescriptor("memory-context", "user", "before-current-user", "persisted")]
    messages = two_runs() + [
        AiMessage("f1", "user", "context_injection", "likes tea", 0, {"fenceKind": "memory-context"})
    ]
    pg = playground(messages, fences=fences)
    pg.fence_editor.rows[0].formatter.value = "<memory>\n{content}\n</memory>"
    card = next(c for c in pg.result.cards if "fence:memory-context" in c.marks)
    assert card.message["content"] == "<memory>\nlikes tea\n</memory>"
    assert "&lt;memory&gt;\nlikes tea\n&lt;/memory&gt;" in pg.views.wire.value


def test_summarised_messages_show_as_replaced():
    reason, strategy = "replaced_by_ai_history_summarization", "ai_history_summarization"
    summarised = Decision(
        3, "m3", "user", "user_input", True, "provider", "SUMMARIZATION", reason, strategy, 0,
        replaced_by="summary:1", note="summarised",
    )  # fmt: skip
    dropped = Decision(4, "m4", "assistant", "final_answer", False, "provider", None, "dropped_by_x", None, 0)
    tokens = TokenAccount(1000, 100, 900, 630, 630.0, 108, 0, {}, "test")
    result = BuildResult((), (), (), (), (summarised, dropped), tokens, (), None, ReminderOutcome())
    page = html.wire_cards(result, show_dropped=True)
    assert (
        '<div class="lp-dropped lp-replaced" data-id="m3">┄ replaced by summary:1 · user · user_input m3 · '
        "SUMMARIZATION: replaced_by_ai_history_summarization · summarised</div>"
    ) in page
    assert (
        '<div class="lp-dropped" data-id="m4">┄ dropped · assistant · final_answer m4 · dropped_by_x</div>'
        in page
    )


def test_the_series_persists_summaries_and_a_later_step_is_built_with_them(tmp_path):
    from engine.replay import replay_session

    lines = (SAMPLES_DIR / "summarization_trigger.jsonl").read_text(encoding="utf-8").splitlines()
    header, body = lines[0], [json.loads(line) for line in lines[1:]]
    again = [{**m, "id": m["id"] + "~2"} for m in body if m["type"] != "system_prompt"]
    path = tmp_path / "twice.jsonl"
    path.write_text("\n".join([header, *map(json.dumps, body + again)]), encoding="utf-8")
    pg = Playground(path, debounce=0, now=0)
    assert [s.step for s in pg.series if "S" in s.markers] == [13, 21]
    steps = replay_session(pg.messages, pg.policy, max_steps=pg.sources.max_steps, now=0)
    assert pg.result.wire == steps[-1].result.wire
    assert steps[20].persisted.id in pg.result.kept_ids
    pg.step = 16
    assert pg.result.wire == steps[15].result.wire
    other = pg.build(pg.policy.model_copy(), step=25)  # another policy object: replayed on its own
    assert other.wire == steps[24].result.wire
    assert pg.jump("S") == 21 and pg.jump("S") == 21 and pg.jump("S", -1) == 13
    assert "summary made: " in pg.timeline.verdict.value
    assert "summaries made over the session: 2" in pg.timeline.chart.value


def test_the_notebook_exports_the_html_report_and_never_over_the_session(tmp_path):
    path = tmp_path / "s.jsonl"
    save_session(two_runs(), path)
    pg = Playground(path, debounce=0, now=0)
    written = pg.export_report(tmp_path / "s.report.html")
    page = written.read_text(encoding="utf-8")
    assert f"step {pg.step} of {pg.step_count}" in page and "<script" not in page
    with pytest.raises(PolicyFileError, match="refusing to overwrite a protected file"):
        pg.export_report(path)


def test_the_chart_and_the_report_never_overwrite_a_file_the_playground_opened(tmp_path):
    import os

    path, policy = tmp_path / "s.jsonl", tmp_path / "p.yaml"
    save_session(two_runs(), path)
    policy.write_text("budget:\n  maxTokens: 7000\n", encoding="utf-8")
    pg = Playground(path, policy=policy, debounce=0, now=0)
    session_bytes, policy_bytes = path.read_bytes(), policy.read_bytes()
    chart = pg.plot_steps()
    for target in (path, policy):
        with pytest.raises(PolicyFileError, match="refusing to overwrite a protected file"):
            chart.save(target)
    with pytest.raises(PolicyFileError, match="refusing to overwrite a protected file"):
        pg.export_report(policy)
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(PolicyFileError, match="is a FIFO"):  # refused before it is opened: no hang
        chart.save(fifo)
    assert (path.read_bytes(), policy.read_bytes()) == (session_bytes, policy_bytes)
    assert chart.save(tmp_path / "chart.svg").read_text(encoding="utf-8").startswith("<svg")


# -- a long wire: pages and the trace picker ---------------------------------------------------------


def card_ids(page: str) -> list[str]:
    return re.findall(r'<div class="lp-card" [^>]*data-id="([^"]+)"', page)


def test_a_long_wire_is_shown_a_page_at_a_time_and_keeps_its_page_across_edits():
    second_turn = [msg("u2", "user", "user_input", "and now by region")]
    for i in (40, 41):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "run_sql", "arguments": "{}"}}
        second_turn.append(msg(f"a{i}", "assistant", "tool_calls", "", tool_calls=[call]))
        output = msg(f"t{i}", "tool", "tool_output", "ok", tool_call_id=f"c{i}", tool_name="run_sql")
        second_turn.append(output)
    keep_all = {"toolHistory": {"strategy": "none", "maxInteractionGroups": 100}}
    pg = Playground(tool_loop(40) + second_turn, keep_all, now=0)  # 87 messages, all kept
    views = pg.views
    assert card_ids(views.wire.value) == ["s", "u1"] + [f"{k}{i}" for i in range(12) for k in "at"][:23]
    assert "rows 1–25 of 87" in views.page_label.value and "· rows 1–25 of 87" in views.wire.value
    assert views.pager["first"].disabled and views.pager["earlier"].disabled
    assert not views.pager["later"].disabled
    views.pager["later"].click()
    assert card_ids(views.wire.value)[0] == "t11" and len(card_ids(views.wire.value)) == 25
    views.pager["last"].click()
    last = ["t36", "a37", "t37", "a38", "t38", "a39", "t39", "u2", "a40", "t40", "a41", "t41"]
    assert card_ids(views.wire.value) == last
    assert views.pager["later"].disabled and "rows 76–87 of 87" in views.page_label.value
    # an edit that drops the first turn's calls leaves 7 rows: the reader is on the last page there is
    pg.controls.input(("toolHistory", "retentionMode")).value = "drop"
    pg.controls.input(("toolHistory", "keepLatestRuns")).value = 0
    pg.controls.input(("toolHistory", "strategy")).value = "per-run"
    assert card_ids(views.wire.value) == ["s", "u1", "u2", "a40", "t40", "a41", "t41"]
    assert views.page_start == 0 and views.page_label.value == ""
    views.show_dropped.value = True  # the dropped lines join the rows
    assert "rows 1–25 of 87" in views.page_label.value
    assert views.wire.value.count('<div class="lp-dropped"') == 23  # rows 3–25: a0 … t10, u2 after


def test_a_short_wire_has_no_pager():
    pg = playground()
    assert pg.views.page_label.value == ""
    assert all(button.layout.display == "none" for button in pg.views.pager.values())


def test_the_trace_picker_lists_a_long_sessions_page_and_trace_shows_any_message():
    pg = Playground(tool_loop(110), None, now=0)  # 222 decisions: more than the picker lists at once
    listed = [value for _, value in pg.views.trace_picker.options]
    assert listed == card_ids(pg.views.wire.value)
    shown = pg.trace("t100")
    assert "<b>trace t100</b>" in shown and "<tr><td>on the wire</td><td>#203</td></tr>" in shown
    assert pg.views.trace_picker.value == "t100" and pg.views.trace.value == shown
    pg.views.pager["later"].click()  # another page: the chosen message stays chosen
    assert pg.views.trace_picker.value == "t100"
    assert [value for _, value in pg.views.trace_picker.options][-1] == "t100"
    with pytest.raises(KeyError, match="no decision for message 'nope' in this build"):
        pg.trace("nope")


def test_the_saved_view_of_a_long_wire_lists_its_first_and_last_rows():
    pg = Playground(tool_loop(40), None, now=0)  # 82 wire messages
    assert html.wire_summary(pg.result).count("<tr>") == 82
    saved = pg._repr_mimebundle_()["text/html"]
    indexes = re.findall(r'<tr><td class="lp-num">#(\d+)</td>', saved)
    assert indexes == [str(i) for i in [*range(40), *range(72, 82)]]
    assert '<td colspan="5" class="lp-muted">… 32 more messages</td>' in saved


def test_a_policy_dicts_typo_is_a_warning_and_a_policy_of_no_known_kind_an_error(tmp_path):
    path = tmp_path / "s.jsonl"
    save_session(two_runs(), path)
    typo = "policy: budget.maxToken: unknown key, ignored; did you mean `maxTokens`"
    with pytest.warns(UserWarning, match=typo):
        Playground(path, policy={"budget": {"maxToken": 5000}}, debounce=0, now=0)
    with pytest.raises(TypeError, match="policy: expected a file path, a dict of policy groups or a Context"):
        Playground(path, policy=5, debounce=0, now=0)
