"""The reminder stage: triggers at their edges, linnkit's exact copy, selection, extra rules, injection."""

import copy
from types import SimpleNamespace

import pytest

from engine.messages import AiMessage
from engine.policy.model import SystemReminderPolicy
from engine.reminders import (
    ReminderConfigError,
    ReminderContext,
    ReminderRegistry,
    apply_reminders,
    check_reminder_policy,
    default_registry,
    derive_phase,
    evaluate_rules,
    reminder_policy_warnings,
    resolve_rules,
    selected_rule_definitions,
)
from engine.result import ReminderOutcome

# linnkit 0.21's defaults after defineContextPolicy
DEFAULTS = {
    "toolCallStreak": 10,
    "taskstateReflectionPeriod": 30,
    "budgetWarningRatio": 0.9,
    "lastStepsHintThreshold": 0,
}

# expected.reminderText of the conformance cases, produced by linnkit 0.21.0
STREAK_10 = (
    "- 你已连续执行了 10 次工具调用。\n"
    "  如果问题比较复杂，考虑创建sub-agent，也就是task，以降低上下文占用。\n"
    "  如果问题即将解决，请忽略本条提醒。"
)
BUDGET_36_40 = (
    "- ⚠️ 上下文预算告警：你已执行了 36/40 步，上下文空间即将耗尽。\n"
    "  你必须立即执行以下操作以避免上下文溢出：\n"
    "  1. 先确认关键进展、约束、下一步已经进入 TaskState；如果没有，请调用 taskstate_write 更新。\n"
    "  2. 调用 context_checkpoint 工具，传入 summary（阶段过渡摘要）和 taskstate（最新任务状态）。\n"
    '     这会一次性完成"保存状态 + 清理历史"，checkpoint tool_output 中会保留你的 TaskState 快照。\n'
    "  3. 清理后你的上下文将只保留：checkpoint 工具对（含摘要 + TaskState）+ 最近 2 对工具交互。"
    "需要长期交付给用户的内容请写入 Workspace 文件。"
)
CASE_BUDGET_WARNING_TEXT = f"\n\n<system-reminder>\n{STREAK_10}\n{BUDGET_36_40}\n</system-reminder>"
CASE_LAST_STEPS_TEXT = (
    "\n\n<system-reminder>\n"
    "- 步数提醒：你当前处于第 35/38 步，还剩 3 步。\n"
    "  建议你结束无关推理/无关工具调用，确保在步数耗尽前完成任务。\n"
    "- 你已连续执行了 12 次工具调用。\n"
    "  如果问题比较复杂，考虑创建sub-agent，也就是task，以降低上下文占用。\n"
    "  如果问题即将解决，请忽略本条提醒。\n"
    "</system-reminder>"
)


def policy(**thresholds):
    return {"thresholds": {**DEFAULTS, **thresholds}, "disabledRuleIds": [], "extraRules": []}


def hits(ctx, reminder_policy=None, registry=None):
    _, outcome = apply_reminders(
        [{"role": "user", "content": "go"}], reminder_policy or policy(), ctx, registry
    )
    return list(outcome.hit_rule_ids)


def ctx(step=1, max_steps=80, **kw):
    return ReminderContext(step_count=step, max_steps=max_steps, **kw)


# -- the two conformance cases, byte for byte --------------------------------------------------------


def test_case_budget_warning_and_streak_defaults():
    wire = [
        {"role": "user", "content": "q"},
        {"role": "tool", "tool_call_id": "c1", "content": "line 1\nline 2"},
    ]
    tick = ctx(72, 80, available_tools=("read_file", "run_shell", "context_checkpoint"), streak=10)
    new_wire, outcome = apply_reminders(wire, policy(), tick)
    assert outcome.hit_rule_ids == ("tool_call_streak_every_ten", "context_budget_warning")
    assert outcome.appended_text == CASE_BUDGET_WARNING_TEXT
    assert new_wire[-1] == {
        "role": "tool",
        "tool_call_id": "c1",
        "content": "line 1\nline 2" + CASE_BUDGET_WARNING_TEXT,
    }


