"""The worked examples of spec §10 (E3–E10) as whole builds, with their exact numbers.

E1 (token counts) is pinned in test_tokens.py and E2 (merging) in test_policy_merge.py.
Defaults for all: maxTokens 1100, reserved 100 → totalBudget 1000; WM% 0.7 → wmBudget 700.
"""

from __future__ import annotations

import json

from engine.host_tokenizers import MockTokenizer, TableTokenizer
from engine.invariants import check_invariants
from engine.summarizer import FailingSummarizer, FixedSummarizer, SummarizerPort, SummaryRequest
from engine.ticks import TickState
from tests.pipeline_helpers import (
    answer,
    build,
    checkpoint_group,
    decision_events,
    fallback_tokenizer,
    fence,
    flatten,
    group,
    policy,
    provider_events,
    summary_message,
    sys,
    user,
)

# -- E3: compressor ---------------------------------------------------------------------------------

E3_G1 = '我已经调用了工具「search」（参数：q="a"），并得到了结果：result-1，我需要思考下一步行动'
E3_G2 = '我已经调用了工具「search」（参数：q="x"），并得到了结果：result-2，我需要思考下一步行动'


def e3_messages():
    return flatten(
        sys(),
        user("u1"),
        group("g1", '{"q":"a"}', "result-1"),
        group("g2", result="result-2"),
        user("u2"),
        group("g3"),
        answer("a2"),
        user("u3"),
        group("g4"),
    )


def e3_policy(mode: str, strategy: str = "per-run"):
    return policy(
        toolHistory={
            "strategy": strategy,
            "retentionMode": mode,
            "keepLatestRuns": 1,
            "keepLatestToolPairs": 1,
        }
    )


E3_DROP_KEPT = ("sys", "u1", "u2", "a_g3", "t_g3", "a2", "u3", "a_g4", "t_g4")
# fallback path: sys 13, users 9, calls 5+50+3+5 = 63, outputs 5+5+4 = 14, a2 10
E3_DROP_TOKENS = 13 + 9 + 9 + 63 + 14 + 10 + 9 + 63 + 14


def test_e3_per_run_drop():
    result = build(e3_messages(), e3_policy("drop"), tokenizer=fallback_tokenizer())
    assert result.kept_ids == E3_DROP_KEPT
    assert result.tokens.final_tokens == E3_DROP_TOKENS == 204
    assert result.strategies_applied[0] == "tool_history_drop"
    event = result.events[0]
    assert (event.kind, tuple(event.message_ids)) == ("tool_history", ("a_g1", "t_g1", "a_g2", "t_g2"))
    assert event.data == {"strategy": "tool_history_drop", "groups": 2, "anchorIds": ["a_g1", "a_g2"]}
    dropped = result.decision_for("t_g1")
    assert (dropped.kept, dropped.reason, dropped.wire_index, dropped.replaced_by) == (
        False,
        "dropped_by_tool_history_drop",
        None,
        None,
    )


def test_e3_per_run_compress_exact_text():
    result = build(e3_messages(), e3_policy("compress"), tokenizer=fallback_tokenizer())
    g1, g2 = "compressed:a_g1", "compressed:a_g2"
    assert result.kept_ids == ("sys", "u1", g1, g2, "u2", "a_g3", "t_g3", "a2", "u3", "a_g4", "t_g4")
    assert result.wire[2] == {"role": "assistant", "content": E3_G1}
    assert result.wire[3] == {"role": "assistant", "content": E3_G2}
    assert len(E3_G1) == len(E3_G2) == 53  # 5 + ceil(53/2) = 32 tokens each
    assert result.tokens.final_tokens == E3_DROP_TOKENS + 2 * 32
    compressed = result.messages[2]
    assert compressed.type == "final_answer" and compressed.role == "assistant"
    assert compressed.metadata == {
        "isCompressedToolHistory": True,
        "replacementSourceIds": ["a_g1", "t_g1"],
        "compressedToolCallIds": ["call_g1"],
        "compressedToolNames": ["search"],
        "toolInteractionGroupSize": 1,
        "containsCheckpoint": False,
    }
    assert "compressed_tool_history" in provider_events(result)["WorkingMemoryProvider"]["strategiesApplied"]
    for source in ("a_g1", "t_g1"):
        decision = result.decision_for(source)
        assert (decision.kept, decision.phase, decision.reason, decision.strategy) == (
            True,
            "WORKING_MEMORY",  # the carrier's phase: P3 kept the compressed message
            "replaced_by_tool_history_compression",
            "tool_history_compression",
        )
        assert (decision.wire_index, decision.replaced_by) == (2, g1)


