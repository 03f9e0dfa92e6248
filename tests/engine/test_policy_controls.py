"""Control specs: every field has one, with bounds, UI hints and working get/set/reset."""

import pytest

from engine.messages import MESSAGE_TYPES
from engine.policy import (
    BUILTIN_REMINDER_RULE_IDS,
    ContextPolicy,
    PolicyValidationError,
    changed_paths,
    control_for,
    define_context_policy,
    effective_policy,
    get_value,
    policy_controls,
    policy_groups,
    reset_group,
    reset_path,
    set_value,
    to_wire,
)


def _leaf_paths(data, prefix=()):
    """Leaf paths of a wire dict; lists and the free-form parts count as leaves."""
    for key, value in data.items():
        if isinstance(value, dict):
            yield from _leaf_paths(value, (*prefix, key))
        else:
            yield (*prefix, key)


def test_controls_cover_every_field_of_the_twelve_groups():
    full = effective_policy(
        {
            "providerReplay": {"provider": "p", "requiresReasoningDetailsForToolReplay": True},
            "summarization": {"agentId": "a"},
            "tokenEstimation": {
                "calibration": {"enabled": True, "minSamples": 3, "minCoefficient": 1, "maxCoefficient": 4},
                "remoteCount": {"enabled": True, "failureBehavior": "fail-fast"},
            },
        }
    )
    full = set_value(full, ("providerReplay", "missingSidecarBehavior"), "allow")
    wire = to_wire(full)
    del wire["profileId"]
    paths = [c.path for c in policy_controls()]
    assert len(paths) == len(set(paths)) == 51
    assert set(paths) == set(_leaf_paths(wire))
    assert [g.key for g in policy_groups()] == list(wire)


def test_every_control_has_a_label_and_two_lines_of_help():
    for control in policy_controls():
        assert control.label, control.key
        assert len(control.help_lines) == 2 and all(control.help_lines), control.key


def test_numeric_controls_carry_bounds_and_ui_hints():
    for control in policy_controls():
        if control.kind.removeprefix("optional-") in ("int", "float"):
            assert control.minimum is not None, control.key
            assert None not in (control.ui_min, control.ui_max, control.step, control.coarse_step), (
                control.key
            )
            assert control.ui_min < control.ui_max


@pytest.mark.parametrize(
    ("path", "fields"),
    [
        (
            ("budget", "maxTokens"),
            dict(
                kind="int",
                minimum=0,
                minimum_exclusive=True,
                maximum=None,
                ui_min=1000,
                ui_max=1_000_000,
                step=1000,
                coarse_step=10_000,
                default=120_000,
                group="budget",
                name="maxTokens",
                attr_path=("budget", "max_tokens"),
            ),
        ),
        (
            ("budget", "workingMemoryBudgetPercentage"),
            dict(
                kind="float",
                minimum=0,
                minimum_exclusive=False,
                maximum=1,
                maximum_exclusive=False,
                step=0.01,
                coarse_step=0.1,
                default=0.7,
            ),
        ),
        (
            ("toolHistory", "strategy"),
            dict(kind="enum", choices=("per-pair", "per-run", "none"), default="per-run"),
        ),
        (
            ("providerReplay", "missingSidecarBehavior"),
            dict(
                kind="optional-enum",
                choices=("allow", "degrade_to_text", "provider_empty_replay_field"),
                default=None,
                unset_value="allow",
            ),
        ),
        (("mustKeep", "alwaysKeepTypes"), dict(kind="list", choices=MESSAGE_TYPES)),
        (("mustKeep", "truncationRules"), dict(kind="json", default=[])),
        (
            ("systemReminder", "enabledRuleIds"),
            dict(kind="optional-list", suggestions=BUILTIN_REMINDER_RULE_IDS, default=None),
        ),
        (
            ("systemReminder", "thresholds", "taskstateReflectionPeriod"),
            dict(kind="int", group="systemReminder"),
        ),
        (
            ("tokenEstimation", "calibration", "minSamples"),
            dict(kind="optional-int", unset_value=3, default=None),
        ),
        (("contextTrace", "enabled"), dict(kind="bool", default=False)),
        (("checkpoint", "triggerToolName"), dict(kind="str", default="context_checkpoint")),
    ],  # fmt: skip
)
def test_control_spec(path, fields):
    control = control_for(path)
    assert {name: getattr(control, name) for name in fields} == fields


