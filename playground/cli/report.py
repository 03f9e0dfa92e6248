"""Text and JSON renderings of a BuildResult and of an import report for the headless commands."""

from __future__ import annotations

import json
from dataclasses import asdict
from typing import Any

from engine.importers import ImportResult
from engine.invariants import InvariantReport
from engine.result import BuildResult
from engine.wire import to_anthropic
from playground.app.explain import incomplete_groups


def printable(text: str) -> str:
    """`text` with control characters escaped, so an id cannot add rows or move the cursor in a table."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in text)


def build_json(result: BuildResult, invariants: InvariantReport) -> dict[str, Any]:
    """The `build --json` object; its schema is documented in README.md."""
    tokens = result.tokens
    return {
        "wire": list(result.wire),
        "decisions": [asdict(d) for d in result.decisions],
        "tokens": {
            "maxTokens": tokens.max_tokens,
            "reservedForResponse": tokens.reserved_for_response,
            "totalBudget": tokens.total_budget,
            "workingMemoryBudget": tokens.wm_budget,
            "summarizationTrigger": tokens.trigger_tokens,
            "summaryBudget": tokens.summary_budget,
            "finalTokens": tokens.final_tokens,
            "free": tokens.free,
            "byCategory": tokens.by_category,
            "reminderTokens": result.reminder.tokens,
            "tokenizer": tokens.backend,
        },
        "events": [asdict(e) for e in result.events],
        "trace": result.trace,
        "reminders": {
            "hitRuleIds": list(result.reminder.hit_rule_ids),
            "text": result.reminder.appended_text,
        },
        "summarizationCheck": result.summarization_check,
        "strategiesApplied": list(result.strategies_applied),
        "warnings": list(result.warnings),
        "invariants": [{"id": f.id, "message": f.message} for f in invariants.failures],
        "error": asdict(result.error) if result.error else None,
        "providerProblems": [
            {"provider": p.provider, "index": p.index, "message": p.message} for p in result.provider_problems
        ],
    }


def print_build_table(result: BuildResult, invariants: InvariantReport, wire_shape: str = "openai") -> None:
    print(f"{'#':>4}  {'id':<28} {'type':<18} {'fate':<8} {'phase':<18} {'tokens':>7}  reason")
    incomplete = incomplete_groups(result.preprocessed)
    for d in result.decisions:
        fate = "kept" if d.kept else "dropped"
        where = f" → wire[{d.wire_index}]" if d.wire_index is not None else ""
        via = f" (via {printable(d.replaced_by)})" if d.replaced_by else ""
        why = incomplete.get(d.message_id) if d.reason == "dropped_by_budget_or_priority" else None
        print(
            f"{d.index:>4}  {printable(d.message_id)[:28]:<28} {d.type:<18} {fate:<8} {(d.phase or '-'):<18} "
            f"{d.tokens:>7}  {d.reason}{via}{where}" + (f" — {printable(why)}" if why else "")
        )
    t = result.tokens
    print()
    print(
        f"budget: {t.final_tokens} / {t.total_budget} tokens (maxTokens {t.max_tokens} − reserved "
        f"{t.reserved_for_response}); working memory {t.wm_budget}; summarization trigger "
        f"{t.trigger_tokens:g}; tokenizer {t.backend}"
    )
    print("by category: " + ", ".join(f"{k} {v}" for k, v in t.by_category.items()))
    for event in result.events:
        print(f"event [{event.kind}] {printable(event.title)}")
    for warning in result.warnings:
        print(f"warning: {printable(warning)}")
    for failure in invariants.failures:
        print(f"invariant {failure.id}: {printable(failure.message)}")
    for problem in result.provider_problems:
        print(f"provider: {printable(str(problem))}")
    wire = to_anthropic(list(result.wire)) if wire_shape == "anthropic" else list(result.wire)
    print(f"\nwire ({wire_shape}): {len(result.wire)} messages")
    if wire_shape == "anthropic":
        print(json.dumps(wire, ensure_ascii=False)[:2000])


def print_import_report(imported: ImportResult) -> None:
    """What `import` read: the format, the runner-up, what came in, what was left out and why, each unknown
    type once, problems, unpaired ids."""
    report = imported.report()
    print(f"detected format: {imported.format}; {len(imported.messages)} messages")
    if imported.runner_up:
        print(f"  also claimed by {imported.runner_up} (read it that way with --from {imported.runner_up})")
    if imported.conversations > 1:
        print(f"  one of {imported.conversations} conversations in the file (choose with --conversation N)")
    print("  came in: " + ", ".join(f"{n} {_words(kind)}" for kind, n in report["cameIn"].items()))
    for left in report["leftOut"]:
        if left["reason"].startswith("unknown "):
            continue  # said once below, with the other unknown types
        more = "…" if left["count"] > len(left["firstLines"]) else ""
        shown = ", ".join(map(str, left["firstLines"])) + more
        print(f"  left out {left['count']}: {left['reason']}" + (f" (lines {shown})" if shown else ""))
    for unknown in report["unknownTypes"]:
        how = f"carried as {unknown['carriedAs']}" if unknown["carriedAs"] else "left out"
        lines = ", ".join(map(str, unknown["firstLines"])) + ("…" if unknown["count"] > 5 else "")
        print(f"  unknown {printable(unknown['type'])}: {unknown['count']} (lines {lines}), {how}")
    for problem in report["problems"]:
        print(f"  problem: {printable(problem)}")
    if report["unpaired"]:
        print(f"  unpaired tool ids: {', '.join(report['unpaired'][:10])}")


def _words(camel: str) -> str:
    """`toolCalls` → `tool calls`."""
    return "".join(f" {c.lower()}" if c.isupper() else c for c in camel)
