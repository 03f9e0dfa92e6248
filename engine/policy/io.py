"""Reading and writing policies as YAML or JSON.

A policy file is one layer: a partial camelCase mapping (snake_case accepted), read with
`yaml.safe_load`. Exports are either the full policy or only what differs from a defaults profile;
both load back to an equal policy. The JSON form pastes into a linnkit `AgentSpec.contextPolicy`.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import yaml

from engine.errors import EngineError
from engine.policy.errors import PolicyIssue, PolicyValidationError
from engine.policy.lint import layer_warnings
from engine.policy.merge import (
    LINNKIT_021_DEFAULTS,
    DefaultsProfile,
    Layer,
    effective_policy,
    get_defaults_profile,
    normalize_layer,
    profile_defaults,
    validate_policy,
)
from engine.policy.model import ContextPolicy, to_wire
from engine.safe_input import (
    InputError,
    JsonLimitError,
    LoadProblem,
    YamlDocument,
    decode_json,
    decode_utf8,
    load_yaml,
    output_kind_problem,
    read_regular_file,
)

Format = Literal["yaml", "json"]
PathLike = str | os.PathLike[str]


class PolicyFileError(EngineError, ValueError):
    """A policy file (or text) that cannot be used: one line `file:line: problem` per problem."""

    def __init__(
        self,
        source: str,
        problem: str,
        *,
        line: int | None = None,
        issues: Iterable[PolicyIssue] = (),
        text: str | None = None,
    ) -> None:
        self.source, self.problem, self.line, self.issues = source, problem, line, tuple(issues)
        where = f"{source}:{line}" if line else source
        super().__init__(text if text is not None else f"{where}: {problem}")


@dataclass(frozen=True, slots=True)
class PolicyFile:
    """One policy layer as read, normalised and validated, and what it would have lost silently."""

    layer: dict[str, Any]
    warnings: tuple[LoadProblem, ...] = ()
    document: YamlDocument | None = None  # where each key was written

    def line_of(self, path: tuple[str, ...]) -> int | None:
        """The line of the deepest key of `path` the file wrote (a rule a run checks names its field)."""
        return self.document.line_of(path) if self.document is not None else None


def format_for(path: PathLike) -> Format:
    """`json` for a `.json` file, else `yaml`."""
    return "json" if Path(path).suffix.lower() == ".json" else "yaml"


def _parse_document(text: str, fmt: Format, source: str) -> tuple[dict[str, Any], YamlDocument | None]:
    document = None
    if fmt == "json":
        data = _parse_json(text, source)
        document = _json_lines(text, source)
    else:
        document = _parse_yaml(text, source)
        data = document.data
    if data is None:
        return {}, document
    if not isinstance(data, Mapping):
        raise PolicyFileError(source, f"expected a mapping of policy groups, got {_kind(data)}")
    return dict(data), document


def parse_policy_text(text: str, fmt: Format = "yaml", source: str = "<text>") -> dict[str, Any]:
    """Parse one layer: a mapping (an empty document is an empty layer). Values are not checked yet."""
    return _parse_document(text, fmt, source)[0]


def parse_policy_file(text: str, fmt: Format = "yaml", source: str = "<text>") -> PolicyFile:
    """Parse and validate one layer, with warnings for unknown keys and groups and keys written twice."""
    data, document = _parse_document(text, fmt, source)
    layer = normalize_layer(data)
    try:
        validate_policy(layer)
    except PolicyValidationError as err:
        raise _invalid(source, err, document) from None
    return PolicyFile(layer, tuple(layer_warnings(data, source, document)), document)


def parse_policy_layer(text: str, fmt: Format = "yaml", source: str = "<text>") -> dict[str, Any]:
    """Parse and validate one layer; returns it normalised (camelCase, unset values dropped)."""
    return parse_policy_file(text, fmt, source).layer


def read_policy_file(path: PathLike) -> PolicyFile:
    """Read and validate a policy file: its layer and its warnings (what the UIs show on opening it)."""
    return parse_policy_file(_read(path), format_for(path), str(path))


def read_policy_layer(path: PathLike) -> dict[str, Any]:
    """Read and validate a policy file as a layer (for use as host or agent layer)."""
    return read_policy_file(path).layer


def loads_policy(
    text: str,
    fmt: Format = "yaml",
    *,
    defaults: str | DefaultsProfile = "seed",
    host: Layer = None,
    source: str = "<text>",
) -> ContextPolicy:
    """The effective policy of a text layer over `host` and the `defaults` profile."""
    layer = parse_policy_layer(text, fmt, source)
    try:
        return effective_policy(layer, host, defaults)
    except PolicyValidationError as err:
        raise _invalid(source, err) from None


def load_policy(
    path: PathLike, *, defaults: str | DefaultsProfile = "seed", host: Layer = None
) -> ContextPolicy:
    """The effective policy of a policy file over `host` and the `defaults` profile."""
    return loads_policy(_read(path), format_for(path), defaults=defaults, host=host, source=str(path))


def policy_diff(
    policy: ContextPolicy, defaults: str | DefaultsProfile | ContextPolicy = "seed"
) -> dict[str, Any]:
    """The fields of `policy` that differ from `defaults`, nested by group; unchanged groups omitted."""
    base = defaults if isinstance(defaults, ContextPolicy) else profile_defaults(defaults)
    return _diff(to_wire(policy), [to_wire(base)])


def dump_policy(
    policy: ContextPolicy,
    only_changed: bool = False,
    fmt: Format = "yaml",
    *,
    defaults: str | DefaultsProfile = "seed",
) -> str:
    """The policy as YAML or JSON text: all of it, or only what differs from the `defaults` profile.

    The JSON form is for linnkit: it always carries `profileId` (linnkit requires it), and in the
    only-changed form it also keeps any field where linnkit 0.21's own defaults differ from the
    chosen profile's (e.g. the seed `maxTokens`), so the pasted policy behaves the same there.
    """
    if not only_changed:
        data = to_wire(policy)
    elif fmt == "json":
        bases = [to_wire(profile_defaults(defaults)), to_wire(profile_defaults(LINNKIT_021_DEFAULTS))]
        data = {"profileId": policy.profile_id, **_diff(to_wire(policy), bases)}
    else:
        data = policy_diff(policy, get_defaults_profile(defaults))
    if fmt == "json":
        return json.dumps(data, indent=2, ensure_ascii=False) + "\n"
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def write_atomic(path: PathLike, text: str, *, protected: PathLike | Iterable[PathLike] = ()) -> Path:
    """Write `text` to `path` via a temporary file in the same directory and `os.replace`.

    Refuses to write over any path in `protected` (the playground passes the open session file).
    """
    if not isinstance(text, str):  # checked before the target's temporary file is made
        raise TypeError(f"write_atomic: the text to write must be a str, not {type(text).__name__}")
    if not os.fspath(path):  # Path("") is the current folder
        raise PolicyFileError("''", "an empty output path")
    target = Path(path)
    guarded = [protected] if isinstance(protected, str | os.PathLike) else list(protected)
    for other in guarded:
        if _same_file(target, Path(other)) or _inside_folder(target, Path(other)):
            raise PolicyFileError(str(target), "refusing to overwrite a protected file (the open session?)")
    problem = output_kind_problem(target)
    if problem is not None:
        raise PolicyFileError(str(target), problem)
    try:
        mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o644
        fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as err:  # name the file the user asked for, never our temporary one
        raise PolicyFileError(str(target), f"cannot write: {err.strerror or err}") from None
    try:
        # a lone surrogate (half an emoji a cut left) cannot be UTF-8: written as its \u escape, which a JSON
        # reader reads back as it was
        with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
    except OSError as err:
        Path(tmp_name).unlink(missing_ok=True)
        raise PolicyFileError(str(target), f"cannot write: {err.strerror or err}") from None
    except BaseException:
        Path(tmp_name).unlink(missing_ok=True)
        raise
    return target


def _diff(current: dict[str, Any], bases: list[dict[str, Any]]) -> dict[str, Any]:
    """Keys of `current` that differ from any base; dicts (groups, sub-objects) are compared per key."""
    out: dict[str, Any] = {}
    for key, value in current.items():
        below = [base.get(key) for base in bases]
        if isinstance(value, dict) and all(isinstance(b, dict) for b in below):
            nested = _diff(value, below)  # type: ignore[arg-type]
            if nested:
                out[key] = nested
        elif any(key not in base or b != value for base, b in zip(bases, below, strict=True)):
            out[key] = value
    return out


def _invalid(source: str, err: PolicyValidationError, doc: YamlDocument | None = None) -> PolicyFileError:
    """One line per issue: `file:line: budget.maxTokens: 0 must be greater than 0`."""
    lines = [f"{_where(source, doc, issue)}: {issue}" for issue in err.issues]
    first = err.issues[0] if err.issues else None
    line = doc.line_of(first.path) if first is not None and doc is not None else None
    text = "\n".join(lines) or f"{source}: invalid policy"
    return PolicyFileError(source, str(first or "invalid policy"), line=line, issues=err.issues, text=text)


def _where(source: str, doc: YamlDocument | None, issue: PolicyIssue) -> str:
    line = doc.line_of(issue.path) if doc is not None else None
    return f"{source}:{line}" if line else source


def _read(path: PathLike) -> str:
    try:
        return decode_utf8(read_regular_file(path), str(path))
    except InputError as err:
        raise PolicyFileError(str(path), err.reason, line=err.line, text=str(err)) from None


def _parse_yaml(text: str, source: str) -> YamlDocument:
    try:
        return load_yaml(text, source)
    except InputError as err:
        raise PolicyFileError(source, err.reason, line=err.line, text=str(err)) from None


def _json_lines(text: str, source: str) -> YamlDocument | None:
    """The lines of a JSON policy's keys and the keys written twice, read by the YAML reader (JSON is
    YAML's flow style): JSON's own reader keeps the last of two keys and says nothing. The data stays
    JSON's; a text the YAML reader does not take gives no lines (None)."""
    try:
        return load_yaml(text, source)
    except InputError:
        return None


def _parse_json(text: str, source: str) -> Any:
    try:
        return decode_json(text) if text.strip() else None
    except json.JSONDecodeError as err:
        raise PolicyFileError(source, f"bad JSON: {err.msg} (column {err.colno})", line=err.lineno) from None
    except (JsonLimitError, ValueError) as err:
        raise PolicyFileError(source, f"bad JSON: {err}") from None


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


def _inside_folder(target: Path, folder: Path) -> bool:
    """`target` is a file already in `folder` (a session kept as a folder: every file of it is its)."""
    return folder.is_dir() and target.is_file() and target.resolve().is_relative_to(folder.resolve())


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()
