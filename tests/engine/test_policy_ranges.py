"""A numeric field's range follows the policy's own constraints (for sliders that must not cross them)."""

from __future__ import annotations

from engine.policy import effective_policy, set_value
from engine.policy.ranges import value_range

RESERVED = ("budget", "reservedForResponse")
MAX_TOKENS = ("budget", "maxTokens")


def test_reserved_for_response_stays_below_max_tokens():
    policy = effective_policy({"budget": {"maxTokens": 8000}})
    reserved = value_range(policy, RESERVED)
    assert (reserved.maximum, reserved.maximum_exclusive, reserved.ui_max) == (8000, True, 7999)
    assert reserved.reasons == ("< budget.maxTokens (8000)",)
    assert reserved.problem(8000) == "8000 must be < 8000"
    assert reserved.problem(7999) is None


def test_max_tokens_stays_above_reserved_and_follows_edits():
    policy = effective_policy({"budget": {"maxTokens": 8000, "reservedForResponse": 3000}})
    assert value_range(policy, MAX_TOKENS).ui_min == 3001
    assert value_range(policy, MAX_TOKENS).problem(2000) == "2000 must be > 3000"
    lowered = set_value(policy, RESERVED, 500)
    assert value_range(lowered, MAX_TOKENS).minimum == 500


def test_engine_config_rules_narrow_the_schema_bounds():
    policy = effective_policy(None)
    summary_share = value_range(policy, ("summarization", "budgetPercentage"))
    assert (summary_share.maximum, summary_share.ui_max) == (0.5, 0.5)
    output = value_range(policy, ("toolHistory", "maxOutputSummaryTokens"))
    assert output.maximum == policy.tool_history.max_pair_tokens
    assert output.problem(policy.tool_history.max_pair_tokens + 1) is not None
