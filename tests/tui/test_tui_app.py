"""The playground app driven with Pilot on a small session (tests/tui_session.py)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from textual import events
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Input, RadioButton, Select, SelectionList, Switch

from engine.policy import load_policy
from playground.app.building import BuildOutcome, TimelineRequest, checked, run_build, series_steps
from playground.app.forked import ReplayProcess
from playground.app.inputs import SAMPLES_DIR, load_inputs
from playground.app.workspace import Workspace
from playground.tui import builder
from playground.tui.app import PlaygroundApp, make_app
from playground.tui.builder import Builder
from playground.tui.commands import palette_commands
from playground.tui.keys import APP_BINDINGS, MAIN_BINDINGS
from playground.tui.messages import BuildFinished, ProvidersChecked, TimelineProgress
from playground.tui.panels.compare_panel import ComparePanel
from playground.tui.panels.policy_field import PolicyField
from playground.tui.screens.confirm_quit import ConfirmQuit
from playground.tui.screens.export import ExportScreen
from playground.tui.screens.fence_form import FenceForm
from playground.tui.screens.help import HelpScreen
from playground.tui.screens.main import MainScreen
from playground.tui.screens.notice import NoticeScreen
from playground.tui.screens.trace import TraceScreen
from playground.tui.widgets import BudgetBar, EventsView, Timeline, WireView
from playground.tui.widgets.cost_pane import CostPane
from playground.tui.widgets.wire_list import WireList
from tests.tui_session import write_session, write_summarized_twice

SIZE = (160, 48)
ALL_KEPT = ("sys", "u1", "a1", "t1", "a2", "t2", "f1", "u2", "a3", "t3", "a4", "t4", "a5", "t5")
Scenario = Callable[[PlaygroundApp, Pilot], Awaitable[None]]


async def settle(app: PlaygroundApp, pilot: Pilot) -> None:
    """Wait until no worker runs and every posted message is handled (a build may start the timeline, and
    a timeline that changed the summaries starts a build again): on a loaded machine the series behind a
    build can take more rounds than four to catch up, while the status says it replays earlier steps."""
    for round_ in range(40):
        await app.workers.wait_for_complete()
        await pilot.pause()
        if round_ >= 3 and not app.main._status[0].endswith("replaying earlier steps…"):
            return


def run(path: Path, scenario: Scenario) -> PlaygroundApp:
    app = make_app(load_inputs(path))

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await scenario(app, pilot)

    asyncio.run(main())
    return app


def field(app: PlaygroundApp, key: str) -> PolicyField:
    return app.main.query_one("#field-" + key.replace(".", "-"), PolicyField)


async def focus_field(app: PlaygroundApp, pilot: Pilot, key: str) -> PolicyField:
    app.main.action_focus_field(key)
    await pilot.pause()
    return field(app, key)


def test_opens_the_session_at_its_last_step(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        main = app.main
        assert isinstance(app.screen, MainScreen)
        assert main.result is not None and main.result.kept_ids == ALL_KEPT
        assert app.workspace.step == 7 and main.query_one(Timeline).step == 7
        points = main.query_one(Timeline).points
        assert [p.final_tokens for p in points] == [41, 599, 677, 725, 1294, 1850, 1924]
        assert [p.markers for p in main.query_one(Timeline).points] == ["", "", "R", "", "", "R", ""]
        assert str(main.query_one("TopBar").render()) == (
            "linn-playground ─ sales analysis (test) (16 msgs) ─ defaults: seed ─ step 7/7 ─ "
            "● 4 changed ─ ready"
        )

    run(write_session(tmp_path), scenario)


def test_moving_a_slider_rebuilds_with_other_kept_messages_and_bars(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        main = app.main
        before = main.result
        slider = (await focus_field(app, pilot, "budget.maxTokens")).input
        await pilot.press("left")
        await settle(app, pilot)
        assert slider.value == 3000
        result = main.result
        assert result is not before
        assert result.tokens.max_tokens == 3000 and result.tokens.total_budget == 2600
        assert result.kept_ids == ("sys", "a1", "t1", "a2", "t2", "u2", "a3", "t3", "a4", "t4", "a5", "t5")
        assert main.query_one(BudgetBar).account is result.tokens
        assert main.query_one(WireView).query_one("WireList").rows[1].message_id == "a1"
        assert field(app, "budget.maxTokens").changed

    run(write_session(tmp_path), scenario)


def test_a_burst_of_slider_moves_ends_on_the_last_value(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await focus_field(app, pilot, "budget.maxTokens")
        await pilot.press(*["right"] * 12)
        await settle(app, pilot)
        assert app.workspace.policy.budget.max_tokens == 16000
        assert app.main.result.tokens.max_tokens == 16000
        assert app.main.shown_generation == app.workspace.generation

    run(write_session(tmp_path), scenario)


def test_keys_faster_than_rebuilds_are_not_lost(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        slider = (await focus_field(app, pilot, "budget.maxTokens")).input
        for _ in range(10):  # all queued before the first edit is handled, as a held key does in a terminal
            slider.action_move(1)
        await settle(app, pilot)
        assert slider.value == 14000 and app.workspace.policy.budget.max_tokens == 14000
        assert app.main.result.tokens.max_tokens == 14000
        for direction in (-1, 1, -1):
            slider.action_move(direction)
        await settle(app, pilot)
        assert slider.value == 13000 and app.main.result.tokens.max_tokens == 13000

    run(write_session(tmp_path), scenario)


def test_a_number_typed_while_a_rebuild_finishes_is_applied(tmp_path: Path) -> None:
    """Keys come as a terminal sends them, all queued before the first is handled: the step key starts a
    rebuild, enter opens the value editor, the digits and enter go to it, not to the slider."""

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        slider = (await focus_field(app, pilot, "budget.maxTokens")).input
        for key in ("right", "enter", "5", "0", "0", "0", "enter"):
            app.post_message(events.Key(key, key if len(key) == 1 else None))
        await settle(app, pilot)
        assert not slider.has_class("-editing") and not slider.has_class("-invalid")
        assert slider.value == 5000 and app.workspace.policy.budget.max_tokens == 5000
        assert app.main.result.tokens.max_tokens == 5000 and app.screen.focused is slider

    run(write_session(tmp_path), scenario)


def test_sliders_stop_where_the_policy_would_be_refused(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        reserved = await focus_field(app, pilot, "budget.reservedForResponse")
        await pilot.press("end")  # reservedForResponse < maxTokens (4000)
        await settle(app, pilot)
        assert reserved.input.value == 3999 and app.workspace.policy.budget.reserved_for_response == 3999
        assert not reserved.has_class("-error")
        max_tokens = await focus_field(app, pilot, "budget.maxTokens")
        assert (max_tokens.input.min, max_tokens.input.value) == (4000, 4000)
        await pilot.press("home", "pageup")  # already at the floor; ten steps of 1000 up
        await settle(app, pilot)
        assert app.workspace.policy.budget.max_tokens == 14000
        await pilot.press("pagedown", "shift+left")
        await settle(app, pilot)
        assert app.workspace.policy.budget.max_tokens == 4000
        assert not max_tokens.has_class("-error")

    run(write_session(tmp_path), scenario)


def test_an_invalid_value_shows_the_engine_error_and_keeps_the_last_build(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        before = app.main.result
        reserved = await focus_field(app, pilot, "budget.reservedForResponse")
        policy_file = tmp_path / "too-much.yaml"  # a file can hold what no slider reaches
        policy_file.write_text("budget: {maxTokens: 4000, reservedForResponse: 128000}\n", encoding="utf-8")
        app.workspace.load_policy_file(policy_file)
        app.main.policy_loaded()
        await settle(app, pilot)
        assert app.workspace.policy.budget.reserved_for_response == 128000
        assert reserved.has_class("-error")
        assert str(reserved.query_one(".policy-field--error").render()) == (
            "reservedForResponse must be > 0 and < maxTokens"
        )
        assert app.main.result is before
        await pilot.press("r")
        await settle(app, pilot)
        assert not reserved.has_class("-error") and app.workspace.policy.budget.reserved_for_response == 2400

    run(write_session(tmp_path), scenario)


def test_a_bad_json_value_is_refused_before_the_engine(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        rules = await focus_field(app, pilot, "mustKeep.truncationRules")
        rules.input.value = "[{"
        await pilot.press("enter")
        await pilot.pause()
        assert str(rules.query_one(".policy-field--error").render()).startswith("not JSON: ")
        rules.input.value = '[{"fenceKind": "memory-context", "maxBudgetFraction": 2}]'
        await pilot.press("enter")
        await settle(app, pilot)
        error = str(rules.query_one(".policy-field--error").render())
        assert error == (
            "mustKeep.truncationRules[0].maxBudgetFraction: 2 is above the maximum 1.0; "
            "mustKeep.truncationRules[0].strategyName: is required"
        )
        assert app.workspace.policy.must_keep.truncation_rules == []

    run(write_session(tmp_path), scenario)


def test_reset_field_group_and_everything(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        ws = app.workspace
        await focus_field(app, pilot, "budget.maxTokens")
        await pilot.press("r")
        await settle(app, pilot)
        assert ws.policy.budget.max_tokens == 120000 and ws.policy.budget.reserved_for_response == 400
        await pilot.press("R")
        await settle(app, pilot)
        assert ws.policy.budget.reserved_for_response == 2400
        assert len(ws.changed()) == 2
        await pilot.press("ctrl+r")
        await settle(app, pilot)
        assert ws.changed() == set() and app.main.result.reminder.hit_rule_ids == ()

    run(write_session(tmp_path), scenario)


def test_enabling_a_rule_shows_the_reminder(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        assert app.main.result.reminder.hit_rule_ids == ()
        await focus_field(app, pilot, "systemReminder.thresholds.lastStepsHintThreshold")
        await pilot.press("end")
        await settle(app, pilot)
        result = app.main.result
        assert result.reminder.hit_rule_ids == ("last_steps_hint",)
        assert result.cards[-1].marks == ("reminder",)
        events = app.main.query_one(EventsView)
        assert any(
            "last_steps_hint" in str(events.get_option_at_index(i).prompt) for i in range(events.option_count)
        )

    run(write_session(tmp_path), scenario)


def test_an_allowlist_of_rules_turns_reminders_off_and_on(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        main = app.main
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert main.result.reminder.hit_rule_ids == ("tool_call_streak_every_ten",)
        rules = await focus_field(app, pilot, "systemReminder.enabledRuleIds")
        rules.query_one(Switch).value = True
        await settle(app, pilot)
        assert app.workspace.policy.system_reminder.enabled_rule_ids == []
        assert main.result.reminder.hit_rule_ids == ()
        rules.query_one(SelectionList).select("tool_call_streak_every_ten")
        await settle(app, pilot)
        assert app.workspace.policy.system_reminder.enabled_rule_ids == ["tool_call_streak_every_ten"]
        assert main.result.reminder.hit_rule_ids == ("tool_call_streak_every_ten",)
        assert field(app, "systemReminder.enabledRuleIds").changed

    run(write_session(tmp_path), scenario)


def test_select_and_json_fields_edit_the_policy(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        mode = await focus_field(app, pilot, "toolHistory.retentionMode")
        mode.input.value = "drop"
        await settle(app, pilot)
        assert app.workspace.policy.tool_history.retention_mode == "drop"
        rules = await focus_field(app, pilot, "mustKeep.truncationRules")
        rules.input.value = (
            '[{"fenceKind": "memory-context", "maxBudgetFraction": 0.1, "strategyName": "cap"}]'
        )
        await pilot.press("enter")
        await settle(app, pilot)
        assert app.workspace.policy.must_keep.truncation_rules[0].max_budget_fraction == 0.1
        assert app.main.query_one("#group-mustKeep").title == "Must keep ● 1"

    run(write_session(tmp_path), scenario)


def test_the_step_control_changes_reminders(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        main = app.main
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        assert app.workspace.step == 6 and main.query_one(Timeline).step == 6
        assert main.result.reminder.hit_rule_ids == ("tool_call_streak_every_ten",)
        assert main.result.kept_ids[-1] == "t4"
        main.query_one(Timeline).focus()
        await pilot.press("left")
        await settle(app, pilot)
        assert app.workspace.step == 5 and main.result.reminder.hit_rule_ids == ()

    run(write_session(tmp_path), scenario)


def test_editing_a_fence_moves_its_wire_message(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        main = app.main
        assert [c.message_id for c in main.result.cards][7] == "u2"
        main.query_one("#left").active = "tab-fences"
        table = main.query_one("#fence-descriptors")
        table.focus()
        await pilot.press("down", "e")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, FenceForm) and form.query_one("#fence-kind", Input).value == "memory-context"
        form.query_one("#fence-placement", Select).value = "after-last-tool-result"
        await pilot.click("#fence-save")
        await settle(app, pilot)
        cards = main.result.cards
        assert cards[7].message_id == "u2" and cards[7].marks == ()
        assert cards[-1].message_id == "f_mem" and cards[-1].marks == ("fence:memory-context",)
        assert app.workspace.fences.get("memory-context").placement == "after-last-tool-result"
        rows = [table.get_row_at(i)[2] for i in range(table.row_count)]
        assert rows == ["after-system", "after-last-tool-result"]

    run(write_session(tmp_path), scenario)


def test_n_opens_the_new_fence_form_every_time(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await pilot.click("#left Tab#--content-tab-tab-fences")  # the focus is on the tabs now
        for _ in range(3):
            await pilot.press("n")
            await pilot.pause()
            form = app.screen
            assert isinstance(form, FenceForm) and form.query_one("#fence-kind", Input).value == "new-fence"
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, MainScreen)
        app.main.query_one("#left").active = "tab-policy"
        app.main.query_one("WireList").focus()
        await pilot.press("n")
        await pilot.pause()
        assert isinstance(app.screen, FenceForm) and app.main.query_one("#left").active == "tab-fences"

    run(write_session(tmp_path), scenario)


def test_fence_form_shows_the_registry_error(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        app.main.action_fence("add")
        await pilot.pause()
        form = app.screen
        form.query_one("#fence-kind", Input).value = "Not Kebab"
        await pilot.click("#fence-save")
        await pilot.pause()
        assert str(form.error.render()) == 'Fence kind "Not Kebab" must be kebab-case.'
        kind = form.query_one("#fence-kind", Input)
        kind.value = "time-context"
        kind.focus()
        await pilot.press("enter")  # a second click within 0.2 s would hit the button's press animation
        await settle(app, pilot)
        assert app.workspace.fences.kinds() == ["project-notes", "memory-context", "time-context"]

    run(write_session(tmp_path), scenario)


def test_export_writes_yaml_that_loads_back_equal(tmp_path: Path) -> None:
    session = write_session(tmp_path)

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await focus_field(app, pilot, "budget.maxTokens")
        await pilot.press("left")
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        export = app.screen
        assert isinstance(export, ExportScreen)
        path = export.query_one("#export-path", Input)
        assert path.value == str(tmp_path / "sales.policy.yaml")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        await pilot.press("ctrl+s")
        await pilot.pause()
        app.screen.query(RadioButton)[2].value = True  # AgentSpec JSON
        await pilot.pause()
        assert app.screen.query_one("#export-path", Input).value == str(tmp_path / "sales.policy.json")
        await pilot.press("enter")
        await pilot.pause()

    app = run(session, scenario)
    written = (tmp_path / "sales.policy.yaml").read_text()
    assert written.startswith("budget:\n  maxTokens: 3000\n  reservedForResponse: 400\n")
    assert load_policy(tmp_path / "sales.policy.yaml") == app.workspace.policy
    assert load_policy(tmp_path / "sales.policy.json") == app.workspace.policy


def test_export_never_writes_over_the_session(tmp_path: Path) -> None:
    session = write_session(tmp_path)
    text = session.read_text()

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await pilot.press("ctrl+s")
        await pilot.pause()
        export = app.screen
        export.query_one("#export-path", Input).value = str(session)
        await pilot.press("enter")
        await pilot.pause()
        assert app.screen is export
        assert "refusing to overwrite a protected file" in str(export.query_one(".export--error").render())

    run(session, scenario)
    assert session.read_text() == text


def test_open_policy_file(tmp_path: Path) -> None:
    (tmp_path / "small.yaml").write_text("budget:\n  maxTokens: 3000\n")
    (tmp_path / "bad.yaml").write_text("budget:\n  maxTokens: -1\n")

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await pilot.press("ctrl+o")
        await pilot.pause()
        prompt = app.screen
        prompt.query_one(Input).value = str(tmp_path / "bad.yaml")
        await pilot.press("enter")
        await pilot.pause()
        assert str(prompt.error.render()).endswith("bad.yaml:2: budget.maxTokens: -1 must be greater than 0")
        prompt.query_one(Input).value = str(tmp_path / "small.yaml")
        await pilot.press("enter")
        await settle(app, pilot)
        assert isinstance(app.screen, MainScreen)
        assert app.main.result.tokens.max_tokens == 3000 and app.workspace.changed() == {
            ("budget", "maxTokens")
        }

    run(write_session(tmp_path), scenario)


def test_open_policy_file_shows_its_warnings(tmp_path: Path) -> None:
    typo = tmp_path / "typo.yaml"
    typo.write_text("budget:\n  maxToken: 3000\n  reservedForResponse: 300\n")

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await pilot.press("ctrl+o")
        await pilot.pause()
        app.screen.query_one(Input).value = str(typo)
        await pilot.press("enter")
        await settle(app, pilot)
        notice = app.screen
        assert isinstance(notice, NoticeScreen)
        text = [str(s.render()) for s in notice.query("Static")]
        assert text[0] == "The policy loaded with 1 warning(s): these keys were not used"
        assert f"{typo}:2: budget.maxToken: unknown key, ignored; did you mean `maxTokens`?" in text
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert app.main.result.tokens.max_tokens == 120000  # the misspelt key was not used
        assert app.workspace.policy.budget.reserved_for_response == 300

    run(write_session(tmp_path), scenario)


def test_a_bad_session_opens_with_the_notice(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        notice = app.screen
        assert isinstance(notice, NoticeScreen)
        text = "\n".join(str(s.render()) for s in notice.query("Static"))
        assert f"{tmp_path / 'bad.jsonl'}:5: json: not valid JSON" in text
        assert f'{tmp_path / "bad.jsonl"}:8: role/type: unknown role/type pair "robot"/"user_input"' in text
        assert "2 line(s) skipped" in text
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen) and app.main.result.kept_ids == ALL_KEPT

    run(write_session(tmp_path, "bad.jsonl", bad_lines=True), scenario)


def test_a_wire_a_provider_would_reject_is_shown_in_red(tmp_path: Path) -> None:
    policy = tmp_path / "keep_calls.yaml"
    policy.write_text("budget: {maxTokens: 6000}\nmustKeep: {alwaysKeepTypes: [tool_calls]}\n")
    app = make_app(load_inputs(SAMPLES_DIR / "tool_loop_runs.jsonl", policy))
    first = "OpenAI would reject this request: call call_Bcp93xq4dAO8UVAvsriC3bYW has no result"

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            events = app.main.query_one(EventsView)
            prompt = events.get_option_at_index(0).prompt
            assert str(prompt) == f"provider  {first}"
            assert {str(span.style) for span in prompt.spans} == {"$error bold", "$error"}
            assert app.main.provider_problems[0] == first
            assert app.main._status == (f"ready · {first}", "$error")
            app.workspace.edit(("mustKeep", "alwaysKeepTypes"), [])
            app.main.policy_loaded()
            await settle(app, pilot)
            assert app.main.provider_problems == () and app.main._status == ("ready", "$success")
            assert not str(events.get_option_at_index(0).prompt).startswith("provider")

    asyncio.run(main())


def test_a_build_is_shown_before_its_provider_check_and_keeps_the_last_problems_until_it_comes(
    tmp_path: Path,
) -> None:
    policy = tmp_path / "keep_calls.yaml"
    policy.write_text("budget: {maxTokens: 6000}\nmustKeep: {alwaysKeepTypes: [tool_calls]}\n")
    app = make_app(load_inputs(SAMPLES_DIR / "tool_loop_runs.jsonl", policy))

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            problems = app.main.provider_problems
            assert problems and app.main._status[1] == "$error"
            app.workspace.edit(("mustKeep", "alwaysKeepTypes"), [])  # a wire no provider refuses
            request = app.workspace.build_request()
            unchecked = run_build(request, check=False)
            assert not unchecked.checked and unchecked.problems == () and unchecked.anthropic is None
            asked: list[BuildOutcome] = []
            app.main.query_one(Builder).check = asked.append  # the screen asks for the check once it shows it
            app.main.post_message(BuildFinished(unchecked))
            await pilot.pause()
            assert app.main.result is unchecked.result and asked == [unchecked]
            assert app.main.provider_problems == problems  # not yet checked: the last build's stand
            app.main.post_message(ProvidersChecked(checked(unchecked)))
            await pilot.pause()
            status, style = app.main._status
            assert app.main.provider_problems == () and style == "$success"
            assert status.startswith("ready") and "reject" not in status
            events = app.main.query_one(EventsView)
            assert not str(events.get_option_at_index(0).prompt).startswith("provider")
            # the check of a build no longer shown changes nothing
            app.main.post_message(ProvidersChecked(checked(run_build(request, check=False))))
            await pilot.pause()
            assert app.main.provider_problems == ()

    asyncio.run(main())


def test_the_provider_check_waits_for_the_build_to_be_painted_and_skips_a_superseded_build() -> None:
    app = make_app(load_inputs(SAMPLES_DIR / "tool_loop_runs.jsonl"))
    checks: list[BuildOutcome] = []

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            builder = app.main.query_one(Builder)
            post = builder.post_message

            def posted(message: Message) -> bool:
                if isinstance(message, ProvidersChecked):
                    checks.append(message.outcome)
                return post(message)

            builder.post_message = posted  # type: ignore[method-assign]
            outcome = run_build(app.workspace.build_request(), check=False, count=False)
            builder.build(app.workspace.build_request())  # newer, then `outcome`'s check is not wanted
            await settle(app, pilot)
            checks.clear()
            app.main.priority.hold(5.0)  # the user's key is on its way to the screen
            late = run_build(app.workspace.build_request(), check=False, count=False)
            builder._newest = late.generation
            builder.check(late)
            await asyncio.sleep(0.3)
            assert checks == []  # waiting for the screen
            app.main.priority.release()
            await settle(app, pilot)
            assert [c.request.generation for c in checks] == [late.generation]
            assert checks[0].checked and checks[0].dropped == late.result.dropped_count()
            builder.check(outcome)  # older than the newest build asked for: left out
            await settle(app, pilot)
            assert len(checks) == 1

    asyncio.run(main())


def test_E_switches_tool_summaries_and_reminders_to_english_and_back() -> None:
    app = make_app(load_inputs(SAMPLES_DIR / "tool_loop_runs.jsonl"))

    def first_compressed() -> tuple[tuple[str, ...], str]:
        rows = app.main.query_one(WireView).query_one("WireList").rows
        row = next(r for r in rows if "compressed" in r.marks)
        return row.marks, row.text

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            marks, text = first_compressed()
            assert marks == ("compressed",) and text.startswith("我已经调用了工具「grep」")
            await pilot.press("E")
            await settle(app, pilot)
            marks, text = first_compressed()
            assert marks == ("compressed", "copy:en")
            assert text.startswith('I called the tool "grep" (arguments: ')
            assert app.workspace.copy == "en"
            assert " ─ copy en ─ " in str(app.main.query_one("TopBar").render())
            await pilot.press("E")
            await settle(app, pilot)
            assert first_compressed()[0] == ("compressed",) and app.workspace.copy == "zh"

    asyncio.run(main())


def test_pin_and_compare(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        main = app.main
        await pilot.press("a")
        await focus_field(app, pilot, "budget.maxTokens")
        await pilot.press("left")
        await settle(app, pilot)
        assert main.query_one("#middle").active == "tab-compare"
        table = main.query_one(ComparePanel).table
        rows = [[str(cell) for cell in table.get_row_at(i)] for i in range(table.row_count)]
        assert [(r[0], r[1]) for r in rows] == [("−", "u1"), ("−", "f1")]
        assert main.query_one(BudgetBar).pinned.max_tokens == 4000
        assert app.workspace.changes_since_pin() == ["budget.maxTokens 4000 → 3000"]
        await pilot.press("A")
        await pilot.pause()
        assert main.query_one(BudgetBar).pinned is None and table.row_count == 0

    run(write_session(tmp_path), scenario)


def test_trace_the_highlighted_message(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await pilot.press("down", "down", "t")
        await pilot.pause()
        trace = app.screen
        assert isinstance(trace, TraceScreen) and trace.message_id == "a1"
        text = str(trace.query_one("TraceView").render())
        assert "fate        kept" in text and "reason      kept_by_WORKING_MEMORY" in text
        await pilot.press("escape")
        assert isinstance(app.screen, MainScreen)

    run(write_session(tmp_path), scenario)


def test_defaults_profile_switch_keeps_the_changes(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await pilot.press("ctrl+d")
        await settle(app, pilot)
        ws = app.workspace
        assert ws.defaults == "linnkit-0.21" and "defaults: linnkit-0.21" in str(
            app.main.query_one("TopBar").render()
        )
        assert ws.policy.budget.max_tokens == 4000 and ws.policy.tool_history.retention_mode == "drop"
        assert not app.main.result.tokens.max_tokens != 4000

    run(write_session(tmp_path), scenario)


def test_help_theme_and_palette(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("ctrl+t")
        assert app.theme == "textual-light"
        await pilot.press("ctrl+t")
        assert app.theme == "textual-dark"

    run(write_session(tmp_path), scenario)


def test_every_bound_action_is_in_the_palette_and_every_binding_has_an_id_and_tooltip() -> None:
    commands = palette_commands()
    on_main = {c.action.split("(")[0] for c in commands if not c.on_app}
    on_app = {c.action.split("(")[0] for c in commands if c.on_app}
    assert {b.action.split("(")[0] for b in MAIN_BINDINGS} <= on_main
    assert {b.action.split("(")[0] for b in APP_BINDINGS} <= on_app
    assert {"reset_group", "focus_field", "fence", "fence_delete"} <= on_main and "open_fences" in on_app
    assert all(b.id and b.tooltip for b in [*MAIN_BINDINGS, *APP_BINDINGS])


def test_a_small_observation_limit_shows_previews_and_what_was_saved(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await focus_field(app, pilot, "toolOutput.observationGovernance.maxChars")
        await pilot.press("home")  # the smallest limit: every non-empty output is cut to a preview
        await settle(app, pilot)
        result = app.main.result
        previews = [c for c in result.cards if "preview" in c.marks]
        assert previews and all(c.message["role"] == "tool" for c in previews)
        events = [e for e in result.events if e.kind == "observation"]
        assert {e.message_ids[0] for e in events} == {c.message_id for c in previews}
        store = app.workspace.inputs.observation_store
        original = {m.id: m.content for m in app.workspace.inputs.session.messages}
        for event in events:  # the full text was saved under the pointer the preview names
            assert store.get(event.data["blobId"]) == original[event.message_ids[0]]
            assert f"blob_id={event.data['blobId']}" in next(
                c.message["content"] for c in previews if c.message_id == event.message_ids[0]
            )

    run(write_session(tmp_path), scenario)


def test_export_writes_the_html_report_of_the_shown_step(tmp_path: Path) -> None:
    session = write_session(tmp_path)

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await settle(app, pilot)
        await pilot.press("ctrl+s")
        await pilot.pause()
        app.screen.query(RadioButton)[4].value = True  # HTML report
        await pilot.pause()
        assert app.screen.query_one("#export-path", Input).value == str(tmp_path / "sales.report.html")
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)

    run(session, scenario)
    page = (tmp_path / "sales.report.html").read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "step 7 of 7" in page
    assert "<script" not in page


def test_q_quits_at_once_when_nothing_is_unsaved_and_asks_otherwise(tmp_path: Path) -> None:
    exits: list[str] = []

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        app.exit = lambda *args, **kwargs: exits.append("exit")  # type: ignore[method-assign]
        app.main.query_one(WireList).focus()
        await pilot.press("q")
        assert exits == ["exit"] and app.workspace.unsaved() == []
        slider = (await focus_field(app, pilot, "budget.maxTokens")).input
        slider.action_move(1)
        await settle(app, pilot)
        assert app.workspace.unsaved() == ["policy"]
        await pilot.press("q")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmQuit)
        await pilot.press("escape")  # stay
        await pilot.pause()
        assert exits == ["exit"] and not isinstance(app.screen, ConfirmQuit)
        app.workspace.export("policy-changed", tmp_path / "tuned.policy.yaml")
        assert app.workspace.unsaved() == []
        await pilot.press("q")
        assert exits == ["exit", "exit"]
        slider.action_move(1)
        await settle(app, pilot)
        await pilot.press("q")
        await pilot.pause()
        await pilot.press("q")  # quit anyway
        await pilot.pause()
        assert exits == ["exit", "exit", "exit"]

    run(write_session(tmp_path), scenario)


def test_the_footer_shows_quit_and_help(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        shown = {b.binding.key for b in app.screen.active_bindings.values() if b.binding.show}
        assert {"q", "f1"} <= shown

    run(write_session(tmp_path), scenario)


def test_a_reminder_edit_shows_the_late_step_complete_at_once_and_a_budget_edit_replays_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The series of the budget edit starts once that edit's build is on screen, as on an idle machine: on
    # a loaded one the 25 steps could end first, and the build, superseded by the rebuild they ask for,
    # would rightly never show its provisional status.
    shown_once = threading.Event()
    shown_once.set()

    def series_after_the_build(*args: Any) -> Iterator[Any]:
        shown_once.wait(10)
        yield from series_steps(*args)

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        main, shown = app.main, []
        set_status = main._set_status

        def status(text: str, style: str = "$text-muted") -> None:
            shown.append(text)
            set_status(text, style)
            if text.startswith("ready"):
                shown_once.set()

        main._set_status = status
        assert app.workspace.step == 25 and app.workspace.summaries_through == 25
        slider = (await focus_field(app, pilot, "systemReminder.thresholds.toolCallStreak")).input
        await pilot.press("right")  # a reminder-only edit: the summaries of steps 13 and 21 still hold
        await settle(app, pilot)
        assert slider.value == 11 and app.workspace.policy.system_reminder.thresholds.tool_call_streak == 11
        assert "ready · replaying earlier steps…" not in shown and shown[-1] == "ready"
        assert main.result.kept_ids[1] == app.workspace.summaries[1][1].id  # built with step 21's summary
        shown.clear()
        await focus_field(app, pilot, "budget.maxTokens")
        shown_once.clear()
        await pilot.press("right")  # a budget edit can change every summary: shown provisional, then whole
        await settle(app, pilot)
        assert "ready · replaying earlier steps…" in shown
        assert shown[-1] == "ready" and app.workspace.summaries_through == 25

    monkeypatch.setattr(builder, "series_steps", series_after_the_build)
    run(write_summarized_twice(tmp_path), scenario)


def test_a_slider_moved_and_moved_back_finds_its_series_without_replaying_it(tmp_path: Path) -> None:
    known: list[tuple[int, int]] = []  # (steps resumed after, steps in the session) per series started

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        request_of = app.workspace.timeline_request

        def spied() -> TimelineRequest:
            request = request_of()
            known.append((len(request.known), len(request.points)))
            return request

        app.workspace.timeline_request = spied  # type: ignore[method-assign]
        slider = app.main.query_one("#field-budget-maxTokens").input  # type: ignore[attr-defined]
        for move in (1, -1):
            slider.action_move(move)
            await settle(app, pilot)
        assert app.main.query_one(Timeline).points[-1].final_tokens > 0  # the chart shows every step

    app = run(write_session(tmp_path), scenario)
    steps = len(app.workspace.points)
    assert steps > 1 and known == [(0, steps), (steps, steps)]


def test_each_progress_message_carries_only_the_steps_made_since_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The series posts what is new (on a 32,000-step session, messages that each carried every step so far
    queued up by the gigabyte); the screen puts the parts together into the whole series."""
    parts: list[tuple[int, int, bool]] = []  # (start, steps, done) per message

    def recorded(version: int, start: int, points: list, done: bool, summaries: list) -> Any:
        parts.append((start, len(points), done))
        return TimelineProgress(version, start, points, done, summaries)

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await focus_field(app, pilot, "budget.maxTokens")
        parts.clear()
        await pilot.press("right")  # a new series, posted as it goes
        await settle(app, pilot)
        shown.extend((s.step, s.final_tokens, s.markers) for s in app.main.query_one(Timeline).points)

    shown: list[tuple[int, int, str]] = []
    monkeypatch.setattr(builder, "PROGRESS_EVERY", 0.0)  # a message per step
    monkeypatch.setattr(builder, "TimelineProgress", recorded)
    path = write_summarized_twice(tmp_path)
    app = run(path, scenario)
    assert parts == [(start, 1, False) for start in range(25)] + [(25, 0, True)]  # the end: nothing new
    fresh = Workspace(load_inputs(path))
    fresh.policy = app.workspace.policy
    whole = [(s.step, s.final_tokens, s.markers) for s, _ in series_steps(fresh.timeline_request())]
    assert shown == whole and len(whole) == 25 and any("S" in markers for *_, markers in whole)