def test_e3_per_pair_one_pair_gives_the_same_result():
    for mode in ("drop", "compress"):
        per_run = build(e3_messages(), e3_policy(mode), tokenizer=fallback_tokenizer())
        per_pair = build(e3_messages(), e3_policy(mode, "per-pair"), tokenizer=fallback_tokenizer())
        assert per_pair.wire == per_run.wire
        assert per_pair.kept_ids == per_run.kept_ids


def test_e3_overflow_fail_fast():
    messages = flatten(sys(), user("u1"), *(group(f"g{i}") for i in range(1, 6)), user("u2"))
    layer = policy(toolHistory={"maxInteractionGroups": 3, "overflowStrategy": "fail-fast"})
    result = build(messages, layer, tokenizer=fallback_tokenizer())
    assert result.error is not None
    assert result.error.code == "TOOL_HISTORY_OVERFLOW"
    assert result.error.provider_name == "ToolHistoryCompressorPreprocessor"
    assert result.error.message == "5 tool interaction groups exceed toolHistory.maxInteractionGroups (3)"
    assert result.wire == () and result.messages == () and result.decisions == ()
    assert result.events[-1].title.startswith("build failed: TOOL_HISTORY_OVERFLOW: ")


# -- E4: text fill ----------------------------------------------------------------------------------

E4_TABLE = {"sys": 100, "u1": 50, "a1": 80, "u2": 50, "a2": 200, "u3": 60}


def test_e4_text_fill():
    messages = [sys(), user("u1"), answer("a1"), user("u2"), answer("a2"), user("u3")]
    result = build(
        messages, policy(budget={"workingMemoryBudgetPercentage": 0.5}), tokenizer=TableTokenizer(E4_TABLE)
    )
    assert result.kept_ids == ("sys", "a1", "u2", "a2", "u3")
    assert result.tokens.final_tokens == 490
    assert result.tokens.wm_budget == 500
    events = provider_events(result)
    core, wm = events["CoreContextProvider"], events["WorkingMemoryProvider"]
    assert (core["beforeTokens"], core["afterTokens"], core["tokenDelta"], core["remainingBudget"]) == (
        0,
        160,
        160,
        840,
    )
    assert (wm["beforeTokens"], wm["afterTokens"], wm["tokenDelta"], wm["tokensUsed"]) == (160, 490, 330, 330)
    assert wm["remainingBudget"] == 510
    assert (wm["beforeKeptCount"], wm["afterKeptCount"]) == (2, 5)
    assert wm["strategiesApplied"] == ["text_conversation"]
    summarization = events["SummarizationProvider"]
    assert summarization["skipped"] is False  # 490 / 510 ≥ 0.7
    assert result.summarization_check == {
        "used": 490,
        "available": 510,
        "threshold": 700.0,
        "precheckPassed": True,
        "contentTokens": None,  # 490 < 0.9 × 700: no content count
        "fired": False,
    }
    u1 = next(e for e in decision_events(result) if e["messageId"] == "u1")
    assert (u1["action"], u1["reason"], u1["tokens"]) == ("skip", "dropped_by_budget_or_priority", 50)
    # C11 is literal: the older user_input u1 was dropped; it is a warning, not an error.
    assert [f.id for f in check_invariants(result).failures] == ["C11_MUST_KEEP_TYPES_KEPT"]