def test_case_streak_and_last_steps():
    tick = ctx(70, 76, available_tools=("read_file", "grep", "run_shell"), streak=12)
    wire = [{"role": "tool", "tool_call_id": "c", "content": "w.mu.Unlock()"}]
    new_wire, outcome = apply_reminders(wire, policy(toolCallStreak=6, lastStepsHintThreshold=6), tick)
    assert outcome.hit_rule_ids == ("last_steps_hint", "tool_call_streak_every_ten")
    assert outcome.appended_text == CASE_LAST_STEPS_TEXT
    assert new_wire[0]["content"] == "w.mu.Unlock()" + CASE_LAST_STEPS_TEXT


def test_e8_worked_example():
    tick = ctx(72, 80, phase="running", available_tools=("context_checkpoint",), streak=10)
    new_wire, outcome = apply_reminders([{"role": "tool", "content": "result text"}], policy(), tick)
    assert outcome.hit_rule_ids == ("tool_call_streak_every_ten", "context_budget_warning")
    assert new_wire == [{"role": "tool", "content": "result text" + CASE_BUDGET_WARNING_TEXT}]
    assert "36/40" in new_wire[0]["content"] and "调用 context_checkpoint 工具" in new_wire[0]["content"]


# -- each built-in at its edges ---------------------------------------------------------------------


@pytest.mark.parametrize(("step", "fired"), [(79, False), (80, True), (81, True)])
def test_max_steps_force_final_answer_edges(step, fired):
    assert ("max_steps_force_final_answer" in hits(ctx(step, 80))) is fired


def test_max_steps_text():
    outcome = apply_reminders([{"role": "user", "content": ""}], policy(), ctx(80, 80))[1]
    assert outcome.texts == {
        "max_steps_force_final_answer": "你已达到最大步数限制：本轮工具已被禁用。\n"
        "你必须立刻给出最终答案，不要再尝试调用任何工具。\n"
        "若信息不完整，请明确说明关键假设和缺口，并给出当前最好的可用回答。"
    }


@pytest.mark.parametrize(("step", "fired"), [(73, False), (74, True), (75, True), (80, False)])
def test_last_steps_hint_edges(step, fired):
    # threshold 6 of 80: remaining 7 no, 6 and 5 yes; at step 80 the phase is force_final_answer
    assert ("last_steps_hint" in hits(ctx(step, 80), policy(lastStepsHintThreshold=6))) is fired


def test_last_steps_hint_zero_is_off_and_the_executor_value_is_only_a_fallback():
    assert "last_steps_hint" not in hits(ctx(79, 80, last_steps_hint_threshold=5))  # policy 0 wins
    unset = {"thresholds": {"toolCallStreak": 10}}
    assert "last_steps_hint" in hits(ctx(79, 80, last_steps_hint_threshold=5), unset)
    assert "last_steps_hint" not in hits(ctx(79, 80), unset)


def test_last_steps_hint_force_tools_text():
    tick = ctx(77, 80, final_step_policy="force_tools", final_step_forced_tools=(" submit ", "", "report"))
    outcome = apply_reminders([{"role": "user", "content": "x"}], policy(lastStepsHintThreshold=4), tick)[1]
    assert outcome.texts["last_steps_hint"] == (
        "步数提醒：你当前处于第 39/40 步，还剩 2 步。\n"
        "当剩余 1 步时：你必须立刻调用工具：submit, report（系统将只保留这些工具）。\n"
        "最后 1 步将用于执行工具，因此不要在最后一步才尝试再调用其他工具。"
    )
    bare = ctx(77, 80, final_step_policy="force_tools")
    text = apply_reminders([{"role": "user", "content": "x"}], policy(lastStepsHintThreshold=4), bare)[
        1
    ].texts
    assert "(未配置 forcedTools)" in text["last_steps_hint"]


