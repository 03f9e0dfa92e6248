"""Providers through whole builds (spec §5.2–§5.4, §9 D6/D8): core must-keep and truncation, descriptor
must-keep, working memory P1–P3 and thoughts, checkpoint promotion, summarisation outcomes."""

from __future__ import annotations

import pytest

from engine.host_tokenizers import MockTokenizer, TableTokenizer
from engine.messages import AiMessage
from engine.summarizer import FixedSummarizer
from tests.engine.test_build_examples import E7_SUMMARY, RecordingSummarizer, e7_build, e7_messages
from tests.pipeline_helpers import (
    answer,
    build,
    checkpoint_group,
    fallback_tokenizer,
    fence,
    flatten,
    group,
    policy,
    provider_events,
    registry,
    summary_message,
    sys,
    user,
)

TEN = MockTokenizer(10)
LOREM = "lorem " * 100  # 600 chars: 5 + 300 = 305 tokens on the fallback path

# -- Core -------------------------------------------------------------------------------------------


def test_core_keeps_listed_types_and_only_the_last_user_input():
    thought = AiMessage("t1", "assistant", "thought", "hmm")
    messages = [sys(), user("u1"), thought, answer("a1"), user("u2")]
    layer = policy(
        mustKeep={"alwaysKeepTypes": ["system_prompt", "thought"]},
        budget={"workingMemoryBudgetPercentage": 0.01},  # wmBudget 10: WM adds nothing
    )
    result = build(messages, layer, tokenizer=TEN)
    assert result.kept_ids == ("sys", "t1", "u2")
    assert {d.message_id: d.phase for d in result.decisions if d.kept} == {
        "sys": "CORE_CONTEXT",
        "t1": "CORE_CONTEXT",
        "u2": "CORE_CONTEXT",
    }


def test_the_last_user_input_is_core_even_when_not_listed():
    layer = policy(mustKeep={"alwaysKeepTypes": []}, budget={"workingMemoryBudgetPercentage": 0.01})
    result = build([sys(), user("u1"), user("u2")], layer, tokenizer=TEN)
    assert result.kept_ids == ("u2",)


def test_history_summary_is_core_only_when_listed():
    summary = AiMessage("s1", "system", "history_summary", "old", metadata={"summarySeq": 1})
    messages = [sys(), summary, user("u1")]
    tight = {"workingMemoryBudgetPercentage": 0.01}
    assert build(messages, policy(budget=tight), tokenizer=TEN).kept_ids == ("sys", "u1")
    layer = policy(budget=tight, mustKeep={"alwaysKeepTypes": ["system_prompt", "history_summary"]})
    assert build(messages, layer, tokenizer=TEN).kept_ids == ("sys", "s1", "u1")


def test_truncation_rule_only_for_its_fence_kind_and_the_first_match_wins():
    rules = [
        {"fenceKind": "other", "maxBudgetFraction": 0.01, "strategyName": "other-cut"},
        {"fenceKind": "memory-context", "maxBudgetFraction": 0.2, "strategyName": "first"},
        {"fenceKind": "memory-context", "maxBudgetFraction": 0.05, "strategyName": "second"},
    ]
    layer = policy(mustKeep={"alwaysKeepFenceKinds": ["memory-context"], "truncationRules": rules})
    messages = [sys(), fence("f1", "memory-context", LOREM, "after-system"), user("u1")]
    result = build(messages, layer, tokenizer=fallback_tokenizer())
    # cap 200 → maxChars 400; the last space at 395 is past 320: "lorem "×65 + "lorem" + "..." (398 chars)
    assert result.messages[1].content == "lorem " * 65 + "lorem..."
    assert result.decision_for("f1").tokens == 5 + 199
    assert result.strategies_applied == ("first",)


