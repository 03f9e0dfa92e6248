"""Recorded usage: each provider's units normalised to one shape, and bad counts refused with their field."""

from __future__ import annotations

import math

import pytest

from engine.usage import (
    RecordedUsage,
    UsageProblem,
    anthropic_usage,
    gemini_usage,
    inspect_usage,
    openai_usage,
    otel_usage,
    read_usage,
)


def test_anthropic_input_excludes_the_cache_read_and_write() -> None:
    usage = anthropic_usage(
        {
            "input_tokens": 3,
            "cache_creation_input_tokens": 8165,
            "cache_read_input_tokens": 17842,
            "cache_creation": {"ephemeral_5m_input_tokens": 8000, "ephemeral_1h_input_tokens": 165},
            "output_tokens": 209,
        },
        "claude-opus-4-6",
        "msg_1",
    )
    assert isinstance(usage, RecordedUsage)
    assert (usage.prompt_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (26010, 17842, 8165)
    assert (usage.cache_write_5m_tokens, usage.cache_write_1h_tokens, usage.uncached_tokens) == (8000, 165, 3)
    assert (usage.output_tokens, usage.reasoning_tokens, usage.model, usage.call_id) == (
        209,
        None,
        "claude-opus-4-6",
        "msg_1",
    )


def test_anthropic_thinking_tokens_claude_code_records_are_the_reasoning_part_of_the_output() -> None:
    details = {"input_tokens": 5, "output_tokens": 900, "output_tokens_details": {"thinking_tokens": 750}}
    usage = anthropic_usage(details)
    assert isinstance(usage, RecordedUsage)
    assert (usage.output_tokens, usage.reasoning_tokens) == (900, 750)
    bad = anthropic_usage({**details, "output_tokens_details": {"thinking_tokens": -1}})
    assert isinstance(bad, UsageProblem) and bad.field == "output_tokens_details.thinking_tokens"


def test_inspect_input_holds_the_cache_read_only_when_the_total_says_so() -> None:
    # Inspect before 0.3.184 kept OpenAI's and Grok's input_tokens (cache read inside); later logs exclude it
    old = inspect_usage({"input_tokens": 1568, "output_tokens": 17, "total_tokens": 1585,
                         "input_tokens_cache_read": 1024})  # fmt: skip
    new = inspect_usage({"input_tokens": 544, "output_tokens": 17, "total_tokens": 1585,
                         "input_tokens_cache_read": 1024})  # fmt: skip
    untold = inspect_usage({"input_tokens": 544, "output_tokens": 17, "input_tokens_cache_read": 1024})
    for usage in (old, new, untold):
        assert isinstance(usage, RecordedUsage)
        assert (usage.prompt_tokens, usage.cache_read_tokens, usage.uncached_tokens) == (1568, 1024, 544)


@pytest.mark.parametrize("count", [math.inf, -math.inf, math.nan], ids=["1e999", "-1e999", "NaN"])
def test_a_count_that_is_no_finite_number_is_a_named_problem(count: float) -> None:
    problem = anthropic_usage({"input_tokens": 5, "output_tokens": count})
    assert isinstance(problem, UsageProblem) and problem.field == "output_tokens"
    assert problem.reason == f"not a finite number ({count})"


def test_anthropic_without_a_split_writes_at_the_five_minute_tier() -> None:
    usage = anthropic_usage({"input_tokens": 10, "cache_creation_input_tokens": 90, "output_tokens": 1})
    assert isinstance(usage, RecordedUsage)
    assert (usage.prompt_tokens, usage.cache_write_5m_tokens, usage.cache_write_1h_tokens) == (100, 90, 0)


def test_openai_input_includes_the_cached_part() -> None:
    codex = openai_usage(
        {
            "input_tokens": 2899,
            "cached_input_tokens": 2560,
            "output_tokens": 100,
            "reasoning_output_tokens": 64,
        },
        "gpt-5-codex",
    )
    chat = openai_usage(
        {
            "prompt_tokens": 2899,
            "completion_tokens": 100,
            "prompt_tokens_details": {"cached_tokens": 2560},
            "completion_tokens_details": {"reasoning_tokens": 64},
        }
    )
    responses = openai_usage(
        {
            "input_tokens": 2899,
            "input_tokens_details": {"cached_tokens": 2560},
            "output_tokens": 100,
            "output_tokens_details": {"reasoning_tokens": 64},
        }
    )
    for usage in (codex, chat, responses):
        assert isinstance(usage, RecordedUsage)
        assert (usage.prompt_tokens, usage.cache_read_tokens, usage.uncached_tokens) == (2899, 2560, 339)
        assert (usage.cache_write_tokens, usage.output_tokens, usage.reasoning_tokens) == (0, 100, 64)


def test_otel_input_includes_the_cache_read_and_write() -> None:
    usage = otel_usage(
        {
            "gen_ai.usage.input_tokens": 1000,
            "gen_ai.usage.cache_read.input_tokens": 600,
            "gen_ai.usage.cache_creation.input_tokens": 300,
            "gen_ai.usage.output_tokens": 40,
            "gen_ai.response.model": "claude-sonnet-4-5",
        }
    )
    assert isinstance(usage, RecordedUsage)
    assert (usage.prompt_tokens, usage.cache_read_tokens, usage.cache_write_tokens) == (1000, 600, 300)
    assert (usage.uncached_tokens, usage.model) == (100, "claude-sonnet-4-5")


def test_gemini_input_includes_cached_and_thoughts_are_output() -> None:
    usage = gemini_usage(
        {"input": 250, "output": 120, "cached": 50, "thoughts": 15, "tool": 5, "total": 440}, "gemini-2.5-pro"
    )
    assert isinstance(usage, RecordedUsage)
    assert (usage.prompt_tokens, usage.cache_read_tokens, usage.uncached_tokens) == (255, 50, 205)
    assert (usage.output_tokens, usage.reasoning_tokens) == (135, 15)


def test_gemini_thoughts_already_inside_the_output_when_the_total_says_so() -> None:
    # Qwen Code 0.15.6 on an OpenAI-compatible server: completion_tokens (reasoning included) became
    # candidatesTokenCount, and totalTokenCount = prompt + completion (a real record)
    qwen = gemini_usage({"input": 18009, "output": 47, "cached": 12, "thoughts": 36, "total": 18056})
    assert isinstance(qwen, RecordedUsage)
    assert (qwen.output_tokens, qwen.reasoning_tokens) == (47, 36)
    # Gemini CLI's own record (tests/data/real-sessions/gemini-cli): total = input + output + thoughts
    gemini = gemini_usage(
        {"input": 13906, "output": 185, "cached": 0, "thoughts": 306, "tool": 0, "total": 14397}
    )
    assert isinstance(gemini, RecordedUsage)
    assert (gemini.output_tokens, gemini.reasoning_tokens) == (491, 306)


def test_the_session_form_reads_back_equal() -> None:
    usage = anthropic_usage(
        {
            "input_tokens": 3,
            "cache_read_input_tokens": 5,
            "cache_creation_input_tokens": 7,
            "output_tokens": 2,
        },
        "claude-haiku-4-5",
        "msg_2",
    )
    assert isinstance(usage, RecordedUsage)
    again = read_usage(usage.to_json())
    assert again == usage and again.raw == usage.raw


@pytest.mark.parametrize(
    ("parse", "value", "message"),
    [
        (
            anthropic_usage,
            {"output_tokens": 3},
            "usage.input_tokens: missing; the call is treated as unrecorded",
        ),
        (
            anthropic_usage,
            {"input_tokens": -4, "output_tokens": 3},
            "usage.input_tokens: negative (-4); the call is treated as unrecorded",
        ),
        (
            anthropic_usage,
            {"input_tokens": "12", "output_tokens": 3},
            "usage.input_tokens: not a number (str); the call is treated as unrecorded",
        ),
        (
            anthropic_usage,
            {"input_tokens": 1.5, "output_tokens": 3},
            "usage.input_tokens: not a whole number (1.5); the call is treated as unrecorded",
        ),
        (
            anthropic_usage,
            {"input_tokens": True, "output_tokens": 3},
            "usage.input_tokens: not a number (bool); the call is treated as unrecorded",
        ),
        (
            anthropic_usage,
            {"input_tokens": 20_000_000, "output_tokens": 3},
            "usage.promptTokens: 20,000,000 tokens is absurd (over 10,000,000); "
            "the call is treated as unrecorded",
        ),
        (
            anthropic_usage,
            {
                "input_tokens": 1,
                "cache_creation_input_tokens": 10,
                "cache_creation": {"ephemeral_5m_input_tokens": 3, "ephemeral_1h_input_tokens": 3},
                "output_tokens": 1,
            },
            "usage.cache_creation: the 5m and 1h parts (3 + 3) do not add up to 10; "
            "the call is treated as unrecorded",
        ),
        (
            openai_usage,
            {"input_tokens": 10, "cached_input_tokens": 11, "output_tokens": 1},
            "usage.cached: the cached part is larger than the whole input; the call is treated as unrecorded",
        ),
        (
            openai_usage,
            {"input_tokens": 10, "output_tokens": 1, "model": "gpt-4.1"},
            "usage.model: names 'gpt-4.1' but its line's model is 'gpt-5'; the call is treated as unrecorded",
        ),
        (gemini_usage, [1, 2], "usage: expected an object, found list; the call is treated as unrecorded"),
        (
            gemini_usage,
            {"input": 0, "output": 0, "cached": 0, "thoughts": 0, "tool": 0, "total": 0},
            "usage.promptTokens: 0: every call reads a prompt (a placeholder, not a count); "
            "the call is treated as unrecorded",
        ),
        (
            read_usage,
            {"provider": "mystery", "promptTokens": 1, "outputTokens": 1},
            "usage.provider: unknown provider 'mystery' (known: anthropic, openai, gemini, otel, inspect); "
            "the call is treated as unrecorded",
        ),
    ],
)
def test_bad_usage_is_refused_naming_its_field(parse, value, message) -> None:
    result = parse(value, "gpt-5") if parse is openai_usage else parse(value)
    assert isinstance(result, UsageProblem)
    assert str(result) == message
