"""Policy schema errors in zod's shape (spec §2.3): issues `{path, code, message}`.

pydantic's error types map to zod's codes `too_small`, `too_big`, `invalid_type`, `invalid_enum_value`
and `custom`; each message names the value and the allowed range or choices.
"""

from __future__ import annotations

import typing
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic.alias_generators import to_camel

from engine.errors import EngineError
from engine.policy.model import unwrap_annotation
from engine.safe_input import shorten

IssueCode = Literal["too_small", "too_big", "invalid_type", "invalid_enum_value", "custom"]
PathKey = str | int

_BOUNDS: dict[str, tuple[IssueCode, str]] = {
    "greater_than": ("too_small", "must be greater than {gt}"),
    "greater_than_equal": ("too_small", "is below the minimum {ge}"),
    "less_than": ("too_big", "must be less than {lt}"),
    "less_than_equal": ("too_big", "is above the maximum {le}"),
    "string_too_short": ("too_small", "must not be empty"),
}
_TYPE_NAMES = {
    "int_type": "an integer",
    "int_parsing": "an integer",
    "int_from_float": "an integer",
    "float_type": "a number",
    "float_parsing": "a number",
    "finite_number": "a finite number",
    "bool_type": "a boolean",
    "string_type": "a string",
    "list_type": "a list",
    "dict_type": "a mapping",
    "model_type": "a mapping",
    "model_attributes_type": "a mapping",
}
_UNION_TAGS = frozenset({"str", "int", "float", "bool"})


@dataclass(frozen=True, slots=True)
class PolicyIssue:
    """One problem: `path` in camelCase keys (list positions as ints)."""

    path: tuple[PathKey, ...]
    code: IssueCode
    message: str

    @property
    def dotted(self) -> str:
        out = ""
        for key in self.path:
            out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else key)
        return out or "(policy)"

    def __str__(self) -> str:
        return f"{self.dotted}: {self.message}"


class PolicyValidationError(EngineError, ValueError):
    """The policy failed the schema; `issues` lists every problem, `str()` one line per issue."""

    def __init__(self, issues: Iterable[PolicyIssue], *, source: str | None = None) -> None:
        self.issues: tuple[PolicyIssue, ...] = tuple(issues)
        self.source = source  # which layer or file, when known
        super().__init__("\n".join(str(issue) for issue in self.issues))

    @property
    def paths(self) -> set[tuple[PathKey, ...]]:
        return {issue.path for issue in self.issues}


def show(value: Any, limit: int = 60) -> str:
    """`repr` of a value, shortened for one-line messages, without building the whole repr (a value
    built from YAML aliases can expand to billions of items)."""
    return shorten(value, limit)


def issues_from_pydantic(err: ValidationError, model: type[BaseModel]) -> list[PolicyIssue]:
    """Translate pydantic's errors for `model` into zod-style issues, one per path, in order."""
    issues: dict[tuple[PathKey, ...], PolicyIssue] = {}
    union_misses: dict[tuple[PathKey, ...], list[str]] = {}
    for error in err.errors(include_url=False):
        path, in_union = _path(error["loc"])
        if in_union and error["type"] in _TYPE_NAMES:  # one member of a union did not match
            union_misses.setdefault(path, []).append(_TYPE_NAMES[error["type"]])
            value = error.get("input")
            expected = _one_of(list(dict.fromkeys(union_misses[path])))
            issues[path] = PolicyIssue(path, "invalid_type", f"{show(value)} is not {expected}")
        elif path not in issues:
            issues[path] = _issue(error, path, model)
    return list(issues.values())


def _one_of(names: list[str]) -> str:
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def _issue(error: Any, path: tuple[PathKey, ...], model: type[BaseModel]) -> PolicyIssue:
    kind, ctx, value = error["type"], error.get("ctx") or {}, error.get("input")
    if kind in _BOUNDS:
        code, template = _BOUNDS[kind]
        return PolicyIssue(path, code, f"{show(value)} {template.format(**ctx)}")
    if kind == "literal_error":
        choices = _choices_at(model, path) or (ctx.get("expected", ""),)
        return PolicyIssue(path, "invalid_enum_value", f"{show(value)} is not one of {', '.join(choices)}")
    if kind == "missing":
        return PolicyIssue(path, "invalid_type", "is required")
    if kind in _TYPE_NAMES:
        return PolicyIssue(path, "invalid_type", f"{show(value)} is not {_TYPE_NAMES[kind]}")
    if "field" in ctx:  # a model-level rule names the field it reports on
        path = (*path, ctx["field"])
    return PolicyIssue(path, "custom", error["msg"])


def _path(loc: tuple[Any, ...]) -> tuple[tuple[PathKey, ...], bool]:
    """Field keys become camelCase; a union member tag (`str`, `function-before[…]`) ends the path."""
    path: list[PathKey] = []
    for key in loc:
        if isinstance(key, int):
            path.append(key)
        elif key in _UNION_TAGS or not key.isidentifier():
            return tuple(path), True
        else:
            path.append(to_camel(key))
    return tuple(path), False


def _choices_at(model: type[BaseModel], path: tuple[PathKey, ...]) -> tuple[str, ...]:
    """The Literal choices of the field at `path`, as reprs (`'per-run'`)."""
    annotation: Any = model
    for key in path:
        annotation = unwrap_annotation(annotation)
        if isinstance(key, int):
            args = typing.get_args(annotation)
            annotation = args[0] if args else None
        elif isinstance(annotation, type) and issubclass(annotation, BaseModel):
            annotation = next(
                (f.annotation for n, f in annotation.model_fields.items() if key in (n, f.alias)), None
            )
        else:
            return ()
    annotation = unwrap_annotation(annotation)
    if typing.get_origin(annotation) is Literal:
        return tuple(repr(choice) for choice in typing.get_args(annotation))
    return ()
