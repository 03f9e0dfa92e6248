"""Copy sets: the words linnkit writes into the context, in Chinese (linnkit's own, the default) or English.

linnkit 0.21 writes its built-in reminder templates and its tool summaries (the compressed text of old tool
calls, the summaries of oversized outputs) in Chinese. A host may replace the reminder templates by
registering its own under the same names (`SystemReminderRegistry.registerContentTemplate`); the tool
summaries have no such hook in 0.21, so English tool summaries exist only in the playground.

`build_context(..., copy="en")` builds with the English set: the reminder registry gets the English
templates and the tool summaries are written in English; cards carrying such text are marked `copy:en`.
`host_registration("en")` is the TypeScript a linnkit host writes to send the same reminder copy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import replace
from typing import Any

from engine.reminders.context import ReminderContext, display_step, js_trim
from engine.reminders.registry import default_registry

COPY_SETS = ("zh", "en")
DEFAULT_COPY = "zh"

# Tool summaries, keyed by what they describe. The Chinese set is linnkit's text, byte for byte.
_SUMMARIES: dict[str, dict[str, str]] = {
    "zh": {
        "no_output": "无输出",
        "images": "生成了 {count} 张图片。",
        "empty_array": "返回了空数组",
        "array": "返回了{count}个结果, 前几个是: [{items}{more}]",
        "empty_object": "返回了空对象",
        "object": "返回了包含[{keys}{more}]等{count}个字段的对象",
        "text": '返回了{length}字符的文本, 开头是: "{head}...", 结尾是: "...{tail}"',
        "call": "我已经调用了工具「{name}」{args}，并得到了结果：{results}",
        "call_args": "（参数：{args}）",
        "result_separator": "；",
        "call_separator": "；",
        "run_end": "，我需要思考下一步行动",
    },
    "en": {
        "no_output": "no output",
        "images": "generated {count} image(s).",
        "empty_array": "returned an empty array",
        "array": "returned {count} results, the first: [{items}{more}]",
        "empty_object": "returned an empty object",
        "object": "returned an object with {count} fields [{keys}{more}]",
        "text": 'returned {length} characters of text, starting "{head}...", ending "...{tail}"',
        "call": 'I called the tool "{name}"{args} and got: {results}',
        "call_args": " (arguments: {args})",
        "result_separator": "; ",
        "call_separator": "; ",
        "run_end": "; now I need to think about the next step",
    },
}

_ACTIVE: ContextVar[str] = ContextVar("linn_copy", default=DEFAULT_COPY)


def check_copy(name: str) -> str:
    if name not in COPY_SETS:
        raise ValueError(f"unknown copy set {name!r}; choose one of {', '.join(COPY_SETS)}")
    return name


@contextmanager
def use_copy(name: str) -> Iterator[None]:
    """Write tool summaries in the copy set `name` inside the block."""
    token = _ACTIVE.set(check_copy(name))
    try:
        yield
    finally:
        _ACTIVE.reset(token)


def active_copy() -> str:
    return _ACTIVE.get()


def summary_text(key: str, **values: Any) -> str:
    """One tool-summary phrase in the active copy set."""
    template = _SUMMARIES[_ACTIVE.get()][key]
    return template.format(**values) if values else template


def summary_templates() -> Mapping[str, str]:
    """The active copy set's tool-summary templates, for a caller writing many phrases in a row."""
    return _SUMMARIES[_ACTIVE.get()]


# -- English reminder templates (same names and numbers as linnkit's built-ins) ----------------------


def _max_steps_force_final_answer(ctx: ReminderContext, args: Mapping[str, Any] | None) -> str:
    return "\n".join(
        [
            "You have reached the step limit: tools are disabled for this turn.",
            "Give your final answer now; do not try to call any tool.",
            "If information is missing, state the key assumptions and gaps and give the best answer you can.",
        ]
    )


_FINISH_IN_TIME = "Stop unrelated reasoning and tool calls; finish the task before the steps run out."


