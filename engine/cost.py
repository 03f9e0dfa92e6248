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
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.prices import Price
from engine.replay import StepBuild, iter_session_steps
from engine.result import BuildResult, Decision
from engine.tokens import TokenizerPort, tokenizer_from_policy
from engine.wire import anthropic_turns, to_anthropic

__all__ = ["MECHANISMS", "SHAPES", "CostTracker", "SessionCost", "StepCost", "session_cost", "wire_units"]

SHAPES = ("openai", "anthropic")
# what changed the first differing wire message, by id → how a reader calls it
MECHANISMS = {
    "tool_history": "tool-history compression",
    "working_memory": "working-memory drop",
    "summary": "summary",
    "checkpoint": "checkpoint",
    "fence": "fence",
    "reminder": "reminder",
    "replay_guard": "tool replay guard",
    "failed": "failed step",
    "other": "other",
}
# the first needle found in a decision's reason, strategy and phase names its mechanism
_NEEDLES = (
    ("tool_history", "tool_history"),
    ("checkpoint", "checkpoint"),
    ("summar", "summary"),  # ai_history_summarization, SUMMARIZATION, summary_replacement_cleanup
    ("fence", "fence"),  # fence_lifetime, fence-budget:<kind> truncation
    ("current_turn_message_assembly", "fence"),
    ("tool_replay_protocol_guard", "replay_guard"),
    ("working_memory", "working_memory"),
    ("budget_or_priority", "working_memory"),  # not selected by any provider: working memory's budget
)


@dataclass(frozen=True, slots=True)
class WireUnit:
    """One wire message in the shape in use, its tokens, and the OpenAI-shaped messages it carries."""

    payload: Any
    tokens: int
    indexes: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class StepCost:
    step: int
    tokens_sent: int
    cached_tokens: int  # the wire prefix identical to the previous step's, whole messages
    new_tokens: int
    wire_messages: int
    cached_messages: int
    break_at: int | None  # the first wire message that differs from the previous step's; None: no break
    mechanism: str | None  # what changed it (a key of MECHANISMS)
    output_tokens: int  # the recorded answer of this LLM call
    summarizer_calls: int
    summarizer_prompt_tokens: int
    summarizer_summary_tokens: int
    summary_made: bool
    over_budget: bool
    failed: bool
    user_requests_dropped: tuple[str, ...]  # user requests this step did not send as written
    cost_usd: float | None
    cost_no_cache_usd: float | None

    def to_json(self) -> dict[str, Any]:
        """The per-step fields `replay --json` adds."""
        return {
            "tokensSent": self.tokens_sent,
            "cachedTokens": self.cached_tokens,
            "newTokens": self.new_tokens,
            "cachedMessages": self.cached_messages,
            "cacheBreakAt": self.break_at,
            "cacheBreakBy": self.mechanism,
            "outputTokens": self.output_tokens,
            "summarizerCalls": self.summarizer_calls,
            "summarizerPromptTokens": self.summarizer_prompt_tokens,
            "summarizerSummaryTokens": self.summarizer_summary_tokens,
            "userRequestsDropped": list(self.user_requests_dropped),
            "costUsd": _round(self.cost_usd),
        }


@dataclass(frozen=True, slots=True)
class SessionCost:
    steps: int = 0
    tokens_sent: int = 0
    cached_tokens: int = 0
    new_tokens: int = 0
    output_tokens: int = 0
    cache_breaks: dict[str, int] = field(default_factory=dict)
    summaries_made: int = 0
    steps_between_summaries: tuple[int, ...] = ()
    summarizer_calls: int = 0
    summarizer_prompt_tokens: int = 0
    summarizer_summary_tokens: int = 0
    over_budget_steps: int = 0
    failed_steps: int = 0
    user_requests_dropped: int = 0  # distinct user requests some step did not send as written
    shape: str = "openai"
    model: str | None = None  # the price row used; None: unpriced
    cost_usd: float | None = None
    cost_no_cache_usd: float | None = None  # the same calls with no prompt cache

    @property
    def cached_share(self) -> float:
        return self.cached_tokens / self.tokens_sent if self.tokens_sent else 0.0

    @property
    def breaks(self) -> int:
        return sum(self.cache_breaks.values())

    @property
    def min_steps_between_summaries(self) -> int | None:
        return min(self.steps_between_summaries) if self.steps_between_summaries else None

    def to_json(self) -> dict[str, Any]:
        """camelCase, for `replay --json`'s totals line and a sweep's rows."""
        gaps = self.steps_between_summaries
        return {
            "steps": self.steps,
            "tokensSent": self.tokens_sent,
            "cachedTokens": self.cached_tokens,
            "newTokens": self.new_tokens,
            "cachedShare": round(self.cached_share, 4),
            "outputTokens": self.output_tokens,
            "cacheBreaks": self.breaks,
            "cacheBreaksBy": dict(sorted(self.cache_breaks.items())),
            "summariesMade": self.summaries_made,
            "stepsBetweenSummaries": list(gaps),
            "medianStepsBetweenSummaries": statistics.median(gaps) if gaps else None,
            "summarizerCalls": self.summarizer_calls,
            "summarizerPromptTokens": self.summarizer_prompt_tokens,
            "summarizerSummaryTokens": self.summarizer_summary_tokens,
            "overBudgetSteps": self.over_budget_steps,
            "failedSteps": self.failed_steps,
            "userRequestsDropped": self.user_requests_dropped,
            "wireShape": self.shape,
            "priceModel": self.model,
            "costUsd": _round(self.cost_usd),
            "costNoCacheUsd": _round(self.cost_no_cache_usd),
        }

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)