def test_truncation_without_a_space_past_eighty_percent_cuts_at_max_chars():
    layer = policy(
        mustKeep={
            "alwaysKeepFenceKinds": ["memory-context"],
            "truncationRules": [
                {"fenceKind": "memory-context", "maxBudgetFraction": 0.1, "strategyName": "cut"}
            ],
        }
    )
    messages = [sys(), fence("f1", "memory-context", "x" * 500, "after-system"), user("u1")]
    result = build(messages, layer, tokenizer=fallback_tokenizer())
    assert result.messages[1].content == "x" * 200 + "..."


def test_must_keep_overflow_keeps_core_only_and_fails_c6():
    messages = [sys("x" * 2000), user("u1"), answer("a1"), user("u2")]
    result = build(
        messages, policy(), tokenizer=fallback_tokenizer(), expect_failures=("C6_FINAL_TOKENS_WITHIN_BUDGET",)
    )
    assert result.error is None  # silent, not an error (spec §8)
    assert result.kept_ids == ("sys", "u2")
    assert result.tokens.final_tokens == 1005 + 9 == 1014
    assert result.tokens.over_budget and result.tokens.free == -14
    events = provider_events(result)
    assert [events[name]["skipped"] for name in events] == [False, True, True, True]
    assert {e["remainingBudget"] for e in events.values()} == {-14}
    assert result.summarization_check["precheckPassed"] is False


def test_a_remainder_of_exactly_zero_does_not_skip_the_summarisation_precheck():
    table = TableTokenizer({"sys": 990, "u2": 10}, default=10)
    result = build([sys(), user("u1"), answer("a1"), user("u2")], policy(), tokenizer=table)
    events = provider_events(result)
    assert [events[name]["skipped"] for name in events] == [False, True, True, False]
    check = result.summarization_check
    assert (check["used"], check["available"], check["precheckPassed"], check["fired"]) == (
        1000,
        0,
        True,
        False,
    )


# -- Descriptor mustKeep / maxBudgetFraction (spec §9 D6) --------------------------------------------

DESCRIBED = {
    "kind": "memory-context",
    "llmRole": "user",
    "placement": "after-current-user",
    "lifetime": "persisted",
    "mustKeep": True,
    "maxBudgetFraction": 0.1,
}


def descriptor_messages():
    return [
        sys(),
        fence("f1", "memory-context", LOREM, "after-current-user"),
        user("u1"),
        answer("a1", "x" * 1200),
        user("u2"),
    ]


def test_descriptor_must_keep_and_fraction_are_honoured_under_the_seed_defaults():
    result = build(
        descriptor_messages(), policy(), fences=registry(DESCRIBED), tokenizer=fallback_tokenizer()
    )
    # core: sys 13 + f1 105 (truncated, cap 100) + u2 9; a1 (605) no longer fits in 700, u1 does
    assert result.kept_ids == ("sys", "f1", "u1", "u2")
    assert result.tokens.final_tokens == 136
    decision = result.decision_for("f1")
    assert (decision.phase, decision.strategy, decision.tokens) == (
        "CORE_CONTEXT",
        "fence-budget:memory-context",
        105,
    )
    assert result.wire[1] == {
        "role": "user",
        "content": f"<memory-context>{'lorem ' * 32}lorem...</memory-context>",
    }


def test_descriptor_fields_are_ignored_when_not_honoured():
    result = build(
        descriptor_messages(),
        policy(),
        fences=registry(DESCRIBED),
        tokenizer=fallback_tokenizer(),
        honour_fence_descriptors=False,
    )
    # core 22; P2: a1 605 → 627, u1 → 636, f1 305 does not fit
    assert result.kept_ids == ("sys", "u1", "a1", "u2")
    assert result.tokens.final_tokens == 636
    assert result.decision_for("f1").reason == "dropped_by_budget_or_priority"


