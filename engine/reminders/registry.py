"""The trigger-kind and content-template registry that interprets every reminder rule, built-in or extra.

A registry is an object, never a module global: hosts (and tests) register into their own instance, so
nothing leaks between builds. `default_registry()` returns a fresh one seeded with linnkit's built-ins.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from engine.errors import ConfigurationError
from engine.reminders.builtins import BUILTIN_TEMPLATES, BUILTIN_TRIGGERS, TemplateFn, TriggerFn
from engine.reminders.context import ReminderContext, js_trim


class ReminderConfigError(ConfigurationError):
    """A reminder rule the registry cannot interpret (unknown trigger kind or template, bad arguments)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """A resolved rule: its serialisable definition plus the registry functions that interpret it."""

    id: str
    trigger: Mapping[str, Any]
    content_template: str
    content_args: Mapping[str, Any] | None
    evaluator: TriggerFn
    template: TemplateFn

    def fires(self, ctx: ReminderContext) -> bool:
        # Host functions get copies, so they cannot change the policy they were built from; the built-ins
        # only read theirs (a copy per rule and build was a fortieth of a replay's step)
        trigger = self.trigger if self.evaluator in _READ_ONLY else copy.deepcopy(dict(self.trigger))
        return bool(self.evaluator(ctx, trigger))

    def text(self, ctx: ReminderContext) -> Any:
        args = self.content_args
        if args is not None and self.template not in _READ_ONLY:
            args = copy.deepcopy(dict(args))
        return self.template(ctx, args)


_READ_ONLY = frozenset([*BUILTIN_TRIGGERS.values(), *BUILTIN_TEMPLATES.values()])


class ReminderRegistry:
    """Named trigger kinds and content templates. Starts empty; see `default_registry()`."""

    def __init__(self) -> None:
        self._triggers: dict[str, TriggerFn] = {}
        self._templates: dict[str, TemplateFn] = {}

    def register_trigger_kind(self, kind: str, fn: TriggerFn) -> None:
        """Add or replace a trigger kind: `fn(ctx, trigger_dict) -> bool`."""
        self._triggers[_name(kind, "trigger kind")] = fn

    def register_content_template(self, name: str, fn: TemplateFn) -> None:
        """Add or replace a content template: `fn(ctx, content_args_or_None) -> str`."""
        self._templates[_name(name, "content template")] = fn

    @property
    def trigger_kinds(self) -> tuple[str, ...]:
        return tuple(self._triggers)

    @property
    def content_templates(self) -> tuple[str, ...]:
        return tuple(self._templates)

    def trigger(self, kind: str) -> TriggerFn | None:
        return self._triggers.get(kind)

    def template(self, name: str) -> TemplateFn | None:
        return self._templates.get(name)


def default_registry() -> ReminderRegistry:
    """A new registry holding linnkit's six trigger kinds and five templates."""
    registry = ReminderRegistry()
    for kind, trigger_fn in BUILTIN_TRIGGERS.items():
        registry.register_trigger_kind(kind, trigger_fn)
    for name, template_fn in BUILTIN_TEMPLATES.items():
        registry.register_content_template(name, template_fn)
    return registry


def _name(value: str, what: str) -> str:
    name = js_trim(value) if isinstance(value, str) else ""
    if not name:
        raise ValueError(f"{what} must be a non-empty string")
    return name