def wire_units(result: BuildResult, shape: str = "openai") -> list[WireUnit]:
    """The build's wire as whole messages of `shape`, each with the build's token count."""
    if shape not in SHAPES:
        raise ValueError(f"wire shape {shape!r}: expected one of {', '.join(SHAPES)}")
    wire = result.wire
    if wire and not result.cards:
        raise ValueError("the cost of a step needs a detailed build (detail=True): its wire cards")
    tokens = [0] * len(wire)
    for card in result.cards:
        tokens[card.index] = card.tokens
    if tokens:
        tokens[-1] += result.reminder.tokens  # the reminder rides on the last wire message
    if shape == "openai":
        return [WireUnit(m, t, (i,)) for i, (m, t) in enumerate(zip(wire, tokens, strict=True))]
    anthropic = to_anthropic(wire)
    units = []
    system = tuple(i for i, m in enumerate(wire) if m["role"] == "system")
    if system:
        units.append(WireUnit(("system", anthropic["system"]), sum(tokens[i] for i in system), system))
    for (_, indexes), message in zip(anthropic_turns(wire), anthropic["messages"], strict=True):
        units.append(WireUnit(message, sum(tokens[i] for i in indexes), tuple(indexes)))
    return units


def _common_prefix(before: Sequence[Any], after: Sequence[Any]) -> int:
    count = 0
    for a, b in zip(before, after, strict=False):
        if a != b:
            break
        count += 1
    return count


def _mechanism_of(decision: Decision) -> str:
    text = f"{decision.reason} {decision.strategy or ''} {decision.phase or ''}".lower()
    return next((mechanism for needle, mechanism in _NEEDLES if needle in text), "other")


def _changed(before: Decision, after: Decision) -> Decision:
    """Of two fates of one message, the one that names the change: a drop or replacement now, else the
    one it came back from (re-admitted), else the new keep (another phase or a truncation)."""
    for decision in (after, before):
        if not decision.kept or decision.reason.startswith("replaced_by_"):
            return decision
    return after


def break_mechanism(before: BuildResult, after: BuildResult, index: int) -> str:
    """Why OpenAI-shaped wire message `index` of `before` differs in `after`, from the builds' own records."""
    if after.error is not None:
        return "failed"
    old = before.cards[index]
    new = after.cards[index] if index < len(after.cards) else None
    if new is not None and set(old.source_ids) == set(new.source_ids):
        if "reminder" in old.marks or "reminder" in new.marks:
            return "reminder"
    sources = dict.fromkeys(old.source_ids + (new.source_ids if new is not None else ()))
    for source in sources:
        was, now = before.decision_for(source), after.decision_for(source)
        if (
            was is not None
            and now is not None
            and (was.kept, was.reason, was.strategy)
            != (
                now.kept,
                now.reason,
                now.strategy,
            )
        ):
            return _mechanism_of(_changed(was, now))
    marks = set(new.marks if new is not None else old.marks)
    if "summary" in marks:
        return "summary"
    if "compressed" in marks:
        return "tool_history"
    if marks & {"truncated"} or any(m.startswith(("fence:", "assembled:")) for m in marks):
        return "fence"
    return "other"


def _user_requests_dropped(result: BuildResult) -> tuple[str, ...]:
    """User requests the step did not send as written: dropped, or folded into a summary."""
    return tuple(
        d.message_id
        for d in result.decisions_of_type("user_input")
        if d.wire_index is None or "summar" in d.reason
    )


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


