"""Reading sample descriptions (`sample_sessions/src/*.yaml`): fields that name their file and path in
every error, and texts that may be written as templates. YAML is read with safe_load only."""

from __future__ import annotations

import string
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import yaml

_MISSING = object()


class DescriptionError(ValueError):
    """A description that cannot be turned into a sample; the message names the file and the field."""


@dataclass(frozen=True)
class Node:
    """A value of a description with the file and field path it came from, for one-line errors."""

    value: Any
    file: str
    path: str = ""
    shorthand_for: str = ""  # the key a plain value stood for: its errors name this node's own path

    def fail(self, problem: str) -> NoReturn:
        raise DescriptionError(f"{self.file}: {self.path or 'top level'}: {problem}")

    def has(self, name: str) -> bool:
        return isinstance(self.value, dict) and name in self.value

    def get(self, name: str, default: Any = _MISSING) -> Node:
        self.mapping()
        path = self.path if name == self.shorthand_for else f"{self.path}.{name}" if self.path else name
        child = Node(self.value.get(name, default), self.file, path)
        if child.value is _MISSING:
            child.fail("missing")
        return child

    def mapping(self, allowed: tuple[str, ...] = ()) -> dict[str, Any]:
        value = self.of(dict, "a mapping")
        unknown = [key for key in value if allowed and key not in allowed]
        if unknown:
            self.get(str(unknown[0])).fail(f"unknown field (expected one of {', '.join(allowed)})")
        return value

    def items(self) -> list[Node]:
        return [Node(v, self.file, f"{self.path}[{n}]") for n, v in enumerate(self.of(list, "a list"))]

    def of(self, kind: type, what: str) -> Any:
        if not isinstance(self.value, kind) or (kind is int and isinstance(self.value, bool)):
            self.fail(f"expected {what}, got {_kind(self.value)}")
        return self.value

    def str(self) -> str:
        return self.of(str, "a string")

    def int(self) -> int:
        return self.of(int, "an integer")

    def one_key(self, choices: Iterable[str]) -> tuple[str, Node]:
        """The single key of a mapping such as `{user: ...}` that names what an item is."""
        keys, choices = list(self.mapping()), tuple(choices)
        if len(keys) != 1 or keys[0] not in choices:
            self.fail(f"expected one of {', '.join(choices)}, as the only key")
        return keys[0], self.get(keys[0])

    def shorthand(self, key: str, allowed: tuple[str, ...]) -> Node:
        """A mapping with `allowed` keys; a plain value stands for `{key: value}`."""
        node = self if isinstance(self.value, dict) else Node({key: self.value}, self.file, self.path, key)
        node.mapping(allowed)
        return node


def _kind(value: Any) -> str:
    kinds = {str: "a string", int: "an integer", list: "a list", dict: "a mapping", type(None): "nothing"}
    return kinds.get(type(value), type(value).__name__)


def load(path: Path) -> Node:
    """A YAML file as a Node (safe_load only); a syntax error is one line with the file and line."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark else "top level"
        problem = getattr(error, "problem", None) or str(error).split("\n")[0]
        raise DescriptionError(f"{path}: {where}: YAML error: {problem}") from None
    except OSError as error:
        raise DescriptionError(f"{path}: cannot read: {error.strerror}") from None
    return Node(data, str(path))


# -- texts ----------------------------------------------------------------------------------------


def text(node: Node) -> str:
    """A string; a list of texts, joined; or a template filled once per item of `each` (or `repeat` times).

    Templates are str.format strings whose fields are plain names: `i` (0, 1, ...), `item` (the item) and
    the keys of a mapping item. No attribute or index lookups, so a template cannot reach any code.
    """
    if isinstance(node.value, str):
        return node.value
    if isinstance(node.value, list):
        return "".join(text(part) for part in node.items())
    if not isinstance(node.value, dict):
        node.fail(f"expected a text (a string, a list of texts or a template), got {_kind(node.value)}")
    node.mapping(("template", "each", "repeat", "join"))
    template = node.get("template").str()
    if node.has("each") == node.has("repeat"):
        node.fail("a template needs either each or repeat")
    repeat = [Node(None, node.file)] * node.get("repeat").int() if node.has("repeat") else []
    items = node.get("each").items() if node.has("each") else repeat
    filled = []
    for n, item in enumerate(items):
        values = {"i": n, "item": item.value, **(item.value if isinstance(item.value, dict) else {})}
        filled.append(_fill(node.get("template"), template, values))
    return node.get("join", "\n").str().join(filled)


def _fill(node: Node, template: str, values: dict[str, Any]) -> str:
    for _, name, spec, _ in string.Formatter().parse(template):
        if name is not None and name not in values:
            node.fail(f"template field {{{name}}} is not one of {', '.join(sorted(map(str, values)))}")
        if "{" in (spec or ""):
            node.fail(f"template field {{{name}}}: no fields inside a format spec")
    try:
        return template.format_map(values)
    except (ValueError, TypeError) as error:
        node.fail(f"template: {error}")