# -- E5: forced groups ------------------------------------------------------------------------------


def e5_build(**working_memory):
    table = {"sys": 100, "u_old": 20, "u_cur": 30, "a_g5": 60, "t_g5": 140}
    table.update({f"{side}_g{i}": 50 for i in range(1, 5) for side in ("a", "t")})
    messages = flatten(
        sys(), user("u_old"), *(group(f"g{i}") for i in range(1, 5)), user("u_cur"), group("g5")
    )
    layer = policy(budget={"workingMemoryBudgetPercentage": 0.5}, workingMemory=working_memory)
    return build(messages, layer, tokenizer=TableTokenizer(table))


def test_e5_forced_groups():
    result = e5_build()
    assert result.kept_ids == ("sys", "a_g3", "t_g3", "a_g4", "t_g4", "u_cur", "a_g5", "t_g5")
    assert result.tokens.final_tokens == 530  # above wmBudget 500: forced groups ignore the budget
    wm = provider_events(result)["WorkingMemoryProvider"]
    assert (wm["beforeTokens"], wm["afterTokens"], wm["tokensUsed"]) == (130, 530, 400)
    assert wm["strategiesApplied"] == ["tool_interaction_pairing"]  # P2 and P3 skipped
    for message_id in ("u_old", "a_g1", "t_g1", "a_g2", "t_g2"):
        assert result.decision_for(message_id).reason == "dropped_by_budget_or_priority"
    assert result.decision_for("a_g3").strategy == "tool_interaction_pairing"


def test_e5_without_a_minimum():
    result = e5_build(minToolInteractionsToKeep=0)
    assert result.kept_ids == ("sys", "u_old", "a_g4", "t_g4", "u_cur", "a_g5", "t_g5")
    assert result.tokens.final_tokens == 450
    assert result.decision_for("u_old").strategy == "text_conversation"
    assert all(not result.decision_for(f"{s}_g{i}").kept for i in (1, 2, 3) for s in ("a", "t"))
    assert not any(e.kind == "tool_output_truncation" for e in result.events)  # nothing to save


# -- E6: checkpoint ---------------------------------------------------------------------------------


def test_e6_checkpoint():
    messages = flatten(
        sys(),
        user("u1"),
        group("g1"),
        group("g2"),
        group("g3"),
        answer("a1"),
        user("u2"),
        group("g4"),
        checkpoint_group(),
        group("g5"),
    )
    result = build(messages, policy(), tokenizer=MockTokenizer(10))
    assert result.kept_ids == ("sys", "a_g3", "t_g3", "u2", "a_g4", "t_g4", "a_cp", "t_cp", "a_g5", "t_g5")
    assert result.tokens.final_tokens == 100
    events = provider_events(result)
    assert events["WorkingMemoryProvider"]["afterTokens"] == 160  # WM keeps all
    checkpoint = events["CheckpointProvider"]
    assert (checkpoint["beforeTokens"], checkpoint["afterTokens"], checkpoint["tokenDelta"]) == (
        160,
        100,
        -60,
    )
    assert checkpoint["tokensUsed"] == 0
    assert checkpoint["strategiesApplied"] == ["checkpoint_trim_before"]
    assert events["SummarizationProvider"]["skipped"] is True  # 100 / 840 < 0.7
    for message_id in ("u1", "a_g1", "t_g1", "a_g2", "t_g2", "a1"):
        decision = result.decision_for(message_id)
        assert (decision.kept, decision.phase, decision.reason) == (
            False,
            "CHECKPOINT_PURGED",
            "dropped_by_CHECKPOINT_PURGED",
        )
    [event] = [e for e in result.events if e.kind == "checkpoint"]
    assert event.data == {
        "anchorId": "a_cp",
        "summary": "phase 1 done",
        "purgedIds": ["u1", "a_g1", "t_g1", "a_g2", "t_g2", "a1"],
        "promotedIds": [],
        "keptGroupAnchors": ["a_cp", "a_g3", "a_g4"],
    }


