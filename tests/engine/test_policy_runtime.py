"""Engine-config rules (spec §2.3) that schema-valid policies can still fail."""

import pytest

from engine.errors import ConfigurationError
from engine.policy import check_runtime, define_context_policy, runtime_problems

PREFIX = "Invalid AgentContextManager configuration: "


@pytest.mark.parametrize(
    ("layer", "rule", "path"),
    [
        ({"budget": {"reservedForResponse": 0}}, "reservedForResponse must be > 0 and < maxTokens", "budget"),
        (
            {"budget": {"maxTokens": 2400}},
            "reservedForResponse must be > 0 and < maxTokens",
            "budget",
        ),
        (
            {"budget": {"workingMemoryBudgetPercentage": 0}},
            "workingMemoryBudgetPercentage must be > 0 and <= 1",
            "budget",
        ),
        (
            {"summarization": {"triggerThreshold": 0}},
            "triggerThreshold must be > 0 and <= 1",
            "summarization",
        ),
        (
            {"summarization": {"budgetPercentage": 0.6}},
            "budgetPercentage must be > 0 and <= 0.5",
            "summarization",
        ),
        (
            {"summarization": {"budgetPercentage": 0}},
            "budgetPercentage must be > 0 and <= 0.5",
            "summarization",
        ),
        (
            {"toolHistory": {"maxPairTokens": 0, "maxOutputSummaryTokens": 0}},
            "maxPairTokens must be > 0; maxOutputSummaryTokens must be > 0 and <= maxPairTokens",
            "toolHistory",
        ),
        (
            {"toolHistory": {"maxOutputSummaryTokens": 7000}},
            "maxOutputSummaryTokens must be > 0 and <= maxPairTokens",
            "toolHistory",
        ),
        (
            {"workingMemory": {"maxRecentToolInteractions": 13}},
            "maxRecentToolInteractions must be >= 0 and <= maxInteractionGroups",
            "workingMemory",
        ),
        (
            {"toolHistory": {"maxInteractionGroups": 0}, "workingMemory": {"maxRecentToolInteractions": 0}},
            "maxInteractionGroups must be > 0",
            "toolHistory",
        ),
        ({"tokenEstimation": {"encoding": "  "}}, "encoding must not be blank", "tokenEstimation"),
    ],
)
def test_rule(layer, rule, path):
    policy = define_context_policy(layer)  # schema-valid
    with pytest.raises(ConfigurationError) as info:
        check_runtime(policy)
    assert str(info.value) == PREFIX + rule
    assert runtime_problems(policy)[0].path[0] == path


def test_defaults_pass():
    check_runtime(define_context_policy(None))
    check_runtime(define_context_policy({"budget": {"maxTokens": 232000}}))
    assert runtime_problems(define_context_policy(None)) == []


def test_every_rule_of_the_spec_is_checked():
    # §2.3 lists 14 rules; the schema already guarantees 4 of them, so build a policy that skips it.
    policy = define_context_policy(None).model_copy(deep=True)
    bad = policy.model_copy(
        update={
            "budget": policy.budget.model_copy(
                update={"max_tokens": 0, "working_memory_budget_percentage": 0}
            ),
            "summarization": policy.summarization.model_copy(
                update={"trigger_threshold": 0, "budget_percentage": 0}
            ),
            "working_memory": policy.working_memory.model_copy(
                update={
                    "tool_pairing_search_range": 0,
                    "min_tool_interactions_to_keep": -1,
                    "max_recent_tool_interactions": -1,
                }
            ),
            "tool_history": policy.tool_history.model_copy(
                update={"max_pair_tokens": 0, "max_output_summary_tokens": 0, "max_interaction_groups": 0}
            ),
            "token_estimation": policy.token_estimation.model_copy(
                update={"avg_chars_per_token": 0, "tool_call_overhead": -1, "encoding": ""}
            ),
        }
    )
    assert [p.message for p in runtime_problems(bad)] == [
        "maxTokens must be > 0",
        "reservedForResponse must be > 0 and < maxTokens",
        "workingMemoryBudgetPercentage must be > 0 and <= 1",
        "triggerThreshold must be > 0 and <= 1",
        "budgetPercentage must be > 0 and <= 0.5",
        "toolPairingSearchRange must be > 0",
        "maxPairTokens must be > 0",
        "maxOutputSummaryTokens must be > 0 and <= maxPairTokens",
        "minToolInteractionsToKeep must be >= 0",
        "maxRecentToolInteractions must be >= 0 and <= maxInteractionGroups",
        "maxInteractionGroups must be > 0",
        "avgCharsPerToken must be > 0",
        "toolCallOverhead must be >= 0",
        "encoding must not be blank",
    ]
