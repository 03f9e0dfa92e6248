"""linnkit 0.21.0's own tests of summarization and history purification, as scenarios our engine runs
(each test names the linnkit test it follows)."""

from __future__ import annotations

import pytest

from engine.build import build_context
from engine.errors import ContextProviderError
from engine.host_tokenizers import MockTokenizer
from engine.messages import AiMessage
from engine.providers.state import KEEP_WM
from engine.providers.summarization import run_summarization
from engine.summarizer import FailingSummarizer, SummarizerPort, SummaryRequest
from tests.engine.parity_helpers import ids, preprocess, provider_ctx, states_of


class Recording(SummarizerPort):
    def __init__(self) -> None:
        self.keys: list[str] = []

    def generate(self, request: SummaryRequest) -> str:
        self.keys.append(request.prompt_key)
        return "摘要结果"


def eight_states():
    """SummarizationProvider.test.ts's makeStates: four user inputs and four answers, kept, 10 tokens each."""
    messages = [
        AiMessage(f"{kind}_{i}", role, kind, f"{kind} content {i}" * 10)
        for i in range(8)
        for kind, role in [("user_input", "user") if i % 2 == 0 else ("final_answer", "assistant")]
    ]
    return states_of(messages, {m.id: KEEP_WM for m in messages}, tokens=10)


