"""kimi-cli `context.jsonl` files (the Python Kimi CLI's saved context) as linnkit messages.

Beside each `wire.jsonl` (see `kimi.py`) kimi-cli keeps `context.jsonl`: the messages it sends, one a
line, in OpenAI chat shape with kosong's content parts (`text`, `think` with its `encrypted` signature,
`image`/`audio` URLs), plus its own marker lines: `_system_prompt` (the system prompt), `_checkpoint`
(an undo point) and `_usage` (the context's size after a call: not a call's own usage). This is the
context as the model received it, so it is read as is: thoughts before the text, tool calls with their
results, images and audio as placeholders; checkpoints and context sizes are counted.
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    NameMap,
    image_note,
    image_placeholder,
    iter_jsonl,
)
from engine.importers.openai_chat import normalize_call
from engine.importers.registry import Sniff
from engine.messages import AiMessage

FORMAT = "kimi-context"
MARKERS = NameMap({"_checkpoint": "_checkpoint", "_usage": "_usage (the context's size, not a call's usage)"})


def detect_kimi_context(sniff: Sniff) -> bool:
    return any(o.get("role") in ("_system_prompt", "_checkpoint", "_usage") for o in sniff.objects())


def import_kimi_context(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    names: dict[str, str] = {}
    for number, entry, error in iter_jsonl(text):
        if error:
            out.problem(number, error)
            continue
        role = entry.get("role") if isinstance(entry, dict) else None
        base = f"kc-{number}"
        if role in MARKERS:
            out.skip(MARKERS[role], number)
        elif role == "_system_prompt":
            content, _, notes = _parts(entry.get("content"))
            out.add(AiMessage(out.unique_id(base), "system", "system_prompt", content, number, notes or None))
        elif role == "user":
            content, _, notes = _parts(entry.get("content"))
            out.add(AiMessage(out.unique_id(base), "user", "user_input", content, number, notes or None))
        elif role == "assistant":
            _assistant(out, base, number, entry, names)
        elif role == "tool":
            content, _, notes = _parts(entry.get("content"))
            call_id = str(entry.get("tool_call_id") or "")
            meta = {"tool_call_id": call_id, "raw_output": content, **notes}
            if call_id in names:
                meta["tool_name"] = names[call_id]
            out.add(AiMessage(out.unique_id(base), "tool", "tool_output", content, number, meta))
        else:
            out.problem(number, f"unknown role {role!r}")
    return out.result(FORMAT)


def _assistant(out: Collector, base: str, number: int, entry: dict[str, Any], names: dict[str, str]) -> None:
    content, thoughts, notes = _parts(entry.get("content"))
    for thought, signature in thoughts:
        meta = (
            {"reasoning_details": [{"type": "reasoning.text", "signature": signature}]} if signature else None
        )
        out.add(AiMessage(out.unique_id(base), "assistant", "thought", thought, number, meta))
    calls = [normalize_call(c) for c in entry.get("tool_calls") or []]
    names.update({c["id"]: c["function"]["name"] for c in calls})
    if calls:
        out.add(
            AiMessage(
                out.unique_id(base),
                "assistant",
                "tool_calls",
                content,
                number,
                {"tool_calls": calls, **notes},
            )
        )
    elif content or notes or not thoughts:
        out.add(AiMessage(out.unique_id(base), "assistant", "final_answer", content, number, notes or None))


def _parts(content: Any) -> tuple[str, list[tuple[str, str | None]], dict[str, Any]]:
    """Text, thoughts (text, signature) and notes of a kosong content value (a string or parts)."""
    if isinstance(content, str):
        return content, [], {}
    texts: list[str] = []
    thoughts: list[tuple[str, str | None]] = []
    notes: dict[str, Any] = {}
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("text") or ""))
        elif kind == "think":
            thoughts.append((str(part.get("think") or ""), part.get("encrypted")))
        elif kind in ("image", "audio", "video", "image_url"):
            url = part.get("url") or (part.get("image_url") or {}).get("url")
            note = image_note({"url": url})
            notes.setdefault("images", []).append(note)
            texts.append(image_placeholder(note))
    return "\n".join(t for t in texts if t), thoughts, notes
