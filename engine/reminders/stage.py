"""The reminder stage: evaluate the rules for one tick and append one `<system-reminder>` block to the
last wire message (spec §5.7, linnkit `applySystemReminders`). History is never touched: the input list
and its dicts stay as they were, the result is a new list of new dicts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.reminders.context import DEFAULT_CHECKPOINT_TOOL_NAME, ReminderContext, js_trim
from engine.reminders.policy import resolve_rules
from engine.reminders.registry import ReminderRegistry, Rule
from engine.result import ReminderOutcome


@dataclass(frozen=True, slots=True)
class ReminderEvaluation:
    """Rules that fired with their text, and rules skipped because they raised or produced no text."""

    hits: tuple[tuple[str, str], ...] = ()
    skipped: tuple[tuple[str, str], ...] = ()


def reminder_context(tick: Any, messages: Sequence[Any], policy: Any) -> ReminderContext:
    """The context for a build: `tick` (an `engine.ticks.TickState`), the streak of `messages` (the input
    list, before preprocessing) and the policy's `checkpoint.triggerToolName`."""
    checkpoint = getattr(getattr(policy, "checkpoint", None), "trigger_tool_name", None)
    return tick.reminder_context(messages, checkpoint_tool_name=checkpoint or DEFAULT_CHECKPOINT_TOOL_NAME)


def evaluate_rules(rules: Sequence[Rule], ctx: ReminderContext) -> ReminderEvaluation:
    """Evaluate in order. As in linnkit, the first rule of an id that *fires* claims the id; a trigger
    that raises counts as not firing, a template that raises or returns blank text is skipped."""
    claimed: set[str] = set()
    hits: list[tuple[str, str]] = []
    skipped: list[tuple[str, str]] = []
    for rule in rules:
        if not js_trim(rule.id) or rule.id in claimed:
            continue
        try:
            fired = rule.fires(ctx)
        except Exception as exc:  # host trigger code: a failure skips the rule, as in linnkit
            skipped.append((rule.id, f"trigger raised {type(exc).__name__}: {exc}"))
            continue
        if not fired:
            continue
        claimed.add(rule.id)
        try:
            built = rule.text(ctx)
        except Exception as exc:  # host template code: same
            skipped.append((rule.id, f"template raised {type(exc).__name__}: {exc}"))
            continue
        text = js_trim(built) if isinstance(built, str) else ""
        if text:
            hits.append((rule.id, text))
        else:
            skipped.append((rule.id, "template produced no text"))
    return ReminderEvaluation(tuple(hits), tuple(skipped))


def reminder_block(texts: Sequence[str]) -> str:
    """`<system-reminder>` with one `- ` item per text, continuation lines indented by two spaces."""
    body = "\n".join("- " + text.replace("\n", "\n  ") for text in texts)
    return f"<system-reminder>\n{body}\n</system-reminder>"


def apply_reminders(
    wire: Sequence[Mapping[str, Any]],
    policy_system_reminder: Any,
    ctx: ReminderContext,
    registry: ReminderRegistry | None = None,
    *,
    owned: bool = False,
) -> tuple[list[dict[str, Any]], ReminderOutcome]:
    """Append the fired reminders to the last wire message; returns the new wire and what was added. The
    given wire is not changed: its messages are copied to new dicts, or with `owned` (a list of dicts its
    caller made and hands over, as a build does) only the last is replaced by a new dict.

    Raises `ReminderConfigError` for a rule the registry cannot interpret, before reading the wire.
    Content that is not a string (null) counts as `""`, as in linnkit.
    """
    rules = resolve_rules(policy_system_reminder, registry)
    if owned:  # the build's own new dicts: only the last is replaced
        new_wire = list(wire)
    else:
        new_wire = [dict(message) if isinstance(message, Mapping) else message for message in wire]
    if not new_wire or not isinstance(new_wire[-1], dict):
        return new_wire, ReminderOutcome()
    evaluation = evaluate_rules(rules, ctx)
    if not evaluation.hits:
        return new_wire, ReminderOutcome()
    last = new_wire[-1]
    current = last.get("content") if isinstance(last.get("content"), str) else ""
    glue = "\n\n" if current and not current.endswith("\n") else "\n"
    appended = glue + reminder_block([text for _, text in evaluation.hits])
    new_wire[-1] = {**last, "content": current + appended}
    outcome = ReminderOutcome(
        hit_rule_ids=tuple(rule_id for rule_id, _ in evaluation.hits),
        texts=dict(evaluation.hits),
        appended_text=appended,
    )
    return new_wire, outcome
