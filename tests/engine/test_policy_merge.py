"""Merging layers (spec §2.2), worked example E2, and the defaults profiles (§9)."""

import pytest

from engine.policy import (
    DEFAULTS_PROFILES,
    LINNKIT_021_DEFAULTS,
    SEED_DEFAULTS,
    ContextPolicy,
    PolicyValidationError,
    define_context_policy,
    effective_policy,
    get_defaults_profile,
    merge_context_policy,
    merge_layers,
    profile_defaults,
)

RULE = {"fenceKind": "memory-context", "maxBudgetFraction": 0.1, "strategyName": "memory-truncate"}
E2_HOST = {
    "budget": {"maxTokens": 64000},
    "mustKeep": {"alwaysKeepFenceKinds": ["system-event"]},
    "systemReminder": {
        "disabledRuleIds": ["periodic_taskstate_reflection"],
        "thresholds": {"toolCallStreak": 5},
    },
}
E2_AGENT = {
    "budget": {"reservedForResponse": 4000},
    "mustKeep": {"alwaysKeepFenceKinds": ["memory-context"], "truncationRules": [RULE]},
    "systemReminder": {"thresholds": {"budgetWarningRatio": 0.8}},
}


def test_worked_example_e2():
    policy = merge_context_policy(None, E2_HOST, E2_AGENT)
    budget = policy.budget
    assert (budget.max_tokens, budget.reserved_for_response, budget.working_memory_budget_percentage) == (
        64000,
        4000,
        0.7,
    )
    assert budget.total_budget == 60000
    assert int(budget.total_budget * budget.working_memory_budget_percentage) == 42000
    assert policy.must_keep.always_keep_fence_kinds == ["memory-context"]
    assert policy.must_keep.truncation_rules[0].max_budget_fraction == 0.1
    th = policy.system_reminder.thresholds
    assert (th.tool_call_streak, th.taskstate_reflection_period, th.budget_warning_ratio) == (5, 30, 0.8)
    assert th.last_steps_hint_threshold == 0
    assert policy.system_reminder.disabled_rule_ids == ["periodic_taskstate_reflection"]
    assert policy.system_reminder.enabled_rule_ids is None


def test_worked_example_e2_both_rule_lists_give_one_custom_issue():
    agent = {**E2_AGENT, "systemReminder": {"enabledRuleIds": ["last_steps_hint"]}}
    with pytest.raises(PolicyValidationError) as info:
        merge_context_policy(None, E2_HOST, agent)
    assert [(i.path, i.code) for i in info.value.issues] == [
        (("systemReminder", "disabledRuleIds"), "custom")
    ]


def test_effective_policy_equals_the_three_layer_merge_over_seed_defaults():
    assert effective_policy(E2_AGENT, E2_HOST) == merge_context_policy(None, E2_HOST, E2_AGENT)


def test_lists_are_replaced_whole_including_extra_rules():
    rule = {"id": "a", "trigger": {"kind": "agent-has-tool", "toolName": "t"}, "contentTemplate": "x"}
    host = {"systemReminder": {"extraRules": [rule, {**rule, "id": "b"}]}}
    agent = {"systemReminder": {"extraRules": [{**rule, "id": "c"}]}}
    assert [r.id for r in effective_policy(agent, host).system_reminder.extra_rules] == ["c"]
    assert [r.id for r in effective_policy({}, host).system_reminder.extra_rules] == ["a", "b"]
    assert effective_policy({"mustKeep": {"alwaysKeepTypes": []}}).must_keep.always_keep_types == []


def test_sub_objects_merge_field_by_field():
    host = {
        "toolOutput": {"observationGovernance": {"maxChars": 100}},
        "tokenEstimation": {
            "calibration": {"enabled": True, "minSamples": 5},
            "remoteCount": {"enabled": True},
        },
    }
    agent = {
        "toolOutput": {"observationGovernance": {"maxLines": 7}},
        "tokenEstimation": {
            "calibration": {"minSamples": 9},
            "remoteCount": {"failureBehavior": "fail-fast"},
        },
    }
    policy = effective_policy(agent, host)
    og = policy.tool_output.observation_governance
    assert (og.enabled, og.max_chars, og.max_lines) == (True, 100, 7)
    cal = policy.token_estimation.calibration
    assert (cal.enabled, cal.min_samples, cal.min_coefficient) == (True, 9, None)
    remote = policy.token_estimation.remote_count
    assert (remote.enabled, remote.failure_behavior) == (True, "fail-fast")