class CostTracker:
    """Feed it a replay's steps in order (`add`); it keeps the previous step's wire, one build at a time."""

    def __init__(
        self,
        messages: Sequence[AiMessage],
        *,
        policy: Any = None,
        tokenizer: TokenizerPort | None = None,
        model_id: str | None = None,
        shape: str = "openai",
        price: Price | None = None,
    ) -> None:
        if shape not in SHAPES:
            raise ValueError(f"wire shape {shape!r}: expected one of {', '.join(SHAPES)}")
        self.messages = messages
        self.shape, self.price, self.model_id = shape, price, model_id
        self.tokenizer = tokenizer or tokenizer_from_policy(define_context_policy(policy).token_estimation)
        self._previous: tuple[BuildResult, list[WireUnit]] | None = None  # the last step that was sent
        self._summary_steps: list[int] = []
        self._dropped: set[str] = set()
        self._breaks: Counter[str] = Counter()
        self._totals: Counter[str] = Counter()
        self._cost = self._no_cache = 0.0

    def add(self, number: int, upto: int, result: BuildResult) -> StepCost:
        units = wire_units(result, self.shape) if result.error is None else []
        before = self._previous[1] if self._previous else []
        prefix = _common_prefix([u.payload for u in before], [u.payload for u in units])
        sent = sum(u.tokens for u in units)
        cached = sum(u.tokens for u in units[:prefix])
        broke = bool(before) and prefix < len(before)
        mechanism = self._mechanism(result, prefix, units) if broke else None
        calls, prompt, summary = _summarizer(result)
        made = result.error is None and bool(result.summary_events)
        dropped = _user_requests_dropped(result)
        output = self._output_tokens(upto)
        cost = no_cache = None
        if self.price is not None:
            summarizer = self.price.cost(uncached=prompt, output=summary)
            cost = self.price.cost(cached=cached, written=sent - cached, output=output) + summarizer
            no_cache = self.price.cost(uncached=sent, output=output) + summarizer
            self._cost += cost
            self._no_cache += no_cache
        step = StepCost(
            number, sent, cached, sent - cached, len(units), prefix, prefix if broke else None, mechanism,
            output, calls, prompt, summary, made, result.tokens.over_budget, result.error is not None,
            dropped, cost, no_cache,
        )  # fmt: skip
        self._record(step)
        if result.error is None:
            self._previous = (result, units)
        return step

    def _mechanism(self, result: BuildResult, prefix: int, units: list[WireUnit]) -> str:
        if result.error is not None:
            return "failed"
        previous, before = self._previous  # type: ignore[misc]
        index = _common_prefix(previous.wire, result.wire)  # the first differing OpenAI-shaped message
        if index >= len(previous.wire):  # same messages, only merged otherwise into turns
            return "other"
        return break_mechanism(previous, result, index)

    def _output_tokens(self, upto: int) -> int:
        """The recorded answer: the block of assistant messages the call wrote (as `step_points` reads it)."""
        total = 0
        for message in self.messages[upto:]:
            if message.role != "assistant":
                break
            total += self.tokenizer.estimate_message(message, self.model_id)
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
            over_budget_steps=step.over_budget,
            failed_steps=step.failed,
        )
        if step.mechanism is not None:
            self._breaks[step.mechanism] += 1
        if step.summary_made:
            self._summary_steps.append(step.step)
        self._dropped.update(step.user_requests_dropped)

    def totals(self) -> SessionCost:
        marks = self._summary_steps
        priced = self.price is not None
        return SessionCost(
            **{name: self._totals[name] for name in _COUNTED},
            cache_breaks=dict(self._breaks),
            summaries_made=len(marks),
            steps_between_summaries=tuple(b - a for a, b in zip(marks, marks[1:], strict=False)),
            user_requests_dropped=len(self._dropped),
            shape=self.shape,
            model=self.price.model if priced else None,
            cost_usd=self._cost if priced else None,
            cost_no_cache_usd=self._no_cache if priced else None,
        )


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
)


def iter_step_costs(
    messages: Sequence[AiMessage],
    policy: Any = None,
    *,
    shape: str = "openai",
    price: Price | None = None,
    tracker: CostTracker | None = None,
    **options: Any,
) -> Iterator[tuple[StepBuild, StepCost]]:
    """Replay the session (`iter_session_steps`, same options) and cost each step; pass a `tracker` to
    read the totals after."""
    tracker = tracker or CostTracker(
        messages, policy=policy, tokenizer=options.get("tokenizer"), model_id=options.get("model_id"),
        shape=shape, price=price,
    )  # fmt: skip
    for step in iter_session_steps(messages, policy, **options):
        yield step, tracker.add(step.number, step.point.message_count, step.result)


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
