"""How both front ends describe one decision: the rows of the trace explorer, in words."""

from __future__ import annotations

from collections.abc import Callable

from engine.result import Decision


def decision_rows(decision: Decision, tokens: Callable[[int], str] = str) -> list[tuple[str, str]]:
    rows = [
        ("fate", "kept" if decision.kept else "dropped"),
        ("message", f"{decision.role} · {decision.type}"),
        ("index", "created by the build" if decision.index < 0 else str(decision.index)),
        ("stage", decision.stage),
        ("phase", decision.phase or "–"),
        ("reason", decision.reason),
        ("strategy", decision.strategy or "–"),
        ("tokens", tokens(decision.tokens)),
        ("wire index", "–" if decision.wire_index is None else str(decision.wire_index)),
    ]
    if decision.replaced_by:
        rows.append(("replaced by", decision.replaced_by))
    if decision.note:
        rows.append(("note", decision.note))
    return rows
