"""What a provider counts of a wire: the local figure a recorded prompt is predicted from.

linnkit's estimate (`engine.tokens`) is made for budgeting: cl100k, five tokens a message, 50 a tool call,
the tool_call_id counted as text. A provider counts what its own prompt format renders, with its own
tokenizer, so the figure that tracks a recorded prompt best differs by provider (measured on the real
transcripts in `bench/bench_truth.py`):
- **Anthropic** renders every tool_use and tool_result with its id, name and JSON: linnkit's estimate
  follows it (its per-call overhead stands for that framing), so it is used as it is.
- **OpenAI** (the Responses API of Codex, Chat Completions) renders the text, each call's name and
  arguments and no call ids, with o200k_base for the GPT-4o, GPT-4.1, GPT-5 and o-series models;
- **Gemini** renders text and function calls without ids, and keeps no thought text in the history it is
  sent (only encrypted thought signatures); no public tokenizer: cl100k stands in.
For these two the figure is the wire's text and call names and arguments, counted with that encoding.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine.result import BuildResult
from engine.tokens import DEFAULT_RATIO, shared_tokenizer

__all__ = ["provider_counts", "provider_encoding", "provider_family"]

THOUGHT_OPEN, THOUGHT_CLOSE = "<think>", "</think>"  # how the wire formatter sends a thought
_O200K_MODELS = ("gpt-4o", "gpt-4.1", "gpt-5", "gpt-oss")  # also inside a proxy's name (`aide-gpt-5`)
_O200K_PREFIXES = ("o1", "o3", "o4", "codex")


def provider_family(model: str | None) -> str:
    """`anthropic`, `openai`, `google` or `other`, from a model id (a prefix `openai/...` ignored)."""
    name = (model or "").lower().rsplit("/", 1)[-1]
    if name.startswith("claude"):
        return "anthropic"
    if name.startswith("gemini"):
        return "google"
    if name.startswith(("gpt", "chatgpt", "codex")) or (name[:2] in ("o1", "o3", "o4")):
        return "openai"
    if "gpt" in name:  # proxied OpenAI models (`aide-gpt-5`, `azure-gpt-4o`)
        return "openai"
    return "other"


def provider_encoding(model: str | None) -> str:
    """The encoding the provider counts with: o200k_base for OpenAI's current models, else cl100k_base."""
    name = (model or "").lower().rsplit("/", 1)[-1]
    if any(part in name for part in _O200K_MODELS) or name.startswith(_O200K_PREFIXES):
        return "o200k_base"
    return "cl100k_base"


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, Sequence):
        parts = (p.get("text") for p in content if isinstance(p, dict))
        return "".join(text for text in parts if isinstance(text, str))
    return ""


def provider_counts(result: BuildResult, model: str | None) -> list[int] | None:
    """Per wire message, what the model's provider counts of it; None where linnkit's estimate serves
    (Anthropic models, and builds that failed)."""
    if result.error is not None or provider_family(model) in ("anthropic", "other"):
        return None
    tokenizer = shared_tokenizer(provider_encoding(model), DEFAULT_RATIO, 0)
    counts = []
    skip_thoughts = provider_family(model) == "google"  # Gemini keeps no thought text in its history
    for message in result.wire:
        text = _text_of(message.get("content"))
        if skip_thoughts and text.startswith(THOUGHT_OPEN) and text.endswith(THOUGHT_CLOSE):
            counts.append(0)
            continue
        total = tokenizer.count(text)
        for call in message.get("tool_calls") or ():
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict):
                total += tokenizer.count(str(function.get("name") or ""))
                total += tokenizer.count(str(function.get("arguments") or ""))
        counts.append(total)
    return counts
