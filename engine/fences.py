"""Fences (spec §4): descriptors, the registry, the safe formatter, injections, and YAML files.

A fence is host context (memory, time, a selected file, ...) wrapped in literal tags and injected into the
history as a `context_injection` message. Its descriptor says which role carries it, where it goes and how
long it lives.

**Formatter templates.** linnkit formatters are functions; here a descriptor's `formatter` is a template
string, or None for the default `<{kind}{attrs}>{content}</{kind}>`. The only fields are:

- `{content}`: the fence content, unescaped;
- `{kind}`: the fence kind;
- `{attrs}`: every attribute as ` name="value"`, in insertion order (the default formatter's `A`);
- `{attr:NAME}`: one attribute's value, escaped the same way; empty when absent.

Write `{{` and `}}` for literal braces. Nothing else is allowed (no indexing, attribute access, conversion or
format spec), so a template can never reach Python objects; templates are checked when a descriptor is made.
Attribute values render as JavaScript's `String(v)` (`21`, `true`, `null`) with `&` → `&amp;` then
`"` → `&quot;`, as linnkit hosts' formatters do.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.jsvalues import js_string
from engine.messages import AiMessage
from engine.safe_input import InputError, LoadProblem, YamlDocument, decode_utf8, load_yaml, read_regular_file

__all__ = [
    "DEFAULT_TEMPLATE",
    "LIFETIMES",
    "LLM_ROLES",
    "PLACEMENTS",
    "FenceDescriptor",
    "FenceError",
    "FenceInjection",
    "FenceRegistry",
    "FenceTemplateError",
    "as_registry",
    "dump_fences",
    "format_attrs",
    "load_fences",
    "load_fences_checked",
    "parse_fences",
    "parse_fences_skipping",
]

KIND_PATTERN = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")
LLM_ROLES = ("system", "user")
PLACEMENTS = ("after-system", "before-current-user", "after-current-user", "after-last-tool-result")
LIFETIMES = ("turn-only", "persisted")
DEFAULT_TEMPLATE = "<{kind}{attrs}>{content}</{kind}>"

_ATTR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_.:-]*$")
_FIELD_HELP = "use {content}, {kind}, {attrs} or {attr:NAME}"
# Python name -> file (camelCase) name, in the order descriptors are written.
_FIELDS = {
    "kind": "kind",
    "llm_role": "llmRole",
    "placement": "placement",
    "lifetime": "lifetime",
    "must_keep": "mustKeep",
    "max_budget_fraction": "maxBudgetFraction",
    "formatter": "formatter",
}
_BY_CAMEL = {camel: snake for snake, camel in _FIELDS.items()}


class FenceError(ValueError):
    """A fence descriptor, registry operation, injection or fence file is invalid."""

    def __init__(self, message: str, field: str | None = None) -> None:
        super().__init__(message)
        self.field = field  # the descriptor field at fault (camelCase), when there is one


class FenceTemplateError(FenceError):
    """A formatter template uses something other than the allowed fields."""


def _esc(value: Any) -> str:
    return js_string(value).replace("&", "&amp;").replace('"', "&quot;")


def format_attrs(attrs: Mapping[str, Any] | None) -> str:
    """The default formatter's attribute string: ` k="esc(v)"` for each entry, in order."""
    return "".join(f' {key}="{_esc(value)}"' for key, value in (attrs or {}).items())


def _compile_template(template: str, kind: str) -> tuple[tuple[str, str | None], ...]:
    """Split a template into (literal, field) pairs; field is content/kind/attrs/attr:NAME or None."""
    try:
        parsed = list(string.Formatter().parse(template))
    except ValueError as exc:
        raise FenceTemplateError(
            f'Fence "{kind}" formatter: {exc}; write {{{{ or }}}} for a literal brace', "formatter"
        ) from None
    parts: list[tuple[str, str | None]] = []
    for literal, name, spec, conversion in parsed:
        if name is None:
            parts.append((literal, None))
            continue
        written = "{" + name + (f"!{conversion}" if conversion else "") + (f":{spec}" if spec else "") + "}"
        simple = name in ("content", "kind", "attrs") and not spec and not conversion
        one_attr = name == "attr" and not conversion and bool(spec) and _ATTR_NAME.match(spec or "")
        if not (simple or one_attr):
            raise FenceTemplateError(
                f"Fence \"{kind}\" formatter: field '{written}' is not allowed; {_FIELD_HELP}", "formatter"
            )
        parts.append((literal, name if simple else f"attr:{spec}"))
    return tuple(parts)


