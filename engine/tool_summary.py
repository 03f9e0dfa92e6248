"""The tool output summarizer (spec §5.1): short descriptions of tool results (engine.copyset's words).

Used by the tool history compressor (compressed text) and by working memory (outputs of oversized pairs).
The default copy is linnkit's Chinese, byte for byte: hosts and the conformance cases compare it.
"""

from __future__ import annotations

import json
import math
from typing import Any

from engine.copyset import summary_text
from engine.jsvalues import js_json, js_key_order, js_number, js_trim, utf16_len, utf16_slice
from engine.messages import AiMessage

SHORT_OUTPUT_CHARS = 400
DEFAULT_PREVIEW_CHARS = 200
ITEM_CHARS = 30


def output_text(message: AiMessage) -> str:
    """What summarisers read: `raw_output` when non-blank, else the content."""
    raw = message.raw_output
    return raw if raw is not None and js_trim(raw) else message.content


def summarize_output(
    output: str,
    *,
    preview_chars: int = DEFAULT_PREVIEW_CHARS,
    tool_name: str | None = None,
    tool_args: dict[str, Any] | None = None,
) -> str:
    """Summarise one tool output. `tool_name` enables the compress path's tool-specific summaries."""
    if not output:
        return summary_text("no_output")
    if utf16_len(output) <= SHORT_OUTPUT_CHARS:
        return output
    if tool_name == "text_to_image":
        count = (tool_args or {}).get("n")
        if isinstance(count, bool) or not isinstance(count, (int, float)):
            count = 1  # linnkit: `typeof toolArgs.n === 'number' ? toolArgs.n : 1` (0 stays 0)
        return summary_text("images", count=js_number(count))
    return _summarize_long(output, preview_chars)


def _summarize_long(output: str, preview_chars: int) -> str:
    parsed = _parse_json(output)
    if isinstance(parsed, list):
        return _summarize_array(parsed)
    if isinstance(parsed, dict):
        observation = parsed.get("observation")
        if parsed and isinstance(observation, str) and observation:  # an empty observation is falsy in JS
            return _summarize_long(observation, preview_chars)
        return _summarize_object(parsed)
    return _summarize_text(output, preview_chars)


def _summarize_array(items: list[Any]) -> str:
    if not items:
        return summary_text("empty_array")
    shown = ", ".join(_cut(_compact_json(item), ITEM_CHARS) for item in items[:3])
    more = "..." if len(items) > 3 else ""
    return summary_text("array", count=len(items), items=shown, more=more)


def _summarize_object(obj: dict[str, Any]) -> str:
    if not obj:
        return summary_text("empty_object")
    keys = js_key_order(obj)
    more = "..." if len(keys) > 5 else ""
    return summary_text("object", keys=", ".join(keys[:5]), more=more, count=len(keys))


def _summarize_text(text: str, preview_chars: int) -> str:
    """Lengths and cuts in UTF-16 code units, as linnkit's `output.length` and `slice`."""
    head = utf16_slice(text, 0, preview_chars)
    tail = utf16_slice(text, -preview_chars) if preview_chars else ""
    return summary_text("text", length=utf16_len(text), head=head, tail=tail)


def preview_chars_for(max_output_summary_tokens: int, avg_chars_per_token: float) -> int:
    """Working memory's preview length: `max(200, floor((floor(tokens × ratio) − 160) / 2))`."""
    budget_chars = math.floor(max_output_summary_tokens * avg_chars_per_token)
    return max(DEFAULT_PREVIEW_CHARS, math.floor((budget_chars - 160) / 2))


def _parse_json(text: str) -> Any:
    stripped = text.strip(" \t\n\r")  # JSON's own whitespace: JSON.parse allows no other
    if not stripped or stripped[0] not in "[{":
        return None
    try:
        return json.loads(stripped)
    except ValueError:
        return None


def _compact_json(value: Any) -> str:
    return js_json(value)


def _cut(text: str, limit: int) -> str:
    return text if utf16_len(text) <= limit else utf16_slice(text, 0, limit) + "..."
