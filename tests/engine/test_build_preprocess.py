"""Preprocessors through whole builds (spec §5.1, §4): compressor, replay guard, purification, current-turn
assembler, fence lifetime."""

from __future__ import annotations

import json

import pytest

from engine.host_tokenizers import MockTokenizer
from tests.pipeline_helpers import (
    answer,
    build,
    call,
    calls,
    checkpoint_group,
    fence,
    flatten,
    group,
    output,
    policy,
    registry,
    sys,
    user,
)

TEN = MockTokenizer(10)

# -- ToolHistoryCompressor --------------------------------------------------------------------------

# Run 1 has g1 and g2, run 2 has g3; g4 is in the current run and never touched.
HISTORY = flatten(
    sys(),
    user("u1"),
    group("g1"),
    group("g2"),
    answer("a1"),
    user("u2"),
    group("g3"),
    answer("a2"),
    user("u3"),
    group("g4"),
)
HISTORY_IDS = [m.id for m in HISTORY]


def compressed_ids(removed: set[str], mode: str) -> list[str]:
    """HISTORY's ids after removing the groups in `removed`, each replaced at its anchor when compressing."""
    out = []
    for message_id in HISTORY_IDS:
        name = message_id[2:]
        if name not in removed:
            out.append(message_id)
        elif mode == "compress" and message_id.startswith("a_"):
            out.append(f"compressed:{message_id}")
    return out


@pytest.mark.parametrize("mode", ["drop", "compress"])
@pytest.mark.parametrize(
    ("tool_history", "removed"),
    [
        ({"strategy": "per-run", "keepLatestRuns": 1}, {"g1", "g2"}),
        ({"strategy": "per-run", "keepLatestRuns": 2}, set()),
        ({"strategy": "per-run", "keepLatestRuns": 0}, {"g1", "g2", "g3"}),
        ({"strategy": "per-pair", "keepLatestToolPairs": 1}, {"g1", "g2"}),
        ({"strategy": "per-pair", "keepLatestToolPairs": 2}, {"g1"}),
        ({"strategy": "per-pair", "keepLatestToolPairs": 0}, {"g1", "g2", "g3"}),
        ({"strategy": "none"}, set()),
    ],
)
def test_compressor_strategies(tool_history, removed, mode):
    result = build(HISTORY, policy(toolHistory={**tool_history, "retentionMode": mode}), tokenizer=TEN)
    assert [m.id for m in result.preprocessed] == compressed_ids(removed, mode)
    strategy = "tool_history_compression" if mode == "compress" else "tool_history_drop"
    assert (strategy in result.strategies_applied) == bool(removed)
    for name in removed:
        decision = result.decision_for(f"t_{name}")
        if mode == "drop":
            assert (decision.kept, decision.reason, decision.replaced_by) == (
                False,
                "dropped_by_tool_history_drop",
                None,
            )
        else:
            assert (decision.reason, decision.replaced_by) == (
                "replaced_by_tool_history_compression",
                f"compressed:a_{name}",
            )


def test_compressed_text_of_a_group_with_several_calls():
    long = "abc" * 150  # 450 chars: summarised as text with P = 200
    anchor = calls(
        "a_m",
        call("c1", "search", '{"q":"a","n":2,"skip":null,"o":{"k":[1,"z"]}}'),
        call("c2", "fetch", "not json"),
        call("c3", "noargs", ""),
    )
    outputs = [
        output("o1a", "c1", "r1a"),
        output("o1b", "c1", "r1b"),
        output("o2", "c2", ""),
        output("o3", "c3", long),
    ]
    messages = flatten(sys(), user("u1"), anchor, outputs, user("u2"))
    result = build(messages, policy(toolHistory={"keepLatestRuns": 0}), tokenizer=TEN)
    assert result.kept_ids == ("sys", "u1", "compressed:a_m", "u2")
    long_summary = f'返回了450字符的文本, 开头是: "{long[:200]}...", 结尾是: "...{long[-200:]}"'
    assert result.messages[2].content == (
        '我已经调用了工具「search」（参数：q="a", n=2, o={"k":[1,"z"]}），并得到了结果：r1a；r1b；'
        "我已经调用了工具「fetch」，并得到了结果：无输出；"
        f"我已经调用了工具「noargs」，并得到了结果：{long_summary}，我需要思考下一步行动"
    )
    assert result.messages[2].metadata == {
        "isCompressedToolHistory": True,
        "replacementSourceIds": ["a_m", "o1a", "o1b", "o2", "o3"],
        "compressedToolCallIds": ["c1", "c2", "c3"],
        "compressedToolNames": ["search", "fetch", "noargs"],
        "toolInteractionGroupSize": 3,
        "containsCheckpoint": False,
    }