def _check_choice(name: str, value: Any, choices: tuple[str, ...]) -> None:
    if value not in choices:
        allowed = ", ".join(f'"{c}"' for c in choices)
        raise FenceError(f"{_FIELDS[name]}: must be one of {allowed} (got {value!r})", _FIELDS[name])


@dataclass(frozen=True, slots=True)
class FenceDescriptor:
    """How one kind of fence is carried. `kind` and `max_budget_fraction` are checked by the registry."""

    kind: str
    llm_role: str
    placement: str
    lifetime: str
    must_keep: bool = False
    max_budget_fraction: float | None = None
    formatter: str | None = None
    _template: tuple[tuple[str, str | None], ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not isinstance(self.kind, str):
            raise FenceError(f"kind: must be a string (got {self.kind!r})", "kind")
        _check_choice("llm_role", self.llm_role, LLM_ROLES)
        _check_choice("placement", self.placement, PLACEMENTS)
        _check_choice("lifetime", self.lifetime, LIFETIMES)
        if not isinstance(self.must_keep, bool):
            raise FenceError(f"mustKeep: must be true or false (got {self.must_keep!r})", "mustKeep")
        fraction = self.max_budget_fraction
        if fraction is not None and (isinstance(fraction, bool) or not isinstance(fraction, int | float)):
            raise FenceError(f"maxBudgetFraction: must be a number (got {fraction!r})", "maxBudgetFraction")
        if self.formatter is not None and not isinstance(self.formatter, str):
            raise FenceError(f"formatter: must be a template string (got {self.formatter!r})", "formatter")
        template = DEFAULT_TEMPLATE if self.formatter is None else self.formatter
        object.__setattr__(self, "_template", _compile_template(template, self.kind))

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FenceDescriptor:
        """Build from a file entry; keys are camelCase (`llmRole`) or snake_case (`llm_role`)."""
        values: dict[str, Any] = {}
        for key, value in data.items():
            name = _BY_CAMEL.get(key, key if key in _FIELDS else None)
            if name is None:
                raise FenceError(f"{key}: unknown field; fields are {', '.join(_FIELDS.values())}", key)
            values[name] = value
        missing = [
            _FIELDS[name] for name in ("kind", "llm_role", "placement", "lifetime") if name not in values
        ]
        if missing:
            raise FenceError(f"{missing[0]}: missing", missing[0])
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """camelCase, leaving out fields at their defaults."""
        out: dict[str, Any] = {"kind": self.kind, "llmRole": self.llm_role, "placement": self.placement}
        out["lifetime"] = self.lifetime
        if self.must_keep:
            out["mustKeep"] = True
        if self.max_budget_fraction is not None:
            out["maxBudgetFraction"] = self.max_budget_fraction
        if self.formatter is not None:
            out["formatter"] = self.formatter
        return out

    def format(self, content: str, attrs: Mapping[str, Any] | None = None) -> str:
        """The literal tags for one fence (the descriptor's `formatter(content, attrs)`)."""
        attrs = attrs or {}
        out: list[str] = []
        for literal, name in self._template:
            out.append(literal)
            if name == "content":
                out.append(content)
            elif name == "kind":
                out.append(self.kind)
            elif name == "attrs":
                out.append(format_attrs(attrs))
            elif name is not None:
                key = name[len("attr:") :]
                out.append(_esc(attrs[key]) if key in attrs else "")
        return "".join(out)


def validate_descriptor(descriptor: FenceDescriptor) -> None:
    """The registry's rules, with linnkit's messages."""
    if not KIND_PATTERN.match(descriptor.kind):
        raise FenceError(f'Fence kind "{descriptor.kind}" must be kebab-case.', "kind")
    fraction = descriptor.max_budget_fraction
    if fraction is not None and not 0 < fraction <= 1:
        raise FenceError("Fence maxBudgetFraction must be within (0, 1].", "maxBudgetFraction")


def _not_registered(kind: str) -> FenceError:
    return FenceError(f'Fence kind "{kind}" is not registered.')


class FenceRegistry:
    """The registered fence kinds, in registration order."""

    def __init__(self, descriptors: Iterable[FenceDescriptor] = ()) -> None:
        self._descriptors: dict[str, FenceDescriptor] = {}
        for descriptor in descriptors:
            self.register(descriptor)

    def register(self, descriptor: FenceDescriptor) -> None:
        validate_descriptor(descriptor)
        if descriptor.kind in self._descriptors:
            raise FenceError(f'Fence kind "{descriptor.kind}" is already registered.', "kind")
        self._descriptors[descriptor.kind] = descriptor

    def get(self, kind: str) -> FenceDescriptor | None:
        return self._descriptors.get(kind)

    def list(self) -> list[FenceDescriptor]:
        return list(self._descriptors.values())

    def kinds(self) -> list[str]:
        return list(self._descriptors)

    def format(self, kind: str, content: str, attrs: Mapping[str, Any] | None = None) -> str:
        descriptor = self._descriptors.get(kind)
        if descriptor is None:
            raise _not_registered(kind)
        return descriptor.format(content, attrs)

    def remove(self, kind: str) -> FenceDescriptor:
        if kind not in self._descriptors:
            raise _not_registered(kind)
        return self._descriptors.pop(kind)

    def replace(self, kind: str, descriptor: FenceDescriptor) -> None:
        """Swap the descriptor of `kind` for another (which may rename it), keeping its position."""
        if kind not in self._descriptors:
            raise _not_registered(kind)
        validate_descriptor(descriptor)
        if descriptor.kind != kind and descriptor.kind in self._descriptors:
            raise FenceError(f'Fence kind "{descriptor.kind}" is already registered.', "kind")
        self._descriptors = {
            (descriptor.kind if key == kind else key): (descriptor if key == kind else value)
            for key, value in self._descriptors.items()
        }

    def copy(self) -> FenceRegistry:
        return FenceRegistry(self._descriptors.values())

    def __iter__(self) -> Iterator[FenceDescriptor]:
        return iter(list(self._descriptors.values()))

    def __len__(self) -> int:
        return len(self._descriptors)

    def __contains__(self, kind: object) -> bool:
        return kind in self._descriptors

    def __repr__(self) -> str:
        return f"FenceRegistry({self.kinds()!r})"


@dataclass(frozen=True, slots=True)
class FenceInjection:
    """A fence a host injects for one request."""

    kind: str
    content: str
    attrs: dict[str, Any] | None = None
    metadata: dict[str, Any] | None = None

    def to_message(self, registry: FenceRegistry | None, id: str, timestamp: int | float) -> AiMessage:
        """The `context_injection` message that carries this fence (role = the descriptor's llmRole)."""
        if registry is None:
            raise FenceError("Fence injections require a FenceRegistry.")
        descriptor = registry.get(self.kind)
        if descriptor is None:
            raise _not_registered(self.kind)
        metadata = {
            **(self.metadata or {}),
            "fenceKind": self.kind,
            "fenceAttrs": self.attrs or {},
            "fencePlacement": descriptor.placement,
        }
        return AiMessage(
            id=id,
            role=descriptor.llm_role,
            type="context_injection",
            content=self.content,
            timestamp=timestamp,
            metadata=metadata,
        )


# -- files ----------------------------------------------------------------------------------------


def parse_fences(data: Any, source: str = "<fences>") -> FenceRegistry:
    """A registry from loaded YAML/JSON data: a list of descriptors, or `{fences: [...]}`.

    Errors name the source, the entry and the field: `fences.yaml: fences[2].llmRole: must be one of ...`.
    """
    return _parse_fences(data, source, None)


def parse_fences_skipping(data: Any, source: str = "<fences>") -> tuple[FenceRegistry, list[FenceError]]:
    """As `parse_fences`, but an entry that is not a valid descriptor is left out and its error returned,
    so that one bad fence of a session header costs that fence only. A `data` that is no list at all
    still raises."""
    skipped: list[FenceError] = []
    return _parse_fences(data, source, skipped), skipped


def _parse_fences(data: Any, source: str, skipped: list[FenceError] | None) -> FenceRegistry:
    if data is None:
        return FenceRegistry()
    if isinstance(data, Mapping):
        extra = [key for key in data if key != "fences"]
        if extra:
            raise FenceError(f"{source}: {extra[0]}: unknown key; a fence file holds only 'fences'")
        data = data.get("fences") or []
    if not isinstance(data, list):
        raise FenceError(f"{source}: expected a list of fence descriptors or a mapping with a 'fences' list")
    registry = FenceRegistry()
    for index, entry in enumerate(data):
        try:
            _register(registry, entry, f"{source}: fences[{index}]")
        except FenceError as exc:
            if skipped is None:
                raise
            skipped.append(exc)
    return registry


def _register(registry: FenceRegistry, entry: Any, where: str) -> None:
    """Register one entry; errors say `where` and the field."""
    if not isinstance(entry, Mapping):
        raise FenceError(f"{where}: expected a mapping, got {_kind(entry)}")
    try:
        descriptor = FenceDescriptor.from_dict(entry)
    except FenceTemplateError as exc:
        raise FenceTemplateError(f"{where}: {exc}", "formatter") from None
    except FenceError as exc:
        raise FenceError(f"{where}.{exc}", exc.field) from None
    try:
        registry.register(descriptor)
    except FenceError as exc:
        raise FenceError(f"{where}.{exc.field}: {exc}", exc.field) from None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "a list"}
    return names.get(type(value), type(value).__name__)


