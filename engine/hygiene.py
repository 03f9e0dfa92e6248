"""History hygiene: what linnkit does *not* repair (spec §9 D7), reported as warnings, never changed.

Orphan tool calls and outputs, outputs without a `tool_call_id`, repeated message ids and empty messages.
Working memory never keeps incomplete groups, so orphans simply fall out; the user should know why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from engine.messages import AiMessage, call_id

EMPTY_OK = frozenset({"tool_calls"})  # a tool-call message usually has empty content


HygieneKind = Literal["duplicate_id", "output_without_call_id", "orphan_output", "orphan_call", "empty"]


@dataclass(frozen=True, slots=True)
class HygieneWarning:
    """One thing linnkit would not repair in the history; `str()` is the line a build's warnings carry."""

    kind: HygieneKind
    message_id: str
    text: str

    def __str__(self) -> str:
        return f"{self.message_id}: {self.text}"


# the last session checked (rebuilds repeat it)
_LAST: list[tuple[tuple[AiMessage, ...], list[HygieneWarning]]] = []


def hygiene_warnings(messages: Sequence[AiMessage]) -> list[str]:
    return [str(w) for w in hygiene_checks(messages)]


def hygiene_checks(messages: Sequence[AiMessage]) -> list[HygieneWarning]:
    """The history's hygiene warnings, each with its kind."""
    frozen = tuple(messages)
    if (
        _LAST
        and len(_LAST[0][0]) == len(frozen)
        and all(a is b for a, b in zip(_LAST[0][0], frozen, strict=True))
    ):
        return list(_LAST[0][1])
    warnings = _check(frozen)
    _LAST[:] = [(frozen, warnings)]
    return list(warnings)


def _check(messages: Sequence[AiMessage]) -> list[HygieneWarning]:
    warnings: list[HygieneWarning] = []
    counts = Counter(m.id for m in messages)
    warnings += [
        HygieneWarning("duplicate_id", i, f"message id used {n} times") for i, n in counts.items() if n > 1
    ]
    declared: dict[str, str] = {}
    answered: set[str] = set()
    for message in messages:
        if message.type == "tool_calls":
            for call in message.tool_calls:
                if call_id(call).strip():
                    declared[call_id(call)] = message.id
        elif message.type == "tool_output":
            cid = message.tool_call_id
            if cid is None:
                text = "tool output without tool_call_id (not sent on the wire)"
                warnings.append(HygieneWarning("output_without_call_id", message.id, text))
            elif cid not in declared:
                text = f"orphan tool output: no earlier call declares {cid}"
                warnings.append(HygieneWarning("orphan_output", message.id, text))
            else:
                answered.add(cid)
        if not message.content.strip() and message.type not in EMPTY_OK:
            warnings.append(HygieneWarning("empty", message.id, f"empty {message.type} message"))
    warnings += [
        HygieneWarning("orphan_call", anchor, f"orphan tool call {cid}: no output answers it")
        for cid, anchor in declared.items()
        if cid not in answered
    ]
    return warnings