def test_descriptor_fraction_comes_after_explicit_rules_and_a_full_fraction_changes_nothing():
    rule = {"fenceKind": "memory-context", "maxBudgetFraction": 0.2, "strategyName": "mine"}
    layer = policy(mustKeep={"truncationRules": [rule]})
    result = build(descriptor_messages(), layer, fences=registry(DESCRIBED), tokenizer=fallback_tokenizer())
    assert result.decision_for("f1").strategy == "mine"
    plain = {**DESCRIBED, "mustKeep": False, "maxBudgetFraction": 1}
    honoured = build(descriptor_messages(), policy(), fences=registry(plain), tokenizer=fallback_tokenizer())
    ignored = build(
        descriptor_messages(),
        policy(),
        fences=registry(plain),
        tokenizer=fallback_tokenizer(),
        honour_fence_descriptors=False,
    )
    assert honoured.wire == ignored.wire


# -- Working memory ---------------------------------------------------------------------------------


def thought(id: str, text: str) -> AiMessage:
    return AiMessage(id, "assistant", "thought", text)


@pytest.mark.parametrize(
    ("keep", "kept", "thoughts"),
    [
        (1, ("sys", "u1", "a1", "t2", "a2", "u2"), ["<think>second</think>"]),
        (0, ("sys", "u1", "a1", "a2", "u2"), []),
        (2, ("sys", "u1", "t1", "a1", "t2", "a2", "u2"), ["<think>first</think>", "<think>second</think>"]),
    ],
)
def test_p2_keeps_the_latest_thoughts(keep, kept, thoughts):
    messages = [
        sys(),
        user("u1"),
        thought("t1", "first"),
        answer("a1"),
        thought("t2", "second"),
        answer("a2"),
        user("u2"),
    ]
    result = build(messages, policy(reasoningRetention={"keepLatestThoughts": keep}), tokenizer=TEN)
    assert result.kept_ids == kept
    assert [w["content"] for w in result.wire if w["content"].startswith("<think>")] == thoughts
    if keep:
        assert result.decision_for("t2").strategy == "thought_processing"


THREE_GROUPS = flatten(sys(), user("u1"), group("g1"), group("g2"), group("g3"), answer("a1"), user("u2"))


def test_p3_keeps_historical_groups():
    result = build(THREE_GROUPS, policy(workingMemory={"maxRecentToolInteractions": 0}), tokenizer=TEN)
    assert result.kept_ids == tuple(m.id for m in THREE_GROUPS)
    assert {result.decision_for(f"a_g{i}").strategy for i in (1, 2, 3)} == {"historical_tool_interaction"}
    assert provider_events(result)["WorkingMemoryProvider"]["strategiesApplied"] == [
        "text_conversation",
        "historical_tool_interaction",
    ]


def test_p3_stops_at_max_interaction_groups_minus_the_p1_groups():
    layer = policy(workingMemory={"maxRecentToolInteractions": 1}, toolHistory={"maxInteractionGroups": 2})
    result = build(THREE_GROUPS, layer, tokenizer=TEN)
    # The compressor's keep-latest cap compresses g1; P1 keeps g3; P3 may keep 2 − 1 = 1: g2, not g1.
    assert [m.id for m in result.preprocessed][2] == "compressed:a_g1"
    assert result.kept_ids == ("sys", "u1", "a_g2", "t_g2", "a_g3", "t_g3", "a1", "u2")
    assert result.decision_for("a_g3").strategy == "tool_interaction_pairing"
    assert result.decision_for("a_g2").strategy == "historical_tool_interaction"
    assert result.decision_for("a_g1").kept is False


