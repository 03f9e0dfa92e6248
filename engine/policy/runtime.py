"""Engine-config checks (spec §2.3): rules a schema-valid policy must also pass before a build.

They are linnkit's `validateAgentConfig`, in its order. `reservedForResponse = 0` or
`summarization.budgetPercentage = 0.6` pass the schema but fail here.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.errors import ConfigurationError
from engine.policy.model import ContextPolicy

CONFIG_ERROR_PREFIX = "Invalid AgentContextManager configuration"


@dataclass(frozen=True, slots=True)
class RuntimeProblem:
    """A failed rule: `path` is the camelCase field it is reported on."""

    path: tuple[str, ...]
    message: str


def runtime_problems(policy: ContextPolicy) -> list[RuntimeProblem]:
    """Every §2.3 engine-config rule the policy fails, in linnkit's order."""
    budget, th, wm = policy.budget, policy.tool_history, policy.working_memory
    summ, tokens = policy.summarization, policy.token_estimation
    rules: list[tuple[bool, tuple[str, ...], str]] = [
        (budget.max_tokens > 0, ("budget", "maxTokens"), "maxTokens must be > 0"),
        (
            0 < budget.reserved_for_response < budget.max_tokens,
            ("budget", "reservedForResponse"),
            "reservedForResponse must be > 0 and < maxTokens",
        ),
        (
            0 < budget.working_memory_budget_percentage <= 1,
            ("budget", "workingMemoryBudgetPercentage"),
            "workingMemoryBudgetPercentage must be > 0 and <= 1",
        ),
        (
            0 < summ.trigger_threshold <= 1,
            ("summarization", "triggerThreshold"),
            "triggerThreshold must be > 0 and <= 1",
        ),
        (
            0 < summ.budget_percentage <= 0.5,
            ("summarization", "budgetPercentage"),
            "budgetPercentage must be > 0 and <= 0.5",
        ),
        (
            wm.tool_pairing_search_range > 0,
            ("workingMemory", "toolPairingSearchRange"),
            "toolPairingSearchRange must be > 0",
        ),
        (th.max_pair_tokens > 0, ("toolHistory", "maxPairTokens"), "maxPairTokens must be > 0"),
        (
            0 < th.max_output_summary_tokens <= th.max_pair_tokens,
            ("toolHistory", "maxOutputSummaryTokens"),
            "maxOutputSummaryTokens must be > 0 and <= maxPairTokens",
        ),
        (
            wm.min_tool_interactions_to_keep >= 0,
            ("workingMemory", "minToolInteractionsToKeep"),
            "minToolInteractionsToKeep must be >= 0",
        ),
        (
            0 <= wm.max_recent_tool_interactions <= th.max_interaction_groups,
            ("workingMemory", "maxRecentToolInteractions"),
            "maxRecentToolInteractions must be >= 0 and <= maxInteractionGroups",
        ),
        (
            th.max_interaction_groups > 0,
            ("toolHistory", "maxInteractionGroups"),
            "maxInteractionGroups must be > 0",
        ),
        (
            tokens.avg_chars_per_token > 0,
            ("tokenEstimation", "avgCharsPerToken"),
            "avgCharsPerToken must be > 0",
        ),
        (
            tokens.tool_call_overhead >= 0,
            ("tokenEstimation", "toolCallOverhead"),
            "toolCallOverhead must be >= 0",
        ),
        (bool(tokens.encoding.strip()), ("tokenEstimation", "encoding"), "encoding must not be blank"),
    ]
    return [RuntimeProblem(path, message) for ok, path, message in rules if not ok]


def check_runtime(policy: ContextPolicy) -> None:
    """Raise `ConfigurationError` naming every failed rule (`…configuration: <rule>; <rule>`)."""
    problems = runtime_problems(policy)
    if problems:
        raise ConfigurationError(f"{CONFIG_ERROR_PREFIX}: " + "; ".join(p.message for p in problems))