def _last_steps_hint(ctx: ReminderContext, args: Mapping[str, Any] | None) -> str:
    remaining = ctx.remaining_steps if ctx.remaining_steps is not None else ctx.max_steps - ctx.step_count
    first = (
        f"Step reminder: you are at step {display_step(ctx.step_count)}/{display_step(ctx.max_steps)}, "
        f"{display_step(remaining)} left."
    )
    if (ctx.final_step_policy or "final_answer") == "force_tools":
        forced = [js_trim(t) for t in ctx.final_step_forced_tools if isinstance(t, str) and js_trim(t)]
        tools_text = ", ".join(forced) if forced else "(no forcedTools configured)"
        return "\n".join(
            [
                first,
                f"With 1 step left you must call these tools at once: {tools_text} (only they will remain).",
                "The last step runs the tools, so do not wait for it to call any other tool.",
            ]
        )
    return "\n".join([first, _FINISH_IN_TIME])


def _tool_call_streak(ctx: ReminderContext, args: Mapping[str, Any] | None) -> str:
    return "\n".join(
        [
            f"You have made {ctx.streak} tool calls in a row.",
            "If the problem is complex, consider a sub-agent (a task) to keep the context small.",
            "If the problem is nearly solved, ignore this reminder.",
        ]
    )


def _periodic_taskstate_reflection(ctx: ReminderContext, args: Mapping[str, Any] | None) -> str:
    return "\n".join(
        [
            f"You have taken {display_step(ctx.step_count)} steps. Pause and spend one step reflecting:",
            "1. Re-read your latest taskstate_write output and check you are still on the Goal.",
            "2. Call taskstate_write to update progress and next_steps; adjust current_plan if needed.",
            "3. If the task is complex and has no TaskState yet, now is a good time to create one.",
            "Then continue the task.",
        ]
    )


def _context_budget_warning(ctx: ReminderContext, args: Mapping[str, Any] | None) -> str:
    step, top = display_step(ctx.step_count), display_step(ctx.max_steps)
    return "\n".join(
        [
            f"⚠️ Context budget warning: you have taken {step}/{top} steps and the context is nearly full.",
            "Do this now to avoid a context overflow:",
            "1. Make sure key progress, constraints and next steps are in the TaskState; "
            "if not, call taskstate_write.",
            f"2. Call the {ctx.checkpoint_tool_name} tool with a summary (a phase-transition summary) "
            "and taskstate (the latest task state).",
            "   This saves the state and clears the history in one go; the checkpoint tool_output keeps "
            "your TaskState snapshot.",
            "3. Afterwards your context keeps only the checkpoint tool pair (summary + TaskState) and the "
            "last 2 tool interactions. Write anything the user needs long-term to Workspace files.",
        ]
    )


ENGLISH_TEMPLATES = {
    "maxStepsForceFinalAnswer": _max_steps_force_final_answer,
    "lastStepsHint": _last_steps_hint,
    "toolCallStreak": _tool_call_streak,
    "periodicTaskstateReflection": _periodic_taskstate_reflection,
    "contextBudgetWarning": _context_budget_warning,
}


def reminder_registry_for(name: str) -> Any:
    """linnkit's default registry with the built-in templates in copy set `name`."""
    registry = default_registry()
    if check_copy(name) == "en":
        for template, fn in ENGLISH_TEMPLATES.items():
            registry.register_content_template(template, fn)
    return registry


_WORDED_MARKS = frozenset({"compressed", "truncated", "reminder"})  # cards whose text this module wrote


def mark_copy(result: Any, name: str) -> Any:
    """`result` with `copy:<name>` on each wire card carrying tool summaries or a built-in reminder."""
    mark = f"copy:{name}"
    cards = tuple(
        replace(card, marks=(*card.marks, mark)) if _WORDED_MARKS.intersection(card.marks) else card
        for card in result.cards
    )
    return replace(result, cards=cards)


