"""History hygiene: what linnkit does *not* repair (spec §9 D7), reported as warnings, never changed.

Orphan tool calls and outputs, outputs without a `tool_call_id`, repeated message ids and empty messages.
Working memory never keeps incomplete groups, so orphans simply fall out; the user should know why.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from engine.messages import AiMessage, call_id

EMPTY_OK = frozenset({"tool_calls"})  # a tool-call message usually has empty content


_LAST: list[tuple[tuple[AiMessage, ...], list[str]]] = []  # the last session checked (rebuilds repeat it)


def hygiene_warnings(messages: Sequence[AiMessage]) -> list[str]:
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


def _check(messages: Sequence[AiMessage]) -> list[str]:
    warnings: list[str] = []
    counts = Counter(m.id for m in messages)
    warnings += [f"{i}: message id used {n} times" for i, n in counts.items() if n > 1]
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
                warnings.append(f"{message.id}: tool output without tool_call_id (not sent on the wire)")
            elif cid not in declared:
                warnings.append(f"{message.id}: orphan tool output: no earlier call declares {cid}")
            else:
                answered.add(cid)
        if not message.content.strip() and message.type not in EMPTY_OK:
            warnings.append(f"{message.id}: empty {message.type} message")
    warnings += [
        f"{anchor}: orphan tool call {cid}: no output answers it"
        for cid, anchor in declared.items()
        if cid not in answered
    ]
    return warnings
