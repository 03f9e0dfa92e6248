"""The figures of a costed step and of a costed session (`engine.cost` makes them), and their JSON."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from engine.cache_breaks import WireUnit

__all__ = ["SessionCost", "StepCost"]


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
    user_requests_dropped: int  # user requests this step did not send as written
    cost_usd: float | None
    cost_no_cache_usd: float | None
    price_model: str | None = None  # the price row this step was priced with
    predicted_prompt_tokens: int | None = None  # the provider's count predicted from the record
    recorded_prompt_tokens: int | None = None  # what the provider counted for this call, if recorded
    as_recorded_prompt_tokens: int | None = None  # the as-recorded rebuild's prediction of that count
    recorded_cost_usd: float | None = None  # what the recorded call cost, at the same price row
    rebuild_error: float | None = None  # (as recorded − recorded) / recorded; None where it set the offset
    # the step's wire as the prompt cache sees it, with the build's own counts (a diff reads it again)
    units: Sequence[WireUnit] = field(default=(), repr=False, compare=False)
    # of `user_requests_dropped`, those no earlier step of the replay had dropped
    user_requests_newly_dropped: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        """The per-step fields `replay --json` adds."""
        return {
            "promptTokens": self.predicted_prompt_tokens,
            "priceModel": self.price_model,
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
            "userRequestsDropped": self.user_requests_dropped,
            "userRequestsNewlyDropped": list(self.user_requests_newly_dropped),
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
    model: str | None = (
        None  # the price row used (the most used, when steps name their models); None: unpriced
    )
    cost_usd: float | None = None
    cost_no_cache_usd: float | None = None  # the same calls with no prompt cache
    predicted_prompt_tokens: int | None = None  # Σ the provider's counts predicted from a record
    recorded_steps: int = 0  # steps whose call was recorded
    recorded_prompt_tokens: int = 0  # Σ of what the provider counted at those steps
    recorded_cost_usd: float | None = None  # Σ of what those calls cost (this conversation's, at steps)
    cost_at_recorded_usd: float | None = None  # Σ of this policy's cost at those same steps
    as_recorded_error: dict[str, Any] = field(default_factory=dict)  # error_summary of the rebuild
    unpriced_steps: int = 0  # steps no price row was found for (left out of cost_usd)
    price_models: dict[str, int] = field(default_factory=dict)  # price row → steps priced with it

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
            "promptTokens": self.predicted_prompt_tokens,
            "recordedSteps": self.recorded_steps,
            "recordedPromptTokens": self.recorded_prompt_tokens,
            "recordedStepsCostUsd": _round(self.recorded_cost_usd),
            "costAtRecordedStepsUsd": _round(self.cost_at_recorded_usd),
            "unpricedSteps": self.unpriced_steps,
            "priceModels": dict(sorted(self.price_models.items())),
        }

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 6)