def as_registry(fences: Any) -> FenceRegistry | None:
    """What a build takes as `fences`: a registry (as is), descriptors or file data, or None.

    An empty list means "no registry", as in the conformance cases; an empty FenceRegistry stays a registry.
    """
    if fences is None or isinstance(fences, FenceRegistry):
        return fences
    if isinstance(fences, list | tuple) and not fences:
        return None
    if isinstance(fences, list | tuple) and all(isinstance(d, FenceDescriptor) for d in fences):
        return FenceRegistry(fences)
    return parse_fences(list(fences) if isinstance(fences, tuple) else fences)


def load_fences(path: str | Path) -> FenceRegistry:
    """Read a YAML (or JSON) fence file: safe YAML within the input bounds (engine.safe_input)."""
    return load_fences_checked(path)[0]


def load_fences_checked(path: str | Path) -> tuple[FenceRegistry, list[LoadProblem]]:
    """A fence file's registry and its warnings (keys written twice: the last one is used)."""
    try:
        document = load_yaml(decode_utf8(read_regular_file(path), str(path)), str(path))
    except InputError as exc:
        raise FenceError(str(exc)) from None
    try:
        registry = parse_fences(document.data, str(path))
    except FenceError as exc:
        raise _with_line(exc, str(path), document) from None
    warnings = []
    for key, line, first in document.duplicates:
        reason = f"written twice (first on line {first}); the last is used"
        warnings.append(LoadProblem(str(path), line, _dotted(key), reason, severity="warning"))
    return registry, warnings


