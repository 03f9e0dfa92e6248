"""One replay as the rows the audit store keeps, made while the replay runs (no database here: a sweep's
worker captures a run and either sends it back or writes it as Parquet parts).

    capture = RunCapture(inputs, policy, settings)
    for step, cost in iter_step_costs(...):
        capture.add(step, cost)
    run = capture.finish(totals)            # a CapturedRun: picklable, `RunStore.record(run)` keeps it

The run's id is the content hash of the session text, the policy, the fences, the engine version and the
settings that change a replay's figures, so the same replay recorded twice is one run. Capturing reads
what the replay made already (the step's summary line, its cost with the user requests' decisions, its
events), keeping a user request's decision at the step it first appears and at each step its fate changes
(kept, replaced, or dropped and why), and every message's decision at the last step: making all decisions
at every step would cost more than the replay.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

from engine import (
    BuildResult,
    ContextPolicy,
    Decision,
    Event,
    StepCost,
    dump_fences,
    dump_policy,
    policy_diff,
)
from engine.replay import StepBuild
from engine.session import dump_session_text
from playground.app.inputs import PlaygroundInputs


@cache
def engine_version() -> str:
    """The package's version and the linnkit release it decides as: part of every run's hash."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        own = version("linn-playground")
    except PackageNotFoundError:  # a source tree run without installing
        own = "source"
    return f"linn-playground {own}; linnkit 0.21"