def summarize(states, available, summarizer, **summarization):
    tokenizer = MockTokenizer(message_fn=lambda m: max(1, -(-len(m.content) // 10)))
    layer = {"triggerThreshold": 0.01, "oldestMessagesPercentage": 0.75, **summarization}
    ctx = provider_ctx(1000, tokenizer, summarizer, summarization=layer)
    return run_summarization(states, available, ctx)


# SummarizationProvider.test.ts: "calls the host generate hook with registered summarization agent id"
def test_summary_request_uses_the_agent_id():
    summarizer = Recording()
    states = eight_states()
    outcome = summarize(states, 1000, summarizer)
    assert summarizer.keys == ["history_compression"]
    # 8 candidates: ceil(8 x 0.75) = 6, capped at the last user input's place (6): u0 … a5 replaced
    summary_id = outcome.persisted[0]["id"]
    assert [s.message.id for s in states] == ["user_input_6", "final_answer_7", summary_id]
    assert [s.message.id for s in states if s.index >= 0] == ["user_input_6", "final_answer_7"]
    assert outcome.persisted[0]["replaced_message_ids"] == [
        "user_input_0",
        "final_answer_1",
        "user_input_2",
        "final_answer_3",
        "user_input_4",
        "final_answer_5",
    ]
    assert outcome.report.strategies == ["ai_history_summarization"]


# SummarizationProvider.test.ts: "throws typed fatal error by default when summarization generation fails"
def test_summary_failure_is_fatal_by_default():
    with pytest.raises(ContextProviderError) as raised:
        summarize(eight_states(), 1000, FailingSummarizer("model failed"))
    error = raised.value
    assert (error.code, error.fatal, error.provider_name) == (
        "SUMMARIZATION_FAILED",
        True,
        "SummarizationProvider",
    )


# SummarizationProvider.test.ts: "continues with original context when configured and current tokens are
# within budget" and "still fails fast when continue-if-within-budget would exceed budget"
def test_summary_failure_continues_only_within_budget():
    states = eight_states()
    outcome = summarize(
        states, 1000, FailingSummarizer("model failed"), failureBehavior="continue-if-within-budget"
    )
    assert outcome.report.strategies == ["ai_history_summarization_failed_continue"]
    assert len(states) == 8 and all(s.action == KEEP_WM for s in states)
    with pytest.raises(ContextProviderError) as raised:
        summarize(
            eight_states(), 50, FailingSummarizer("model failed"), failureBehavior="continue-if-within-budget"
        )
    assert (raised.value.code, raised.value.fatal) == ("SUMMARIZATION_FAILED", True)


# SummarizationTrigger.ts: the content-only count is tiktoken by config.TOKEN_ENCODING_NAME (the policy's
# tokenEstimation.encoding), not by the model id: "你好世界，今天天气很好" is 14 in cl100k, 7 in o200k
@pytest.mark.parametrize(
    ("encoding", "model_id", "count"),
    [("cl100k_base", "gpt-4o", 14 * 5), ("o200k_base", "oracle-model", 7 * 5)],
)
def test_summary_content_count_uses_the_policy_encoding(encoding, model_id, count):
    messages = [AiMessage(f"u{i}", "user", "user_input", "你好世界，今天天气很好") for i in range(5)]
    layer = {
        "budget": {"maxTokens": 1100, "reservedForResponse": 100},
        "summarization": {"triggerThreshold": 0.05},
        "tokenEstimation": {"encoding": encoding},
    }
    result = build_context(messages, layer, tokenizer=MockTokenizer(50), model_id=model_id)
    assert result.summarization_check["contentTokens"] == count


def summary(id: str, seq: int | None, replaced: list[str] | None) -> AiMessage:
    metadata: dict = {"originalMessageCount": len(replaced or [])}
    if seq is not None:
        metadata["summarySeq"] = seq
    if replaced is not None:
        metadata["replacedMessageIds"] = replaced
    return AiMessage(id, "system", "history_summary", f"Content of {id}", metadata=metadata)


def msg(id: str, type: str = "user_input") -> AiMessage:
    return AiMessage(id, "user" if type == "user_input" else "assistant", type, f"Content of {id}")


# history-purifier-refactor.test.ts, each case by its linnkit name
@pytest.mark.parametrize(
    ("messages", "expected"),
    [
        pytest.param(  # 应该使用 summarySeq 查找最新摘要（而非 timestamp）
            [
                msg("msg-1"),
                msg("msg-2", "final_answer"),
                summary("summary-old", 1, ["msg-1", "msg-2"]),
                msg("msg-3"),
                msg("msg-4", "final_answer"),
                summary("summary-new", 2, ["summary-old", "msg-3", "msg-4"]),
                msg("msg-5"),
            ],
            ["msg-1", "msg-2", "summary-new", "msg-5"],
            id="latest by summarySeq",
        ),
        pytest.param(  # 应该使用精确ID列表移除消息
            [
                msg("msg-1"),
                msg("msg-2", "final_answer"),
                msg("msg-3"),
                msg("msg-4", "final_answer"),
                summary("summary-1", 1, ["msg-1", "msg-2"]),
                msg("msg-5"),
            ],
            ["msg-3", "msg-4", "summary-1", "msg-5"],
            id="exact id list",
        ),
        pytest.param(  # 应该支持"自我吞噬"机制（旧摘要被新摘要替换）
            [
                msg("msg-1"),
                msg("msg-2", "final_answer"),
                summary("summary-1", 1, ["msg-1", "msg-2"]),
                msg("msg-3"),
                msg("msg-4", "final_answer"),
                summary("summary-2", 2, ["msg-1", "msg-2", "summary-1", "msg-3", "msg-4"]),
                msg("msg-5"),
            ],
            ["summary-2", "msg-5"],
            id="an old summary folded in",
        ),
        pytest.param(  # 如果摘要缺少 replacedMessageIds，应该跳过净化
            [msg("msg-1"), msg("msg-2", "final_answer"), summary("summary-bad", 1, None), msg("msg-3")],
            ["msg-1", "msg-2", "summary-bad", "msg-3"],
            id="no replacedMessageIds",
        ),
        pytest.param(  # 如果没有摘要消息，应该跳过预处理器
            [msg("msg-1"), msg("msg-2", "final_answer"), msg("msg-3"), msg("msg-4", "final_answer")],
            ["msg-1", "msg-2", "msg-3", "msg-4"],
            id="no summary",
        ),
        pytest.param(  # 应该处理空的 replacedMessageIds 数组
            [msg("msg-1"), summary("summary-empty", 1, []), msg("msg-2")],
            ["msg-1", "summary-empty", "msg-2"],
            id="empty replacedMessageIds",
        ),
        pytest.param(  # 应该正确处理多个摘要但只使用最新的
            [
                msg("msg-1"),
                summary("summary-1", 1, ["msg-1"]),
                msg("msg-2"),
                summary("summary-2", 2, ["msg-1", "summary-1", "msg-2"]),
                msg("msg-3"),
                summary("summary-3", 3, ["msg-1", "summary-1", "msg-2", "summary-2", "msg-3"]),
                msg("msg-4"),
            ],
            ["summary-3", "msg-4"],
            id="several summaries",
        ),
        pytest.param(  # 应该忽略不在消息列表中的 replacedMessageIds
            [
                msg("msg-1"),
                msg("msg-2", "final_answer"),
                summary("summary-1", 1, ["msg-1", "non-existent-id-1", "non-existent-id-2", "msg-2"]),
                msg("msg-3"),
            ],
            ["summary-1", "msg-3"],
            id="unknown ids ignored",
        ),
    ],
)
def test_history_purification(messages, expected):
    result = preprocess(messages)
    assert ids(result.preprocessed) == expected
    assert ("summary_replacement_cleanup" in result.strategies_applied) == (len(expected) < len(messages))


class Padded(SummarizerPort):
    def generate(self, request: SummaryRequest) -> str:
        return "\ufeff the gist \x1c"


# AISummaryGenerator.ts: the reply is `summary.trim()`, JavaScript's trim (U+FEFF goes, U+001C stays)
def test_summary_reply_is_trimmed_as_javascript_does():
    outcome = summarize(eight_states(), 1000, Padded())
    assert outcome.persisted[0]["content"] == "[历史对话摘要 - 压缩了6条消息]\n\nthe gist \x1c"


# SummarizationTrigger.ts counts kept contents with tiktoken's encode and no fallback: a kept text holding a
# special token (<|endoftext|>) makes it throw, the pipeline swallows the provider's error, and no summary
# is made (found by running linnkit 0.21.0 on random cases)
@pytest.mark.parametrize(("marker", "fired"), [("<|endoftext|>", False), ("<|not-special|>", True)])
def test_a_special_token_in_kept_content_stops_summarization(marker, fired):
    messages = [
        AiMessage(f"m{i}", role, kind, f"{kind} {i} some words here {marker}")
        for i in range(9)
        for kind, role in [("user_input", "user") if i % 2 == 0 else ("final_answer", "assistant")]
    ]
    layer = {
        "budget": {"maxTokens": 1100, "reservedForResponse": 100},
        "summarization": {"triggerThreshold": 0.05},
    }
    result = build_context(messages, layer, summarizer=Recording(), tokenizer=MockTokenizer(30))
    assert ("ai_history_summarization" in result.strategies_applied) is fired
    assert result.error is None