def test_the_latest_checkpoint_group_is_always_kept():
    messages = flatten(sys(), user("u1"), checkpoint_group("cp"), group("g1"), group("g2"), user("u2"))
    layer = policy(toolHistory={"strategy": "per-pair", "keepLatestToolPairs": 1, "retentionMode": "drop"})
    result = build(messages, layer, tokenizer=TEN)
    assert [m.id for m in result.preprocessed] == ["sys", "u1", "a_cp", "t_cp", "a_g2", "t_g2", "u2"]
    layer = policy(toolHistory={"keepLatestRuns": 0, "retentionMode": "drop"})
    result = build(messages, layer, tokenizer=TEN)
    assert [m.id for m in result.preprocessed] == ["sys", "u1", "a_cp", "t_cp", "u2"]


FIVE_GROUPS = flatten(sys(), user("u1"), *(group(f"g{i}") for i in range(1, 6)), user("u2"))


def test_keep_latest_overflow_keeps_the_newest_groups_up_to_the_cap():
    layer = policy(toolHistory={"strategy": "none", "maxInteractionGroups": 3, "retentionMode": "drop"})
    result = build(FIVE_GROUPS, layer, tokenizer=TEN)
    assert result.error is None
    assert [m.id for m in result.preprocessed] == [
        "sys",
        "u1",
        "a_g3",
        "t_g3",
        "a_g4",
        "t_g4",
        "a_g5",
        "t_g5",
        "u2",
    ]


def test_keep_latest_overflow_keeps_the_checkpoint_group_first():
    messages = flatten(
        sys(), user("u1"), checkpoint_group("cp"), *(group(f"g{i}") for i in range(2, 6)), user("u2")
    )
    layer = policy(toolHistory={"strategy": "none", "maxInteractionGroups": 3, "retentionMode": "compress"})
    result = build(messages, layer, tokenizer=TEN)
    assert [m.id for m in result.preprocessed] == [
        "sys",
        "u1",
        "a_cp",
        "t_cp",
        "compressed:a_g2",
        "compressed:a_g3",
        "a_g4",
        "t_g4",
        "a_g5",
        "t_g5",
        "u2",
    ]


@pytest.mark.parametrize(
    ("tool_history", "error"),
    [
        ({"strategy": "per-pair", "keepLatestToolPairs": 3}, None),
        ({"strategy": "none"}, "TOOL_HISTORY_OVERFLOW"),
    ],
)
def test_fail_fast_counts_the_kept_set_only(tool_history, error):
    layer = policy(toolHistory={**tool_history, "maxInteractionGroups": 3, "overflowStrategy": "fail-fast"})
    result = build(FIVE_GROUPS, layer, tokenizer=TEN)
    assert (result.error.code if result.error else None) == error


def test_incomplete_groups_are_left_to_working_memory():
    unanswered = calls("a_x", call("call_x"))
    messages = flatten(sys(), user("u1"), unanswered, group("g1"), user("u2"))
    result = build(
        messages, policy(toolHistory={"keepLatestRuns": 0, "retentionMode": "drop"}), tokenizer=TEN
    )
    assert [m.id for m in result.preprocessed] == ["sys", "u1", "a_x", "u2"]
    assert result.kept_ids == ("sys", "u1", "u2")  # WM never keeps an incomplete group
    assert result.decision_for("a_x").reason == "dropped_by_budget_or_priority"


def test_no_history_no_compression():
    messages = flatten(user("u1"), group("g1"))  # everything is the current run
    result = build(messages, policy(toolHistory={"keepLatestRuns": 0}), tokenizer=TEN)
    assert [m.id for m in result.preprocessed] == ["u1", "a_g1", "t_g1"]
    assert result.strategies_applied == ("tool_interaction_pairing",)


# -- ToolReplayProtocolGuard ------------------------------------------------------------------------

SIDECAR = [{"type": "reasoning.text", "text": "why"}]


def replay_messages():
    anchor = calls(
        "a_g1",
        call("call_g1", "search", '{"q": "a"}'),
        call("call_g1b", "fetch", "{}"),
        content=" thinking aloud ",
    )
    return flatten(
        sys(),
        user("u1"),
        anchor,
        output("t_g1", "call_g1", "r1", raw_output="RAW1"),
        output("t_g1b", "call_g1b", "r1b"),
        group("g2", reasoning_details=SIDECAR),
        answer("a1"),
        user("u2"),
        group("g3"),
    )