def test_p3_reads_on_past_compressed_history_that_does_not_fit_to_an_older_group_that_does():
    # The compressor keeps the checkpoint group and compresses the newer g1 and g2, whose texts (690 tokens
    # each) never fit in working memory's 700. P3 stops early only once no group is left: it still reaches
    # the checkpoint group. A minimum of 1 forces the newest candidate in, fit or not.
    messages = flatten(
        sys(), user("u1"), checkpoint_group(), group("g1"), group("g2"), answer("a1"), user("u2")
    )
    table = TableTokenizer({"compressed:a_g1": 690, "compressed:a_g2": 690}, default=10)
    layer = policy(
        toolHistory={"keepLatestRuns": 0, "retentionMode": "compress"},
        workingMemory={"maxRecentToolInteractions": 0, "minToolInteractionsToKeep": 0},
    )
    result = build(messages, layer, tokenizer=table)
    assert [m.id for m in result.preprocessed][4:6] == ["compressed:a_g1", "compressed:a_g2"]
    assert result.kept_ids == ("sys", "a_cp", "t_cp", "a1", "u2")  # the checkpoint purges u1
    assert result.decision_for("a_cp").strategy == "historical_tool_interaction"
    layer["workingMemory"]["minToolInteractionsToKeep"] = 1
    forced = build(messages, layer, tokenizer=table)
    assert forced.kept_ids == ("sys", "a_cp", "t_cp", "compressed:a_g2", "a1", "u2")  # 720 tokens: over


@pytest.mark.parametrize(
    ("max_recent", "strategy"), [(0, "historical_tool_interaction"), (2, "tool_interaction_pairing")]
)
def test_a_group_truncation_cannot_shrink_is_rejected_and_the_walk_goes_on(max_recent, strategy):
    # g3 (800) never fits in 700 and its short output cannot be truncated: the group is rejected (spec
    # §5.3 step 4; linnkit's keepToolGroup), which stops neither P1 nor P3, so g2 and g1 are still kept.
    table = TableTokenizer({"a_g3": 400, "t_g3": 400}, default=10)
    layer = policy(workingMemory={"maxRecentToolInteractions": max_recent, "minToolInteractionsToKeep": 0})
    result = build(THREE_GROUPS, layer, tokenizer=table)
    assert result.kept_ids == ("sys", "u1", "a_g1", "t_g1", "a_g2", "t_g2", "a1", "u2")
    assert result.decision_for("a_g2").strategy == strategy
    assert result.decision_for("t_g3").reason == "dropped_by_budget_or_priority"


def test_a_group_still_too_big_after_truncation_stops_p1():
    # g3's long output is summarised but the pair still exceeds the budget: P1 stops there, so the older
    # g2 is not kept by P1; P3 (newest first) then keeps it.
    long_output = "x" * 3000
    messages = flatten(
        sys(), user("u1"), group("g1"), group("g2"), group("g3", result=long_output), answer("a1"), user("u2")
    )
    by_length = MockTokenizer(tokens_per_message=10, chars_per_token=1)  # the summary stays ~1,900 tokens
    layer = policy(workingMemory={"maxRecentToolInteractions": 2, "minToolInteractionsToKeep": 0})
    # C12 legitimately fails after truncation (spec §7)
    result = build(
        messages, layer, tokenizer=by_length, expect_failures=("C12_HOST_TOKENIZER_DRIVES_BUDGET",)
    )
    assert result.decision_for("a_g3").kept is False
    assert result.decision_for("t_g3").tokens > 700
    assert result.decision_for("a_g2").strategy == "historical_tool_interaction"


def test_working_memory_does_nothing_without_room_and_without_a_minimum():
    table = TableTokenizer({"sys": 700}, default=10)
    layer = policy(workingMemory={"minToolInteractionsToKeep": 0})
    result = build(flatten(sys(), user("u1"), answer("a1"), user("u2"), group("g1")), layer, tokenizer=table)
    assert result.kept_ids == ("sys", "u2")
    wm = provider_events(result)["WorkingMemoryProvider"]
    assert (wm["skipped"], wm["tokensUsed"], wm["strategiesApplied"]) == (False, 0, [])


# -- Checkpoint -------------------------------------------------------------------------------------