@pytest.mark.parametrize(("streak", "fired"), [(9, False), (10, True), (11, False), (20, True)])
def test_tool_call_streak_edges(streak, fired):
    assert ("tool_call_streak_every_ten" in hits(ctx(5, streak=streak))) is fired


def test_tool_call_streak_threshold_override_and_zero():
    assert "tool_call_streak_every_ten" in hits(ctx(5, streak=6), policy(toolCallStreak=3))
    assert "tool_call_streak_every_ten" not in hits(ctx(5, streak=10), policy(toolCallStreak=0))


@pytest.mark.parametrize(("step", "fired"), [(29, False), (30, True), (31, False), (60, True)])
def test_periodic_taskstate_reflection_edges(step, fired):
    assert ("periodic_taskstate_reflection" in hits(ctx(step, 200))) is fired


def test_periodic_reflection_period_override_text_and_final_phase():
    assert "periodic_taskstate_reflection" in hits(ctx(8, 200), policy(taskstateReflectionPeriod=4))
    assert "periodic_taskstate_reflection" not in hits(ctx(6, 200), policy(taskstateReflectionPeriod=4))
    assert "periodic_taskstate_reflection" not in hits(ctx(60, 60))  # force_final_answer
    text = apply_reminders([{"role": "user", "content": "x"}], policy(), ctx(30, 200))[1].texts
    assert text["periodic_taskstate_reflection"] == (
        "你已执行了 15 步。请暂停当前工作，花一步反思和整理：\n"
        "1. 回顾你最近的 taskstate_write 输出，确认当前工作方向正确（没有偏离 Goal）。\n"
        "2. 调用 taskstate_write 更新 progress 和 next_steps，如有必要调整 current_plan。\n"
        "3. 如果任务复杂但尚未创建 TaskState，现在是创建的好时机。\n"
        "完成整理后继续执行任务。"
    )


@pytest.mark.parametrize(("step", "fired"), [(71, False), (72, True), (75, True), (76, False)])
def test_budget_warning_edges(step, fired):
    tick = ctx(step, 80, available_tools=("context_checkpoint",))
    assert ("context_budget_warning" in hits(tick)) is fired


def test_budget_warning_needs_the_checkpoint_tool_and_follows_its_name_and_ratio():
    assert "context_budget_warning" not in hits(ctx(72, 80, available_tools=("read_file",)))
    named = ctx(
        40, 80, available_tools=("phase_checkpoint",), context_checkpoint_tool_name="phase_checkpoint"
    )
    outcome = apply_reminders([{"role": "user", "content": "x"}], policy(budgetWarningRatio=0.5), named)[1]
    assert outcome.hit_rule_ids == ("context_budget_warning",)
    assert "2. 调用 phase_checkpoint 工具" in outcome.texts["context_budget_warning"]


def test_phase_derivation():
    assert [derive_phase(s, 10) for s in (9, 10, 11)] == [
        "running",
        "force_final_answer",
        "force_final_answer",
    ]
    assert [derive_phase(s, 10, "force_tools") for s in (8, 9, 10)] == ["running", "force_tools", "running"]


# -- selection ---------------------------------------------------------------------------------------

BUSY = ctx(80, 80, available_tools=("context_checkpoint",), streak=10)  # fires three built-ins


def test_everything_that_fires_by_default():
    assert hits(BUSY) == ["max_steps_force_final_answer", "tool_call_streak_every_ten"]


def test_allowlist_denylist_and_empty_allowlist():
    assert hits(BUSY, {**policy(), "enabledRuleIds": ["tool_call_streak_every_ten"]}) == [
        "tool_call_streak_every_ten"
    ]
    assert hits(BUSY, {**policy(), "enabledRuleIds": []}) == []
    assert hits(BUSY, {**policy(), "disabledRuleIds": ["max_steps_force_final_answer"]}) == [
        "tool_call_streak_every_ten"
    ]


