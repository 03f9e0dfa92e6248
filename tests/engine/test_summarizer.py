"""The offline summarizer: deterministic, within the summary budget, keeps requests, decisions, tools."""

from engine.summarizer import FailingSummarizer, FixedSummarizer, OfflineSummarizer, SummaryRequest
from engine.tokens import DefaultTokenizer

PROMPT = "\n\n".join(
    [
        "user: Why does test_eu_invoice_rounding fail?\nIt started this morning.",
        'assistant: 我已经调用了工具「read_file」（参数：path="billing/totals.py"），'
        "并得到了结果：ok，我需要思考下一步行动",
        "assistant: line_total rounds half-even; finance rounds half-up.",
        "user: Switch to half-up.",
        'assistant: Tool call run_shell args={"command":"pytest"}\n\nTool result c1: 14 passed',
    ]
)


def request(budget: int, count=None) -> SummaryRequest:
    return SummaryRequest("history_compression", "m", PROMPT, budget, 2.0, count)


def test_offline_summary_keeps_requests_decisions_and_tools():
    text = OfflineSummarizer().generate(request(1000))
    assert text.splitlines() == [
        "User requests: Why does test_eu_invoice_rounding fail? | Switch to half-up.",
        'Decisions and findings: 我已经调用了工具「read_file」（参数：path="billing/totals.py"），'
        "并得到了结果：ok，"
        "我需要思考下一步行动 | line_total rounds half-even; finance rounds half-up. | "
        'Tool call run_shell args={"command":"pytest"}',
        "Tools used: read_file, run_shell",
    ]


def test_offline_summary_is_deterministic():
    assert OfflineSummarizer().generate(request(1000)) == OfflineSummarizer().generate(request(1000))


def test_offline_summary_stays_within_the_token_budget():
    tokenizer = DefaultTokenizer()
    for budget in (25, 40, 60):
        text = OfflineSummarizer().generate(request(budget, tokenizer.count))
        assert tokenizer.count(text) <= budget, (budget, text)
        assert text.startswith("User requests: Why does")


def test_fixed_and_failing_summarizers():
    assert FixedSummarizer("done").generate(request(10)) == "done"
    try:
        FailingSummarizer("agent down").generate(request(10))
    except RuntimeError as error:
        assert str(error) == "agent down"
    else:
        raise AssertionError("FailingSummarizer must raise")