def test_control_for_accepts_snake_case_and_names_unknown_paths():
    assert control_for(("tool_history", "keep_latest_runs")).path == ("toolHistory", "keepLatestRuns")
    with pytest.raises(KeyError, match="unknown policy field 'budget.maxTokenz'"):
        control_for(("budget", "maxTokenz"))


def test_set_value_returns_a_new_validated_policy():
    policy = define_context_policy(None)
    changed = set_value(policy, ("budget", "maxTokens"), 2_000_000)  # above the UI range, still valid
    assert changed.budget.max_tokens == 2_000_000
    assert policy.budget.max_tokens == 120_000
    assert get_value(changed, ("budget", "maxTokens")) == 2_000_000
    assert (
        set_value(
            policy, ("budget", "workingMemoryBudgetPercentage"), 1
        ).budget.working_memory_budget_percentage
        == 1.0
    )


def test_set_value_errors_carry_the_field_path():
    policy = define_context_policy(None)
    with pytest.raises(PolicyValidationError) as info:
        set_value(policy, ("summarization", "triggerThreshold"), 1.2)
    assert [(i.path, i.code) for i in info.value.issues] == [
        (("summarization", "triggerThreshold"), "too_big")
    ]
    assert str(info.value) == "summarization.triggerThreshold: 1.2 is above the maximum 1.0"
    with pytest.raises(PolicyValidationError) as info:
        set_value(
            set_value(policy, ("systemReminder", "disabledRuleIds"), ["x"]),
            ("systemReminder", "enabledRuleIds"),
            [],
        )
    assert info.value.issues[0].path == ("systemReminder", "disabledRuleIds")


def test_optional_fields_set_and_unset():
    policy = define_context_policy(None)
    on = set_value(policy, ("tokenEstimation", "calibration", "enabled"), True)
    assert on.token_estimation.calibration.enabled is True
    assert changed_paths(on) == {("tokenEstimation", "calibration", "enabled")}
    off = set_value(on, ("tokenEstimation", "calibration", "enabled"), None)
    assert off == policy and off.token_estimation.calibration is None
    assert get_value(policy, ("tokenEstimation", "calibration", "minSamples")) is None


def test_json_controls_take_wire_form_lists():
    rules = [{"fenceKind": "memory-context", "maxBudgetFraction": 0.2, "strategyName": "memory-truncate"}]
    policy = set_value(define_context_policy(None), ("mustKeep", "truncationRules"), rules)
    assert get_value(policy, ("mustKeep", "truncationRules")) == rules
    assert policy.must_keep.truncation_rules[0].max_budget_fraction == 0.2


def test_changed_paths_and_resets():
    policy = effective_policy(
        {"budget": {"maxTokens": 5000, "reservedForResponse": 100}, "contextTrace": {"enabled": True}}
    )
    assert changed_paths(policy) == {
        ("budget", "maxTokens"),
        ("budget", "reservedForResponse"),
        ("contextTrace", "enabled"),
    }
    assert changed_paths(policy, "linnkit-0.21") == {
        ("budget", "maxTokens"),
        ("budget", "reservedForResponse"),
        ("contextTrace", "enabled"),
        ("toolHistory", "retentionMode"),
    }
    partly = reset_path(policy, ("budget", "maxTokens"))
    assert changed_paths(partly) == {("budget", "reservedForResponse"), ("contextTrace", "enabled")}
    assert changed_paths(reset_group(policy, "budget")) == {("contextTrace", "enabled")}
    assert reset_group(reset_group(policy, "context_trace"), "budget") == ContextPolicy()
    assert reset_path(policy, ("budget", "maxTokens"), "linnkit-0.21").budget.max_tokens == 232000
    with pytest.raises(KeyError, match="unknown policy group 'bugdet'"):
        reset_group(policy, "bugdet")