# -- export: what a linnkit host writes ---------------------------------------------------------------

_TS_TEMPLATES = {
    "maxStepsForceFinalAnswer": """() => [
    'You have reached the step limit: tools are disabled for this turn.',
    'Give your final answer now; do not try to call any tool.',
    'If information is missing, state the key assumptions and gaps and give the best answer you can.',
  ].join('\\n')""",
    "lastStepsHint": """(ctx) => {
    const step = (n: number) => Math.ceil(n / 2);
    const remaining = ctx.remainingSteps ?? ctx.maxSteps - ctx.stepCount;
    const first =
      `Step reminder: you are at step ${step(ctx.stepCount)}/${step(ctx.maxSteps)}, ` +
      `${step(remaining)} left.`;
    if ((ctx.finalStepPolicy ?? 'final_answer') === 'force_tools') {
      const forced = (ctx.finalStepForcedTools ?? []).map((t) => t.trim()).filter(Boolean);
      const tools = forced.length ? forced.join(', ') : '(no forcedTools configured)';
      return [
        first,
        `With 1 step left you must call these tools at once: ${tools} (only they will remain).`,
        'The last step runs the tools, so do not wait for it to call any other tool.',
      ].join('\\n');
    }
    return [
      first,
      'Stop unrelated reasoning and tool calls; finish the task before the steps run out.',
    ].join('\\n');
  }""",
    "toolCallStreak": """(ctx) => [
    `You have made ${ctx.streak} tool calls in a row.`,
    'If the problem is complex, consider a sub-agent (a task) to keep the context small.',
    'If the problem is nearly solved, ignore this reminder.',
  ].join('\\n')""",
    "periodicTaskstateReflection": """(ctx) => [
    `You have taken ${Math.ceil(ctx.stepCount / 2)} steps. Pause and spend one step reflecting:`,
    '1. Re-read your latest taskstate_write output and check you are still on the Goal.',
    '2. Call taskstate_write to update progress and next_steps; adjust current_plan if needed.',
    '3. If the task is complex and has no TaskState yet, now is a good time to create one.',
    'Then continue the task.',
  ].join('\\n')""",
    "contextBudgetWarning": """(ctx) => [
    `⚠️ Context budget warning: you have taken ${Math.ceil(ctx.stepCount / 2)}/` +
      `${Math.ceil(ctx.maxSteps / 2)} steps and the context is nearly full.`,
    'Do this now to avoid a context overflow:',
    '1. Make sure key progress, constraints and next steps are in the TaskState; ' +
      'if not, call taskstate_write.',
    `2. Call the ${ctx.contextCheckpointToolName} tool with a summary (a phase-transition summary) ` +
      'and taskstate (the latest task state).',
    '   This saves the state and clears the history in one go; the checkpoint tool_output keeps ' +
      'your TaskState snapshot.',
    '3. Afterwards your context keeps only the checkpoint tool pair (summary + TaskState) and the ' +
      'last 2 tool interactions. Write anything the user needs long-term to Workspace files.',
  ].join('\\n')""",
}


def host_registration(name: str = "en") -> str:
    """TypeScript for a linnkit host: register copy set `name`'s reminder templates over the built-ins."""
    if check_copy(name) == "zh":
        return "// The Chinese copy is linnkit's built-in: nothing to register.\n"
    lines = [
        "// English copy for linnkit's built-in system reminders (exported by linn-playground).",
        "// Register on the host's SystemReminderRegistry before building the agent; the names replace",
        "// the built-in templates. linnkit 0.21 has no hook for its tool summaries: they stay Chinese.",
        "export function registerEnglishReminderCopy(registry: SystemReminderRegistry): void {",
    ]
    for template, body in _TS_TEMPLATES.items():
        lines.append(f"  registry.registerContentTemplate('{template}', {body});")
    lines.append("}")
    return "\n".join(lines) + "\n"
