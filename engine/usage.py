"""What a provider counted for one model call, in one shape whatever the provider.

Transcripts record the provider's own counts per call, each in its provider's units:
- **Anthropic** (`message.usage`, Claude Code): `input_tokens` is only the uncached part; the cache read
  (`cache_read_input_tokens`) and write (`cache_creation_input_tokens`, split by lifetime in
  `cache_creation.ephemeral_5m_input_tokens` / `ephemeral_1h_input_tokens`) come on top; `output_tokens`
  includes any thinking.
- **OpenAI** (Chat Completions `prompt_tokens`/`completion_tokens`, Responses and Codex `input_tokens`/
  `output_tokens`): the input includes the cached part (`cached_tokens`, `cached_input_tokens`); the output
  includes reasoning (`reasoning_tokens`, `reasoning_output_tokens`). No cache writes are billed.
- **OpenTelemetry GenAI** (`gen_ai.usage.*`): `input_tokens` includes `cache_read.input_tokens` and
  `cache_creation.input_tokens`.
- **Inspect AI** (`ModelUsage` in eval logs): `input_tokens` excludes the cache read and write whatever the
  provider (Inspect subtracts OpenAI's cached part); `output_tokens` includes reasoning.
- **Gemini** (Gemini CLI `tokens`): `input` (promptTokenCount) includes `cached`; `tool` (tool-use prompt)
  is input too; `thoughts` are billed as output beside `output` (candidates).

`RecordedUsage` holds them normalised: `prompt_tokens` is everything the model read (cached included),
`cache_read_tokens` and `cache_write_tokens` are parts of it (`cache_write_1h_tokens` the part written for
an hour), `output_tokens` everything generated (reasoning included), `reasoning_tokens` the reasoning part
when the provider says it. The source's own fields travel beside them (`raw`). In a session file it is a
message's `metadata.usage` (`to_json`); `read_usage` reads it back, checked.

A count that is missing, negative, not an integer, absurd (a prompt over 10M tokens) or that contradicts
the rest (cached more than the input, a model other than its line's) makes the call unrecorded: the parser
returns a `UsageProblem` naming the field, never a guess.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_PROMPT_TOKENS",
    "PROVIDERS",
    "RecordedUsage",
    "UsageProblem",
    "anthropic_usage",
    "gemini_usage",
    "inspect_usage",
    "openai_usage",
    "otel_usage",
    "read_usage",
]

MAX_PROMPT_TOKENS = 10_000_000  # no model reads more; a larger count is a corrupt record
PROVIDERS = ("anthropic", "openai", "gemini", "otel", "inspect")
UNRECORDED = "the call is treated as unrecorded"


@dataclass(frozen=True, slots=True)
class UsageProblem:
    """Why a call's usage cannot be used: the field (dotted, within the usage object) and the reason."""

    field: str
    reason: str
    # a count the tool writes before it has one (zeros): ordinary, so an import counts it among what it left
    # out instead of naming it a problem
    placeholder: bool = False

    def __str__(self) -> str:
        return f"usage.{self.field}: {self.reason}; {UNRECORDED}" if self.field else f"usage: {self.reason}"


@dataclass(frozen=True, slots=True)
class RecordedUsage:
    """One model call as its provider counted it (see the module doc for the units)."""

    provider: str
    prompt_tokens: int
    output_tokens: int
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cache_write_1h_tokens: int = 0  # part of cache_write_tokens; the rest is the 5-minute tier
    reasoning_tokens: int | None = None
    model: str | None = None
    call_id: str | None = None  # the provider's response id, when the transcript has it
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    # the reasoning came back encrypted (Responses `reasoning.encrypted_content`) and the agent sends it
    # again with the turn's next calls: the provider counts it in their prompts, the transcript cannot show it
    reasoning_carried: bool = False

    @property
    def uncached_tokens(self) -> int:
        """The prompt tokens neither read from nor written to a cache."""
        return self.prompt_tokens - self.cache_read_tokens - self.cache_write_tokens

    @property
    def cache_write_5m_tokens(self) -> int:
        return self.cache_write_tokens - self.cache_write_1h_tokens

    def to_json(self) -> dict[str, Any]:
        """The `metadata.usage` form: camelCase counts, then the source's own fields under `raw`."""
        out: dict[str, Any] = {
            "provider": self.provider,
            "model": self.model,
            "promptTokens": self.prompt_tokens,
            "cacheReadTokens": self.cache_read_tokens,
            "cacheWriteTokens": self.cache_write_tokens,
            "cacheWrite": {"5m": self.cache_write_5m_tokens, "1h": self.cache_write_1h_tokens},
            "outputTokens": self.output_tokens,
            "reasoningTokens": self.reasoning_tokens,
        }
        if self.call_id is not None:
            out["callId"] = self.call_id
        if self.reasoning_carried:
            out["reasoningCarried"] = True
        out["raw"] = self.raw
        return out


