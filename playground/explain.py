"""How both front ends describe one decision: the rows of the trace explorer, in words."""

from __future__ import annotations

from collections.abc import Callable

from engine.result import BuildResult, Decision


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


def summarization_verdict(result: BuildResult, tokens: Callable[[int], str] = str) -> str:
    """Why this build made a summary or not, with linnkit's two trigger stages and their numbers."""
    if result.error is not None:
        return f"no summary: the build failed ({result.error.code})"
    made = next((e for e in result.events if e.kind == "summarization" and "summaryId" in e.data), None)
    if made is not None:
        data = made.data
        return (f"summary made: {len(data['replacedIds'])} messages ({tokens(data['replacedTokens'])} tok) → "
                f"{tokens(data['summaryTokens'])} tok")
    check = result.summarization_check
    if not check:
        return "no summary: the trigger was not checked"
    used, available, threshold = check["used"], check["available"], check["threshold"]
    trigger = threshold / result.tokens.total_budget if result.tokens.total_budget else 0.0
    if available < 0:
        return f"no summary: skipped, the context is already over budget ({tokens(-available)} tok over)"
    if not check["precheckPassed"]:
        share = used / available if available else 0.0
        return (f"no summary: stage 1, kept {tokens(used)} ÷ remaining {tokens(available)} = {share:.0%} "
                f"< trigger {trigger:.0%}")
    if check.get("contentTokens") is None:
        return f"no summary: stage 2, kept {tokens(used)} < 0.9 × threshold {tokens(round(threshold))}"
    if not check["fired"]:
        return (f"no summary: stage 2, content-only count {tokens(check['contentTokens'])} "
                f"< threshold {tokens(round(threshold))}")
    if "ai_history_summarization_failed_continue" in result.strategies_applied:
        return "no summary: the summarizer failed; the build went on without one (continue-if-within-budget)"
    return "no summary: the trigger fired but there were fewer than 5 candidates to summarise"
