"""LangChain message dumps (`messages_to_dict`) as linnkit messages.

A dump is a list (a JSON array, JSONL, or `{"messages": [...]}`) of `{type, data}` where `type` is
`human`, `ai`, `system`, `tool`, `function` or `chat` and `data` holds the message's fields (`content`,
`tool_calls` as `{name, args, id}`, `tool_call_id`, `id`, `additional_kwargs`). They are read as OpenAI chat
messages: `human` → `user_input`, `ai` → `tool_calls` or `final_answer`, `tool` → `tool_output`.
`additional_kwargs` and `response_metadata` are kept on the message, not sent.
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import Collector, ImportResult, NameMap, compact_json, read_items
from engine.importers.openai_chat import convert_chat_messages

FORMAT = "langchain"
ROLES = NameMap({"human": "user", "ai": "assistant", "system": "system", "tool": "tool", "function": "tool"})
CHUNK_SUFFIX = "Chunk"  # AIMessageChunk and friends


def _kind(item: Any) -> str | None:
    if not isinstance(item, dict) or not isinstance(item.get("data"), dict):
        return None
    kind = item.get("type")
    if isinstance(kind, str) and kind.endswith(CHUNK_SUFFIX):
        kind = {"AIMessageChunk": "ai", "HumanMessageChunk": "human", "ToolMessageChunk": "tool"}.get(kind)
    return kind if kind in ROLES or kind == "chat" else None


def _entries(sniff_or_items: list[Any]) -> list[Any]:
    if len(sniff_or_items) == 1 and isinstance(sniff_or_items[0], dict):
        inner = sniff_or_items[0].get("messages")
        if isinstance(inner, list):
            return inner
    return sniff_or_items


def detect_langchain(sniff: Any) -> bool:
    items = list(sniff.document) if isinstance(sniff.document, list) else list(sniff.items)
    typed = [i for i in _entries(items) if isinstance(i, dict)]
    return bool(typed) and all(_kind(i) is not None for i in typed[:50])


def import_langchain(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    items = read_items(text, out)
    if len(items) == 1 and items[0][0] is None:  # one document: an array, or {"messages": [...]}
        listed = _entries([items[0][1]] if isinstance(items[0][1], dict) else items[0][1])
        items = [(None, item) for item in listed] if isinstance(listed, list) else []
    entries: list[tuple[int | None, str | None, Any]] = []
    for index, (line, item) in enumerate(items):
        label = None if line is not None else f"messages[{index}]"
        kind = _kind(item)
        if kind is None:
            out.problem(line, f"{label or 'line'}: expected a LangChain message {{type, data}}")
            continue
        entries.append((line, label, _chat(kind, item["data"])))
    convert_chat_messages(out, entries)
    return out.result(FORMAT)


def _chat(kind: str, data: dict[str, Any]) -> dict[str, Any]:
    role = data.get("role") if kind == "chat" else ROLES[kind]
    message: dict[str, Any] = {"role": role, "content": data.get("content")}
    if isinstance(data.get("id"), str):
        message["id"] = data["id"]
    calls = data.get("tool_calls")
    if kind == "ai" and isinstance(calls, list) and calls:
        message["tool_calls"] = [_call(c) for c in calls]
    elif kind == "ai" and isinstance(data.get("additional_kwargs", {}).get("tool_calls"), list):
        message["tool_calls"] = data["additional_kwargs"]["tool_calls"]
    if role == "tool":
        message["tool_call_id"] = data.get("tool_call_id") or data.get("name") or ""
    reasoning = (data.get("additional_kwargs") or {}).get("reasoning_content")
    if isinstance(reasoning, str):
        message["reasoning_content"] = reasoning
    return message


def _call(call: Any) -> Any:
    if not isinstance(call, dict) or "function" in call:
        return call
    args = call.get("args")
    arguments = args if isinstance(args, str) else compact_json(args if args is not None else {})
    return {
        "id": call.get("id") or "",
        "type": "function",
        "function": {"name": call.get("name"), "arguments": arguments},
    }
