"""System reminders (spec §5.7): transient `<system-reminder>` text appended to the last wire message.

`ReminderContext` is the tick state; `ReminderRegistry` interprets trigger kinds and content templates
(`default_registry()` holds linnkit's built-ins); `resolve_rules` / `check_reminder_policy` turn the
`systemReminder` policy into rules; `apply_reminders` is the stage the build runs after formatting.
"""

from engine.reminders.context import (
    DEFAULT_CHECKPOINT_TOOL_NAME,
    DEFAULT_MAX_STEPS,
    ReminderContext,
    derive_phase,
    display_step,
)
from engine.reminders.policy import (
    BUILTIN_RULE_IDS,
    builtin_rule_definitions,
    check_reminder_policy,
    reminder_policy_dict,
    reminder_policy_warnings,
    resolve_rules,
    selected_rule_definitions,
)
from engine.reminders.registry import ReminderConfigError, ReminderRegistry, Rule, default_registry
from engine.reminders.stage import (
    ReminderEvaluation,
    apply_reminders,
    evaluate_rules,
    reminder_block,
    reminder_context,
)

__all__ = [
    "BUILTIN_RULE_IDS",
    "DEFAULT_CHECKPOINT_TOOL_NAME",
    "DEFAULT_MAX_STEPS",
    "ReminderConfigError",
    "ReminderContext",
    "ReminderEvaluation",
    "ReminderRegistry",
    "Rule",
    "apply_reminders",
    "builtin_rule_definitions",
    "check_reminder_policy",
    "reminder_policy_warnings",
    "default_registry",
    "derive_phase",
    "display_step",
    "evaluate_rules",
    "reminder_block",
    "reminder_context",
    "reminder_policy_dict",
    "resolve_rules",
    "selected_rule_definitions",
]
