"""One description of the policy controls, derived from the model, for every front end.

`policy_controls()` walks the model's fields, so a new field shows up in the TUI and the notebook with no
UI change. Paths are camelCase tuples (`('budget', 'maxTokens')`); snake_case is accepted on input.
"""

from __future__ import annotations

import functools
import typing
from dataclasses import dataclass
from typing import Any, Literal

import annotated_types
from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel
from pydantic.fields import FieldInfo

from engine.policy.errors import PolicyValidationError, issues_from_pydantic
from engine.policy.merge import DefaultsProfile, normalize_layer, profile_defaults
from engine.policy.model import (
    BUILTIN_REMINDER_RULE_IDS,
    ContextPolicy,
    PolicyModel,
    to_wire,
    unwrap_annotation,
)

Path = tuple[str, ...]
Kind = Literal[
    "int",
    "float",
    "bool",
    "enum",
    "str",
    "list",
    "json",
    "optional-int",
    "optional-float",
    "optional-bool",
    "optional-enum",
    "optional-str",
    "optional-list",
]
Defaults = str | DefaultsProfile | ContextPolicy


@dataclass(frozen=True, slots=True)
class ControlSpec:
    """What a front end needs to draw and check one policy field.

    `minimum`/`maximum` are the validation bounds (`*_exclusive` marks `>`/`<`); `ui_min`/`ui_max` the
    suggested slider range (validation may accept more). `choices` is the closed set of an enum or of a
    list's items; `suggestions` are common values of an open list. `default` is the seed default in wire
    form; `unset_value` is what the engine uses when an optional field is left unset (`None`).
    """

    path: Path
    attr_path: Path
    group: str
    name: str
    kind: Kind
    label: str
    help: str
    default: Any
    minimum: float | None = None
    minimum_exclusive: bool = False
    maximum: float | None = None
    maximum_exclusive: bool = False
    ui_min: float | None = None
    ui_max: float | None = None
    step: float | None = None
    coarse_step: float | None = None
    choices: tuple[Any, ...] = ()
    suggestions: tuple[str, ...] = ()
    unset_value: Any = None
    log_scale: bool = False  # the suggested range spans orders of magnitude: slide it logarithmically

    @property
    def key(self) -> str:
        return ".".join(self.path)

    @property
    def help_lines(self) -> list[str]:
        return self.help.split("\n")

    @property
    def optional(self) -> bool:
        return self.kind.startswith("optional-")


@dataclass(frozen=True, slots=True)
class GroupSpec:
    key: str
    attr: str
    label: str
    help: str


def policy_groups() -> list[GroupSpec]:
    """The 12 groups in spec order, with their labels."""
    return [
        GroupSpec(info.alias or name, name, info.title or name, info.description or "")
        for name, info in ContextPolicy.model_fields.items()
        if name != "profile_id"
    ]


def policy_controls() -> list[ControlSpec]:
    """Every field of the 12 groups, in model order; list-of-object fields are `json` controls."""
    return list(_controls())


def control_for(path: Path) -> ControlSpec:
    """The control at `path` (camelCase or snake_case keys); `KeyError` names an unknown path."""
    key = tuple(to_camel(part) for part in path)
    try:
        return _controls_by_path()[key]
    except KeyError:
        raise KeyError(f"unknown policy field {'.'.join(key)!r}") from None


def get_value(policy: ContextPolicy, path: Path) -> Any:
    """The field's value in wire form (lists of objects as camelCase dicts); `None` when unset."""
    node: Any = policy
    for attr in control_for(path).attr_path:
        node = getattr(node, attr)
        if node is None:
            return None
    if isinstance(node, list):
        return [to_wire(item) if isinstance(item, PolicyModel) else item for item in node]
    return node


def set_value(policy: ContextPolicy, path: Path, value: Any) -> ContextPolicy:
    """A new validated policy with the field at `path` set (`None` unsets an optional field).

    Raises `PolicyValidationError` whose issues carry the field path, e.g. `budget.maxTokens`.
    """
    spec = control_for(path)
    data = to_wire(policy)
    node = data
    for key in spec.path[:-1]:
        node = node.setdefault(key, {})
    node[spec.path[-1]] = value
    data = normalize_layer(data)
    _drop_empty_optional_objects(data)
    try:
        return ContextPolicy.model_validate(data)
    except ValidationError as err:
        raise PolicyValidationError(issues_from_pydantic(err, ContextPolicy)) from None


def changed_paths(policy: ContextPolicy, defaults: Defaults = "seed") -> set[Path]:
    """Paths whose value differs from the defaults (a profile name, profile, or a policy)."""
    base = _base(defaults)
    return {spec.path for spec in _controls() if get_value(policy, spec.path) != get_value(base, spec.path)}


def reset_path(policy: ContextPolicy, path: Path, defaults: Defaults = "seed") -> ContextPolicy:
    """The policy with one field back at its default."""
    return set_value(policy, path, get_value(_base(defaults), path))


def reset_group(policy: ContextPolicy, group: str, defaults: Defaults = "seed") -> ContextPolicy:
    """The policy with a whole group (camelCase or snake_case key) back at its defaults."""
    for spec in policy_groups():
        if group in (spec.key, spec.attr):
            return policy.model_copy(update={spec.attr: getattr(_base(defaults), spec.attr)})
    raise KeyError(f"unknown policy group {group!r}")


