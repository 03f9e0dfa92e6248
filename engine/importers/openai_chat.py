"""OpenAI Chat Completions message lists as linnkit messages.

Accepted shapes: a JSON array of messages, JSONL of messages, a request `{messages: [...]}`, and
fine-tuning JSONL (one `{"messages": [...]}` conversation a line; `conversation` picks one, default the
first; `ImportResult.conversations` tells how many there are). A chat completion response
(`{choices: [{message}]}`) after a request joins its conversation.

Mapping: `system`/`developer` → `system_prompt`; `user` → `user_input`; assistant with `tool_calls` →
`tool_calls` (content kept), other assistant text → `final_answer`; `reasoning_content`/`reasoning` text →
a `thought` before it; `reasoning_details` stays on the message; `tool` → `tool_output` with the tool name
of its call. Content given as parts is flattened to its text; images are noted in `metadata.images`.
Messages have no ids: `oa-<index>` (`#n` for a second message from the same source message).
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import (
    Collector,
    Conversation,
    ImportResult,
    compact_json,
    image_note,
    import_conversations,
    iso_to_ms,
    unmapped_note,
)
from engine.messages import AiMessage

FORMAT = "openai"
HEADER_KEYS = ("model",)
TEXT_PARTS = ("text", "input_text", "output_text")
IMAGE_PARTS = ("image_url", "input_image")
PART_SEPARATOR = "\n\n"
# Keys with a place in the message model; any other key of a source message goes to metadata.source.
MAPPED_KEYS = frozenset(
    {"role", "content", "tool_calls", "tool_call_id", "id", "timestamp", "reasoning_content", "reasoning"}
    | {"reasoning_details"}
)


def import_openai(text: str, path: str = "<text>", *, conversation: int = 0) -> ImportResult:
    """Read OpenAI chat messages; `conversation` picks one when the input holds several."""
    return import_conversations(
        text,
        path,
        conversation,
        fmt=FORMAT,
        response_message=_response_message,
        convert=lambda out, chosen: _Converter(out, chosen).run(),
        header_keys=HEADER_KEYS,
    )


def _response_message(item: dict[str, Any]) -> dict[str, Any] | None:
    choices = item.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        return message if isinstance(message, dict) else None
    return None


def flatten_parts(content: Any) -> tuple[str, dict[str, Any]] | None:
    """Text of a content value (string or parts list) and notes for images and other parts."""
    if content is None:
        return "", {}
    if isinstance(content, str):
        return content, {}
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    notes: dict[str, list[Any]] = {}
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind in TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(part["refusal"])
        elif kind in IMAGE_PARTS:
            image = part.get(kind)
            notes.setdefault("images", []).append(
                image_note(image if isinstance(image, dict) else {"url": image})
            )
        else:
            notes.setdefault("unmappedParts", []).append(unmapped_note(part))
    return PART_SEPARATOR.join(t for t in texts if t), notes


def normalize_call(call: Any) -> dict[str, Any]:
    """A tool call in linnkit's shape: arguments as a JSON string, unknown keys (e.g. extra_content) kept."""
    if not isinstance(call, dict):
        return {"id": "", "type": "function", "function": {"name": "", "arguments": compact_json(call)}}
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    args = function.get("arguments")
    arguments = args if isinstance(args, str) else compact_json({} if args is None else args)
    out = {k: v for k, v in call.items() if k not in ("id", "type", "function")}
    return {
        "id": call.get("id") if isinstance(call.get("id"), str) else "",
        "type": "function",
        "function": {"name": function.get("name") or "", "arguments": arguments},
        **out,
    }


