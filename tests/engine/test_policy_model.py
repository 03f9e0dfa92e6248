"""The policy model: every default (spec §2.1, seed per §9), the custom rule and the error texts."""

import subprocess
import sys

import pytest

from engine.messages import MESSAGE_TYPES
from engine.policy import (
    GROUPS,
    ContextPolicy,
    PolicyValidationError,
    define_context_policy,
    get_value,
    policy_controls,
    to_wire,
)

SEED_DEFAULTS = {
    ("budget", "maxTokens"): 120_000,
    ("budget", "reservedForResponse"): 2400,
    ("budget", "workingMemoryBudgetPercentage"): 0.7,
    ("toolHistory", "strategy"): "per-run",
    ("toolHistory", "retentionMode"): "compress",
    ("toolHistory", "keepLatestToolPairs"): 2,
    ("toolHistory", "keepLatestRuns"): 1,
    ("toolHistory", "maxInteractionGroups"): 12,
    ("toolHistory", "overflowStrategy"): "keep-latest",
    ("toolHistory", "maxPairTokens"): 6000,
    ("toolHistory", "maxOutputSummaryTokens"): 1000,
    ("toolOutput", "observationGovernance", "enabled"): True,
    ("toolOutput", "observationGovernance", "maxChars"): 20_000,
    ("toolOutput", "observationGovernance", "maxLines"): 1200,
    ("providerReplay", "provider"): None,
    ("providerReplay", "requiresReasoningDetailsForToolReplay"): None,
    ("providerReplay", "missingSidecarBehavior"): None,
    ("summarization", "triggerThreshold"): 0.7,
    ("summarization", "budgetPercentage"): 0.12,
    ("summarization", "oldestMessagesPercentage"): 0.75,
    ("summarization", "agentId"): None,
    ("summarization", "failureBehavior"): "fail-fast",
    ("mustKeep", "alwaysKeepTypes"): ["system_prompt", "user_input"],
    ("mustKeep", "alwaysKeepFenceKinds"): [],
    ("mustKeep", "truncationRules"): [],
    ("workingMemory", "maxRecentToolInteractions"): 2,
    ("workingMemory", "minToolInteractionsToKeep"): 2,
    ("workingMemory", "toolPairingSearchRange"): 10,
    ("checkpoint", "keepPairsBefore"): 2,
    ("checkpoint", "triggerToolName"): "context_checkpoint",
    ("reasoningRetention", "keepLatestThoughts"): 1,
    ("tokenEstimation", "encoding"): "cl100k_base",
    ("tokenEstimation", "avgCharsPerToken"): 2.0,
    ("tokenEstimation", "toolCallOverhead"): 50,
    ("tokenEstimation", "calibration", "enabled"): None,
    ("tokenEstimation", "calibration", "minSamples"): None,
    ("tokenEstimation", "calibration", "minCoefficient"): None,
    ("tokenEstimation", "calibration", "maxCoefficient"): None,
    ("tokenEstimation", "remoteCount", "enabled"): None,
    ("tokenEstimation", "remoteCount", "failureBehavior"): None,
    ("systemReminder", "enabledRuleIds"): None,
    ("systemReminder", "disabledRuleIds"): [],
    ("systemReminder", "thresholds", "toolCallStreak"): 10,
    ("systemReminder", "thresholds", "taskstateReflectionPeriod"): 30,
    ("systemReminder", "thresholds", "budgetWarningRatio"): 0.9,
    ("systemReminder", "thresholds", "lastStepsHintThreshold"): 0,
    ("systemReminder", "extraRules"): [],
    ("contextTrace", "enabled"): False,
    ("contextTrace", "includeMessageIds"): True,
    ("contextTrace", "includeTokenBreakdown"): True,
    ("contextTrace", "maxTraceEvents"): 200,
}


def test_the_table_lists_every_field_of_the_twelve_groups():
    assert {c.path for c in policy_controls()} == set(SEED_DEFAULTS)
    assert GROUPS == (
        "budget",
        "toolHistory",
        "toolOutput",
        "providerReplay",
        "summarization",
        "mustKeep",
        "workingMemory",
        "checkpoint",
        "reasoningRetention",
        "tokenEstimation",
        "systemReminder",
        "contextTrace",
    )


@pytest.mark.parametrize(
    ("path", "expected"), SEED_DEFAULTS.items(), ids=[".".join(p) for p in SEED_DEFAULTS]
)
def test_seed_default(path, expected):
    value = get_value(define_context_policy(None), path)
    assert value == expected
    assert type(value) is type(expected)