# -- E7: summarisation ------------------------------------------------------------------------------

E7_TEXTS = {
    "u1": "How do I plant tomatoes in a small garden?",
    "a1": "Choose a sunny spot and plant them after the last frost.",
    "u2": "How often should I water them?",
    "a2": "Water deeply two or three times a week.",
    "u3": "Do they need support?",
    "a3": "Yes, use stakes or cages as they grow.",
    "u4": "Thanks!",
}
E7_TABLE = TableTokenizer(
    {"sys": 20, "u4": 20}, per_type={"history_summary": 25}, per_role={"user": 30, "assistant": 40}
)
E7_SUMMARY = "[历史对话摘要 - 压缩了6条消息]\n\nthe gist"


class RecordingSummarizer(SummarizerPort):
    def __init__(self, reply: str = "  the gist  ") -> None:
        self.reply = reply
        self.requests: list[SummaryRequest] = []

    def generate(self, request: SummaryRequest) -> str:
        self.requests.append(request)
        return self.reply


class CountingFailure(FailingSummarizer):
    calls = 0

    def generate(self, request: SummaryRequest) -> str:
        self.calls += 1
        return super().generate(request)


def e7_messages():
    return [sys(), *((user if k[0] == "u" else answer)(k, text) for k, text in E7_TEXTS.items())]


def e7_build(summarizer, messages=None, **summarization):
    layer = policy(summarization={"triggerThreshold": 0.05, **summarization})
    return build(messages or e7_messages(), layer, tokenizer=E7_TABLE, summarizer=summarizer, now=1234)


def test_e7_summarisation_fires():
    summarizer = RecordingSummarizer()
    result = e7_build(summarizer)
    summary_id = "summary:1:u1"
    assert result.kept_ids == ("sys", summary_id, "u4")
    assert result.tokens.final_tokens == 65
    assert result.wire[1] == {"role": "system", "content": E7_SUMMARY}
    assert result.summarization_check == {
        "used": 250,
        "available": 750,
        "threshold": 50.0,
        "precheckPassed": True,
        "contentTokens": 59,  # cl100k over the kept contents only (spec §9 D8)
        "fired": True,
    }
    [request] = summarizer.requests
    assert request.prompt_key == "history_compression"
    assert request.model_id == "default"
    assert request.budget_tokens == 120
    assert request.prompt == "\n\n".join(
        f"{'user' if k[0] == 'u' else 'assistant'}: {E7_TEXTS[k]}"
        for k in ("u1", "a1", "u2", "a2", "u3", "a3")
    )
    replaced = ["u1", "a1", "u2", "a2", "u3", "a3"]
    summary = result.messages[1]
    assert (summary.role, summary.type, summary.timestamp) == ("system", "history_summary", 1234)
    assert summary.metadata == {
        "messageType": "summary",
        "originalMessageCount": 6,
        "compressionRatio": 25 / 210,
        "includedOldSummary": False,
        "replacedMessageIds": replaced,
        "summarySeq": 1,
    }
    assert result.summary_events == (
        {
            "type": "history_summary",
            "id": summary_id,
            "content": E7_SUMMARY,
            "replaced_message_ids": replaced,
            "summary_seq": 1,
            "original_message_count": 6,
            "compression_ratio": 25 / 210,
            "included_old_summary": False,
            "timestamp": 1234,
        },
    )
    event = provider_events(result)["SummarizationProvider"]
    assert (event["beforeTokens"], event["afterTokens"], event["tokenDelta"]) == (250, 65, -185)
    assert (event["tokensUsed"], event["remainingBudget"]) == (25, 725)
    assert event["strategiesApplied"] == ["ai_history_summarization"]
    # Summarised states emit no decision event; the summary appears with index −1.
    assert [(e["originalIndex"], e["messageId"]) for e in decision_events(result)] == [
        (0, "sys"),
        (7, "u4"),
        (-1, summary_id),
    ]
    for message_id in replaced:
        decision = result.decision_for(message_id)
        assert (decision.reason, decision.replaced_by, decision.wire_index) == (
            "replaced_by_ai_history_summarization",
            summary_id,
            1,
        )
    created = result.decisions[-1]
    assert (created.index, created.message_id, created.reason, created.tokens) == (
        -1,
        summary_id,
        "kept_by_SUMMARIZATION",
        25,
    )