def replay_policy(behavior: str, required: bool = True):
    return policy(
        providerReplay={
            "provider": "openrouter",
            "requiresReasoningDetailsForToolReplay": required,
            "missingSidecarBehavior": behavior,
        }
    )


G2_WIRE = {
    "role": "assistant",
    "content": None,
    "tool_calls": [call("call_g2")],
    "reasoning_details": SIDECAR,
}


def test_replay_guard_degrade_to_text():
    result = build(replay_messages(), replay_policy("degrade_to_text"), tokenizer=TEN)
    degraded = "degraded:a_g1"
    assert result.kept_ids == ("sys", "u1", degraded, "a_g2", "t_g2", "a1", "u2", "a_g3", "t_g3")
    assert result.wire[2] == {
        "role": "assistant",
        "content": 'thinking aloud\n\nTool call search args={"q":"a"}\n\nTool result call_g1: RAW1'
        "\n\nTool call fetch args={}\n\nTool result call_g1b: r1b",
    }
    assert result.wire[3] == G2_WIRE  # has a sidecar: untouched
    assert "reasoning_details" not in result.wire[7]  # current run: untouched
    assert result.messages[2].metadata == {
        "isDegradedToolReplay": True,
        "degradationReason": "missing_required_reasoning_details",
        "replacementSourceIds": ["a_g1", "t_g1", "t_g1b"],
        "degradedToolCallIds": ["call_g1", "call_g1b"],
        "degradedToolNames": ["search", "fetch"],
        "toolInteractionGroupSize": 2,
    }
    assert result.strategies_applied[0] == "tool_replay_protocol_guard"
    assert "degraded" in result.cards[2].marks
    for source in ("a_g1", "t_g1", "t_g1b"):
        decision = result.decision_for(source)
        assert (decision.reason, decision.replaced_by, decision.wire_index) == (
            "replaced_by_tool_replay_protocol_guard",
            degraded,
            2,
        )
    [event] = result.events
    assert event.data == {"behavior": "degrade_to_text", "groups": 1}


def test_replay_guard_provider_empty_replay_field():
    result = build(replay_messages(), replay_policy("provider_empty_replay_field"), tokenizer=TEN)
    assert result.kept_ids == tuple(m.id for m in replay_messages())
    assert result.wire[2] == {
        "role": "assistant",
        "content": " thinking aloud ",
        "tool_calls": [call("call_g1", "search", '{"q": "a"}'), call("call_g1b", "fetch", "{}")],
        "provider_empty_replay_field": True,
    }
    assert result.wire[5] == G2_WIRE
    assert "provider_empty_replay_field" not in result.wire[9]
    metadata = result.messages[2].metadata
    assert {k: v for k, v in metadata.items() if k.startswith("provider")} == {
        "provider_empty_replay_field": True,
        "providerSidecarMissingBehavior": "provider_empty_replay_field",
        "providerSidecarMissingReason": "missing_required_reasoning_details",
        "providerSidecarMissingSourceIds": ["a_g1", "t_g1", "t_g1b"],
        "providerSidecarMissingToolCallIds": ["call_g1", "call_g1b"],
        "providerSidecarMissingToolNames": ["search", "fetch"],
    }


@pytest.mark.parametrize(("behavior", "required"), [("allow", True), ("degrade_to_text", False)])
def test_replay_guard_inactive(behavior, required):
    result = build(replay_messages(), replay_policy(behavior, required), tokenizer=TEN)
    assert result.kept_ids == tuple(m.id for m in replay_messages())
    assert "tool_replay_protocol_guard" not in result.strategies_applied
    assert result.wire[2] == {
        "role": "assistant",
        "content": " thinking aloud ",
        "tool_calls": [call("call_g1", "search", '{"q": "a"}'), call("call_g1b", "fetch", "{}")],
    }


# -- HistoryPurification ----------------------------------------------------------------------------


def summary(id: str, replaced: list[str], seq: int | None) -> dict:
    metadata = {"messageType": "summary", "replacedMessageIds": replaced}
    if seq is not None:
        metadata["summarySeq"] = seq
    return {
        "id": id,
        "role": "system",
        "type": "history_summary",
        "content": f"summary {id}",
        "metadata": metadata,
    }


def with_summaries(*summaries: dict):
    from engine.messages import AiMessage

    return [AiMessage.from_dict(s) for s in summaries]