def test_profile_id_and_unfilled_sub_objects():
    policy = define_context_policy({})
    assert policy.profile_id == "agent"
    assert policy.token_estimation.calibration is None
    assert policy.token_estimation.remote_count is None
    assert all(value is None for value in vars(policy.provider_replay).values())
    assert policy.budget.total_budget == 117_600


def test_wire_form_omits_unset_fields_but_keeps_the_null_allowlist():
    wire = to_wire(ContextPolicy())
    assert wire["providerReplay"] == {}
    assert "agentId" not in wire["summarization"]
    assert "calibration" not in wire["tokenEstimation"]
    assert wire["systemReminder"]["enabledRuleIds"] is None
    assert list(wire) == ["profileId", *GROUPS]


def test_always_keep_types_accepts_all_fifteen_message_types():
    policy = define_context_policy({"mustKeep": {"alwaysKeepTypes": list(MESSAGE_TYPES)}})
    assert policy.must_keep.always_keep_types == list(MESSAGE_TYPES)
    assert len(MESSAGE_TYPES) == 15


def test_unknown_keys_are_dropped_and_snake_case_is_accepted():
    policy = define_context_policy(
        {"budget": {"max_tokens": 5000, "bogus": 1}, "summarization": {"enabled": True}, "extra": {}}
    )
    assert policy.budget.max_tokens == 5000
    assert "bogus" not in to_wire(policy)["budget"]
    assert "enabled" not in to_wire(policy)["summarization"]


def test_max_tokens_validation_accepts_more_than_the_ui_range():
    assert define_context_policy({"budget": {"maxTokens": 2_000_000}}).budget.max_tokens == 2_000_000


def test_integral_floats_count_as_integers_like_json_numbers():
    assert define_context_policy({"budget": {"maxTokens": 5000.0}}).budget.max_tokens == 5000


def test_policy_is_immutable():
    policy = ContextPolicy()
    with pytest.raises(ValueError):
        policy.budget.max_tokens = 1  # type: ignore[misc]


def _error(layer):
    with pytest.raises(PolicyValidationError) as info:
        define_context_policy(layer)
    return info.value


def test_custom_rule_enabled_and_disabled_rule_ids():
    err = _error({"systemReminder": {"enabledRuleIds": ["last_steps_hint"], "disabledRuleIds": ["x"]}})
    assert [(i.path, i.code, i.message) for i in err.issues] == [
        (
            ("systemReminder", "disabledRuleIds"),
            "custom",
            "enabledRuleIds and disabledRuleIds cannot be configured at the same time",
        )
    ]


def test_custom_rule_allows_an_empty_denylist_or_a_null_allowlist():
    both_empty = {"enabledRuleIds": [], "disabledRuleIds": []}
    assert define_context_policy({"systemReminder": both_empty}).system_reminder.enabled_rule_ids == []
    deny = {"enabledRuleIds": None, "disabledRuleIds": ["x"]}
    assert define_context_policy({"systemReminder": deny}).system_reminder.disabled_rule_ids == ["x"]


