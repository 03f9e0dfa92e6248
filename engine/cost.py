"""What a policy costs over a replay: per step, the tokens sent and the part a provider's prompt cache can
serve; where the cached prefix broke and which mechanism broke it; per session, totals and a price.

A provider caches a prompt by its prefix: the wire messages of step k that are identical, from the start,
to step k-1's (whole messages, in the wire shape in use: OpenAI's chat messages, or Anthropic's `system`
followed by its merged turns) can be read from the cache; the rest is new and, with caching on, written to
it. Tokens are the build's own counts (each wire message's card, the reminder on the last one).

The mechanism that broke the prefix is read from the two builds, never re-derived: the first differing
wire message's carried session messages have a decision in each build, and the one whose fate changed says
why (`replaced_by_tool_history_compression`, `dropped_by_CHECKPOINT_PURGED`, ...); a reminder is the
`reminder` mark on that card. Summarizer calls come from the summarization events.

This needs detailed builds (`detail=True`, the default): their cards and decisions.

A recorded session (`engine.truth`) makes the figures the provider's: a step given its `StepTruth` is
priced by the model its recorded call named (sessions mix models), its answer counts the recorded output
tokens, its prompt is the predicted provider count (`ceil(coefficient × local) + offset`, the offset in the
cached prefix), and it writes the cache at the tier the recorded call wrote. The prompt cache is kept per
model and expires: a call more than its time-to-live after the previous call of its model (5 minutes, an
hour when the record wrote the 1-hour cache) reads nothing (`expired`). Whether the provider's cache
served a call is the provider's doing: a recorded call reads, of the prefix the policy kept, the share its
record read of the previous call's prompt; a step without a recorded call misses at the record's rate.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from engine.cache_breaks import SHAPES, WireUnits, break_mechanism, common_prefix, wire_units
from engine.calibration import CalibrationSample, TokenRoute
from engine.cost_figures import SessionCost, StepCost
from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.prices import Price, PriceTable
from engine.provider_count import provider_counts
from engine.recorded import call_cost
from engine.replay import StepBuild, iter_session_steps
from engine.requests_lost import RequestsLost
from engine.result import BuildResult
from engine.tokens import TokenizerPort, tokenizer_from_policy
from engine.truth import StepTruth, error_summary
from engine.usage import RecordedUsage

__all__ = ["CostTracker", "SessionCost", "StepCost", "session_cost"]

MISS_PRIOR = 10  # warm calls without a miss assumed before a record's own: see CostTracker._miss_rate
TTL_MS = {"5m": 5 * 60_000, "1h": 60 * 60_000}


def _summarizer(result: BuildResult) -> tuple[int, int, int]:
    """Summary-agent calls of a build (retries included), their prompt tokens and summary tokens."""
    calls = prompt = summary = 0
    for event in result.events:
        data = event.data
        if event.kind == "summarization" and "promptTokens" in data:
            calls += data["attempts"]
            prompt += data["promptTokens"] * data["attempts"]
            summary += data.get("summaryTokens", 0)
    return calls, prompt, summary


_NO_UNITS = WireUnits((), [])  # a failed build's, and the cache before any step


@dataclass(slots=True)
class _Held:
    """The cache a model holds: the last step sent to it, when, and at which tier it was written."""

    result: BuildResult
    units: WireUnits
    at: int | float | None
    tier: str


class CostTracker:
    """Feed it a replay's steps in order (`add`); it keeps, per model, the last step sent, one build each.

    `prices` prices a step by the model its recorded call names (`StepTruth`); `price` is the row for the
    rest (and every step of a session without a record)."""

    def __init__(
        self,
        messages: Sequence[AiMessage],
        *,
        policy: Any = None,
        tokenizer: TokenizerPort | None = None,
        model_id: str | None = None,
        shape: str = "openai",
        price: Price | None = None,
        prices: PriceTable | None = None,
    ) -> None:
        if shape not in SHAPES:
            raise ValueError(f"wire shape {shape!r}: expected one of {', '.join(SHAPES)}")
        self.messages = messages
        self.shape, self.price, self.prices, self.model_id = shape, price, prices, model_id
        self.tokenizer = tokenizer or tokenizer_from_policy(define_context_policy(policy).token_estimation)
        self._held: dict[str, _Held] = {}  # model (or "" without a record) → its cache
        self._summary_steps: list[int] = []
        self._lost = RequestsLost()
        self._breaks: Counter[str] = Counter()
        self._totals: Counter[str] = Counter()
        self._priced: Counter[str] = Counter()  # price row → steps priced with it
        self._cost = self._no_cache = 0.0
        self._predicted: int | None = None
        self._recorded_cost: float | None = None
        self._cost_at_recorded: float | None = None
        self._warm_calls: dict[str, int] = {}  # per model: recorded calls made while its cache was warm
        self._misses: dict[str, int] = {}  # and how many of them read less than half their prompt
        self._last_prompt: dict[str, int] = {}  # per model: the prompt its last recorded call sent
        self._carried: dict[str, int] = {}  # per model: the encrypted reasoning its last step sent back
        self._errors: list[float] = []

    def add(self, number: int, upto: int, result: BuildResult, truth: StepTruth | None = None) -> StepCost:
        """Cost step `number` (building from `messages[:upto]`); `truth` is its `engine.truth.StepTruth`."""
        own = wire_units(result, self.shape) if result.error is None else _NO_UNITS
        key = truth.model if truth is not None else ""
        counts = provider_counts(result, truth.model) if truth is not None else None
        units = own
        if counts is not None:  # the figure the provider's count is predicted from (engine.provider_count)
            units = own.counted(counts)
        held, at = self._held.get(key), self._time(upto)
        expired = held is not None and _expired(held, at)
        before = held.units if held is not None and not expired else _NO_UNITS
        prefix = common_prefix(before.payloads, units.payloads)
        sent = sum(units.tokens)
        cached = sum(units.tokens[:prefix])
        mechanism = self._mechanism(result, held, expired, prefix)
        calls, prompt, summary = _summarizer(result)
        made = result.error is None and bool(result.summary_events)
        recorded = truth.recorded.usage if truth is not None and truth.recorded is not None else None
        output = recorded.output_tokens if recorded is not None else self._output_tokens(upto)
        predicted = truth.predict(sent) if truth is not None else None
        price = self._price_for(truth)
        tier = (
            "1h"
            if recorded is not None and 2 * recorded.cache_write_1h_tokens > recorded.cache_write_tokens
            else "5m"
        )
        cost = no_cache = None
        if price is not None:
            billed_sent, billed_cached = sent, cached
            if predicted is not None:  # the provider's counts: the offset sits in the cached prefix
                billed_sent = max(predicted, 0)
                warm = self._provider_cached(key, truth, cached, bool(before))
                billed_cached = min(max(warm, 0), billed_sent)
            written = billed_sent - billed_cached
            summarizer = price.cost(uncached=prompt, output=summary)
            cost = (
                price.cost(
                    cached=billed_cached,
                    written=written if tier == "5m" else 0,
                    written_1h=written if tier == "1h" else 0,
                    output=output,
                )
                + summarizer
            )
            no_cache = price.cost(uncached=billed_sent, output=output) + summarizer
            self._cost += cost
            self._no_cache += no_cache
            self._priced[price.model] += 1
        broke = mechanism is not None
        billed = call_cost(recorded, price) if recorded is not None and price is not None else None
        dropped, newly_dropped = self._lost.step(result)
        step = StepCost(
            number, sent, cached, sent - cached, len(units), prefix, prefix if broke else None, mechanism,
            output, calls, prompt, summary, made, result.tokens.over_budget, result.error is not None,
            dropped, cost, no_cache, None if price is None else price.model, predicted,
            None if recorded is None else recorded.prompt_tokens,
            None if truth is None else truth.as_recorded_prompt,
            billed,
            None if truth is None else truth.error,
            own,
            newly_dropped,
        )  # fmt: skip
        self._record(step)
        if predicted is not None:
            self._predicted = (self._predicted or 0) + predicted
        if billed is not None:
            self._recorded_cost = (self._recorded_cost or 0.0) + billed
            self._cost_at_recorded = (self._cost_at_recorded or 0.0) + (cost or 0.0)
        if truth is not None and truth.error is not None:
            self._errors.append(truth.error)
        if result.error is None:
            self._held[key] = _Held(result, units, at, tier)
        if recorded is not None:
            self._last_prompt[key] = recorded.prompt_tokens
        if truth is not None:
            self._carried[key] = truth.carried_reasoning
        if recorded is not None and before:
            self._warm_calls[key] = self._warm_calls.get(key, 0) + 1
            self._misses[key] = self._misses.get(key, 0) + (
                2 * recorded.cache_read_tokens < recorded.prompt_tokens
            )
        return step

    def _provider_cached(self, key: str, truth: StepTruth, cached: int, warm_cache: bool) -> int:
        """The provider's cache read at this step: of `cached` local tokens unchanged since the model's last
        step (and the offset), what its cache served then, or is expected to serve."""
        recorded = truth.recorded.usage if truth.recorded is not None else None
        # cold: what the transcript lacks may still be cached (shared with other sessions)
        cold = min(truth.offset, recorded.cache_read_tokens) if recorded is not None else 0
        if not warm_cache:
            return cold
        # the turn's reasoning the last call already sent back sits in the prefix too
        carried = min(self._carried.get(key, 0), truth.carried_reasoning)
        warm = math.ceil(cached * truth.fit.coefficient) + truth.offset + carried
        served = self._served(key, recorded)
        if served is not None:  # the provider's cache, at this call, served as it did then
            return round(served * warm)
        miss = self._miss_rate(key)  # no record here: it misses as often as the record shows it missing
        return round((1 - miss) * warm + miss * cold)

    def _served(self, key: str, recorded: RecordedUsage | None) -> float | None:
        """The share of the previous call's prompt the provider's cache served at this recorded call (1: all
        of it; less when it evicted or missed). The cache is the provider's, not the policy's: a call that
        missed, missed under any policy, and one that was served, is served what the policy kept the same."""
        last = self._last_prompt.get(key)
        if recorded is None or not last:
            return None
        return min(1.0, recorded.cache_read_tokens / last)

    def _miss_rate(self, key: str) -> float:
        """How often this model's recorded calls read less than half their prompt from a cache that should
        have held it (Claude Code rewrites its whole context now and then, the Responses API's cache is best
        effort): the share of the warm calls recorded so far, counting `MISS_PRIOR` calls that did not miss
        first (a few calls say little)."""
        return self._misses.get(key, 0) / (self._warm_calls.get(key, 0) + MISS_PRIOR)

    def _price_for(self, truth: StepTruth | None) -> Price | None:
        recorded = truth.recorded.usage if truth is not None and truth.recorded is not None else None
        if self.prices is not None and truth is not None:
            found = self.prices.find(truth.model, recorded.provider if recorded is not None else None)
            if found is not None:
                return found
        return self.price

    def _time(self, upto: int) -> int | float | None:
        """When the call was made: the time of the first message it wrote (else of the last one it read)."""
        if upto < len(self.messages):
            return self.messages[upto].timestamp
        return self.messages[-1].timestamp if self.messages else None

    def _mechanism(self, result: BuildResult, held: _Held | None, expired: bool, prefix: int) -> str | None:
        """Why the cached prefix broke at this step, or None when it did not (or there was none)."""
        if held is None:
            return "model" if self._held else None  # another model ran before: its cache is not this one's
        if expired:
            return "expired"
        if prefix >= len(held.units):
            return None
        if result.error is not None:
            return "failed"
        index = common_prefix(held.result.wire, result.wire)  # the first differing OpenAI-shaped message
        if index >= len(held.result.wire):  # same messages, only merged otherwise into turns
            return "other"
        return break_mechanism(held.result, result, index)

    def _output_tokens(self, upto: int) -> int:
        """The answer the call wrote: its block of assistant messages (as `step_points` reads it)."""
        total = 0
        for message in self.messages[upto:]:
            if message.role != "assistant":
                break
            total += self.tokenizer.estimate_message(message, self.model_id)
            if message.metadata and "usage" in message.metadata:  # the recorded call ends here
                break
        return total

    def _record(self, step: StepCost) -> None:
        self._totals.update(
            steps=1,
            tokens_sent=step.tokens_sent,
            cached_tokens=step.cached_tokens,
            new_tokens=step.new_tokens,
            output_tokens=step.output_tokens,
            summarizer_calls=step.summarizer_calls,
            summarizer_prompt_tokens=step.summarizer_prompt_tokens,
            summarizer_summary_tokens=step.summarizer_summary_tokens,
            over_budget_steps=int(step.over_budget),  # counts: a one-step replay said `false`
            failed_steps=int(step.failed),
            unpriced_steps=int(step.cost_usd is None),
            recorded_steps=int(step.recorded_prompt_tokens is not None),
            recorded_prompt_tokens=step.recorded_prompt_tokens or 0,
        )
        if step.mechanism is not None:
            self._breaks[step.mechanism] += 1
        if step.summary_made:
            self._summary_steps.append(step.step)

    def totals(self) -> SessionCost:
        marks = self._summary_steps
        priced = self.price is not None or bool(self._priced)
        model = self._priced.most_common(1)[0][0] if self._priced else None
        model = model or (self.price.model if self.price is not None else None)
        return SessionCost(
            **{name: self._totals[name] for name in _COUNTED},
            cache_breaks=dict(self._breaks),
            summaries_made=len(marks),
            steps_between_summaries=tuple(b - a for a, b in zip(marks, marks[1:], strict=False)),
            user_requests_dropped=len(self._lost.ids),
            shape=self.shape,
            model=model if priced else None,
            cost_usd=self._cost if priced else None,
            cost_no_cache_usd=self._no_cache if priced else None,
            predicted_prompt_tokens=self._predicted,
            price_models=dict(self._priced),
            recorded_cost_usd=self._recorded_cost,
            cost_at_recorded_usd=self._cost_at_recorded,
            as_recorded_error=error_summary(self._errors) if self._errors else {},
        )


def _expired(held: _Held, at: int | float | None) -> bool:
    """The cache of `held` outlived its time to live by `at` (epoch ms; unknown times never expire)."""
    if at is None or held.at is None:
        return False
    return at - held.at > TTL_MS[held.tier]


_COUNTED = (
    "steps",
    "tokens_sent",
    "cached_tokens",
    "new_tokens",
    "output_tokens",
    "summarizer_calls",
    "summarizer_prompt_tokens",
    "summarizer_summary_tokens",
    "over_budget_steps",
    "failed_steps",
    "unpriced_steps",
    "recorded_steps",
    "recorded_prompt_tokens",
)


def iter_step_costs(
    messages: Sequence[AiMessage],
    policy: Any = None,
    *,
    shape: str = "openai",
    price: Price | None = None,
    tracker: CostTracker | None = None,
    truths: Iterable[StepTruth] | None = None,
    samples: Sequence[CalibrationSample] = (),
    **options: Any,
) -> Iterator[tuple[StepBuild, StepCost]]:
    """Replay the session (`iter_session_steps`, same options) and cost each step; pass a `tracker` to
    read the totals after.

    `truths` (`engine.truth.iter_truth` of the same session) make each step's figures the provider's, and
    give linnkit's calibration its samples: every recorded call before the step (its as-recorded count
    beside the provider's), on the step's route (its model), after `samples` (a calibration file's)."""
    tracker = tracker or CostTracker(
        messages, policy=policy, tokenizer=options.get("tokenizer"), model_id=options.get("model_id"),
        shape=shape, price=price,
    )  # fmt: skip
    if truths is None:
        for step in iter_session_steps(messages, policy, **options):
            yield step, tracker.add(step.number, step.point.message_count, step.result)
        return
    truth_of = iter(truths)
    learnt = list(samples)
    current: list[StepTruth] = []

    def step_options(number: int, upto: int) -> dict[str, Any]:
        truth = next(truth_of)
        current[:] = [truth]
        return {"token_route": TokenRoute(truth.model), "calibration_samples": tuple(learnt)}

    for step in iter_session_steps(messages, policy, step_options=step_options, **options):
        truth = current[0]
        yield step, tracker.add(step.number, step.point.message_count, step.result, truth)
        if truth.recorded is not None:
            actual = truth.recorded.usage.prompt_tokens
            route, ledger = TokenRoute(truth.model), truth.recorded.message_id
            learnt.append(CalibrationSample(route, truth.estimate, actual, ledger))


def session_cost(
    messages: Sequence[AiMessage], policy: Any = None, *, shape: str = "openai", price: Price | None = None,
    **options: Any,
) -> tuple[list[StepCost], SessionCost]:  # fmt: skip
    """Every step's cost and the session's totals (a whole replay)."""
    tracker = CostTracker(
        messages, policy=policy, tokenizer=options.get("tokenizer"), model_id=options.get("model_id"),
        shape=shape, price=price,
    )  # fmt: skip
    steps = [cost for _, cost in iter_step_costs(messages, policy, tracker=tracker, **options)]
    return steps, tracker.totals()