def test_purification_uses_the_latest_summary_and_replacement_sources():
    old = with_summaries(summary("s1", ["u1"], 1))
    new = with_summaries(summary("s2", ["a1", "call-free"], 2))
    compressed = answer("c1", "compressed", replacementSourceIds=["call-free"])
    messages = [sys(), user("u1"), answer("a1"), *old, compressed, *new, user("u2")]
    result = build(messages, policy(), tokenizer=TEN)
    # s2 wins (seq 2): a1 and c1 (whose sources intersect) leave; s1 and u1 stay (s1's list is ignored).
    assert [m.id for m in result.preprocessed] == ["sys", "u1", "s1", "s2", "u2"]
    assert result.kept_ids == ("sys", "s1", "s2", "u1", "u2")  # summaries right after the system prompt
    [event] = result.events
    assert (event.kind, event.message_ids, event.data) == ("purification", ("a1", "c1"), {"summaryId": "s2"})


def test_purification_tie_on_seq_takes_the_first_and_missing_seq_counts_as_minus_one():
    messages = [
        sys(),
        user("u1"),
        answer("a1"),
        *with_summaries(
            summary("s0", ["a1", "u1"], None), summary("s1", ["u1"], 3), summary("s2", ["a1"], 3)
        ),
        user("u2"),
    ]
    result = build(messages, policy(), tokenizer=TEN)
    assert [m.id for m in result.preprocessed] == ["sys", "a1", "s0", "s1", "s2", "u2"]


def test_purification_needs_a_non_empty_list():
    messages = [sys(), user("u1"), *with_summaries(summary("s1", [], 1)), user("u2")]
    result = build(messages, policy(), tokenizer=TEN)
    assert [m.id for m in result.preprocessed] == ["sys", "u1", "s1", "u2"]
    assert "summary_replacement_cleanup" not in result.strategies_applied


# -- Current-turn assembler and fence lifetime ------------------------------------------------------

MEMORY = {
    "kind": "memory-context",
    "llmRole": "user",
    "placement": "before-current-user",
    "lifetime": "turn-only",
    "formatter": "<{kind}{attrs}>\n{content}\n</{kind}>",
}
CLOCK = {"kind": "clock", "llmRole": "system", "placement": "after-system", "lifetime": "turn-only"}
PLAN = {"kind": "plan", "llmRole": "user", "placement": "after-current-user", "lifetime": "persisted"}
HINT = {
    "kind": "tool-hint",
    "llmRole": "system",
    "placement": "after-last-tool-result",
    "lifetime": "turn-only",
}


def test_assembler_verified_example():
    messages = [
        sys(),
        fence("f_mem", "memory-context", "likes tea", "before-current-user", source="store"),
        user("u1", "What should I drink?"),
    ]
    result = build(messages, policy(), fences=registry(MEMORY), tokenizer=TEN)
    assert result.wire == (
        {"role": "system", "content": "You are helpful."},
        {
            "role": "user",
            "content": '<memory-context source="store">\nlikes tea\n</memory-context>\n\n'
            "<user_request>\nWhat should I drink?\n</user_request>",
        },
    )
    assert result.messages[1].meta("assembledFenceKinds") == ["memory-context"]
    assert result.strategies_applied[0] == "current_turn_message_assembly"
    fence_decision, user_decision = result.decision_for("f_mem"), result.decision_for("u1")
    assert (fence_decision.reason, fence_decision.replaced_by, fence_decision.wire_index) == (
        "replaced_by_current_turn_message_assembly",
        "u1",
        1,
    )
    assert fence_decision.tokens == 0
    assert (user_decision.reason, user_decision.wire_index, user_decision.replaced_by) == (
        "kept_by_CORE_CONTEXT",
        1,
        None,
    )
    assert result.cards[1].source_ids == ("f_mem", "u1")
    assert result.cards[1].marks == ("assembled:memory-context",)


def test_assembler_system_prompt_and_both_sides_of_the_user_request():
    messages = [
        sys(),
        fence("f_clock", "clock", "noon", "after-system", "system"),
        user("u1"),
        answer("a1"),
        fence("f_mem", "memory-context", "likes tea", "before-current-user"),
        user("u2", "  What should I drink?  "),
        fence("f_plan", "plan", "step 1", "after-current-user", step=1),
    ]
    result = build(messages, policy(), fences=registry(MEMORY, CLOCK, PLAN), tokenizer=TEN)
    assert result.kept_ids == ("sys", "u1", "a1", "u2")
    assert result.wire[0] == {"role": "system", "content": "You are helpful.\n\n<clock>noon</clock>"}
    assert result.wire[3]["content"] == (
        "<memory-context>\nlikes tea\n</memory-context>\n\n"
        "<user_request>\nWhat should I drink?\n</user_request>\n\n"
        '<plan step="1">step 1</plan>'
    )
    assert result.messages[0].meta("assembledFenceKinds") == ["clock"]
    assert result.messages[3].meta("assembledFenceKinds") == ["memory-context", "plan"]
    assert result.events[0].data == {"assembledFenceKinds": ["clock", "memory-context", "plan"]}