def test_extra_rules_follow_builtins_and_get_their_args():
    registry = default_registry()
    registry.register_trigger_kind("always", lambda c, t: True)
    registry.register_content_template("named", lambda c, args: f"提醒：{args['name']}")
    rule = {
        "id": "host_rule",
        "trigger": {"kind": "always"},
        "contentTemplate": "named",
        "contentArgs": {"name": "m"},
    }
    outcome = apply_reminders(
        [{"role": "user", "content": "x"}], {**policy(), "extraRules": [rule]}, BUSY, registry
    )[1]
    assert outcome.hit_rule_ids == ("max_steps_force_final_answer", "tool_call_streak_every_ten", "host_rule")
    assert outcome.texts["host_rule"] == "提醒：m"


def test_extra_rule_builtin_kinds():
    extra = [
        {
            "id": "loose",
            "trigger": {"kind": "tool-call-streak", "threshold": 4, "moduloStep": False},
            "contentTemplate": "toolCallStreak",
        },
        {
            "id": "has",
            "trigger": {"kind": "agent-has-tool", "value": "grep"},
            "contentTemplate": "toolCallStreak",
        },
        {
            "id": "phase",
            "trigger": {"kind": "phase-equals", "value": "force_tools"},
            "contentTemplate": "toolCallStreak",
        },
        {
            "id": "mod",
            "trigger": {"kind": "step-count-modulo", "threshold": 3},
            "contentTemplate": "toolCallStreak",
        },
    ]
    tick = ctx(9, 80, available_tools=("grep",), streak=5)
    assert hits(tick, {**policy(), "enabledRuleIds": [], "extraRules": extra}) == ["loose", "has", "mod"]


def test_unknown_trigger_kinds_and_templates_are_dropped_with_a_warning_naming_the_field():
    has_grep = {"kind": "agent-has-tool", "value": "grep"}
    ok = {"id": "a", "trigger": has_grep, "contentTemplate": "toolCallStreak"}
    extra = [
        {**ok, "id": "x", "trigger": {"kind": "foo"}},
        {**ok, "id": "b", "contentTemplate": "nope"},
        ok,
    ]
    configured = {**policy(), "enabledRuleIds": [], "extraRules": extra}
    check_reminder_policy(configured)  # a build never fails on one
    assert [rule.id for rule in resolve_rules(configured)] == ["a"]
    assert reminder_policy_warnings(configured) == [
        "systemReminder.extraRules[0].trigger.kind: unknown trigger kind 'foo' (known: phase-equals, "
        "remaining-steps-leq, step-count-modulo, tool-call-streak, budget-warning, agent-has-tool); "
        "the rule is dropped, as linnkit drops it",
        "systemReminder.extraRules[1].contentTemplate: unknown content template 'nope' (known: "
        "maxStepsForceFinalAnswer, lastStepsHint, toolCallStreak, periodicTaskstateReflection, "
        "contextBudgetWarning); the rule is dropped, as linnkit drops it",
    ]
    tick = ctx(9, 80, available_tools=("grep",), streak=5)
    assert hits(tick, configured) == ["a"]


def test_a_build_with_an_unknown_extra_rule_reports_it_and_still_reminds():
    from engine import build_context
    from engine.ticks import TickState

    rules = [{"id": "x", "trigger": {"kind": "foo"}, "contentTemplate": "toolCallStreak"}]
    messages = [AiMessage(id="u", role="user", type="user_input", content="hi", timestamp=1)]
    result = build_context(
        messages, {"systemReminder": {"extraRules": rules}}, tick=TickState(step_count=80, max_steps=80)
    )
    assert result.error is None
    assert result.reminder.hit_rule_ids == ("max_steps_force_final_answer",)
    assert any(w.startswith("systemReminder.extraRules[0].trigger.kind: unknown trigger kind 'foo'")
               for w in result.warnings)