def test_missing_and_none_mean_unset_except_for_enabled_rule_ids():
    host = {"budget": {"maxTokens": 64000}, "systemReminder": {"enabledRuleIds": ["last_steps_hint"]}}
    agent = {"budget": {"maxTokens": None}, "systemReminder": {"enabledRuleIds": None}}
    policy = effective_policy(agent, host)
    assert policy.budget.max_tokens == 64000
    assert policy.system_reminder.enabled_rule_ids is None
    assert effective_policy({}, host).system_reminder.enabled_rule_ids == ["last_steps_hint"]


def test_snake_case_layers_merge_with_camel_case_ones():
    policy = effective_policy(
        {"tool_history": {"keep_latest_runs": 3}}, {"toolHistory": {"keepLatestRuns": 2}}
    )
    assert policy.tool_history.keep_latest_runs == 3


def test_merge_layers_does_not_alias_its_inputs():
    host = {"mustKeep": {"alwaysKeepFenceKinds": ["a"]}}
    merged = merge_layers(host)
    merged["mustKeep"]["alwaysKeepFenceKinds"].append("b")
    assert host["mustKeep"]["alwaysKeepFenceKinds"] == ["a"]


def test_a_bad_layer_is_named():
    with pytest.raises(PolicyValidationError) as info:
        merge_context_policy(None, {"budget": {"maxTokens": -5}}, {"budget": {"maxTokens": 100}})
    assert info.value.source == "host fallback"
    assert str(info.value) == "budget.maxTokens: -5 must be greater than 0"


def test_define_context_policy_merges_groups_over_defaults():
    policy = define_context_policy(
        {
            "toolOutput": {"observationGovernance": {"maxChars": 10}},
            "systemReminder": {"thresholds": {"toolCallStreak": 3}},
        }
    )
    assert policy.tool_output.observation_governance.max_lines == 1200
    assert policy.system_reminder.thresholds.taskstate_reflection_period == 30
    assert policy.system_reminder.extra_rules == []
    assert define_context_policy(policy) is policy


def test_overlay_values():
    seed, linnkit = profile_defaults("seed"), profile_defaults("linnkit-0.21")
    assert (seed.budget.max_tokens, seed.tool_history.retention_mode) == (120000, "compress")
    assert (linnkit.budget.max_tokens, linnkit.tool_history.retention_mode) == (232000, "drop")
    assert seed.model_copy(update={"budget": linnkit.budget, "tool_history": linnkit.tool_history}) == linnkit
    assert SEED_DEFAULTS.honour_fence_descriptors is True
    assert LINNKIT_021_DEFAULTS.honour_fence_descriptors is False
    assert sorted(DEFAULTS_PROFILES) == ["linnkit-0.21", "seed"]
    assert profile_defaults() == ContextPolicy()


def test_overlay_sits_between_framework_defaults_and_host():
    host = {"budget": {"maxTokens": 64000}}
    policy = effective_policy({"toolHistory": {"strategy": "per-pair"}}, host, defaults="linnkit-0.21")
    assert policy.budget.max_tokens == 64000
    assert policy.tool_history.retention_mode == "drop"
    assert policy.tool_history.strategy == "per-pair"
    agent = {"toolHistory": {"retentionMode": "compress"}}
    assert effective_policy(agent, defaults="linnkit-0.21").tool_history.retention_mode == "compress"


def test_unknown_profile():
    with pytest.raises(
        ValueError, match="unknown defaults profile 'v9'; choose one of 'seed', 'linnkit-0.21'"
    ):
        get_defaults_profile("v9")
    assert get_defaults_profile(LINNKIT_021_DEFAULTS) is LINNKIT_021_DEFAULTS