def test_assembler_keeps_an_existing_user_request_block():
    text = '<user_request id="7">\nhi\n</user_request>'
    messages = [fence("f_mem", "memory-context", "m", "before-current-user"), user("u1", text)]
    result = build(messages, policy(), fences=registry(MEMORY), tokenizer=TEN)
    assert result.wire == ({"role": "user", "content": f"<memory-context>\nm\n</memory-context>\n\n{text}"},)


def test_fence_lifetime_is_positional():
    messages = flatten(
        sys(),
        user("u1"),
        fence("f_old_mem", "memory-context", "old", "before-current-user"),
        answer("a1"),
        fence("f_old_plan", "plan", "old plan", "after-current-user"),
        fence("f_unreg", "secret", "zzz", "before-current-user"),
        fence("f_clock", "clock", "noon", "after-system", "system"),  # not adjacent to sys: earlier turn
        user("u2"),
        group("g1"),
        fence("f_hint", "tool-hint", "use cache", "after-last-tool-result", "system"),
    )
    result = build(messages, policy(), fences=registry(MEMORY, CLOCK, PLAN, HINT), tokenizer=TEN)
    assert [m.id for m in result.preprocessed] == [
        "sys",
        "u1",
        "a1",
        "f_old_plan",  # persisted
        "f_unreg",  # unregistered: stays, but the formatter drops it
        "u2",
        "a_g1",
        "t_g1",
        "f_hint",  # current turn
    ]
    for removed in ("f_old_mem", "f_clock"):
        decision = result.decision_for(removed)
        assert (decision.kept, decision.reason) == (False, "dropped_by_fence_lifetime")
    [event] = [e for e in result.events if e.kind == "fence_lifetime"]
    assert event.message_ids == ("f_old_mem", "f_clock")
    # A system-role fence is never kept by working memory (spec §5.3 P2): make such kinds must-keep.
    assert result.decision_for("f_hint").reason == "dropped_by_budget_or_priority"
    assert "f_unreg" in result.kept_ids and result.decision_for("f_unreg").wire_index is None
    assert result.warnings == (
        "f_unreg: kept but not sent: "
        "the wire formatter drops context_injection of unregistered fence kind 'secret'",
    )
    assert {"role": "user", "content": "<plan>old plan</plan>"} in result.wire


def test_fence_lifetime_without_user_input_removes_every_turn_only_fence():
    messages = [
        sys(),
        fence("f_mem", "memory-context", "m", "before-current-user"),
        fence("f_plan", "plan", "p", "after-current-user"),
    ]
    result = build(messages, policy(), fences=registry(MEMORY, PLAN), tokenizer=TEN)
    assert [m.id for m in result.preprocessed] == ["sys", "f_plan"]


def test_after_last_tool_result_fence_kept_when_must_keep():
    messages = flatten(
        sys(),
        user("u1"),
        group("g1"),
        fence("f_hint", "tool-hint", "use cache", "after-last-tool-result", "system"),
    )
    layer = policy(mustKeep={"alwaysKeepFenceKinds": ["tool-hint"]})
    result = build(messages, layer, fences=registry(HINT), tokenizer=TEN)
    assert result.wire[-1] == {"role": "system", "content": "<tool-hint>use cache</tool-hint>"}
    assert json.dumps(result.cards[-1].marks) == '["fence:tool-hint"]'


def test_assembly_follows_the_registered_descriptor_not_the_message_metadata():
    # The message says after-current-user; the registry says before-current-user, and linnkit reads the
    # registry. The user text is trimmed inside the wrapper, and an existing <user_request> block is kept.
    fences = registry(
        {
            "kind": "memory-context",
            "llmRole": "user",
            "placement": "before-current-user",
            "lifetime": "turn-only",
        }
    )
    mem = fence("f1", "memory-context", "likes tea", "after-current-user")
    result = build(
        [sys(), mem, user("u1", "  What should I drink?  ")],
        policy(),
        fences=fences,
        tokenizer=MockTokenizer(10, 10),
    )
    assert result.wire[1]["content"] == (
        "<memory-context>likes tea</memory-context>\n\n<user_request>\nWhat should I drink?\n</user_request>"
    )
    wrapped = user("u2", ' <user_request id="7">Tea?</user_request> ')
    result = build([sys(), mem, wrapped], policy(), fences=fences, tokenizer=MockTokenizer(10, 10))
    assert result.wire[1]["content"].endswith('\n\n<user_request id="7">Tea?</user_request>')