def test_extra_rule_arguments_must_be_serialisable():
    rule = {
        "id": "a",
        "trigger": {"kind": "agent-has-tool"},
        "contentTemplate": "toolCallStreak",
        "contentArgs": {"f": object()},
    }
    with pytest.raises(
        ReminderConfigError, match=r"^systemReminder\.extraRules\[0\]\.contentArgs: must be JSON-serialisable"
    ):
        check_reminder_policy({"extraRules": [rule]})


def test_registries_do_not_leak_between_each_other():
    first = default_registry()
    first.register_trigger_kind("always", lambda c, t: True)
    assert "always" in first.trigger_kinds
    assert "always" not in default_registry().trigger_kinds
    with pytest.raises(ValueError, match="trigger kind must be a non-empty string"):
        ReminderRegistry().register_trigger_kind("  ", lambda c, t: True)


def test_empty_registry_serves_extra_rules_when_builtins_are_off():
    registry = ReminderRegistry()
    registry.register_trigger_kind("always", lambda c, t: True)
    registry.register_content_template("t", lambda c, a: "only me")
    only = {
        "enabledRuleIds": [],
        "extraRules": [{"id": "r", "trigger": {"kind": "always"}, "contentTemplate": "t"}],
    }
    assert hits(ctx(), only, registry) == ["r"]
    with pytest.raises(
        ReminderConfigError, match="built-in rule 'max_steps_force_final_answer' needs trigger kind"
    ):
        resolve_rules({}, registry)


def test_thresholds_reach_the_trigger_definitions():
    rules = {
        r["id"]: r["trigger"]
        for r in selected_rule_definitions(policy(taskstateReflectionPeriod=7, budgetWarningRatio=0.5))
    }
    assert rules["periodic_taskstate_reflection"] == {"kind": "step-count-modulo", "period": 7, "minStep": 7}
    assert rules["context_budget_warning"] == {"kind": "budget-warning", "ratio": 0.5}
    assert rules["last_steps_hint"] == {"kind": "remaining-steps-leq", "threshold": 0}


def test_the_pydantic_model_and_attribute_objects_work_like_the_dict():
    model = SystemReminderPolicy.model_validate(
        {"thresholds": {"toolCallStreak": 5}, "enabledRuleIds": ["tool_call_streak_every_ten"]}
    )
    attrs = SimpleNamespace(
        enabled_rule_ids=None,
        disabled_rule_ids=["max_steps_force_final_answer"],
        thresholds=SimpleNamespace(
            tool_call_streak=5,
            taskstate_reflection_period=30,
            budget_warning_ratio=0.9,
            last_steps_hint_threshold=0,
        ),
        extra_rules=[
            SimpleNamespace(
                id="e",
                trigger=SimpleNamespace(kind="agent-has-tool", tool_name="grep"),
                content_template="toolCallStreak",
                content_args=None,
            )
        ],
    )
    tick = ctx(80, 80, available_tools=("grep",), streak=5)
    assert hits(tick, model) == ["tool_call_streak_every_ten"]
    assert hits(tick, attrs) == ["tool_call_streak_every_ten", "e"]


# -- evaluation and injection ------------------------------------------------------------------------


def host_registry(**templates):
    registry = default_registry()
    registry.register_trigger_kind("always", lambda c, t: True)
    registry.register_trigger_kind("never", lambda c, t: False)
    registry.register_trigger_kind("boom", lambda c, t: 1 / 0)
    for name, fn in templates.items():
        registry.register_content_template(name, fn)
    return registry


def rule(rule_id, kind, template):
    return {"id": rule_id, "trigger": {"kind": kind}, "contentTemplate": template}


def test_duplicate_ids_the_first_rule_that_fires_wins():
    registry = host_registry(a=lambda c, _: "first", b=lambda c, _: "second")
    both = {"enabledRuleIds": [], "extraRules": [rule("dup", "always", "a"), rule("dup", "always", "b")]}
    assert apply_reminders([{"role": "user", "content": ""}], both, ctx(), registry)[1].texts == {
        "dup": "first"
    }
    later = {"enabledRuleIds": [], "extraRules": [rule("dup", "never", "a"), rule("dup", "always", "b")]}
    assert apply_reminders([{"role": "user", "content": ""}], later, ctx(), registry)[1].texts == {
        "dup": "second"
    }


