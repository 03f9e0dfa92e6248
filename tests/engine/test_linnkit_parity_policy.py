"""linnkit 0.21.0's own tests of defineContextPolicy and the AgentSpec contextPolicy schema
(src/contracts/__tests__/agentSpec.test.ts), as checks of our policy model."""

from __future__ import annotations

import pytest

from engine.policy import PolicyValidationError
from engine.policy.merge import effective_policy


# "defineContextPolicy fills defaults without making minimal host policies invalid" (with linnkit 0.21's
# own defaults: the seed's retentionMode default is compress, spec §9 D4)
def test_define_context_policy_fills_linnkit_defaults():
    policy = effective_policy(
        {"toolHistory": {"keepLatestRuns": 2}, "contextTrace": {"enabled": True}}, defaults="linnkit-0.21"
    )
    assert policy.profile_id == "agent"
    tool_history = policy.tool_history
    assert (tool_history.strategy, tool_history.retention_mode, tool_history.keep_latest_runs) == (
        "per-run",
        "drop",
        2,
    )
    governance = policy.tool_output.observation_governance
    assert (governance.enabled, governance.max_chars, governance.max_lines) == (True, 20_000, 1_200)
    assert policy.must_keep.always_keep_types == ["system_prompt", "user_input"]
    assert (policy.context_trace.enabled, policy.context_trace.max_trace_events) == (True, 200)
    assert policy.provider_replay.missing_sidecar_behavior is None


# "rejects invalid toolHistory strategy values", "... overflowStrategy ...", "... retentionMode ...",
# "rejects invalid providerReplay missing sidecar behavior values", "rejects invalid toolOutput observation
# governance limits", "rejects invalid mustKeep message types", "rejects simultaneous enabled and disabled
# system reminder rule lists", "rejects non-string summarization agentId values"
@pytest.mark.parametrize(
    ("layer", "path"),
    [
        ({"toolHistory": {"strategy": "foo"}}, ("toolHistory", "strategy")),
        ({"toolHistory": {"overflowStrategy": "silent"}}, ("toolHistory", "overflowStrategy")),
        ({"toolHistory": {"retentionMode": "archive"}}, ("toolHistory", "retentionMode")),
        (
            {"providerReplay": {"missingSidecarBehavior": "silent"}},
            ("providerReplay", "missingSidecarBehavior"),
        ),
        (
            {"toolOutput": {"observationGovernance": {"maxChars": 0}}},
            ("toolOutput", "observationGovernance", "maxChars"),
        ),
        ({"mustKeep": {"alwaysKeepTypes": ["host_private_message"]}}, ("mustKeep", "alwaysKeepTypes", 0)),
        (
            {"systemReminder": {"enabledRuleIds": ["a"], "disabledRuleIds": ["b"]}},
            ("systemReminder", "disabledRuleIds"),
        ),
        (
            {"summarization": {"agentId": {"prompt": "do not inline prompt text"}}},
            ("summarization", "agentId"),
        ),
    ],
)
def test_invalid_policies_are_rejected(layer, path):
    with pytest.raises(PolicyValidationError) as raised:
        effective_policy(layer, defaults="linnkit-0.21")
    assert path in raised.value.paths
