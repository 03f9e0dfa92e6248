"""linnkit 0.21.0's own tests of the core and working-memory providers (and a few edges read from its
source), as scenarios our engine runs; each test names the linnkit test it follows."""

from __future__ import annotations

import json

import pytest

from engine.host_tokenizers import MockTokenizer
from engine.providers.core import run_core
from engine.providers.state import KEEP_CORE, KEEP_WM, SKIP
from engine.providers.working_memory import run_working_memory
from engine.tokens import DefaultTokenizer
from engine.tool_summary import summarize_output
from tests.engine.parity_helpers import (
    kept_wm,
    provider_ctx,
    states_of,
    text,
    tool_calls,
    tool_output,
    user_input,
)


def read_pair(n: int) -> list:
    """agentWorkingMemoryProvider.toolLimit.test.ts's makeToolPair."""
    return [
        tool_calls(f"a_tc_{n}", (f"tc_{n}", "workspace_read", {"document_id": f"doc_{n}"})),
        tool_output(f"t_out_{n}", f"tc_{n}", "workspace_read", f"output_{n}"),
    ]


def compressed(n: int):
    return text(
        f"c_tool_{n}",
        "assistant",
        "final_answer",
        f"压缩工具摘要_{n}",
        isCompressedToolHistory=True,
        replacementSourceIds=[f"a_tc_old_{n}", f"t_out_old_{n}"],
    )


def wm(messages, available=100_000, actions=None, total_budget=100_000, **groups):
    states = states_of(messages, actions)
    outcome = run_working_memory(states, available, provider_ctx(total_budget, **groups))
    return states, outcome.report


# -- AgentWorkingMemoryProvider (agentWorkingMemoryProvider.toolLimit.test.ts) ---------------------------


# "uses total input budget for working memory percentage after core messages are kept"
def test_wm_budget_is_a_share_of_the_total_budget_core_included():
    core = text("core_user", "user", "user_input", "当前用户输入")
    follow = text("assistant_text", "assistant", "final_answer", "可保留的历史回答")
    states = states_of([core, follow], {"core_user": KEEP_CORE})
    states[0].tokens, states[1].tokens = 600, 50
    outcome = run_working_memory(states, 400, provider_ctx(1000))
    assert states[1].action == KEEP_WM
    assert outcome.report.tokens_used == 50


# "keeps current-turn raw tool pairs and caps historical compressed groups at config limit" and
# "treats a multi-tool current-turn group as one preserved raw interaction group"
@pytest.mark.parametrize("multi", [False, True])
def test_wm_current_groups_kept_and_compressed_history_capped(multi):
    current = (
        [
            tool_calls("a_multi", ("m_1", "resource_list", {}), ("m_2", "resource_read", {})),
            tool_output("t_m_1", "m_1", "resource_list", "resource_list output"),
            tool_output("t_m_2", "m_2", "resource_read", "resource_read output"),
        ]
        if multi
        else [*read_pair(1), *read_pair(2)]
    )
    messages = [*(compressed(n) for n in range(1, 14)), user_input("user_input_1", "用户输入"), *current]
    states, report = wm(messages)
    kept = kept_wm(states)
    assert kept[-len(current) :] == [m.id for m in current]
    assert [i for i in kept if i.startswith("c_tool_")] == [f"c_tool_{n}" for n in range(2, 14)]
    assert "compressed_tool_history" in report.strategies


# "honors constructor customConfig instead of hardcoding AGENT_CONTEXT_BUILDER_CONFIG"
def test_wm_compressed_history_capped_by_max_interaction_groups():
    messages = [*(compressed(n) for n in range(1, 6)), user_input("user_input_1")]
    states, _ = wm(
        messages, toolHistory={"maxInteractionGroups": 2}, workingMemory={"maxRecentToolInteractions": 2}
    )
    assert [i for i in kept_wm(states) if i.startswith("c_tool_")] == ["c_tool_4", "c_tool_5"]