@pytest.mark.parametrize(
    ("layer", "code", "text"),
    [
        (
            {"budget": {"workingMemoryBudgetPercentage": 1.4}},
            "too_big",
            "budget.workingMemoryBudgetPercentage: 1.4 is above the maximum 1.0",
        ),
        (
            {"budget": {"workingMemoryBudgetPercentage": 1.5}},
            "too_big",
            "budget.workingMemoryBudgetPercentage: 1.5 is above the maximum 1.0",
        ),
        ({"budget": {"maxTokens": 0}}, "too_small", "budget.maxTokens: 0 must be greater than 0"),
        (
            {"toolHistory": {"keepLatestRuns": -1}},
            "too_small",
            "toolHistory.keepLatestRuns: -1 is below the minimum 0",
        ),
        (
            {"toolHistory": {"strategy": "per-turn"}},
            "invalid_enum_value",
            "toolHistory.strategy: 'per-turn' is not one of 'per-pair', 'per-run', 'none'",
        ),
        ({"budget": {"maxTokens": "lots"}}, "invalid_type", "budget.maxTokens: 'lots' is not an integer"),
        ({"budget": {"maxTokens": 1.5}}, "invalid_type", "budget.maxTokens: 1.5 is not an integer"),
        (
            {"contextTrace": {"enabled": "yes"}},
            "invalid_type",
            "contextTrace.enabled: 'yes' is not a boolean",
        ),
        ({"budget": 5}, "invalid_type", "budget: 5 is not a mapping"),
        # true and null as the policy file spells them, not as Python does
        (
            {"checkpoint": {"triggerToolName": True}},
            "invalid_type",
            "checkpoint.triggerToolName: true is not a string",
        ),
        (
            {"mustKeep": {"alwaysKeepFenceKinds": [None]}},
            "invalid_type",
            "mustKeep.alwaysKeepFenceKinds[0]: null is not a string",
        ),
        (
            {"mustKeep": {"alwaysKeepTypes": ["system_prompt", "note"]}},
            "invalid_enum_value",
            "mustKeep.alwaysKeepTypes[1]: 'note' is not one of " + ", ".join(map(repr, MESSAGE_TYPES)),
        ),
        (
            {
                "mustKeep": {
                    "truncationRules": [{"fenceKind": "m", "maxBudgetFraction": 0, "strategyName": "s"}]
                }
            },
            "too_small",
            "mustKeep.truncationRules[0].maxBudgetFraction: 0 must be greater than 0.0",
        ),
        (
            {"checkpoint": {"triggerToolName": ""}},
            "too_small",
            "checkpoint.triggerToolName: '' must not be empty",
        ),
        (
            {"tokenEstimation": {"avgCharsPerToken": float("inf")}},
            "invalid_type",
            "tokenEstimation.avgCharsPerToken: inf is not a finite number",
        ),
    ],
)
def test_error_text(layer, code, text):
    err = _error(layer)
    assert [i.code for i in err.issues] == [code]
    assert str(err) == text


def test_one_line_per_issue():
    err = _error({"budget": {"maxTokens": -1, "reservedForResponse": "x"}, "toolHistory": {"strategy": 1}})
    assert str(err).splitlines() == [
        "budget.maxTokens: -1 must be greater than 0",
        "budget.reservedForResponse: 'x' is not an integer",
        "toolHistory.strategy: 1 is not one of 'per-pair', 'per-run', 'none'",
    ]


EXTRA_RULE = {
    "id": "nudge",
    "trigger": {"kind": "tool-call-streak", "threshold": 5, "moduloStep": False, "config": {"a": [1, None]}},
    "contentTemplate": "toolCallStreak",
    "contentArgs": {"count": 5},
}


def test_extra_rules_use_linnkit_shape():
    rule = define_context_policy(
        {"systemReminder": {"extraRules": [EXTRA_RULE]}}
    ).system_reminder.extra_rules[0]
    assert (rule.id, rule.trigger.kind, rule.trigger.threshold, rule.trigger.modulo_step) == (
        "nudge",
        "tool-call-streak",
        5,
        False,
    )
    assert (rule.content_template, rule.content_args, rule.trigger.config) == (
        "toolCallStreak",
        {"count": 5},
        {"a": [1, None]},
    )
    assert to_wire(rule) == EXTRA_RULE


@pytest.mark.parametrize("value", ["force_final_answer", 3, 2.5, True])
def test_trigger_value_keeps_its_type(value):
    rule = {**EXTRA_RULE, "trigger": {"kind": "phase-equals", "value": value}}
    got = define_context_policy({"systemReminder": {"extraRules": [rule]}}).system_reminder.extra_rules[0]
    assert got.trigger.value == value and type(got.trigger.value) is type(value)


def test_extra_rule_errors():
    bad_args = {**EXTRA_RULE, "contentArgs": {"f": object()}}
    err = _error({"systemReminder": {"extraRules": [bad_args]}})
    assert [(i.path, i.code) for i in err.issues] == [
        (("systemReminder", "extraRules", 0, "contentArgs"), "custom")
    ]
    assert str(err).startswith("systemReminder.extraRules[0].contentArgs: must be JSON-serialisable")

    bad_value = {**EXTRA_RULE, "trigger": {"kind": "phase-equals", "value": [1]}}
    assert str(_error({"systemReminder": {"extraRules": [bad_value]}})) == (
        "systemReminder.extraRules[0].trigger.value: [1] is not a string, an integer, a number or a boolean"
    )
    missing = {"id": "r", "trigger": {"kind": "k"}}
    assert str(_error({"systemReminder": {"extraRules": [missing]}})) == (
        "systemReminder.extraRules[0].contentTemplate: is required"
    )


def test_policy_package_imports_no_ui():
    code = (
        "import sys, engine.policy, engine.policy.schema; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'ipywidgets', 'playground')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"
