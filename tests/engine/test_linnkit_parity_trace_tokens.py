"""linnkit 0.21.0's own tests of the context trace and of token estimation, as scenarios our engine runs
(each test names the linnkit test it follows)."""

from __future__ import annotations

from engine.build import build_context
from engine.host_tokenizers import MockTokenizer
from engine.tokens import DefaultTokenizer
from tests.engine.parity_helpers import text, tool_calls, user_input

MESSAGES = [
    text("system_1", "system", "system_prompt", "系统提示"),
    text("assistant_1", "assistant", "final_answer", "旧回答"),
    user_input("user_1", "当前问题"),
]


def traced(trace: dict | None):
    """AgentContextManager.contextTrace.test.ts's build: budget 1000, and working memory keeps nothing (the
    linnkit test registers core alone)."""
    layer = {
        "budget": {"maxTokens": 1100, "reservedForResponse": 100, "workingMemoryBudgetPercentage": 0.001},
        "workingMemory": {"minToolInteractionsToKeep": 0},
    }
    if trace is not None:
        layer["contextTrace"] = trace
    return build_context(MESSAGES, layer, tokenizer=MockTokenizer(10))


# AgentContextManager.contextTrace.test.ts: "默认不产出 trace，避免观测信息无意膨胀"
def test_no_trace_by_default():
    assert traced(None).trace is None


# AgentContextManager.contextTrace.test.ts:
# "开启后记录 effective policy、provider token delta 与 keep/drop 决策"
# (token components: one per state, kept or not)
def test_trace_records_counts_provider_deltas_and_decisions():
    trace = traced(
        {"enabled": True, "includeMessageIds": True, "includeTokenBreakdown": True, "maxTraceEvents": 20}
    ).trace
    assert (trace["enabled"], trace["totalBudget"], trace["originalCount"], trace["finalCount"]) == (
        True,
        1000,
        3,
        2,
    )
    assert trace["truncated"] is True
    assert trace["effectivePolicy"]["contextTrace"]["maxTraceEvents"] == 20
    core = next(e for e in trace["events"] if e["kind"] == "provider")
    assert (core["skipped"], core["beforeKeptCount"], core["afterKeptCount"], core["tokenDelta"]) == (
        False,
        0,
        2,
        20,
    )
    decisions = {e["messageId"]: e for e in trace["events"] if e["kind"] == "message-decision"}
    assert (decisions["system_1"]["action"], decisions["system_1"]["reason"]) == (
        "keep_core",
        "kept_by_CORE_CONTEXT",
    )
    assert (decisions["assistant_1"]["action"], decisions["assistant_1"]["kept"]) == ("skip", False)
    assert decisions["assistant_1"]["reason"] == "dropped_by_budget_or_priority"
    kinds = {c["messageId"]: (c["kind"], c["kept"]) for c in trace["tokenComponents"]}
    assert kinds == {
        "system_1": ("system", True),
        "assistant_1": ("assistant", False),
        "user_1": ("user", True),
    }


# AgentContextManager.contextTrace.test.ts: "尊重 includeMessageIds=false 与 maxTraceEvents 上限"
def test_trace_detail_options_and_event_cap():
    trace = traced(
        {"enabled": True, "includeMessageIds": False, "includeTokenBreakdown": False, "maxTraceEvents": 2}
    ).trace
    assert trace["overflowed"] is True
    assert len(trace["events"]) == 2
    assert "tokenComponents" not in trace
    for event in trace["events"]:
        if event["kind"] == "message-decision":
            assert "messageId" not in event and event["tokens"] == 0
        else:
            assert (event["beforeTokens"], event["afterTokens"]) == (0, 0)


# TokenCalculator.test.ts and contextManagerBase.tokenEstimation.test.ts: avgCharsPerToken without an
# encoding ("123456789" at 3 is 3 tokens, 8 with the message overhead), and toolCallOverhead
def test_ratio_count_and_tool_call_overhead():
    three = DefaultTokenizer(None, 3, 10)
    assert three.estimate_text("123456789") == 3
    assert three.estimate_message(user_input("user_1", "123456789")) == 8
    call = tool_calls("assistant_tool_calls", ("call_1", "search", {"query": "linnkit"}))
    low, high = DefaultTokenizer(None, 2, 10), DefaultTokenizer(None, 2, 70)
    assert high.estimate_message(call) - low.estimate_message(call) == 60


# TokenCalculator.test.ts: "accepts an explicit encoding name without treating it as a model id"
def test_an_encoding_name_is_taken_as_given():
    assert DefaultTokenizer("o200k_base", 2).estimate_text("你好世界，今天天气很好") == 7
    assert DefaultTokenizer("cl100k_base", 2).estimate_text("你好世界，今天天气很好") == 14


def test_token_components_are_classified_as_linnkit_classifies_them():
    # linnkit's classifyMessage, in its order: fence, summary (by type or messageType), tool (role or type:
    # output, calls, tool_code), context (injection, before, after), then the role
    from engine.messages import AiMessage
    from engine.providers.state import State
    from engine.trace import component_kind

    def kind(role: str, type_: str, metadata: dict | None = None) -> str:
        return component_kind(State(AiMessage("m", role, type_, "x", 0, metadata), 0, (0,), 1))

    assert kind("assistant", "tool_code", {"tool_name": "ls", "args": {}}) == "tool"
    assert kind("user", "tool_output", {"tool_call_id": "c"}) == "tool"
    assert kind("user", "context_before") == kind("user", "context_after") == "context-injection"
    assert kind("user", "user_input", {"messageType": "summary"}) == "history-summary"
    assert kind("user", "context_injection", {"fenceKind": "repo-map"}) == "fence"
    assert (kind("user", "user_input"), kind("assistant", "thought"), kind("system", "system_prompt")) == (
        "user", "assistant", "system",
    )  # fmt: skip


def test_a_kept_groups_replacement_sources_are_its_ids_once_each():
    # linnkit's ReplacementSourceTagger: a Set of the group's ids (two messages sharing an id count once)
    from engine.policy import define_context_policy

    messages = [
        user_input("u1", "go"),
        tool_calls("a1", ("c1", "ls", {})),
        text("a1", "tool", "tool_output", "files", tool_call_id="c1"),
    ]
    result = build_context(messages, define_context_policy({"contextTrace": {"enabled": True}}))
    events = result.trace["events"]
    decisions = [e for e in events if e["kind"] == "message-decision" and e["originalIndex"] >= 1]
    assert [e.get("replacementSourceIds") for e in decisions] == [["a1"], ["a1"]]