def test_rules_that_raise_or_say_nothing_are_skipped_and_noted():
    registry = host_registry(blank=lambda c, _: " \n ", bad=lambda c, _: 1 / 0, ok=lambda c, _: "  kept  ")
    extra = [
        rule("t", "boom", "ok"),
        rule("b", "always", "blank"),
        rule("x", "always", "bad"),
        rule("k", "always", "ok"),
    ]
    rules = resolve_rules({"enabledRuleIds": [], "extraRules": extra}, registry)
    evaluation = evaluate_rules(rules, ctx())
    assert evaluation.hits == (("k", "kept"),)
    assert evaluation.skipped == (
        ("t", "trigger raised ZeroDivisionError: division by zero"),
        ("b", "template produced no text"),
        ("x", "template raised ZeroDivisionError: division by zero"),
    )


def test_host_functions_get_copies_of_their_rule_and_cannot_change_the_policy():
    def grabbing_trigger(c, trigger):
        trigger["kind"] = "changed"
        return True

    def grabbing_template(c, args):
        args["n"] += 1
        return f"n={args['n']}"

    registry = host_registry(grab=grabbing_template)
    registry.register_trigger_kind("grab", grabbing_trigger)
    extra = [{**rule("g", "grab", "grab"), "contentArgs": {"n": 1}}]
    rules = resolve_rules({"enabledRuleIds": [], "extraRules": extra}, registry)
    assert evaluate_rules(rules, ctx()).hits == (("g", "n=2"),)
    assert evaluate_rules(rules, ctx()).hits == (("g", "n=2"),)  # the rule as it was: the host changed a copy
    assert rules[0].trigger == {"kind": "grab"} and rules[0].content_args == {"n": 1}


@pytest.mark.parametrize(
    ("content", "glue"),
    [("text", "\n\n"), ("text\n", "\n"), ("", "\n"), (None, "\n")],
)
def test_separator(content, glue):
    registry = host_registry(t=lambda c, _: "a\nb")
    only = {"enabledRuleIds": [], "extraRules": [rule("r", "always", "t")]}
    new_wire, outcome = apply_reminders([{"role": "assistant", "content": content}], only, ctx(), registry)
    assert outcome.appended_text == glue + "<system-reminder>\n- a\n  b\n</system-reminder>"
    assert new_wire[0]["content"] == (content or "") + outcome.appended_text


def test_no_hit_and_empty_wire_leave_the_wire_alone():
    wire = [{"role": "user", "content": "q"}]
    new_wire, outcome = apply_reminders(wire, policy(), ctx(3))
    assert new_wire == wire and outcome.hit_rule_ids == () and outcome.appended_text is None
    assert apply_reminders([], policy(), BUSY) == ([], ReminderOutcome())


def test_input_wire_and_its_dicts_are_never_mutated():
    wire = [{"role": "system", "content": "s"}, {"role": "tool", "tool_call_id": "c", "content": "out"}]
    before = copy.deepcopy(wire)
    new_wire, outcome = apply_reminders(wire, policy(), BUSY)
    assert wire == before
    assert outcome.appended_text and new_wire[-1]["content"].endswith("</system-reminder>")
    assert all(new is not old for new, old in zip(new_wire, wire, strict=True))


def test_an_owned_wire_keeps_its_messages_and_only_the_last_is_replaced():
    wire = [{"role": "system", "content": "s"}, {"role": "tool", "tool_call_id": "c", "content": "out"}]
    before = copy.deepcopy(wire)
    new_wire, outcome = apply_reminders(wire, policy(), BUSY, owned=True)
    assert wire == before and new_wire is not wire
    assert new_wire[0] is wire[0] and new_wire[1] is not wire[1]
    assert new_wire[1]["content"] == "out" + outcome.appended_text
