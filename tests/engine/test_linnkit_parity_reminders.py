"""linnkit 0.21.0's own tests of the system-reminder stage (runtime-kernel/system-reminder/__tests__/
apply.test.ts), as scenarios our engine runs (each test names the linnkit test it follows)."""

from __future__ import annotations

from engine.policy.merge import define_context_policy
from engine.reminders import default_registry
from engine.reminders.context import ReminderContext
from engine.reminders.stage import apply_reminders

TOOLS = ("context_checkpoint", "phase_checkpoint")
WIRE = [{"role": "user", "content": "继续"}]


def apply(system_reminder: dict, ctx: ReminderContext, registry=None):
    policy = define_context_policy({"systemReminder": system_reminder}).system_reminder
    return apply_reminders(WIRE, policy, ctx, registry)


# "按 systemReminder.enabledRuleIds 只启用指定规则": only last_steps_hint is allowed, and it never fires in
# the force_final_answer phase, so nothing is appended (max_steps_force_final_answer is not enabled)
def test_enabled_rule_ids_allow_only_the_listed_rules():
    ctx = ReminderContext(10, 10, available_tools=TOOLS)
    wire, outcome = apply(
        {"enabledRuleIds": ["last_steps_hint"], "thresholds": {"lastStepsHintThreshold": 2}}, ctx
    )
    assert ctx.phase == "force_final_answer"
    assert (wire, outcome.hit_rule_ids, outcome.appended_text) == (WIRE, (), None)


# "按 systemReminder.thresholds 覆盖工具调用连续提醒阈值": a streak of 2 fires with toolCallStreak 2
def test_tool_call_streak_threshold_override():
    ctx = ReminderContext(2, 20, available_tools=TOOLS, streak=2)
    wire, outcome = apply(
        {"enabledRuleIds": ["tool_call_streak_every_ten"], "thresholds": {"toolCallStreak": 2}}, ctx
    )
    assert outcome.hit_rule_ids == ("tool_call_streak_every_ten",)
    assert "你已连续执行了 2 次工具调用" in wire[0]["content"]
    assert wire[0]["content"].startswith("继续\n\n<system-reminder>\n- ")


# "支持通过注册表解释 host extraRules"
def test_host_extra_rules_through_the_registry():
    registry = default_registry()
    registry.register_trigger_kind("always", lambda ctx, trigger: True)
    registry.register_content_template(
        "customTemplate", lambda ctx, args: f"自定义提醒：{(args or {}).get('name', '')}"
    )
    rule = {
        "id": "custom_rule",
        "trigger": {"kind": "always"},
        "contentTemplate": "customTemplate",
        "contentArgs": {"name": "memory"},
    }
    wire, outcome = apply({"enabledRuleIds": [], "extraRules": [rule]}, ReminderContext(1), registry)
    assert outcome.hit_rule_ids == ("custom_rule",)
    assert wire[0]["content"] == "继续\n\n<system-reminder>\n- 自定义提醒：memory\n</system-reminder>"


# "上下文预算提醒使用 executorLocal.contextCheckpointToolName"
def test_budget_warning_names_the_configured_checkpoint_tool():
    ctx = ReminderContext(18, 20, context_checkpoint_tool_name="phase_checkpoint", available_tools=TOOLS)
    wire, outcome = apply(
        {"enabledRuleIds": ["context_budget_warning"], "thresholds": {"budgetWarningRatio": 0.9}}, ctx
    )
    assert outcome.hit_rule_ids == ("context_budget_warning",)
    assert "调用 phase_checkpoint 工具" in wire[0]["content"]