def content_hash(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"), default=str)


def replay_settings(*, wire: str, model: str | None, prices: Any, copy: str, as_recorded: bool,
                    conversation: int | None, max_steps: int, calibration: Any, given_offset: int | None
                    ) -> dict[str, Any]:  # fmt: skip
    """What changes a replay's figures besides session, policy and fences: part of the run's hash (the
    price table and a calibration by their content)."""
    return {
        "wire": wire, "model": model, "prices": content_hash(repr(prices))[:16], "copy": copy,
        "asRecorded": as_recorded, "conversation": conversation, "maxSteps": max_steps,
        "calibration": content_hash(calibration.to_yaml())[:16] if calibration is not None else None,
        "givenOffset": given_offset,
    }  # fmt: skip


def _grown(before: Sequence[Any] | None, now: Sequence[Any]) -> tuple[int, Sequence[Any]]:
    """(n, what `now` adds) when `now` starts with `before` (n = len(before) > 0), else (0, now)."""
    if before and len(now) >= len(before) and now[: len(before)] == before:
        return len(before), now[len(before) :]
    return 0, now


def action_of(decision: Decision) -> str:
    if decision.reason.startswith("replaced_by_"):
        return "replaced"
    return "kept" if decision.kept else "dropped"


@dataclass(slots=True)
class CapturedRun:
    """A run's rows, table by table (column names as in `playground.app.store.schema.TABLES`)."""

    run: dict[str, Any]
    session: dict[str, Any]
    steps: list[dict[str, Any]] = field(default_factory=list)
    decisions: list[dict[str, Any]] = field(default_factory=list)
    events: list[dict[str, Any]] = field(default_factory=list)

    @property
    def run_id(self) -> str:
        return self.run["run_id"]

    def rows(self, table: str) -> list[dict[str, Any]]:
        return {"runs": [self.run], "sessions": [self.session]}.get(table) or getattr(self, table)


class RunCapture:
    """Collects one replay's rows step by step; `finish` adds the totals and returns the `CapturedRun`."""

    def __init__(self, inputs: PlaygroundInputs, policy: ContextPolicy, settings: Mapping[str, Any]) -> None:
        session = inputs.session
        text = dump_session_text(session.messages, session.header)
        session_hash = content_hash(text)
        policy_yaml = dump_policy(policy)
        fences_yaml = dump_fences(inputs.fences) if inputs.fences else None
        settings_text = _canonical(dict(settings))
        policy_hash = content_hash(policy_yaml)
        run_id = content_hash(session_hash, policy_hash, fences_yaml or "", engine_version(), settings_text)
        title = inputs.header.get("title")
        self.run: dict[str, Any] = {
            "run_id": run_id,
            "recorded_at": datetime.now(UTC).replace(tzinfo=None),
            "source": str(Path(session.path).resolve()),
            "title": title if isinstance(title, str) else None,
            "session_hash": session_hash,
            "policy_hash": policy_hash,
            "policy_yaml": policy_yaml,
            "policy_changes": _canonical(policy_diff(policy, inputs.defaults)),
            "fences_yaml": fences_yaml,
            "defaults": inputs.defaults,
            "engine_version": engine_version(),
            "settings": settings_text,
        }
        self.session = {"session_hash": session_hash, "messages": len(session.messages), "jsonl": text}
        self.steps: list[dict[str, Any]] = []
        self.decisions: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        self._fates: dict[str, str] = {}
        self._events: dict[str, dict[str, Any]] = {}  # kind → its lists at the previous step
        self._last: BuildResult | None = None

    @property
    def run_id(self) -> str:
        return self.run["run_id"]

    def add(self, step: StepBuild, cost: StepCost, line: Mapping[str, Any] | None = None) -> None:
        """One replayed step and its cost (`line`: its `step.summary()`, when the caller made it)."""
        line = line if line is not None else step.summary()
        number, result = step.number, step.result
        self.steps.append({
            "run_id": self.run_id, "step": number, "messages": line["messages"],
            "node_step": line["nodeStep"], "final_tokens": line["finalTokens"],
            "total_budget": line["totalBudget"], "kept": line["kept"], "tokens_sent": cost.tokens_sent,
            "cached_tokens": cost.cached_tokens, "new_tokens": cost.new_tokens,
            "cache_break_at": cost.break_at, "cache_break_by": cost.mechanism,
            "output_tokens": cost.output_tokens, "summary_made": line["summaryMade"],
            "summaries_carried": line["summariesCarried"], "summarizer_calls": cost.summarizer_calls,
            "summarizer_prompt_tokens": cost.summarizer_prompt_tokens,
            "summarizer_summary_tokens": cost.summarizer_summary_tokens,
            "reminders": list(line["reminders"]), "markers": line["markers"], "over_budget": cost.over_budget,
            "error": line["error"], "user_requests_dropped": cost.user_requests_dropped,
            "cost_usd": cost.cost_usd, "prompt_tokens": cost.predicted_prompt_tokens,
            "recorded_prompt_tokens": cost.recorded_prompt_tokens,
        })  # fmt: skip
        for seq, event in enumerate(result.events):
            self.events.append(self._event(number, seq, event))
        for decision in result.decisions_of_type("user_input"):  # only a stored run reads them all
            # a fate is its action, and a drop's reason (a replaced request's reason changes at each
            # summary that folds the last one in: not a change of its fate)
            action = action_of(decision)
            fate = decision.reason if action == "dropped" else action
            if self._fates.get(decision.message_id) != fate:
                self._fates[decision.message_id] = fate
                self.decisions.append(self._decision(number, decision, final=False))
        self._last = result

    def _event(self, number: int, seq: int, event: Event) -> dict[str, Any]:
        """An event's row. Events restate what built up (a compression event names every group compressed
        so far), so a list the same kind's event at the previous step held as its start is kept as what
        it added: `ids_from` (message ids) and `{"from": n, "added": [...]}` (a list in `data`)."""
        before = self._events.get(event.kind, {})
        self._events[event.kind] = {"": event.message_ids, **event.data}
        ids_from, ids = _grown(before.get(""), event.message_ids)
        data = {}
        for key, value in event.data.items():
            start, added = _grown(before.get(key), value) if isinstance(value, list) else (0, value)
            data[key] = {"from": start, "added": added} if start else value
        return {
            "run_id": self.run_id, "step": number, "seq": seq, "kind": event.kind, "title": event.title,
            "message_count": len(event.message_ids), "ids_from": ids_from, "message_ids": list(ids),
            "data": _canonical(data),
        }  # fmt: skip

    def _decision(self, step: int, decision: Decision, *, final: bool) -> dict[str, Any]:
        return {
            "run_id": self.run_id, "step": step, "message_id": decision.message_id, "role": decision.role,
            "type": decision.type, "action": action_of(decision), "reason": decision.reason,
            "phase": decision.phase, "strategy": decision.strategy, "tokens": decision.tokens,
            "final": final,
        }  # fmt: skip

    def finish(
        self, totals: Mapping[str, Any], *, sweep: str | None = None, sweep_policy: str | None = None
    ) -> CapturedRun:
        """The run with its totals (the `{"totals": …}` line of `replay --json`)."""
        if self._last is not None:
            last = len(self.steps)
            self.decisions += [self._decision(last, d, final=True) for d in self._last.decisions]
        run = {
            **self.run,
            "steps": len(self.steps),
            "tokens_sent": totals.get("tokensSent"),
            "cached_tokens": totals.get("cachedTokens"),
            "cache_breaks": totals.get("cacheBreaks"),
            "summaries_made": totals.get("summariesMade"),
            "over_budget_steps": totals.get("overBudgetSteps"),
            "failed_steps": totals.get("failedSteps"),
            "user_requests_dropped": totals.get("userRequestsDropped"),
            "cost_usd": totals.get("costUsd"),
            "cost_no_cache_usd": totals.get("costNoCacheUsd"),
            "totals": _canonical(dict(totals)),
            "sweep": sweep,
            "sweep_policy": sweep_policy,
        }
        return CapturedRun(run, self.session, self.steps, self.decisions, self.events)
