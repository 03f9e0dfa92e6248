"""linnkit 0.21's built-in trigger kinds and content templates, ported line for line.

Triggers take `(ctx, trigger)` where `trigger` is the serialisable camelCase dict of a rule
(`{kind, threshold?, value?, moduloStep?, toolName?, period?, minStep?, ratio?, config?}`); templates take
`(ctx, args)` with the rule's `contentArgs` (or `None`). The template copy is linnkit's Chinese text, byte
for byte: the conformance cases compare it exactly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

from engine.reminders.context import ReminderContext, display_step, js_trim

TriggerFn = Callable[[ReminderContext, Mapping[str, Any]], bool]
TemplateFn = Callable[[ReminderContext, Mapping[str, Any] | None], str]


def _number(value: Any) -> float | int | None:
    """A finite JS number, else None (booleans are not numbers in JS)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def _string(value: Any) -> str | None:
    """A non-blank string, trimmed, else None."""
    return js_trim(value) if isinstance(value, str) and js_trim(value) else None


def _js_mod_is_zero(value: float, divisor: float) -> bool:
    return math.fmod(value, divisor) == 0


# -- triggers ---------------------------------------------------------------------------------------


def phase_equals(ctx: ReminderContext, trigger: Mapping[str, Any]) -> bool:
    expected = _string(trigger.get("value"))
    return expected is not None and ctx.phase == expected


def remaining_steps_leq(ctx: ReminderContext, trigger: Mapping[str, Any]) -> bool:
    threshold = _number(trigger.get("threshold"))
    if threshold is None:
        threshold = _number(ctx.last_steps_hint_threshold)
    remaining = _number(ctx.remaining_steps)
    if remaining is None or threshold is None or threshold <= 0:
        return False
    return ctx.phase != "force_final_answer" and remaining <= threshold


def step_count_modulo(ctx: ReminderContext, trigger: Mapping[str, Any]) -> bool:
    step = _number(ctx.step_count)
    period = _number(trigger.get("period"))
    if period is None:
        period = _number(trigger.get("threshold"))
    min_step = _number(trigger.get("minStep"))
    if min_step is None:
        min_step = period
    if step is None or period is None or period <= 0 or ctx.phase == "force_final_answer":
        return False
    return step >= min_step and _js_mod_is_zero(step, period)


def tool_call_streak(ctx: ReminderContext, trigger: Mapping[str, Any]) -> bool:
    threshold = _number(trigger.get("threshold"))
    if threshold is None:
        threshold = 10
    if threshold <= 0 or ctx.streak < threshold:
        return False
    return trigger.get("moduloStep") is False or _js_mod_is_zero(ctx.streak, threshold)


def budget_warning(ctx: ReminderContext, trigger: Mapping[str, Any]) -> bool:
    tool_name = _string(trigger.get("toolName")) or ctx.checkpoint_tool_name
    if tool_name not in ctx.available_tools:
        return False
    step, max_steps = _number(ctx.step_count), _number(ctx.max_steps)
    ratio = _number(trigger.get("ratio"))
    if ratio is None:
        ratio = 0.9
    if step is None or max_steps is None or max_steps <= 0 or ctx.phase == "force_final_answer":
        return False
    threshold = math.floor(max_steps * ratio)
    return threshold <= step < threshold + 4


def agent_has_tool(ctx: ReminderContext, trigger: Mapping[str, Any]) -> bool:
    tool_name = _string(trigger.get("toolName")) or _string(trigger.get("value"))
    return tool_name is not None and tool_name in ctx.available_tools


BUILTIN_TRIGGERS: dict[str, TriggerFn] = {
    "phase-equals": phase_equals,
    "remaining-steps-leq": remaining_steps_leq,
    "step-count-modulo": step_count_modulo,
    "tool-call-streak": tool_call_streak,
    "budget-warning": budget_warning,
    "agent-has-tool": agent_has_tool,
}

# -- templates --------------------------------------------------------------------------------------


