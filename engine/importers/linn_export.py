"""Sessions exported by `engine.export` in OpenAI chat or Anthropic Messages shape, read back exactly.

Such a file is a provider request (`{messages: [...]}`; Anthropic's with `system` blocks) with a top-level
`linn` key (`{export, version, header}`) and, on each message, its `id` and a `linn` key holding what the
shape has no place for (type, role, timestamp, metadata, a result's call id: a damaged history may have
none). The text, calls and results come from the provider fields; the rest from `linn`. A message without
its `linn` key is read as OpenAI chat reads it. (OTel exports are read by the `otel` importer, which knows
the same key.)
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import Collector, ImportResult, compact_json, pick_conversation, read_items
from engine.importers.openai_chat import convert_chat_messages
from engine.importers.registry import Sniff
from engine.messages import AiMessage

FORMAT = "linn-export"
SIDE_KEY = "linn"
SHAPES = ("openai", "anthropic")


def _shape(item: Any) -> str | None:
    side = item.get(SIDE_KEY) if isinstance(item, dict) else None
    shape = side.get("export") if isinstance(side, dict) else None
    return shape if shape in SHAPES and isinstance(item.get("messages"), list) else None


def detect_linn_export(sniff: Sniff) -> bool:
    return any(_shape(item) for item in sniff.objects())


def import_linn_export(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    requests = [(line, item) for line, item in read_items(text, out) if _shape(item)]
    chosen = pick_conversation(requests, conversation or 0, path)
    session: dict[str, Any] = {}
    title = None
    if chosen is not None:
        line, request = chosen
        head = request[SIDE_KEY]
        header = head.get("header") if isinstance(head.get("header"), dict) else {}
        title = header.get("title") if isinstance(header.get("title"), str) else None
        if isinstance(header.get("modelId"), str):
            session["model"] = header["modelId"]
        session["shape"] = head["export"]
        if head["export"] == "anthropic":
            _anthropic_system(out, request, head, line)
        for index, message in enumerate(request["messages"]):
            _message(out, message, head["export"], line, index)
    return out.result(FORMAT, session=session, conversations=len(requests), title=title)


def _message(out: Collector, message: Any, shape: str, line: int | None, index: int) -> None:
    side = message.get(SIDE_KEY) if isinstance(message, dict) else None
    if not (
        isinstance(side, dict) and isinstance(side.get("type"), str) and isinstance(message.get("id"), str)
    ):
        if shape == "openai":  # a message added by hand: read as OpenAI chat reads it
            convert_chat_messages(out, [(line, f"messages[{index}]", message)])
        else:
            out.problem(line, f"messages[{index}]: no '{SIDE_KEY}' key; an exported message carries one")
        return
    content, meta = (_openai if shape == "openai" else _anthropic)(message, side)
    if side.get("metadata") is None and not meta:
        meta = None
    else:
        meta = {**(meta or {}), **(side.get("metadata") or {})}
    out.add(
        AiMessage(
            message["id"],  # as exported, even a repeated id (a damaged history keeps it)
            str(side.get("role") or message.get("role") or "user"),
            side["type"],
            content,
            side.get("timestamp") or 0,
            meta,
            dict(side.get("extra") or {}),
        )
    )


def _openai(message: dict[str, Any], side: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if side["type"] == "thought":
        return str(message.get("reasoning_content") or ""), {}
    content = message.get("content")
    text = content if isinstance(content, str) else ""
    meta: dict[str, Any] = {}
    if side["type"] == "tool_calls":
        meta["tool_calls"] = list(message.get("tool_calls") or [])
    return text, meta


def _anthropic(message: dict[str, Any], side: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    blocks = [b for b in message.get("content") or [] if isinstance(b, dict)]
    meta: dict[str, Any] = {}
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    exact = side.get("arguments") or {}
    for block in blocks:
        kind = block.get("type")
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "thinking":
            texts.append(str(block.get("thinking") or ""))
        elif kind == "tool_result":
            result = block.get("content")
            texts.append(result if isinstance(result, str) else compact_json(result))
        elif kind == "tool_use":
            call_id = str(block.get("id") or "")
            arguments = exact.get(call_id)
            if arguments is None:
                arguments = compact_json(block.get("input") if block.get("input") is not None else {})
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": str(block.get("name") or ""), "arguments": arguments},
                }
            )
    if side["type"] == "tool_calls":
        meta["tool_calls"] = calls
    return "\n\n".join(texts), meta


def _anthropic_system(
    out: Collector, request: dict[str, Any], head: dict[str, Any], line: int | None
) -> None:
    system = request.get("system")
    blocks = [{"type": "text", "text": system}] if isinstance(system, str) else list(system or [])
    sides = head.get("system") if isinstance(head.get("system"), list) else []
    for index, block in enumerate(blocks):
        text = str(block.get("text") or "") if isinstance(block, dict) else ""
        side = sides[index] if index < len(sides) and isinstance(sides[index], dict) else {}
        kind = side.get("type") if isinstance(side.get("type"), str) else "system_prompt"
        message_id = side.get("id") if isinstance(side.get("id"), str) else f"an-system-{index}"
        meta = side.get("metadata") if isinstance(side.get("metadata"), dict) else None
        extra = dict(side.get("extra") or {})
        out.add(AiMessage(message_id, "system", kind, text, side.get("timestamp") or 0, meta, extra))
    if len(sides) > len(blocks):
        out.problem(line, f"system: {len(sides)} exported system messages, {len(blocks)} blocks")