_ENTRY = re.compile(r"fences\[(\d+)\](?:\.(\w+))?")


def _with_line(exc: FenceError, source: str, document: YamlDocument) -> FenceError:
    """`file: fences[2].llmRole: ...` → `file:LINE: fences[2].llmRole: ...`, the line of that key."""
    text = str(exc)
    found = _ENTRY.search(text)
    if not text.startswith(f"{source}: ") or found is None:
        return exc
    index, key = int(found.group(1)), found.group(2) or exc.field
    root: tuple[Any, ...] = ("fences",) if isinstance(document.data, Mapping) else ()
    entry = (*root, index)
    line = document.key_lines.get((*entry, key)) if key else None
    line = line or document.line_of(entry)  # a missing field: the entry's own line
    if line is None:
        return exc
    return type(exc)(f"{source}:{line}: {text[len(source) + 2 :]}", exc.field)


def _dotted(path: tuple[Any, ...]) -> str:  # ("fences", 0, "llmRole") -> fences[0].llmRole
    return "".join(f"[{k}]" if isinstance(k, int) else f".{k}" for k in path).lstrip(".")


def dump_fences(fences: FenceRegistry | Iterable[FenceDescriptor]) -> str:
    """YAML text that `load_fences` reads back to the same descriptors."""
    entries = [descriptor.to_dict() for descriptor in fences]
    return yaml.safe_dump({"fences": entries}, sort_keys=False, allow_unicode=True, width=110)