# "keeps only the configured number of latest thought messages"
def test_wm_keeps_the_latest_thoughts_only():
    messages = [text(f"thought_{n}", "assistant", "thought", f"思考{n}") for n in (1, 2, 3)]
    messages.append(text("assistant_text", "assistant", "final_answer", "普通回复"))
    states, report = wm(messages, reasoningRetention={"keepLatestThoughts": 2})
    assert [s.message.id for s in states if s.action == KEEP_WM and s.message.type == "thought"] == [
        "thought_2",
        "thought_3",
    ]
    assert "thought_processing" in report.strategies


# "keeps configured minimum tool groups even when working-memory budget is exhausted"
def test_wm_minimum_groups_ignore_the_budget():
    messages = [*read_pair(1), user_input("user_1", "继续")]
    limits = {"minToolInteractionsToKeep": 1, "maxRecentToolInteractions": 1}
    states, _ = wm(messages, 1, total_budget=1, workingMemory=limits, toolHistory={"maxInteractionGroups": 1})
    assert kept_wm(states)[:2] == ["a_tc_1", "t_out_1"]


# "honors toolPairingSearchRange when matching tool outputs"
@pytest.mark.parametrize(("search_range", "kept"), [(1, False), (2, True)])
def test_wm_tool_pairing_search_range(search_range, kept):
    call, out = read_pair(1)
    messages = [call, text("assistant_gap", "assistant", "final_answer", "间隔消息"), out]
    limits = {
        "toolPairingSearchRange": search_range,
        "minToolInteractionsToKeep": 0,
        "maxRecentToolInteractions": 1,
    }
    states, _ = wm(messages, workingMemory=limits, toolHistory={"maxInteractionGroups": 1})
    assert ("a_tc_1" in kept_wm(states), "t_out_1" in kept_wm(states)) == (kept, kept)


# "keeps plain text conversation messages when budget allows"
def test_wm_keeps_plain_text():
    messages = [
        text("user_old", "user", "user_input", "旧问题"),
        text("assistant_old", "assistant", "final_answer", "旧回答"),
        text("user_new", "user", "user_input", "新问题"),
    ]
    states, report = wm(messages)
    assert kept_wm(states) == ["user_old", "assistant_old", "user_new"]
    assert report.strategies == ["text_conversation"]


# "keeps historical raw tool groups through P3 when current-turn retention is disabled"
def test_wm_p3_keeps_historical_groups():
    messages = [*read_pair(1), user_input("user_1", "继续")]
    states, report = wm(
        messages,
        workingMemory={"maxRecentToolInteractions": 0, "minToolInteractionsToKeep": 0},
        toolHistory={"maxInteractionGroups": 1},
    )
    assert kept_wm(states)[:2] == ["a_tc_1", "t_out_1"]
    assert "historical_tool_interaction" in report.strategies


# -- AgentCoreContextProvider (AgentCoreContextProvider.mustKeepPolicy.test.ts) ---------------------------


def fence(id: str, kind: str, content: str = "memory"):
    return text(id, "user", "context_injection", content, fenceKind=kind)


