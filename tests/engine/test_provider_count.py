"""What a provider counts of a wire (engine.provider_count), and where a prediction starts over."""

from __future__ import annotations

import pytest

from engine.build import build_context
from engine.encodings import load_encoding
from engine.messages import AiMessage
from engine.provider_count import provider_counts, provider_encoding, provider_family
from engine.recorded import recorded_run
from engine.truth import AS_RECORDED, iter_truth
from engine.usage import RecordedUsage


@pytest.mark.parametrize(
    ("model", "family", "encoding"),
    [
        ("claude-opus-4-6", "anthropic", "cl100k_base"),
        ("gpt-5-codex", "openai", "o200k_base"),
        ("gpt-5.5", "openai", "o200k_base"),
        ("openai/gpt-4o-mini", "openai", "o200k_base"),
        ("o3-mini", "openai", "o200k_base"),
        ("aide-gpt-5", "openai", "o200k_base"),  # a proxy's name for GPT-5
        ("gpt-4-turbo", "openai", "cl100k_base"),
        ("gemini-2.5-pro", "google", "cl100k_base"),
        ("qwen3-coder", "other", "cl100k_base"),
        (None, "other", "cl100k_base"),
    ],
)
def test_family_and_encoding_of_a_model(model, family, encoding) -> None:
    assert (provider_family(model), provider_encoding(model)) == (family, encoding)


def messages() -> list[AiMessage]:
    calls = [{"id": "call_mux7Gp4q9YON9fYffwerwHgr", "type": "function",
              "function": {"name": "shell", "arguments": '{"command":["ls"]}'}}]  # fmt: skip
    return [
        AiMessage("u1", "user", "user_input", "list the files", 0),
        AiMessage("a1", "assistant", "tool_calls", "Looking.", 1, {"tool_calls": calls}),
        AiMessage("t1", "tool", "tool_output", "a.py\nb.py", 2, {"tool_call_id": calls[0]["id"]}),
    ]


def test_openai_counts_text_names_and_arguments_with_o200k_and_no_ids() -> None:
    result = build_context(messages(), AS_RECORDED)
    o200k = load_encoding("o200k_base").encoding
    n = lambda text: len(o200k.encode_ordinary(text))  # noqa: E731
    assert provider_counts(result, "gpt-5-codex") == [
        n("list the files"),
        n("Looking.") + n("shell") + n('{"command":["ls"]}'),
        n("a.py\nb.py"),
    ]
    assert provider_counts(result, "claude-sonnet-4-5") is None  # linnkit's estimate follows Anthropic's


def usage(prompt: int) -> dict:
    return {"usage": RecordedUsage("openai", prompt, 5, 0, 0, 0, None, "gpt-5", f"r{prompt}").to_json()}


def test_a_provider_run_web_search_starts_a_segment_the_next_call_learns() -> None:
    """Its results are in the provider's count and in no transcript: the offset is learnt again after it."""
    search = [{"id": "ws1", "type": "function", "function": {"name": "web_search", "arguments": "{}"},
               "sourceType": "web_search_call"}]  # fmt: skip
    session = [
        AiMessage("u1", "user", "user_input", "find the release notes", 0),
        AiMessage("a1", "assistant", "tool_calls", "", 1, {"tool_calls": search, **usage(1000)}),
        AiMessage("t1", "tool", "tool_output", "[web search: the provider ran it]", 2,
                  {"tool_call_id": "ws1", "synthetic": True}),  # fmt: skip
        AiMessage("a2", "assistant", "final_answer", "Here they are.", 3, usage(6000)),
    ]
    truths = list(iter_truth(session, recorded_run(session)))
    assert [(t.step, t.learnt_here, t.error) for t in truths] == [(1, True, None), (2, True, None)]
    assert truths[0].segment[1] != truths[1].segment[1]


def test_gemini_counts_no_thought_text_openai_does() -> None:
    """Gemini keeps only encrypted thought signatures in the history it is sent; the Responses API sends a
    reasoning item's summary back."""
    session = [
        AiMessage("u1", "user", "user_input", "why?", 0),
        AiMessage("th", "assistant", "thought", "because of the tests", 1),
        AiMessage("a1", "assistant", "final_answer", "Because.", 2),
    ]
    result = build_context(session, AS_RECORDED)
    assert result.wire[1]["content"] == "<think>because of the tests</think>"
    gemini, openai = provider_counts(result, "gemini-2.5-pro"), provider_counts(result, "gpt-5")
    assert gemini[1] == 0 and gemini[0] > 0 and gemini[2] > 0
    assert openai[1] == len(load_encoding("o200k_base").encoding.encode_ordinary(result.wire[1]["content"]))