class _Reader:
    """Reads counts out of one usage object, remembering the first problem."""

    def __init__(self, data: Mapping[str, Any]) -> None:
        self.data = data
        self.problem: UsageProblem | None = None

    def count(self, *path: str, required: bool = False) -> int:
        value: Any = self.data
        for key in path:
            value = value.get(key) if isinstance(value, Mapping) else None
        name = ".".join(path)
        if value is None:
            if required:
                self._fail(name, "missing")
            return 0
        if isinstance(value, bool) or not isinstance(value, int | float):
            self._fail(name, f"not a number ({type(value).__name__})")
            return 0
        if isinstance(value, float) and not math.isfinite(value):  # NaN and ±Infinity (1e999)
            self._fail(name, f"not a finite number ({value})")
            return 0
        if value != int(value):
            self._fail(name, f"not a whole number ({value})")
            return 0
        if value < 0:
            self._fail(name, f"negative ({int(value)})")
            return 0
        return int(value)

    def first(self, *paths: tuple[str, ...], required: bool = False) -> int:
        """The count at the first path present (providers name the same count differently)."""
        for path in paths:
            if _present(self.data, path):
                return self.count(*path)
        return self.count(*paths[0], required=required)

    def _fail(self, name: str, reason: str) -> None:
        if self.problem is None:
            self.problem = UsageProblem(name, reason)


def _present(data: Mapping[str, Any], path: tuple[str, ...]) -> bool:
    value: Any = data
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            return False
        value = value[key]
    return value is not None


def _finish(reader: _Reader, usage: RecordedUsage, line_model: str | None) -> RecordedUsage | UsageProblem:
    if reader.problem is not None:
        return reader.problem
    if usage.prompt_tokens > MAX_PROMPT_TOKENS:
        return UsageProblem(
            "promptTokens", f"{usage.prompt_tokens:,} tokens is absurd (over {MAX_PROMPT_TOKENS:,})"
        )
    if usage.prompt_tokens == 0:
        return UsageProblem("promptTokens", "0: every call reads a prompt (a placeholder, not a count)", True)
    if usage.cache_read_tokens + usage.cache_write_tokens > usage.prompt_tokens:
        return UsageProblem("cached", "the cached part is larger than the whole input")
    if usage.cache_write_1h_tokens > usage.cache_write_tokens:
        return UsageProblem("cache_creation", "the 1-hour part is larger than the whole cache write")
    if usage.reasoning_tokens is not None and usage.reasoning_tokens > usage.output_tokens:
        return UsageProblem("reasoning", "the reasoning part is larger than the whole output")
    own = usage.raw.get("model")
    if isinstance(own, str) and own and line_model and own != line_model:
        return UsageProblem("model", f"names {own!r} but its line's model is {line_model!r}")
    return usage


def _mapping(usage: Any) -> Mapping[str, Any] | UsageProblem:
    if not isinstance(usage, Mapping):
        return UsageProblem("", f"expected an object, found {type(usage).__name__}; {UNRECORDED}")
    return usage


def anthropic_usage(
    usage: Any, model: str | None = None, call_id: str | None = None
) -> RecordedUsage | UsageProblem:
    """Anthropic's `usage`: `input_tokens` excludes the cache read and write."""
    data = _mapping(usage)
    if isinstance(data, UsageProblem):
        return data
    r = _Reader(data)
    uncached = r.count("input_tokens", required=True)
    read = r.count("cache_read_input_tokens")
    written = r.count("cache_creation_input_tokens")
    one_hour = r.count("cache_creation", "ephemeral_1h_input_tokens")
    five_min = r.count("cache_creation", "ephemeral_5m_input_tokens")
    if r.problem is None and _present(data, ("cache_creation",)) and one_hour + five_min != written:
        if written == 0:  # the split given alone
            written = one_hour + five_min
        else:
            r.problem = UsageProblem(
                "cache_creation", f"the 5m and 1h parts ({five_min} + {one_hour}) do not add up to {written}"
            )
    output = r.count("output_tokens", required=True)
    thinking_path = ("output_tokens_details", "thinking_tokens")  # Claude Code 2.1.233+ writes it
    thinking = r.count(*thinking_path) if _present(data, thinking_path) else None
    result = RecordedUsage(
        "anthropic",
        uncached + read + written,
        output,
        read,
        written,
        one_hour,
        thinking,
        model,
        call_id,
        dict(data),
    )
    return _finish(r, result, model)


def openai_usage(
    usage: Any, model: str | None = None, call_id: str | None = None
) -> RecordedUsage | UsageProblem:
    """OpenAI's usage (Chat Completions, Responses, a Codex `token_count`): the input includes the cached
    part and the output the reasoning."""
    data = _mapping(usage)
    if isinstance(data, UsageProblem):
        return data
    r = _Reader(data)
    prompt = r.first(("input_tokens",), ("prompt_tokens",), required=True)
    cached = r.first(
        ("cached_input_tokens",),
        ("input_tokens_details", "cached_tokens"),
        ("prompt_tokens_details", "cached_tokens"),
    )
    output = r.first(("output_tokens",), ("completion_tokens",), required=True)
    reasoning_paths = (
        ("reasoning_output_tokens",),
        ("output_tokens_details", "reasoning_tokens"),
        ("completion_tokens_details", "reasoning_tokens"),
    )
    reasoning = r.first(*reasoning_paths) if any(_present(data, p) for p in reasoning_paths) else None
    result = RecordedUsage("openai", prompt, output, cached, 0, 0, reasoning, model, call_id, dict(data))
    return _finish(r, result, model)