def core(messages, total_budget=1000, tokenizer=None, avg=2.0, **must_keep):
    """Core over `messages`, tokens as linnkit's test counts them (max(1, ceil(len/4)))."""
    count = tokenizer or MockTokenizer(message_fn=lambda m: max(1, -(-len(m.content) // 4)))
    states = states_of(messages)
    for state in states:
        state.tokens = count.estimate_message(state.message)
    groups = {"mustKeep": must_keep, "tokenEstimation": {"avgCharsPerToken": avg}}
    outcome = run_core(states, total_budget, provider_ctx(total_budget, count, **groups))
    return states, outcome.report


# "uses the default policy without treating context injections as framework core"
def test_core_default_keeps_no_fence():
    messages = [
        text("system-1", "system", "system_prompt", "system"),
        fence("ctx-1", "memory-context"),
        user_input("user-1", "current"),
    ]
    states, _ = core(messages)
    assert [s.action for s in states] == [KEEP_CORE, SKIP, KEEP_CORE]


# "keeps configured fence messages through an injected policy"
def test_core_keeps_listed_fence_kinds():
    states, _ = core(
        [fence("ctx-1", "memory-context"), user_input("user-1", "current")],
        alwaysKeepFenceKinds=["memory-context"],
    )
    assert [s.action for s in states] == [KEEP_CORE, KEEP_CORE]


# AgentCoreContextProvider.ts provide(): the rule's strategy is applied whenever the estimate is over the
# cap, also when truncateContent leaves a text that already fits in cap × avgCharsPerToken characters
def test_core_names_the_strategy_when_over_the_cap_without_a_cut():
    rule = {"fenceKind": "memory-context", "maxBudgetFraction": 0.1, "strategyName": "memory-truncate"}
    fallback = DefaultTokenizer(None, 2.0, 50)
    body = "x" * 199  # 5 + 100 = 105 tokens over a cap of 100, but 199 <= 200 characters: kept whole
    states, report = core(
        [fence("f", "memory-context", body), user_input("u")],
        tokenizer=fallback,
        alwaysKeepFenceKinds=["memory-context"],
        truncationRules=[rule],
    )
    assert report.strategies == ["memory-truncate"]
    assert (states[0].current.content, states[0].tokens) == (body, 105)


# AgentCoreContextProvider.ts truncateContent: the last space must lie past 0.8 × the fractional
# maxChars (cap × avgCharsPerToken), not past 0.8 × its floor
@pytest.mark.parametrize(("space_at", "kept_chars"), [(161, 201), (162, 162)])
def test_core_cut_at_a_space_compares_with_the_fractional_character_count(space_at, kept_chars):
    rule = {"fenceKind": "memory-context", "maxBudgetFraction": 0.1, "strategyName": "memory-truncate"}
    # budget 1260: cap 126 tokens, maxChars 126 x 1.6 = 201.6 (201 kept), 0.8 x 201.6 = 161.28
    body = "y" * space_at + " " + "z" * 300
    states, report = core(
        [fence("f", "memory-context", body), user_input("u")],
        1260,
        DefaultTokenizer(None, 1.6, 50),
        1.6,
        alwaysKeepFenceKinds=["memory-context"],
        truncationRules=[rule],
    )
    assert states[0].current.content == body[:kept_chars] + "..."
    assert report.strategies == ["memory-truncate"]


# toolOutputSummarizer.ts tryToolSpecificSummary: `typeof toolArgs.n === 'number' ? toolArgs.n : 1`
@pytest.mark.parametrize(
    ("n", "shown"), [(0, "0"), (3, "3"), (2.5, "2.5"), ("4", "1"), (True, "1"), (None, "1")]
)
def test_text_to_image_summary_counts_only_a_number(n, shown):
    args = {} if n is None else {"n": n}
    assert (
        summarize_output("x" * 500, tool_name="text_to_image", tool_args=args) == f"生成了 {shown} 张图片。"
    )


# -- ToolPairTruncator.test.ts, through working memory: a pair over maxPairTokens has its outputs summarised


def oversized(output: str, max_pair: int = 400):
    """One current-turn group `tc`/`to` answering `output`, tokens ceil(len/4) as linnkit's test counts."""
    messages = [
        user_input("u"),
        tool_calls("tc", ("call_1", "test_tool", {"query": "test"})),
        tool_output("to", "call_1", "test_tool", output),
    ]
    count = MockTokenizer(message_fn=lambda m: -(-len(m.content) // 4))
    states = states_of(messages)
    for state in states:
        state.tokens = count.estimate_message(state.message)
    limits = {"maxPairTokens": max_pair, "maxOutputSummaryTokens": 100}
    outcome = run_working_memory(states, 100_000, provider_ctx(100_000, count, toolHistory=limits))
    return states, outcome.report


# "truncates long tool output and marks it as truncated"
def test_truncator_summarises_a_long_output():
    states, report = oversized("x" * 2000)
    output = states[2].current
    summary = f'返回了2000字符的文本, 开头是: "{"x" * 200}...", 结尾是: "...{"x" * 200}"'
    assert output.content == summary
    assert (output.metadata["truncated"], output.metadata["originalLength"]) == (True, 2000)
    assert output.metadata["truncatedLength"] == len(summary)
    assert states[2].tokens == -(-len(summary) // 4)
    assert report.strategies == ["tool_interaction_truncation", "text_conversation"]


# "does not report truncation success when output is already short": nothing saved, the group is not kept
def test_truncator_saves_nothing_on_a_short_output():
    states, report = oversized("short output", max_pair=1)
    assert [s.action for s in states[1:]] == ["skip", "skip"]
    assert states[2].current.content == "short output"
    assert report.strategies == ["text_conversation"]  # the user input; no tool strategy


# "summarizes large JSON outputs into natural language previews"
def test_truncator_describes_a_large_json_object():
    states, _ = oversized(json.dumps({"items": [{"id": 1, "name": "test"}] * 100}))
    assert states[2].current.content == "返回了包含[items]等1个字段的对象"


# TextConversationRetention.ts: P2 marks a kept history summary's id processed, so P3 passes over a
# compressed tool history message that repeats that id
def test_p2_summary_id_is_processed_for_p3():
    summary = text("dup", "system", "history_summary", "summary")
    messages = [
        compressed(1),
        text("dup", "assistant", "final_answer", "c", isCompressedToolHistory=True),
        summary,
        user_input("u"),
    ]
    states, _ = wm(messages)
    assert [s.action for s in states] == [KEEP_WM, SKIP, KEEP_WM, KEEP_WM]


# AgentCoreContextProvider.ts sets processedContent on every core message and the final message takes
# `processedContent || message.content`: a tool output kept by core (alwaysKeepTypes) whose group working
# memory truncates still goes out whole, counted whole in finalTokens (found by running linnkit 0.21.0)
def test_a_core_kept_output_is_sent_whole_after_working_memory_truncates_it():
    from engine.build import build_context

    messages = [
        user_input("u"),
        tool_calls("tc", ("call_1", "test_tool", {"query": "test"})),
        tool_output("to", "call_1", "test_tool", "x" * 2000),
    ]
    count = MockTokenizer(message_fn=lambda m: -(-len(m.content) // 4))
    layer = {
        "budget": {"maxTokens": 100_100, "reservedForResponse": 100},
        "toolHistory": {"maxPairTokens": 400, "maxOutputSummaryTokens": 100},
        "mustKeep": {"alwaysKeepTypes": ["user_input", "tool_output"]},
    }
    result = build_context(messages, layer, tokenizer=count)
    assert result.kept_ids == ("u", "tc", "to")
    assert result.wire[2]["content"] == "x" * 2000
    assert result.tokens.final_tokens == 2 + 0 + 500  # "user u", the call, the whole output


# ToolPairTruncator.ts summarises `item.rawOutputs`, the outputs as the groups were made: when P3 tries
# again a history group P1 already summarised, it summarises the original again (nothing saved), never the
# summary (found by running linnkit 0.21.0 on random cases)
def test_p3_retry_summarises_the_original_output_not_the_summary():
    messages = [
        user_input("u_old"),
        tool_calls("tc", ("call_1", "t", {})),
        tool_output("to", "call_1", "t", "y" * 2000),
        user_input("u_cur"),
    ]
    count = MockTokenizer(message_fn=lambda m: -(-len(m.content) // 4))
    states = states_of(messages)
    for state in states:
        state.tokens = count.estimate_message(state.message)
    groups = {
        "budget": {"workingMemoryBudgetPercentage": 0.06},  # 60 tokens: the summarised pair does not fit
        "toolHistory": {"maxOutputSummaryTokens": 100, "maxInteractionGroups": 2},
        "workingMemory": {"maxRecentToolInteractions": 1, "minToolInteractionsToKeep": 0},
    }
    run_working_memory(states, 1000, provider_ctx(1000, count, **groups))
    assert states[2].action == SKIP
    assert (
        states[2].message.content
        == f'返回了2000字符的文本, 开头是: "{"y" * 200}...", 结尾是: "...{"y" * 200}"'
    )
