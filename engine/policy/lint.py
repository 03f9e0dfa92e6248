"""What a policy layer would lose without a word: unknown keys and groups, keys written twice.

linnkit's `defineContextPolicy` drops unknown keys, so `budget: {maxToken: 5000}` silently leaves the
budget at its default. These are warnings (the layer still loads); `validate --strict` makes them errors.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel

from engine.encodings import SUPPORTED_ENCODINGS, resolve_encoding
from engine.policy.merge import _fields
from engine.policy.model import ContextPolicy
from engine.reminders.policy import BUILTIN_RULE_IDS, reminder_policy_warnings
from engine.safe_input import LoadProblem, YamlDocument

WARNING = "warning"


def dotted(path: tuple[Any, ...]) -> str:
    out = ""
    for key in path:
        out += f"[{key}]" if isinstance(key, int) else (f".{key}" if out else str(key))
    return out


def suggestion(key: str, known: Sequence[str], cutoff: float = 0.6) -> str:
    """"; did you mean `maxTokens`?" for a near miss (the same letters in another case or without `_`,
    else a close spelling: `cutoff` as difflib's), else ""."""
    lowered = {name.lower().replace("_", ""): name for name in known}
    exact = lowered.get(key.lower().replace("_", "").replace("-", ""))
    close = [exact] if exact else difflib.get_close_matches(key, list(known), n=1, cutoff=cutoff)
    return f"; did you mean `{close[0]}`?" if close else ""


def unknown_keys(data: Any, model: type[BaseModel] = ContextPolicy) -> list[tuple[tuple[Any, ...], str]]:
    """(path, reason) for each key of `data` that `model` does not know, walking nested groups."""
    found: list[tuple[tuple[Any, ...], str]] = []
    stack: list[tuple[Any, type[BaseModel], tuple[Any, ...]]] = [(data, model, ())]
    while stack:
        value, current, path = stack.pop()
        if not isinstance(value, Mapping):
            continue
        fields = _fields(current)
        known = sorted({alias for alias, _, _ in fields.values()})
        for key, item in value.items():
            spec = fields.get(key) if isinstance(key, str) else None
            if spec is None:
                what = "unknown policy group" if not path else "unknown key"
                found.append(((*path, key), f"{what}, ignored{suggestion(str(key), known)}"))
                continue
            _, sub_model, is_list = spec
            if sub_model is None:
                continue
            if is_list and isinstance(item, list):
                stack.extend((entry, sub_model, (*path, key, i)) for i, entry in enumerate(item))
            elif not is_list:
                stack.append((item, sub_model, (*path, key)))
    return sorted(found, key=lambda entry: [str(part) for part in entry[0]])


def layer_warnings(
    data: Any,
    source: str,
    document: YamlDocument | None = None,
    line: int | None = None,
    prefix: str = "",
) -> list[LoadProblem]:
    """Warnings for one policy layer read from `source` (lines from the YAML `document`, else `line`);
    `prefix` goes before each field (`contextPolicy.` for a session header's policy)."""
    warnings = []
    for path, reason in unknown_keys(data):
        where = document.line_of(path) if document is not None else line
        warnings.append(LoadProblem(source, where, prefix + dotted(path), reason, WARNING))
    for path, where, first in document.duplicates if document is not None else ():
        reason = f"written twice (first on line {first}); the last value is used"
        warnings.append(LoadProblem(source, where, prefix + dotted(path), reason, WARNING))
    for path, reason in [*dropped_rules(data), *_unknown_rule_ids(data), *_encoding_read_as_model(data)]:
        where = document.line_of(path) if document is not None else line
        warnings.append(LoadProblem(source, where, prefix + dotted(path), reason, WARNING))
    return sorted(warnings, key=lambda w: (w.line or 0, w.field))


def _unknown_rule_ids(data: Any) -> list[tuple[tuple[Any, ...], str]]:
    """Ids in `enabledRuleIds` / `disabledRuleIds` that name no built-in rule: the lists select built-ins
    only, so a typo there turns every reminder off (an allowlist) or leaves the rule on (a denylist)."""
    group = data.get("systemReminder") if isinstance(data, Mapping) else None
    found: list[tuple[tuple[Any, ...], str]] = []
    for key, does in (("enabledRuleIds", "allows"), ("disabledRuleIds", "turns off")):
        ids = group.get(key) if isinstance(group, Mapping) else None
        for index, rule_id in enumerate(ids if isinstance(ids, list) else ()):
            if isinstance(rule_id, str) and rule_id not in BUILTIN_RULE_IDS:
                known = ", ".join(BUILTIN_RULE_IDS)
                hint = suggestion(rule_id, list(BUILTIN_RULE_IDS))
                reason = f"'{rule_id}' names no built-in rule, so it {does} nothing (built-in: {known}){hint}"
                found.append((("systemReminder", key, index), reason))
    return found


def _encoding_read_as_model(data: Any) -> list[tuple[tuple[Any, ...], str]]:
    """An `encoding` that names no tiktoken encoding: linnkit reads it as a model name (a typo too)."""
    group = data.get("tokenEstimation") if isinstance(data, Mapping) else None
    name = group.get("encoding") if isinstance(group, Mapping) else None
    if not isinstance(name, str) or not name.strip() or name.strip().lower() in SUPPORTED_ENCODINGS:
        return []
    chosen = resolve_encoding(name)
    reason = f"{name!r} names no encoding; read as a model name, it counts with {chosen}, as linnkit does"
    return [(("tokenEstimation", "encoding"), reason)]


_RULE_FIELD = re.compile(r"systemReminder\.extraRules\[(\d+)\]\.([\w.]+)")


def dropped_rules(data: Any) -> list[tuple[tuple[Any, ...], str]]:
    """(path, reason) for each extra reminder rule of a layer that a build drops, as linnkit does, for
    its unknown trigger kind or template (the build's own warning, said when the file is read)."""
    group = data.get("systemReminder") if isinstance(data, Mapping) else None
    if not isinstance(group, Mapping) or not isinstance(group.get("extraRules"), list):
        return []
    found = []
    for warning in reminder_policy_warnings(group):
        field, _, reason = warning.partition(": ")
        match = _RULE_FIELD.fullmatch(field)
        if match is not None:
            found.append((("systemReminder", "extraRules", int(match[1]), *match[2].split(".")), reason))
    return found