def test_e7_fail_fast():
    summarizer = CountingFailure("boom")
    result = e7_build(summarizer)
    assert result.error is not None
    assert (result.error.code, result.error.provider_name) == (
        "SUMMARIZATION_FAILED",
        "SummarizationProvider",
    )
    assert result.error.message == "summarization failed after 3 attempts: boom"
    assert summarizer.calls == 3
    assert result.wire == () and result.trace is None


def test_e7_continue_if_within_budget():
    result = e7_build(FailingSummarizer("boom"), failureBehavior="continue-if-within-budget")
    assert result.error is None
    assert result.kept_ids == tuple(m.id for m in e7_messages())
    assert result.tokens.final_tokens == 250
    assert "ai_history_summarization_failed_continue" in result.strategies_applied
    assert "ai_history_summarization" not in result.strategies_applied
    [event] = [e for e in result.events if e.kind == "summarization"]
    assert event.data["failed"] is True and event.data["error"] == "boom"


def test_e7_continue_fails_when_used_exceeds_the_remaining_budget():
    # users 100, assistants 120: WM fills to 700, so used 700 > remaining 300 (spec §9 D10).
    table = TableTokenizer({"sys": 20, "u4": 20}, per_role={"user": 100, "assistant": 120})
    layer = policy(summarization={"triggerThreshold": 0.05, "failureBehavior": "continue-if-within-budget"})
    result = build(e7_messages(), layer, tokenizer=table, summarizer=FailingSummarizer("boom"))
    assert result.error is not None and result.error.code == "SUMMARIZATION_FAILED"


def test_e7_next_build_purifies_and_keeps_the_summary_after_sys():
    first = e7_build(FixedSummarizer("the gist"))
    [event] = first.summary_events
    history = [*e7_messages(), summary_message(event), answer("a4", "You are welcome."), user("u5", "Bye.")]
    second = e7_build(FixedSummarizer("unused"), history)
    summary_id = event["id"]
    assert [m.id for m in second.preprocessed] == ["sys", "u4", summary_id, "a4", "u5"]
    assert second.kept_ids == ("sys", summary_id, "u4", "a4", "u5")
    assert second.wire[1] == {"role": "system", "content": E7_SUMMARY}
    assert second.strategies_applied[0] == "summary_replacement_cleanup"
    assert "ai_history_summarization" not in second.strategies_applied  # 4 candidates: nothing to do
    [purification] = [e for e in second.events if e.kind == "purification"]
    assert purification.message_ids == ("u1", "a1", "u2", "a2", "u3", "a3")
    for message_id in purification.message_ids:
        decision = second.decision_for(message_id)
        assert (decision.reason, decision.replaced_by, decision.wire_index) == (
            "replaced_by_summary_replacement_cleanup",
            summary_id,
            1,
        )
    assert second.decision_for(summary_id).strategy == "history_summary"  # kept by WM P2


# -- E8: reminder -----------------------------------------------------------------------------------