def test_a_long_sessions_series_and_cost_come_from_child_processes_and_match_the_threads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """From `fork_from` messages on, the series and the session cost replay in forked children (they never
    take the GIL from the UI): the timeline and the cost pane show what the threads would have shown."""
    path = write_summarized_twice(tmp_path)
    seen: dict[str, tuple[Any, ...]] = {}

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await focus_field(app, pilot, "budget.maxTokens")
        await pilot.press("left")  # a new series and a new cost replay
        await settle(app, pilot)
        series = tuple((s.step, s.final_tokens, s.markers) for s in app.main.query_one(Timeline).points)
        pane = app.main.query_one(CostPane)
        how = "forked" if Builder.fork_from == 1 else "threads"
        seen[how] = (series, dict(pane.totals), str(pane.render()))

    forks: list[str] = []  # the jobs sent to a child
    made = ReplayProcess.run

    def counted(self: ReplayProcess, job: Any, *args: Any, **kwargs: Any) -> Iterator[list[Any]]:
        forks.append(job.__name__)
        return made(self, job, *args, **kwargs)

    run(path, scenario)
    monkeypatch.setattr(Builder, "fork_from", 1)
    monkeypatch.setattr(CostPane, "fork_from", 1)
    monkeypatch.setattr(ReplayProcess, "run", counted)
    run(path, scenario)
    assert forks.count("series_job") >= 2 and forks.count("cost_job") >= 2  # the first ones, and the edit's
    series, totals, text = seen["forked"]
    assert (series, totals, text) == seen["threads"]
    assert len(series) == 25 and series[-1][1] > 0
    assert [step for step, _, markers in series if "S" in markers] == [8, 13, 18, 23]
    assert "$" in text


def test_a_long_sessions_build_is_shown_before_its_dropped_count_which_its_check_brings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(builder, "COUNT_FIRST", 1)  # every session counts as long here
    titles: list[str] = []

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        wire = app.main.query_one(WireView)
        title = wire.query_one(".wire-view--title")
        update = title.update

        def shown(text: str, **kwargs: Any) -> None:
            titles.append(str(text))
            update(text, **kwargs)

        title.update = shown  # type: ignore[method-assign]
        await focus_field(app, pilot, "budget.maxTokens")
        await pilot.press("left")
        await settle(app, pilot)
        dropped = app.main.result.dropped_count()
        assert dropped > 0
        assert titles[0].endswith("· counting dropped (hidden)")  # the build, on screen before its count
        assert titles[-1].endswith(f"· {dropped} dropped (hidden)")  # the check brought it
        assert str(title.render()) == titles[-1]

    run(write_session(tmp_path), scenario)
