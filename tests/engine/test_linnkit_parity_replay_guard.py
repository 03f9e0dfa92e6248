"""linnkit 0.21.0's own tests of the tool replay protocol guard and the multi-tool follow-up integration, as
whole builds our engine runs (each test names the linnkit test it follows)."""

from __future__ import annotations

import pytest

from engine.messages import AiMessage
from tests.engine.parity_helpers import ids, preprocess, text, tool_calls, tool_output, user_input

DEGRADE = {
    "provider": "deepseek",
    "requiresReasoningDetailsForToolReplay": True,
    "missingSidecarBehavior": "degrade_to_text",
}
EMPTY_FIELD = {**DEGRADE, "missingSidecarBehavior": "provider_empty_replay_field"}
README = '{"observation":"README 内容"}'
REASONING = [{"provider": "deepseek", "type": "reasoning_content", "reasoning_content": "Need README."}]


def read_readme(id: str, **metadata) -> list[AiMessage]:
    """toolReplayProtocolGuard.test.ts's toolCallsMessage + toolOutputMessage."""
    return [
        tool_calls(id, (f"{id}_call", "workspace_read", {"path": "README.md"}), **metadata),
        tool_output(f"{id}_output", f"{id}_call", "workspace_read", README, raw_output=README),
    ]


def build(messages, provider_replay, tool_history=None):
    tool_history = {"retentionMode": "drop", **(tool_history or {})}
    return preprocess(messages, providerReplay=provider_replay, toolHistory=tool_history)


# toolReplayProtocolGuard.test.ts: "降级历史轮次中缺少 required reasoning_details 的完整工具组"
def test_a_history_group_without_reasoning_details_is_degraded_to_text():
    messages = [user_input("user_old"), *read_readme("missing"), user_input("user_followup")]
    result = build(messages, DEGRADE)
    (degraded,) = [m for m in result.preprocessed if (m.metadata or {}).get("isDegradedToolReplay")]
    assert degraded.content == (
        'Tool call workspace_read args={"path":"README.md"}\n\nTool result missing_call: ' + README
    )
    assert degraded.metadata["replacementSourceIds"] == ["missing", "missing_output"]
    assert [m["role"] for m in result.wire] == ["user", "assistant", "user"]
    assert "tool_replay_protocol_guard" in result.strategies_applied


# toolReplayProtocolGuard.test.ts: "保留带真实 reasoning_details 的历史工具组" and multiToolFollowup
# "应让带真实 reasoning_details 的历史工具组经过三阶段后仍随 assistant(tool_calls) 出关"
def test_a_history_group_with_reasoning_details_keeps_its_sidecar_on_the_wire():
    messages = [
        user_input("user_old"),
        *read_readme("with", reasoning_details=REASONING),
        text("after", "assistant", "final_answer", "已读完。"),
        user_input("user_followup"),
    ]
    result = build(messages, DEGRADE)
    (call,) = [w for w in result.wire if "tool_calls" in w]
    assert call["reasoning_details"] == REASONING
    assert "tool_replay_protocol_guard" not in result.strategies_applied


# toolReplayProtocolGuard.test.ts: "不降级当前轮次工具组，避免掩盖新链路丢 sidecar 的根因"
def test_current_turn_groups_are_never_degraded():
    result = build([user_input("user_current"), *read_readme("current")], DEGRADE)
    assert ids(result.preprocessed) == ["user_current", "current", "current_output"]
    assert [w["role"] for w in result.wire] == ["user", "assistant", "tool"]


# toolReplayProtocolGuard.test.ts: "可按 host 策略保留结构化工具回放，并标记由 provider 补空 replay 字段"
def test_provider_empty_replay_field_keeps_the_structure_and_marks_the_call():
    messages = [user_input("user_old"), *read_readme("missing"), user_input("user_followup")]
    result = build(messages, EMPTY_FIELD)
    (call,) = [w for w in result.wire if "tool_calls" in w]
    assert call["provider_empty_replay_field"] is True
    assert [w["role"] for w in result.wire] == ["user", "assistant", "tool", "user"]
    marked = result.preprocessed[1].metadata
    assert marked["providerSidecarMissingSourceIds"] == ["missing", "missing_output"]
    assert marked["providerSidecarMissingReason"] == "missing_required_reasoning_details"