def max_steps_force_final_answer(ctx: ReminderContext, args: Mapping[str, Any] | None) -> str:
    return "\n".join(
        [
            "你已达到最大步数限制：本轮工具已被禁用。",
            "你必须立刻给出最终答案，不要再尝试调用任何工具。",
            "若信息不完整，请明确说明关键假设和缺口，并给出当前最好的可用回答。",
        ]
    )


def last_steps_hint(ctx: ReminderContext, args: Mapping[str, Any] | None) -> str:
    remaining = ctx.remaining_steps if ctx.remaining_steps is not None else ctx.max_steps - ctx.step_count
    first = (
        f"步数提醒：你当前处于第 {display_step(ctx.step_count)}/{display_step(ctx.max_steps)} 步，"
        f"还剩 {display_step(remaining)} 步。"
    )
    if (ctx.final_step_policy or "final_answer") == "force_tools":
        forced = [js_trim(t) for t in ctx.final_step_forced_tools if isinstance(t, str) and js_trim(t)]
        tools_text = ", ".join(forced) if forced else "(未配置 forcedTools)"
        return "\n".join(
            [
                first,
                f"当剩余 1 步时：你必须立刻调用工具：{tools_text}（系统将只保留这些工具）。",
                "最后 1 步将用于执行工具，因此不要在最后一步才尝试再调用其他工具。",
            ]
        )
    return "\n".join([first, "建议你结束无关推理/无关工具调用，确保在步数耗尽前完成任务。"])


def tool_call_streak_text(ctx: ReminderContext, args: Mapping[str, Any] | None) -> str:
    return "\n".join(
        [
            f"你已连续执行了 {ctx.streak} 次工具调用。",
            "如果问题比较复杂，考虑创建sub-agent，也就是task，以降低上下文占用。",
            "如果问题即将解决，请忽略本条提醒。",
        ]
    )


def periodic_taskstate_reflection(ctx: ReminderContext, args: Mapping[str, Any] | None) -> str:
    return "\n".join(
        [
            f"你已执行了 {display_step(ctx.step_count)} 步。请暂停当前工作，花一步反思和整理：",
            "1. 回顾你最近的 taskstate_write 输出，确认当前工作方向正确（没有偏离 Goal）。",
            "2. 调用 taskstate_write 更新 progress 和 next_steps，如有必要调整 current_plan。",
            "3. 如果任务复杂但尚未创建 TaskState，现在是创建的好时机。",
            "完成整理后继续执行任务。",
        ]
    )


def context_budget_warning(ctx: ReminderContext, args: Mapping[str, Any] | None) -> str:
    step, top = display_step(ctx.step_count), display_step(ctx.max_steps)
    return "\n".join(
        [
            f"⚠️ 上下文预算告警：你已执行了 {step}/{top} 步，上下文空间即将耗尽。",
            "你必须立即执行以下操作以避免上下文溢出：",
            "1. 先确认关键进展、约束、下一步已经进入 TaskState；如果没有，请调用 taskstate_write 更新。",
            f"2. 调用 {ctx.checkpoint_tool_name} 工具，"
            "传入 summary（阶段过渡摘要）和 taskstate（最新任务状态）。",
            '   这会一次性完成"保存状态 + 清理历史"，checkpoint tool_output 中会保留你的 TaskState 快照。',
            "3. 清理后你的上下文将只保留：checkpoint 工具对（含摘要 + TaskState）+ 最近 2 对工具交互。"
            "需要长期交付给用户的内容请写入 Workspace 文件。",
        ]
    )


BUILTIN_TEMPLATES: dict[str, TemplateFn] = {
    "maxStepsForceFinalAnswer": max_steps_force_final_answer,
    "lastStepsHint": last_steps_hint,
    "toolCallStreak": tool_call_streak_text,
    "periodicTaskstateReflection": periodic_taskstate_reflection,
    "contextBudgetWarning": context_budget_warning,
}
