"""Which reminder rules run: the five built-ins with threshold overrides and selection, then `extraRules`.

The policy may be the pydantic `SystemReminderPolicy`, any object with its snake_case attributes, or the
camelCase dict linnkit serialises; `reminder_policy_dict` turns all three into the camelCase dict.
An extra rule whose trigger kind or content template the registry lacks is dropped, as linnkit drops it (a
build never fails on one); `reminder_policy_warnings` names each such field so front ends can say so. A rule
that is malformed (not an object, no id, arguments that are not JSON) raises `ReminderConfigError`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from engine.reminders.registry import ReminderConfigError, ReminderRegistry, Rule, default_registry

BUILTIN_RULE_IDS = (
    "max_steps_force_final_answer",
    "last_steps_hint",
    "tool_call_streak_every_ten",
    "periodic_taskstate_reflection",
    "context_budget_warning",
)

# rule id -> (thresholds key, trigger fields it sets)
_THRESHOLD_TARGETS: dict[str, tuple[str, tuple[str, ...]]] = {
    "last_steps_hint": ("lastStepsHintThreshold", ("threshold",)),
    "tool_call_streak_every_ten": ("toolCallStreak", ("threshold",)),
    "periodic_taskstate_reflection": ("taskstateReflectionPeriod", ("period", "minStep")),
    "context_budget_warning": ("budgetWarningRatio", ("ratio",)),
}

_THRESHOLD_ATTRS = {
    "tool_call_streak": "toolCallStreak",
    "taskstate_reflection_period": "taskstateReflectionPeriod",
    "budget_warning_ratio": "budgetWarningRatio",
    "last_steps_hint_threshold": "lastStepsHintThreshold",
}
_TRIGGER_ATTRS = {
    "kind": "kind",
    "threshold": "threshold",
    "value": "value",
    "modulo_step": "moduloStep",
    "tool_name": "toolName",
    "period": "period",
    "min_step": "minStep",
    "ratio": "ratio",
    "config": "config",
}
_RULE_ATTRS = {
    "id": "id",
    "trigger": "trigger",
    "content_template": "contentTemplate",
    "content_args": "contentArgs",
}


def builtin_rule_definitions() -> list[dict[str, Any]]:
    """linnkit's built-in rules in evaluation order, as fresh serialisable dicts."""
    return [
        {
            "id": "max_steps_force_final_answer",
            "trigger": {"kind": "phase-equals", "value": "force_final_answer"},
            "contentTemplate": "maxStepsForceFinalAnswer",
        },
        {
            "id": "last_steps_hint",
            "trigger": {"kind": "remaining-steps-leq"},
            "contentTemplate": "lastStepsHint",
        },
        {
            "id": "tool_call_streak_every_ten",
            "trigger": {"kind": "tool-call-streak", "threshold": 10, "moduloStep": True},
            "contentTemplate": "toolCallStreak",
        },
        {
            "id": "periodic_taskstate_reflection",
            "trigger": {"kind": "step-count-modulo", "period": 30, "minStep": 30},
            "contentTemplate": "periodicTaskstateReflection",
        },
        {
            "id": "context_budget_warning",
            "trigger": {"kind": "budget-warning", "ratio": 0.9},
            "contentTemplate": "contextBudgetWarning",
        },
    ]


# -- the policy, whatever its form -------------------------------------------------------------------


def reminder_policy_dict(policy: Any) -> dict[str, Any]:
    """The `systemReminder` group as linnkit's camelCase dict (unset fields absent)."""
    if policy is None:
        return {}
    if hasattr(policy, "model_dump"):
        return policy.model_dump(by_alias=True, exclude_none=True)
    if isinstance(policy, Mapping):
        return dict(policy)
    out: dict[str, Any] = {}
    for attr, key in (("enabled_rule_ids", "enabledRuleIds"), ("disabled_rule_ids", "disabledRuleIds")):
        if getattr(policy, attr, None) is not None:
            out[key] = list(getattr(policy, attr))
    thresholds = getattr(policy, "thresholds", None)
    if thresholds is not None:
        out["thresholds"] = _attrs_to_dict(thresholds, _THRESHOLD_ATTRS)
    extra = getattr(policy, "extra_rules", None)
    if extra is not None:
        out["extraRules"] = [_rule_to_dict(rule) for rule in extra]
    return out