def test_checkpoint_promotes_its_keep_set_regardless_of_budget():
    messages = flatten(
        sys(), user("u1"), group("g1"), group("g2"), answer("a1"), user("u2"), group("g3"), checkpoint_group()
    )
    layer = policy(
        budget={"workingMemoryBudgetPercentage": 0.3}, workingMemory={"minToolInteractionsToKeep": 0}
    )
    result = build(messages, layer, tokenizer=MockTokenizer(100))
    # WM (budget 300): core 200, cp does not fit (P1 stops), P2 keeps a1. The checkpoint then promotes
    # cp, g3 and g2 (keepPairsBefore 2) and purges a1; u1 and g1 were never kept.
    assert result.kept_ids == ("sys", "a_g2", "t_g2", "u2", "a_g3", "t_g3", "a_cp", "t_cp")
    assert result.tokens.final_tokens == 800
    checkpoint = provider_events(result)["CheckpointProvider"]
    assert (checkpoint["beforeTokens"], checkpoint["afterTokens"], checkpoint["tokenDelta"]) == (
        300,
        800,
        500,
    )
    assert (checkpoint["tokensUsed"], checkpoint["remainingBudget"]) == (0, 700)
    for message_id in ("a_g2", "t_g2", "a_g3", "t_g3", "a_cp", "t_cp"):
        assert result.decision_for(message_id).reason == "kept_by_CHECKPOINT"
    assert result.decision_for("a1").reason == "dropped_by_CHECKPOINT_PURGED"
    assert result.decision_for("u1").reason == "dropped_by_budget_or_priority"
    [event] = [e for e in result.events if e.kind == "checkpoint"]
    assert event.data["promotedIds"] == ["a_g2", "t_g2", "a_g3", "t_g3", "a_cp", "t_cp"]
    assert event.data["purgedIds"] == ["a1"]


def test_a_checkpoint_call_without_a_checkpoint_result_does_not_fire():
    messages = flatten(
        sys(),
        user("u1"),
        group("g1"),
        answer("a1"),
        user("u2"),
        group("cp", "{}", "saved", tool="context_checkpoint"),
    )
    result = build(messages, policy(), tokenizer=TEN)
    assert "checkpoint_trim_before" not in result.strategies_applied
    assert result.kept_ids == tuple(m.id for m in messages)


def test_checkpoint_follows_the_trigger_tool_name():
    messages = flatten(sys(), user("u1"), answer("a1"), user("u2"), checkpoint_group())
    renamed = policy(checkpoint={"triggerToolName": "save_progress"})
    assert "checkpoint_trim_before" not in build(messages, renamed, tokenizer=TEN).strategies_applied
    result = build(messages, policy(), tokenizer=TEN)
    assert result.kept_ids == ("sys", "u2", "a_cp", "t_cp")


# -- Summarisation ----------------------------------------------------------------------------------


def test_summarisation_does_not_fire_below_ninety_percent_of_the_threshold():
    result = e7_build(FixedSummarizer("x"), triggerThreshold=0.3)  # threshold 300; 250 < 270
    assert result.summarization_check == {
        "used": 250,
        "available": 750,
        "threshold": 300.0,
        "precheckPassed": True,
        "contentTokens": None,
        "fired": False,
    }
    assert result.kept_ids == tuple(m.id for m in e7_messages())


def test_summarisation_needs_the_content_count_too():
    # used 250 ≥ 50, but the contents of these short messages count 25 < 50 in cl100k (spec §9 D8)
    short = [sys(), user("u1"), answer("a1"), user("u2"), answer("a2"), user("u3"), answer("a3"), user("u4")]
    result = e7_build(FixedSummarizer("x"), short)
    assert (result.summarization_check["contentTokens"], result.summarization_check["fired"]) == (25, False)
    assert not provider_events(result)["SummarizationProvider"]["skipped"]


def test_summarisation_needs_five_candidates():
    messages = [sys(), user("u1", E7_SUMMARY * 3), answer("a1", E7_SUMMARY * 3), user("u2")]
    summarizer = RecordingSummarizer()
    result = e7_build(summarizer, messages)
    assert result.summarization_check["fired"] is True
    assert summarizer.requests == []
    [event] = [e for e in result.events if e.kind == "summarization"]
    assert event.title.endswith("fewer than 5 candidates: nothing to summarise")