def test_e8_reminder_on_the_last_wire_message():
    groups = [group(f"g{i}") for i in range(1, 10)]
    messages = flatten(sys(), user("u1"), *groups, group("g10", result="result text"))
    tick = TickState(step_count=72, max_steps=80, available_tools=("context_checkpoint",))
    result = build(messages, policy(), tokenizer=MockTokenizer(10), tick=tick)
    assert result.reminder.hit_rule_ids == ("tool_call_streak_every_ten", "context_budget_warning")
    last = result.wire[-1]
    assert last["role"] == "tool" and last["tool_call_id"] == "call_g10"
    assert last["content"] == "result text" + result.reminder.appended_text
    text = result.reminder.appended_text
    assert text.startswith("\n\n<system-reminder>\n- 你已连续执行了 10 次工具调用。\n  如果问题比较复杂")
    assert text.endswith("\n</system-reminder>")
    warning = text.split("\n- ")[2]
    assert "36/40" in warning and "context_checkpoint" in warning
    assert result.messages[-1].content == "result text"  # reminders never touch the messages
    assert result.cards[-1].marks == ("reminder",)
    assert result.tokens.by_category["reminder"] == result.reminder.tokens == 10  # estimate_text of the mock
    assert [e.data["ruleId"] for e in result.events if e.kind == "reminder"] == list(
        result.reminder.hit_rule_ids
    )


# -- E9: core truncation ----------------------------------------------------------------------------


def e9_policy():
    rule = {"fenceKind": "memory-context", "maxBudgetFraction": 0.1, "strategyName": "memory-truncate"}
    return policy(mustKeep={"alwaysKeepFenceKinds": ["memory-context"], "truncationRules": [rule]})


def test_e9_core_truncation():
    messages = [sys(), fence("f1", "memory-context", "lorem " * 100, "after-system"), user("u1")]
    result = build(messages, e9_policy(), tokenizer=fallback_tokenizer())
    truncated = result.messages[1]
    assert truncated.content == "lorem " * 32 + "lorem..."  # cut at the last space (197 > 160), then "..."
    assert len(truncated.content) == 200
    assert result.kept_ids == ("sys", "f1", "u1")
    assert result.tokens.final_tokens == 13 + 105 + 9 == 127
    assert "memory-truncate" in result.strategies_applied
    [event] = result.events
    assert event.data == {
        "strategy": "memory-truncate",
        "cap": 100,
        "before": 305,
        "after": 105,  # still above the cap
        "originalChars": 600,
        "keptChars": 200,
    }
    decision = result.decision_for("f1")
    assert (decision.phase, decision.strategy, decision.tokens) == ("CORE_CONTEXT", "memory-truncate", 105)
    assert provider_events(result)["CoreContextProvider"]["strategiesApplied"] == ["memory-truncate"]


# -- E10: oversized pair ----------------------------------------------------------------------------

E10_OUTPUT = json.dumps([{"id": i} for i in range(100)], separators=(",", ":"))
E10_SUMMARY = '返回了100个结果, 前几个是: [{"id":0}, {"id":1}, {"id":2}...]'


def test_e10_oversized_pair():
    assert len(E10_OUTPUT) == 991 and len(E10_SUMMARY) == 50
    messages = flatten(sys(), user("u1"), group("g1", result=E10_OUTPUT), answer("a1"), user("u2"))
    tokenizer = fallback_tokenizer()
    assert [tokenizer.estimate_message(m) for m in messages[2:4]] == [63, 505]  # 568 > maxPairTokens 500
    layer = policy(toolHistory={"maxPairTokens": 500, "maxOutputSummaryTokens": 100})
    result = build(messages, layer, tokenizer=tokenizer)
    assert result.kept_ids == ("sys", "u1", "a_g1", "t_g1", "a1", "u2")
    assert result.wire[3] == {"role": "tool", "tool_call_id": "call_g1", "content": E10_SUMMARY}
    assert result.tokens.final_tokens == 13 + 9 + 63 + 34 + 10 + 9 == 138
    output = result.messages[3]
    assert output.meta("truncated") is True
    assert (output.meta("originalLength"), output.meta("truncatedLength")) == (991, 50)
    assert result.decision_for("t_g1").strategy == "tool_interaction_truncation"  # spec E10
    assert result.decision_for("t_g1").tokens == 34
    [event] = [e for e in result.events if e.kind == "tool_output_truncation"]
    assert event.data == {
        "originalLength": 991,
        "truncatedLength": 50,
        "tokensBefore": 505,
        "tokensAfter": 34,
    }
    assert "truncated" in result.cards[3].marks
