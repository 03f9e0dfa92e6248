"""The recorded run: what the provider counted and billed for every model call of a session.

An importer leaves each call's usage (`engine.usage`) on the last message the call produced
(`metadata.usage`), and the billed calls no message carries (another branch, a sub-agent's file) in the
header's `recordedCalls`. `recorded_run` reads them back, checked: a usage that does not read is named
and the call counts as unrecorded, never as a sample.

A replay step is one model call (`engine.ticks.step_points`): it builds from the first `upto` messages and
the block of assistant messages after them is what the call wrote. The step's recorded call is the first
usage in that block (`RecordedRun.at_step`). Calls are priced each by its own model (sessions mix models),
cache writes at their tier: `recorded_cost`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.messages import AiMessage
from engine.prices import Price, PriceTable
from engine.usage import RecordedUsage, UsageProblem, read_usage

__all__ = ["RecordedCall", "RecordedCost", "RecordedRun", "call_cost", "recorded_cost", "recorded_run"]


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """One billed call: its usage, and the message carrying it (None for a call of another branch or file,
    then `why` says which)."""

    usage: RecordedUsage
    index: int | None = None
    message_id: str | None = None
    why: str | None = None
    file: str | None = None
    line: int | None = None


@dataclass(frozen=True, slots=True)
class RecordedRun:
    calls: tuple[RecordedCall, ...] = ()
    problems: tuple[str, ...] = ()
    problem_lines: tuple[int | None, ...] = ()  # each problem's line in the session file, when known
    _by_block: dict[int, RecordedCall] = field(default_factory=dict, compare=False, repr=False)

    def __bool__(self) -> bool:
        return bool(self.calls)

    @property
    def own_calls(self) -> tuple[RecordedCall, ...]:
        """The calls of this conversation, in order (the ones its messages carry)."""
        return tuple(c for c in self.calls if c.index is not None)

    def at_step(self, upto: int) -> RecordedCall | None:
        """The call a replay step building from `messages[:upto]` made, if it was recorded."""
        return self._by_block.get(upto)

    def models(self) -> dict[str, int]:
        """Calls per model, the most used first."""
        return dict(Counter(c.usage.model or "unknown" for c in self.calls).most_common())


def recorded_run(
    messages: Sequence[AiMessage], header: Mapping[str, Any] | None = None, lines: Sequence[int] = ()
) -> RecordedRun:
    """The calls a session's messages and header record; usages that do not read are named in `problems`,
    with the file line of their message when `lines` (one per message) has it."""
    calls: list[RecordedCall] = []
    problems: list[str] = []
    problem_lines: list[int | None] = []
    by_block: dict[int, RecordedCall] = {}
    block_start = 0
    for index, message in enumerate(messages):
        if message.role != "assistant":
            block_start = index + 1
            continue
        raw = message.metadata.get("usage") if message.metadata else None
        if raw is None:
            continue
        usage = read_usage(raw)
        if isinstance(usage, UsageProblem):
            problems.append(f"message {message.id}: metadata.{usage}")
            problem_lines.append(lines[index] if index < len(lines) else None)
            continue
        call = RecordedCall(usage, index, message.id)
        calls.append(call)
        by_block.setdefault(block_start, call)
        block_start = index + 1  # the next assistant message is the next call's (as `step_points` cuts)
    for n, entry in enumerate(_header_calls(header)):
        usage = read_usage(entry)
        if isinstance(usage, UsageProblem):
            problems.append(f"header recordedCalls[{n}]: {usage}")
            problem_lines.append(1 if lines else None)
            continue
        line = entry.get("line") if isinstance(entry.get("line"), int) else None
        why, file = entry.get("why"), entry.get("file")
        calls.append(RecordedCall(usage, None, None, str(why or "not in this conversation"),
                                  file if isinstance(file, str) else None, line))  # fmt: skip
    return RecordedRun(tuple(calls), tuple(problems), tuple(problem_lines), by_block)


def _header_calls(header: Mapping[str, Any] | None) -> Iterable[dict[str, Any]]:
    listed = header.get("recordedCalls") if header else None
    return [entry for entry in listed if isinstance(entry, dict)] if isinstance(listed, list) else []


def call_cost(usage: RecordedUsage, price: Price) -> float:
    """USD for one recorded call: uncached input, cache read, cache writes at their tier, output."""
    return price.cost(
        cached=usage.cache_read_tokens,
        written=usage.cache_write_5m_tokens,
        written_1h=usage.cache_write_1h_tokens,
        uncached=usage.uncached_tokens,
        output=usage.output_tokens,
    )


@dataclass(frozen=True, slots=True)
class RecordedCost:
    """What the recorded calls cost at list prices, per model; calls whose model has no price are counted."""

    cost_usd: float
    calls: int
    by_model: dict[str, float]
    unpriced: dict[str, int]  # model → calls no price was found for
    other_calls_usd: float  # of it, the calls no message of this conversation carries (sub-agents, ...)

    def to_json(self) -> dict[str, Any]:
        return {
            "recordedCostUsd": round(self.cost_usd, 6),
            "recordedCalls": self.calls,
            "recordedCostByModel": {m: round(v, 6) for m, v in sorted(self.by_model.items())},
            "recordedOtherCallsUsd": round(self.other_calls_usd, 6),
            "unpricedCalls": dict(self.unpriced),
        }


def recorded_cost(run: RecordedRun, prices: PriceTable) -> RecordedCost:
    total = others = 0.0
    by_model: Counter[str] = Counter()
    unpriced: Counter[str] = Counter()
    for call in run.calls:
        model = call.usage.model or "unknown"
        price = prices.find(call.usage.model, call.usage.provider)
        if price is None:
            unpriced[model] += 1
            continue
        cost = call_cost(call.usage, price)
        total += cost
        by_model[price.model] += cost
        if call.index is None:
            others += cost
    return RecordedCost(total, len(run.calls), dict(by_model), dict(unpriced), others)
