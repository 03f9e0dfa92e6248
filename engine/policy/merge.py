"""Defining and merging policies (spec §2.2) and the named defaults profiles (§9).

Layers are partial dicts in linnkit's camelCase wire form (snake_case keys are accepted too), or whole
`ContextPolicy` objects. A missing key, or `None`, means "unset"; only `systemReminder.enabledRuleIds`
gives `None` a meaning ("no allowlist"), and it then overrides the layers below.
"""

from __future__ import annotations

import copy
import functools
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from engine.policy.errors import PolicyIssue, PolicyValidationError, issues_from_pydantic, show
from engine.policy.model import ContextPolicy, to_wire, unwrap_annotation

Layer = Mapping[str, Any] | ContextPolicy | None
NULLABLE_KEYS = frozenset({"enabledRuleIds"})  # where an explicit None is kept


@dataclass(frozen=True)
class DefaultsProfile:
    """Which defaults sit under the host and agent layers.

    `overlay` is a partial camelCase layer applied over the framework (seed) defaults. With
    `honour_fence_descriptors` false the engine ignores descriptor `mustKeep`/`maxBudgetFraction` (§9 D6).
    """

    name: str
    label: str
    overlay: Mapping[str, Any] = field(default_factory=dict, compare=False)
    honour_fence_descriptors: bool = True


SEED_DEFAULTS = DefaultsProfile("seed", "seed defaults")
LINNKIT_021_DEFAULTS = DefaultsProfile(
    "linnkit-0.21",
    "linnkit 0.21 defaults",
    overlay={"budget": {"maxTokens": 232_000}, "toolHistory": {"retentionMode": "drop"}},
    honour_fence_descriptors=False,
)
DEFAULTS_PROFILES: dict[str, DefaultsProfile] = {p.name: p for p in (SEED_DEFAULTS, LINNKIT_021_DEFAULTS)}


def get_defaults_profile(defaults: str | DefaultsProfile) -> DefaultsProfile:
    """The profile named `defaults` (`"seed"` or `"linnkit-0.21"`)."""
    if isinstance(defaults, DefaultsProfile):
        return defaults
    try:
        return DEFAULTS_PROFILES[defaults]
    except KeyError:
        names = ", ".join(repr(name) for name in DEFAULTS_PROFILES)
        raise ValueError(f"unknown defaults profile {defaults!r}; choose one of {names}") from None


@functools.cache
def _profile_defaults(name: str) -> ContextPolicy:
    return define_context_policy(DEFAULTS_PROFILES[name].overlay)


def profile_defaults(defaults: str | DefaultsProfile = "seed") -> ContextPolicy:
    """The complete policy a profile gives when no host or agent layer sets anything."""
    profile = get_defaults_profile(defaults)
    if DEFAULTS_PROFILES.get(profile.name) is profile:
        return _profile_defaults(profile.name)
    return define_context_policy(profile.overlay)


def validate_policy(data: Mapping[str, Any], *, source: str | None = None) -> ContextPolicy:
    """Schema-validate a complete or partial camelCase dict; missing fields take the seed defaults."""
    try:
        return ContextPolicy.model_validate(data)
    except ValidationError as err:
        raise PolicyValidationError(issues_from_pydantic(err, ContextPolicy), source=source) from None


def define_context_policy(input: Layer = None) -> ContextPolicy:
    """linnkit's `defineContextPolicy`: each group filled from the defaults, then validated.

    Groups merge shallowly over the defaults (`observationGovernance` and `thresholds` one level
    deeper), `extraRules` is taken whole, unknown keys are dropped.
    """
    if isinstance(input, ContextPolicy):
        return input
    # pydantic fills every missing field from the model defaults, which is exactly that merge.
    return validate_policy(normalize_layer(input))


def merge_layers(*layers: Layer) -> dict[str, Any]:
    """Merge layers, later ones winning: field by field within groups and within the sub-objects
    (`observationGovernance`, `thresholds`, `calibration`, `remoteCount`); lists are replaced whole."""
    out: dict[str, Any] = {}
    for layer in layers:
        for key, value in normalize_layer(layer).items():
            below = out.get(key)
            both_dicts = isinstance(below, dict) and isinstance(value, dict)
            out[key] = _merge_group(below, value) if both_dicts else value  # type: ignore[arg-type]
    return copy.deepcopy(out)


def merge_context_policy(framework_default: Layer, host_fallback: Layer, agent_spec: Layer) -> ContextPolicy:
    """linnkit's three-layer merge (framework < host < agent), then `define_context_policy`.

    Each dict layer is validated on its own first, as linnkit parses each spec, so an error names its layer.
    """
    layers = {
        "framework default": framework_default,
        "host fallback": host_fallback,
        "agent spec": agent_spec,
    }
    for name, layer in layers.items():
        if isinstance(layer, Mapping):
            validate_policy(normalize_layer(layer), source=name)
    return define_context_policy(merge_layers(framework_default, host_fallback, agent_spec))


def effective_policy(
    agent: Layer, host: Layer = None, defaults: str | DefaultsProfile = "seed"
) -> ContextPolicy:
    """The policy a build uses: framework defaults < profile overlay < host fallback < agent spec."""
    return merge_context_policy(profile_defaults(defaults), host, agent)


def normalize_layer(layer: Layer) -> dict[str, Any]:
    """A layer as a camelCase dict: snake_case keys renamed, unknown keys and unset (`None`) values
    dropped. Values of the wrong type are kept so that validation reports them."""
    if layer is None:
        return {}
    if isinstance(layer, ContextPolicy):
        return to_wire(layer)
    if not isinstance(layer, Mapping):
        raise PolicyValidationError([PolicyIssue((), "invalid_type", f"{show(layer)} is not a mapping")])
    return _normalize(layer, ContextPolicy)


def _merge_group(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in top.items():
        below = merged.get(key)
        # Inside a group only the sub-objects are dicts (free-form dicts live inside list items).
        merged[key] = {**below, **value} if isinstance(below, dict) and isinstance(value, dict) else value
    return merged


def _normalize(data: Mapping[Any, Any], model: type[BaseModel]) -> dict[str, Any]:
    fields = _fields(model)
    out: dict[str, Any] = {}
    for key, value in data.items():
        spec = fields.get(key) if isinstance(key, str) else None
        if spec is None:
            continue
        alias, sub_model, is_list = spec
        if value is None:
            if alias in NULLABLE_KEYS:
                out[alias] = None
            continue
        if sub_model is not None and is_list and isinstance(value, list):
            value = [_normalize(item, sub_model) if isinstance(item, Mapping) else item for item in value]
        elif sub_model is not None and not is_list and isinstance(value, Mapping):
            value = _normalize(value, sub_model)
        out[alias] = value
    return out


@functools.cache
def _fields(model: type[BaseModel]) -> dict[str, tuple[str, type[BaseModel] | None, bool]]:
    """name and alias → (alias, nested model or None, whether it is a list of that model)."""
    table: dict[str, tuple[str, type[BaseModel] | None, bool]] = {}
    for name, info in model.model_fields.items():
        annotation = unwrap_annotation(info.annotation)
        is_list = typing.get_origin(annotation) is list
        if is_list:
            annotation = unwrap_annotation(typing.get_args(annotation)[0])
        sub_model = annotation if isinstance(annotation, type) and issubclass(annotation, BaseModel) else None
        alias = info.alias or name
        table[name] = table[alias] = (alias, sub_model, is_list)
    return table