def test_summarisation_uses_the_agent_id_as_prompt_key():
    summarizer = RecordingSummarizer()
    e7_build(summarizer, agentId="my_compressor")
    assert summarizer.requests[0].prompt_key == "my_compressor"


def test_a_second_summary_merges_the_first():
    first = e7_build(FixedSummarizer("the gist"))
    [event] = first.summary_events
    more = [
        answer("a4", "You are welcome, enjoy the garden."),
        user("u5", "What about peppers, do they grow the same way?"),
        answer("a5", "Peppers like more heat and a bit less water."),
        user("u6", "Great, thanks again."),
    ]
    summarizer = RecordingSummarizer("newer gist")
    second = e7_build(summarizer, [*e7_messages(), summary_message(event), *more])
    # candidates: summary, u4, a4, u5, a5, u6 → n = ceil(6 × 0.75) = 5, cap 5 (u6's position)
    assert summarizer.requests[0].prompt.startswith(
        f"system: {E7_SUMMARY}\n\nuser: Thanks!\n\nassistant: You"
    )
    new_id = "summary:2:u4"
    assert second.kept_ids == ("sys", new_id, "u6")
    summary = second.messages[1]
    assert summary.content == "[历史对话摘要(更新版) - 合并压缩了5条消息，包括旧摘要]\n\nnewer gist"
    assert summary.metadata == {
        "messageType": "summary",
        "originalMessageCount": 5,
        "compressionRatio": 25 / 155,
        "includedOldSummary": True,
        "replacedMessageIds": ["u4", event["id"], "u1", "a1", "u2", "a2", "u3", "a3", "a4", "u5", "a5"],
        "summarySeq": 2,
    }
    assert second.tokens.final_tokens == 20 + 25 + 30


class FlakySummarizer(RecordingSummarizer):
    """Fails `failures` times, then answers."""

    def __init__(self, failures: int, reply: str = "the gist") -> None:
        super().__init__(reply)
        self.failures = failures

    def generate(self, request):
        if self.failures:
            self.failures -= 1
            raise RuntimeError("flaky")
        return super().generate(request)


def test_summarisation_retries_up_to_three_attempts():
    assert e7_build(FlakySummarizer(2)).messages[1].content == E7_SUMMARY
    result = e7_build(FlakySummarizer(3))
    assert result.error is not None and result.error.message == "summarization failed after 3 attempts: flaky"


def test_a_blank_summary_is_a_failure():
    result = e7_build(RecordingSummarizer("   "))
    assert result.error is not None and result.error.code == "SUMMARIZATION_FAILED"
    assert (
        result.error.message
        == "summarization failed after 3 attempts: the summary agent returned a blank reply"
    )


def test_checkpoint_purges_a_kept_history_summary():
    old = AiMessage("s0", "system", "history_summary", "earlier", metadata={"summarySeq": 1})
    messages = flatten(sys(), old, user("u1"), answer("a1"), user("u2"), checkpoint_group())
    result = build(messages, policy(), tokenizer=TEN)
    assert result.kept_ids == ("sys", "u2", "a_cp", "t_cp")
    assert result.decision_for("s0").reason == "dropped_by_CHECKPOINT_PURGED"


def test_a_checkpoint_with_nothing_before_it_to_prune_does_not_count_as_pruning():
    # Only the system prompt (exempt) and the checkpoint's own run precede it: nothing to purge.
    messages = flatten(sys(), user("u1"), checkpoint_group(), answer("a1"))
    result = build(messages, policy(), tokenizer=TEN)
    assert "checkpoint_trim_before" not in result.strategies_applied
    assert not [e for e in result.events if e.kind == "checkpoint"]
    assert result.kept_ids == ("sys", "u1", "a_cp", "t_cp", "a1")