def otel_usage(
    attributes: Any, model: str | None = None, call_id: str | None = None
) -> RecordedUsage | UsageProblem:
    """OpenTelemetry GenAI span attributes (`gen_ai.usage.*`): the input includes the cache read and write."""
    data = _mapping(attributes)
    if isinstance(data, UsageProblem):
        return data
    r = _Reader(data)
    prompt = r.count("gen_ai.usage.input_tokens", required=True)
    read = r.count("gen_ai.usage.cache_read.input_tokens")
    written = r.count("gen_ai.usage.cache_creation.input_tokens")
    output = r.count("gen_ai.usage.output_tokens", required=True)
    own = data.get("gen_ai.response.model") or data.get("gen_ai.request.model")
    result = RecordedUsage(
        "otel", prompt, output, read, written, 0, None, model or (own if isinstance(own, str) else None),
        call_id, dict(data),
    )  # fmt: skip
    return _finish(r, result, model)


def gemini_usage(
    tokens: Any, model: str | None = None, call_id: str | None = None
) -> RecordedUsage | UsageProblem:
    """Gemini CLI's `tokens` (from usageMetadata): `input` includes `cached`; `tool` prompts are input too;
    `thoughts` are generated beside `output`, except where `total` says they are inside it: Qwen Code's
    OpenAI-compatible providers give `completion_tokens` (reasoning included) as `output`, and their
    `total` is `input + output`."""
    data = _mapping(tokens)
    if isinstance(data, UsageProblem):
        return data
    r = _Reader(data)
    prompt = r.count("input", required=True) + r.count("tool")
    cached = r.count("cached")
    thoughts = r.count("thoughts")
    generated = r.count("output", required=True)
    total = data.get("total")
    inside = thoughts > 0 and type(total) is int and prompt + generated == total
    output = generated if inside else generated + thoughts
    reasoning = thoughts if _present(data, ("thoughts",)) else None
    result = RecordedUsage("gemini", prompt, output, cached, 0, 0, reasoning, model, call_id, dict(data))
    return _finish(r, result, model)


_COUNTS = ("promptTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")


def inspect_usage(
    usage: Any, model: str | None = None, call_id: str | None = None
) -> RecordedUsage | UsageProblem:
    """Inspect AI's `ModelUsage`: `input_tokens` excludes `input_tokens_cache_read` and `_cache_write`, except
    in logs of OpenAI and Grok models before Inspect 0.3.184 (2026-02), whose `input_tokens` is the
    provider's and holds the cached part: there `input_tokens + output_tokens` is `total_tokens`."""
    data = _mapping(usage)
    if isinstance(data, UsageProblem):
        return data
    r = _Reader(data)
    uncached = r.count("input_tokens", required=True)
    read = r.count("input_tokens_cache_read")
    written = r.count("input_tokens_cache_write")
    output = r.count("output_tokens", required=True)
    reasoning = r.count("reasoning_tokens") if _present(data, ("reasoning_tokens",)) else None
    total = data.get("total_tokens")
    cached_inside = (read or written) and type(total) is int and uncached + output == total
    prompt = uncached if cached_inside else uncached + read + written
    result = RecordedUsage("inspect", prompt, output, read, written, 0, reasoning, model, call_id, dict(data))
    return _finish(r, result, model)


def read_usage(value: Any) -> RecordedUsage | UsageProblem:
    """A `metadata.usage` written by `RecordedUsage.to_json` (an importer, or a hand-edited session), checked
    as strictly as the provider's own fields."""
    data = _mapping(value)
    if isinstance(data, UsageProblem):
        return data
    r = _Reader(data)
    prompt, output, read, written = (r.count(key, required=key in _COUNTS[:2]) for key in _COUNTS)
    one_hour = r.count("cacheWrite", "1h")
    reasoning = r.count("reasoningTokens") if _present(data, ("reasoningTokens",)) else None
    provider = data.get("provider")
    if r.problem is None and provider not in PROVIDERS:
        r.problem = UsageProblem("provider", f"unknown provider {provider!r} (known: {', '.join(PROVIDERS)})")
    model = data.get("model") if isinstance(data.get("model"), str) else None
    call_id = data.get("callId") if isinstance(data.get("callId"), str) else None
    raw = data.get("raw") if isinstance(data.get("raw"), dict) else {}
    carried = data.get("reasoningCarried", False)
    if r.problem is None and not isinstance(carried, bool):
        r.problem = UsageProblem("reasoningCarried", f"expected true or false, not {carried!r}")
    result = RecordedUsage(
        str(provider),
        prompt,
        output,
        read,
        written,
        one_hour,
        reasoning,
        model,
        call_id,
        raw,
        carried is True,
    )
    return _finish(r, result, None)