# -- deriving the controls from the model ------------------------------------------------------------
@functools.cache
def _controls() -> tuple[ControlSpec, ...]:
    defaults = ContextPolicy()
    out: list[ControlSpec] = []
    for group in policy_groups():
        model = ContextPolicy.model_fields[group.attr].annotation
        out.extend(_walk(model, (group.key,), (group.attr,), defaults))
    return tuple(out)


@functools.cache
def _controls_by_path() -> dict[Path, ControlSpec]:
    return {spec.path: spec for spec in _controls()}


def _walk(model: type[BaseModel], path: Path, attrs: Path, defaults: ContextPolicy) -> list[ControlSpec]:
    out: list[ControlSpec] = []
    for name, info in model.model_fields.items():
        key_path, attr_path = (*path, info.alias or name), (*attrs, name)
        inner = unwrap_annotation(info.annotation)
        if isinstance(inner, type) and issubclass(inner, BaseModel):
            out.extend(_walk(inner, key_path, attr_path, defaults))
        else:
            out.append(_spec(info, key_path, attr_path, defaults))
    return out


def _spec(info: FieldInfo, path: Path, attrs: Path, defaults: ContextPolicy) -> ControlSpec:
    ui = (info.json_schema_extra or {}).get("ui", {})  # type: ignore[union-attr]
    kind, choices = _kind(info.annotation)
    bounds = _bounds(info)
    suggestions = BUILTIN_REMINDER_RULE_IDS if attrs[-1] in _RULE_ID_FIELDS else ()
    return ControlSpec(
        path=path,
        attr_path=attrs,
        group=path[0],
        name=path[-1],
        kind=kind,
        label=info.title or path[-1],
        help=info.description or "",
        default=_default(defaults, attrs),
        ui_min=ui.get("uiMin"),
        ui_max=ui.get("uiMax"),
        step=ui.get("step"),
        coarse_step=ui.get("coarseStep"),
        choices=choices,
        suggestions=suggestions,
        unset_value=ui.get("unsetMeans"),
        log_scale=ui.get("scale") == "log",
        **bounds,
    )


_RULE_ID_FIELDS = frozenset({"enabled_rule_ids", "disabled_rule_ids"})
_SCALAR_KINDS: dict[Any, str] = {bool: "bool", int: "int", float: "float", str: "str"}


def _kind(annotation: Any) -> tuple[Kind, tuple[Any, ...]]:
    optional = type(None) in typing.get_args(annotation)
    inner = unwrap_annotation(annotation)
    choices: tuple[Any, ...] = ()
    if typing.get_origin(inner) is list:
        item = unwrap_annotation(typing.get_args(inner)[0])
        if isinstance(item, type) and issubclass(item, BaseModel):
            return "json", ()
        base = "list"
        if typing.get_origin(item) is Literal:
            choices = typing.get_args(item)
    elif typing.get_origin(inner) is Literal:
        base, choices = "enum", typing.get_args(inner)
    else:
        base = _SCALAR_KINDS[inner]
    return typing.cast(Kind, f"optional-{base}" if optional else base), choices


def _bounds(info: FieldInfo) -> dict[str, Any]:
    """Numeric bounds from the field's constraints, wherever in its annotation they sit."""
    out: dict[str, Any] = {}
    for item in _constraints(info):
        if isinstance(item, annotated_types.Gt):
            out.update(minimum=item.gt, minimum_exclusive=True)
        elif isinstance(item, annotated_types.Ge):
            out.update(minimum=item.ge, minimum_exclusive=False)
        elif isinstance(item, annotated_types.Lt):
            out.update(maximum=item.lt, maximum_exclusive=True)
        elif isinstance(item, annotated_types.Le):
            out.update(maximum=item.le, maximum_exclusive=False)
    return out


def _constraints(info: FieldInfo) -> list[Any]:
    found = list(info.metadata)
    pending = [info.annotation]
    while pending:
        annotation = pending.pop()
        if typing.get_origin(annotation) is typing.Annotated:
            base, *extras = typing.get_args(annotation)
            for extra in extras:
                found.extend(extra.metadata if isinstance(extra, FieldInfo) else [extra])
            pending.append(base)
        elif typing.get_origin(annotation) is not list:
            pending.extend(a for a in typing.get_args(annotation) if a is not type(None))
    return found


def _default(defaults: ContextPolicy, attrs: Path) -> Any:
    node: Any = defaults
    for attr in attrs:
        node = getattr(node, attr)
        if node is None:
            return None
    return list(node) if isinstance(node, list) else node


def _base(defaults: Defaults) -> ContextPolicy:
    return defaults if isinstance(defaults, ContextPolicy) else profile_defaults(defaults)


def _drop_empty_optional_objects(data: dict[str, Any]) -> None:
    """An optional sub-object left with no field set goes back to unset (e.g. `calibration`)."""
    for name, info in ContextPolicy.model_fields.items():
        group = data.get(info.alias or name)
        model = info.annotation
        if not isinstance(group, dict) or not isinstance(model, type):
            continue
        for sub_name, sub_info in model.model_fields.items():
            key = sub_info.alias or sub_name
            if sub_info.default is None and group.get(key) == {}:
                del group[key]