class _Converter:
    def __init__(self, out: Collector, conversation: Conversation) -> None:
        self.out = out
        self.conversation = conversation
        self.tool_names: dict[str, str] = {}

    def run(self) -> None:
        for index, (line, label, message) in enumerate(self.conversation.entries):
            self._message(index, line, label, message)

    def _message(self, index: int, line: int | None, label: str | None, message: Any) -> None:
        if not isinstance(message, dict):
            self._problem(line, label, f"expected a message object, found {type(message).__name__}")
            return
        flat = flatten_parts(message.get("content"))
        if flat is None:
            self._problem(line, label, "content is neither text nor a list of parts")
            return
        text, notes = flat
        role = message.get("role")
        extras = {k: unmapped_note(v) for k, v in message.items() if k not in MAPPED_KEYS}
        if role in ("system", "developer"):
            if role == "developer":
                extras["role"] = role
            self._add(message, index, "system", "system_prompt", text, _meta(notes, extras))
        elif role == "user":
            self._add(message, index, "user", "user_input", text, _meta(notes, extras))
        elif role == "assistant":
            self._assistant(message, index, line, label, text, _meta(notes, extras))
        elif role == "tool":
            self._tool(message, index, line, label, text, _meta(notes, extras))
        else:
            self._problem(line, label, f"unknown role {role!r}")

    def _assistant(
        self, message: dict[str, Any], index: int, line: int | None, label: str | None, text: str, meta: dict
    ) -> None:
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(reasoning, str) and reasoning.strip():
            self._add(message, index, "assistant", "thought", reasoning, {})
        details = message.get("reasoning_details")
        if details:
            meta["reasoning_details"] = details
        calls = self._calls(message.get("tool_calls"), line, label)
        if calls:
            meta["tool_calls"] = [normalize_call(c) for c in calls]
            for call in meta["tool_calls"]:
                if not call["id"]:
                    self._problem(line, label, "tool call without an id")
                self.tool_names[call["id"]] = call["function"]["name"]
            self._add(message, index, "assistant", "tool_calls", text, meta)
        elif text.strip() or meta:
            self._add(message, index, "assistant", "final_answer", text, meta)
        else:
            self.out.skip("empty", line if line is not None else index)

    def _tool(
        self, message: dict[str, Any], index: int, line: int | None, label: str | None, text: str, meta: dict
    ) -> None:
        call_id = message.get("tool_call_id")
        if not isinstance(call_id, str) or not call_id:
            self._problem(line, label, "tool message without a tool_call_id")
            call_id = ""
        name = self.tool_names.get(call_id) or meta.get("source", {}).get("name")
        head = {"tool_call_id": call_id, "raw_output": text, **({"tool_name": name} if name else {})}
        self._add(message, index, "tool", "tool_output", text, {**head, **meta})

    def _add(self, source: dict[str, Any], index: int, role: str, kind: str, text: str, meta: dict) -> None:
        base = source["id"] if isinstance(source.get("id"), str) else f"oa-{index}"
        ms = iso_to_ms(source.get("timestamp"))
        message = AiMessage(
            self.out.unique_id(base), role, kind, text, index if ms is None else ms, meta or None
        )
        self.out.add(message)

    def _calls(self, calls: Any, line: int | None, label: str | None) -> list[dict[str, Any]]:
        """The message's tool calls that are objects; anything else is named and left out."""
        if calls is None:
            return []
        if not isinstance(calls, list):
            reason = f"must be an array, got {_json_kind(calls)}; read as no calls"
            self._problem(line, label, f"tool_calls: {reason}")
            return []
        for index, call in enumerate(calls):
            if not isinstance(call, dict):
                reason = f"must be an object, got {_json_kind(call)}; the call is left out"
                self._problem(line, label, f"tool_calls[{index}]: {reason}")
            elif call.get("function") is not None and not isinstance(call["function"], dict):
                kind = _json_kind(call["function"])
                reason = f"must be an object, got {kind}; read as a call of no function"
                self._problem(line, label, f"tool_calls[{index}].function: {reason}")
        return [call for call in calls if isinstance(call, dict)]

    def _problem(self, line: int | None, label: str | None, reason: str) -> None:
        self.out.problem(line, f"{label}: {reason}" if label else reason)


def _meta(notes: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    return {**notes, "source": extras} if extras else dict(notes)


def convert_chat_messages(out: Collector, entries: list[tuple[int | None, str | None, Any]]) -> None:
    """Convert (line, label, message) entries already in chat shape; for formats that map onto it."""
    _Converter(out, Conversation(None, {}, entries)).run()


def _json_kind(value: Any) -> str:
    kinds = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}
    return "null" if value is None else kinds.get(type(value), "an object")