# multiToolFollowup.integration.test.ts:
# "DeepSeek 历史工具组缺真实 reasoning_details 时应降级为文本，不应从 thought 伪造 sidecar"
def test_a_thought_is_never_made_into_a_sidecar():
    messages = [
        user_input("user_old"),
        text("thought_old", "assistant", "thought", "我需要读 README。"),
        *read_readme("missing"),
        user_input("user_followup"),
    ]
    result = build(messages, DEGRADE, {"strategy": "per-pair", "keepLatestToolPairs": 2})
    assert not any("tool_calls" in w or w["role"] == "tool" for w in result.wire)
    assert not any("reasoning_details" in w for w in result.wire)


# multiToolFollowup.integration.test.ts:
# "应保留压缩后的多工具摘要，并在净化阶段通过 replacementSourceIds 移除"
def test_compressed_multi_tool_history_is_kept_then_purified_by_its_sources():
    messages = [
        user_input("user_old", "先测试多工具调用"),
        tool_calls(
            "assistant_multi",
            ("call_list", "resource_list", {"source": "workspace"}),
            ("call_read", "resource_read", {"uri": "kb://doc-1"}),
        ),
        tool_output("tool_list", "call_list", "resource_list", '{"observation":"列出 3 个资源"}'),
        tool_output("tool_read", "call_read", "resource_read", '{"observation":"读取文档成功"}'),
        user_input("user_new", "继续追问"),
    ]
    layer = {"strategy": "per-pair", "keepLatestToolPairs": 0, "retentionMode": "compress"}
    result = preprocess(messages, toolHistory=layer)
    (compressed,) = [m for m in result.preprocessed if (m.metadata or {}).get("isCompressedToolHistory")]
    sources = compressed.metadata["replacementSourceIds"]
    assert sources == ["assistant_multi", "tool_list", "tool_read"]
    assert result.kept_ids == ("user_old", compressed.id, "user_new")  # working memory's P3 keeps it
    assert "compressed_tool_history" in result.strategies_applied
    summary = AiMessage(
        "history_summary_1",
        "system",
        "history_summary",
        "历史摘要",
        metadata={"summarySeq": 1, "replacedMessageIds": sources},
    )
    after = preprocess([summary, compressed, user_input("user_after_summary", "摘要后继续提问")])
    assert ids(after.preprocessed) == ["history_summary_1", "user_after_summary"]


@pytest.mark.parametrize("behavior", ["allow", None])
def test_allow_or_no_behavior_leaves_history_alone(behavior):
    policy = (
        {**DEGRADE, "missingSidecarBehavior": behavior}
        if behavior
        else {"provider": "deepseek", "requiresReasoningDetailsForToolReplay": True}
    )
    messages = [user_input("user_old"), *read_readme("missing"), user_input("user_followup")]
    assert ids(build(messages, policy).preprocessed) == ids(messages)


# toolReplayProtocolGuard.ts gives each degraded message a fresh id (generateMessageId): two anchors that
# repeat one id still make two distinct messages (found by running linnkit 0.21.0 on random cases)
def test_degraded_messages_of_anchors_sharing_an_id_get_distinct_ids():
    first = read_readme("same")
    second = [
        tool_calls("same", ("other_call", "workspace_read", {"path": "b.md"})),
        tool_output("other_output", "other_call", "workspace_read", "b"),
    ]
    messages = [user_input("user_old"), *first, *second, user_input("user_followup")]
    result = build(messages, DEGRADE)
    created = [m.id for m in result.preprocessed if (m.metadata or {}).get("isDegradedToolReplay")]
    assert len(created) == len(set(created)) == 2