def _rule_to_dict(rule: Any) -> Any:
    if hasattr(rule, "model_dump"):
        return rule.model_dump(by_alias=True, exclude_none=True)
    if isinstance(rule, Mapping):
        return dict(rule)
    out = _attrs_to_dict(rule, _RULE_ATTRS)
    trigger = out.get("trigger")
    if trigger is not None and not isinstance(trigger, Mapping):
        out["trigger"] = (
            _rule_to_dict(trigger)
            if hasattr(trigger, "model_dump")
            else _attrs_to_dict(trigger, _TRIGGER_ATTRS)
        )
    return out


def _attrs_to_dict(obj: Any, names: Mapping[str, str]) -> dict[str, Any]:
    if isinstance(obj, Mapping):
        return dict(obj)
    return {key: getattr(obj, attr) for attr, key in names.items() if getattr(obj, attr, None) is not None}


# -- selection --------------------------------------------------------------------------------------


def selected_rule_definitions(policy: Any) -> list[dict[str, Any]]:
    """Built-ins (thresholds applied, allow/deny list) followed by `extraRules`, in evaluation order."""
    view = reminder_policy_dict(policy)
    return _selected_builtins(view) + [
        dict(rule) if isinstance(rule, Mapping) else rule for rule in _extra(view)
    ]


def _selected_builtins(view: Mapping[str, Any]) -> list[dict[str, Any]]:
    thresholds = view.get("thresholds") or {}
    builtins = [_with_threshold(rule, thresholds) for rule in builtin_rule_definitions()]
    enabled = view.get("enabledRuleIds")
    if isinstance(enabled, Sequence) and not isinstance(enabled, str):
        allow = set(enabled)
        return [rule for rule in builtins if rule["id"] in allow]
    deny = set(view.get("disabledRuleIds") or ())
    return [rule for rule in builtins if rule["id"] not in deny]


def _extra(view: Mapping[str, Any]) -> list[Any]:
    return list(view.get("extraRules") or [])


def _with_threshold(rule: dict[str, Any], thresholds: Mapping[str, Any]) -> dict[str, Any]:
    target = _THRESHOLD_TARGETS.get(rule["id"])
    if target is None or thresholds.get(target[0]) is None:
        return rule
    value = thresholds[target[0]]
    return {**rule, "trigger": {**rule["trigger"], **dict.fromkeys(target[1], value)}}


# -- checking and resolving -------------------------------------------------------------------------


def check_reminder_policy(policy: Any, registry: ReminderRegistry | None = None) -> None:
    """Raise `ReminderConfigError` for a built-in the registry lacks or a malformed extra rule."""
    registry = registry or default_registry()
    view = reminder_policy_dict(policy)
    for rule in _selected_builtins(view):
        kind, template = rule["trigger"]["kind"], rule["contentTemplate"]
        if registry.trigger(kind) is None or registry.template(template) is None:
            raise ReminderConfigError(
                f"systemReminder: built-in rule '{rule['id']}' needs trigger kind '{kind}' "
                f"and template '{template}', which this registry lacks"
            )
    for index, rule in enumerate(_extra(view)):
        _check_extra_rule(f"systemReminder.extraRules[{index}]", rule)


DROPPED = "; the rule is dropped, as linnkit drops it"


# With the default registry, a frozen (pydantic) policy group always resolves to the same rules and warnings;
# every build (each replay step) asks again, so the answers are kept per group object.
_MEMO: list[tuple[str, Any, Any]] = []


