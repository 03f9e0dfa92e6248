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
from pathlib import Path
from typing import Any, Literal

import yaml

from engine.errors import EngineError
from engine.policy.errors import PolicyIssue, PolicyValidationError
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

Format = Literal["yaml", "json"]
PathLike = str | os.PathLike[str]


class PolicyFileError(EngineError, ValueError):
    """A policy file (or text) that cannot be used; the message names the source and, if known, the line."""

    def __init__(
        self, source: str, problem: str, *, line: int | None = None, issues: Iterable[PolicyIssue] = ()
    ) -> None:
        self.source, self.problem, self.line, self.issues = source, problem, line, tuple(issues)
        where = f"{source}, line {line}" if line else source
        super().__init__(f"{where}: {problem}")


def format_for(path: PathLike) -> Format:
    """`json` for a `.json` file, else `yaml`."""
    return "json" if Path(path).suffix.lower() == ".json" else "yaml"


def parse_policy_text(text: str, fmt: Format = "yaml", source: str = "<text>") -> dict[str, Any]:
    """Parse one layer: a mapping (an empty document is an empty layer). Values are not checked yet."""
    data = _parse_json(text, source) if fmt == "json" else _parse_yaml(text, source)
    if data is None:
        return {}
    if not isinstance(data, Mapping):
        raise PolicyFileError(source, f"expected a mapping of policy groups, got {_kind(data)}")
    return dict(data)


def parse_policy_layer(text: str, fmt: Format = "yaml", source: str = "<text>") -> dict[str, Any]:
    """Parse and validate one layer; returns it normalised (camelCase, unset values dropped)."""
    layer = normalize_layer(parse_policy_text(text, fmt, source))
    try:
        validate_policy(layer)
    except PolicyValidationError as err:
        raise _invalid(source, err) from None
    return layer


def read_policy_layer(path: PathLike) -> dict[str, Any]:
    """Read and validate a policy file as a layer (for use as host or agent layer)."""
    return parse_policy_layer(_read(path), format_for(path), str(path))


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
    target = Path(path)
    guarded = [protected] if isinstance(protected, str | os.PathLike) else list(protected)
    for other in guarded:
        if _same_file(target, Path(other)):
            raise PolicyFileError(str(target), "refusing to overwrite a protected file (the open session?)")
    mode = stat.S_IMODE(target.stat().st_mode) if target.exists() else 0o644
    fd, tmp_name = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, mode)
        os.replace(tmp_name, target)
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


def _invalid(source: str, err: PolicyValidationError) -> PolicyFileError:
    lines = "\n".join(f"  {issue}" for issue in err.issues)
    return PolicyFileError(source, f"invalid policy:\n{lines}", issues=err.issues)


def _read(path: PathLike) -> str:
    try:
        return Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise PolicyFileError(str(path), f"cannot read the file ({err})") from None


def _parse_yaml(text: str, source: str) -> Any:
    try:
        return yaml.safe_load(text)
    except yaml.constructor.ConstructorError as err:
        line = err.problem_mark.line + 1 if err.problem_mark else None
        problem = f"{err.problem}; only plain YAML (mappings, lists, strings, numbers, booleans) is allowed"
        raise PolicyFileError(source, f"unsafe or unknown YAML tag: {problem}", line=line) from None
    except yaml.MarkedYAMLError as err:
        line = err.problem_mark.line + 1 if err.problem_mark else None
        problem = " ".join(part for part in (err.context, err.problem) if part)
        raise PolicyFileError(source, f"bad YAML: {problem}", line=line) from None
    except yaml.YAMLError as err:
        raise PolicyFileError(source, f"bad YAML: {err}") from None


def _parse_json(text: str, source: str) -> Any:
    try:
        return json.loads(text) if text.strip() else None
    except json.JSONDecodeError as err:
        raise PolicyFileError(source, f"bad JSON: {err.msg} (column {err.colno})", line=err.lineno) from None


def _kind(value: Any) -> str:
    return {list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__
    )


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()