def _memoised(kind: str, policy: Any, registry: ReminderRegistry | None, make: Callable[[], Any]) -> Any:
    config = getattr(policy, "model_config", None)
    if registry is not None or not isinstance(config, Mapping) or not config.get("frozen"):
        return make()
    for held_kind, held, value in _MEMO:
        if held_kind == kind and held is policy:
            return value
    value = make()
    _MEMO.insert(0, (kind, policy, value))
    del _MEMO[8:]
    return value


def reminder_policy_warnings(policy: Any, registry: ReminderRegistry | None = None) -> list[str]:
    """One line per extra rule that is dropped because its trigger kind or template is unknown."""
    return list(_memoised("warnings", policy, registry, lambda: _policy_warnings(policy, registry)))


def _policy_warnings(policy: Any, registry: ReminderRegistry | None) -> list[str]:
    registry = registry or default_registry()
    warnings = []
    for index, rule in enumerate(_extra(reminder_policy_dict(policy))):
        if not isinstance(rule, Mapping):
            continue
        path = f"systemReminder.extraRules[{index}]"
        problem = _unknown_part(rule, registry)
        if problem == "kind":
            known = ", ".join(registry.trigger_kinds)
            kind = rule["trigger"]["kind"]
            warnings.append(f"{path}.trigger.kind: unknown trigger kind '{kind}' (known: {known}){DROPPED}")
        elif problem == "template":
            known = ", ".join(registry.content_templates)
            template = rule.get("contentTemplate")
            warnings.append(f"{path}.contentTemplate: unknown content template '{template}' (known: {known})"
                            + DROPPED)
    return warnings


def _unknown_part(rule: Mapping[str, Any], registry: ReminderRegistry) -> str | None:
    trigger = rule.get("trigger")
    kind = trigger.get("kind") if isinstance(trigger, Mapping) else None
    if not isinstance(kind, str) or registry.trigger(kind) is None:
        return "kind"
    template = rule.get("contentTemplate")
    if not isinstance(template, str) or registry.template(template) is None:
        return "template"
    return None


def _check_extra_rule(path: str, rule: Any) -> None:
    if not isinstance(rule, Mapping):
        raise ReminderConfigError(f"{path}: must be an object")
    if not isinstance(rule.get("id"), str) or not rule["id"].strip():
        raise ReminderConfigError(f"{path}.id: must be a non-empty string")
    trigger = rule.get("trigger")
    if not isinstance(trigger, Mapping) or not isinstance(trigger.get("kind"), str):
        raise ReminderConfigError(f"{path}.trigger: must be an object with a string 'kind'")
    args = rule.get("contentArgs")
    if args is not None and not isinstance(args, Mapping):
        raise ReminderConfigError(f"{path}.contentArgs: must be an object")
    for key, value in (("trigger", trigger), ("contentArgs", args)):
        try:
            json.dumps(value, allow_nan=False)
        except (TypeError, ValueError) as exc:
            raise ReminderConfigError(f"{path}.{key}: must be JSON-serialisable ({exc})") from exc


def resolve_rules(policy: Any, registry: ReminderRegistry | None = None) -> list[Rule]:
    """The rules to evaluate, in order, bound to their functions; raises like `check_reminder_policy`,
    drops the extra rules `reminder_policy_warnings` names."""
    return list(_memoised("rules", policy, registry, lambda: _resolve_rules(policy, registry)))


def _resolve_rules(policy: Any, registry: ReminderRegistry | None) -> list[Rule]:
    registry = registry or default_registry()
    check_reminder_policy(policy, registry)
    rules = []
    for definition in selected_rule_definitions(policy):
        trigger_fn = registry.trigger(definition["trigger"]["kind"])
        template_fn = registry.template(definition["contentTemplate"])
        if trigger_fn is None or template_fn is None:  # an unknown extra rule: dropped, as linnkit
            continue
        rules.append(
            Rule(
                id=definition["id"],
                trigger=definition["trigger"],
                content_template=definition["contentTemplate"],
                content_args=definition.get("contentArgs"),
                evaluator=trigger_fn,
                template=template_fn,
            )
        )
    return rules
