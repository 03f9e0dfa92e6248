"""Anthropic content blocks (text, thinking, tool_use, tool_result, image) as linnkit messages.

Shared by the Claude Code and the Anthropic Messages importers.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.importers._common import compact_json, image_note, image_placeholder, unmapped_note
from engine.messages import AiMessage
from engine.session_lines import field_type, json_type

# OpenRouter's `format` for Anthropic reasoning details; the thinking text itself is the thought's content.
ANTHROPIC_REASONING_FORMAT = "anthropic-claude-v1"
BLOCK_SEPARATOR = "\n\n"


def fresh(extra: dict[str, Any]) -> dict[str, Any]:
    """A copy of per-line metadata, so messages made from one line share no dict."""
    return {k: dict(v) if isinstance(v, dict) else v for k, v in extra.items()}


def as_blocks(content: Any) -> list[Any] | None:
    """Message content as a block list (a string is one text block); None when it is neither."""
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if content is None:
        return []
    return content if isinstance(content, list) else None


def wrong_block(blocks: list[Any], where: str) -> str | None:
    """The first block of `blocks` (at `where`, e.g. `message.content`) with a value of a type no Anthropic
    message has, where it would change what is read without a word (a block that is no object, or has no
    type, is kept as an unmapped note, a text block's text that is not text is dropped), or None."""
    for n, block in enumerate(blocks):
        if not isinstance(block, dict):
            return f"{where}[{n}]: must be a content block (an object), got {json_type(block)}"
        kind = block.get("type")
        if not isinstance(kind, str):
            return f"{where}[{n}].type: must be a block type (a string), got {field_type(block, 'type')}"
        if kind == "text" and not isinstance(block.get("text"), str):
            return f"{where}[{n}].text: must be text (a string), got {field_type(block, 'text')}"
    return None


def flatten_blocks(blocks: list[Any]) -> tuple[str, dict[str, Any]]:
    """The text of text blocks joined by a blank line, and metadata notes for images and other blocks."""
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    other: list[Any] = []
    for block in blocks:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            if block.get("text"):
                texts.append(block["text"])
        elif kind == "image":  # a placeholder with its size, so its tokens can be estimated
            images.append(image_note(block.get("source")))
            texts.append(image_placeholder(images[-1]))
        elif kind == "tool_reference" and isinstance(block.get("tool_name"), str):
            # a tool search's answer: the API puts the tool's definition there, which the file does not hold
            texts.append(f"[tool definition loaded: {block['tool_name']}]")
            other.append(unmapped_note(block))
        else:
            other.append(unmapped_note(block))
    notes: dict[str, Any] = {}
    if images:
        notes["images"] = images
    if other:
        notes["unmappedBlocks"] = other
    return BLOCK_SEPARATOR.join(texts), notes


def tool_call(block: dict[str, Any]) -> dict[str, Any]:
    """A `tool_use` block as a linnkit (OpenAI-shaped) tool call."""
    args = block.get("input")
    return {
        "id": block.get("id") if isinstance(block.get("id"), str) else "",
        "type": "function",
        "function": {
            "name": block.get("name") or "",
            "arguments": compact_json({} if args is None else args),
        },
    }


def tool_output(
    block: dict[str, Any],
    message_id: str,
    timestamp: int | float,
    tool_name: str | None,
    extra: dict[str, Any],
) -> AiMessage:
    """A `tool_result` block as a `tool_output`; list content is flattened to its text."""
    blocks = as_blocks(block.get("content"))
    text, notes = flatten_blocks(blocks) if blocks is not None else (str(block.get("content")), {})
    meta: dict[str, Any] = {"tool_call_id": block.get("tool_use_id"), "raw_output": text}
    if tool_name:
        meta["tool_name"] = tool_name
    if "is_error" in block:
        meta["is_error"] = bool(block["is_error"])
    return AiMessage(message_id, "tool", "tool_output", text, timestamp, {**meta, **notes, **fresh(extra)})


def thought(
    block: dict[str, Any], message_id: str, timestamp: int | float, extra: dict[str, Any]
) -> AiMessage:
    """A `thinking` (or `redacted_thinking`) block; its signature or data goes to `reasoning_details`."""
    meta: dict[str, Any] = {}
    if block.get("type") == "redacted_thinking":
        detail = {
            "type": "reasoning.encrypted",
            "data": block.get("data"),
            "format": ANTHROPIC_REASONING_FORMAT,
        }
        meta["reasoning_details"] = [detail]
        return AiMessage(message_id, "assistant", "thought", "", timestamp, {**meta, **fresh(extra)})
    signature = block.get("signature")
    if signature:
        detail = {"type": "reasoning.text", "signature": signature, "format": ANTHROPIC_REASONING_FORMAT}
        meta["reasoning_details"] = [detail]
    content = block.get("thinking") or ""
    return AiMessage(message_id, "assistant", "thought", content, timestamp, {**meta, **fresh(extra)} or None)


class AssistantTurn:
    """The blocks of one assistant message, possibly written over several lines, and the tool results
    that arrived while it was still open. `finish` yields thoughts and answers in block order, then one
    `tool_calls` message with every call of the turn, then the results."""

    def __init__(self, key: str | None, tool_names: dict[str, str]) -> None:
        self.key = key
        self.tool_names = tool_names
        self.parts: list[AiMessage] = []
        self.calls: list[dict[str, Any]] = []
        self.calls_head: tuple[str, int | float, dict[str, Any]] | None = None
        self.outputs: list[AiMessage] = []
        self.unmapped: list[Any] = []
        self.tail: dict[str, Any] = {}

    def add_block(
        self, block: Any, next_id: Callable[[], str], timestamp: int | float, extra: dict[str, Any]
    ) -> str | None:
        """Take one block; return a skip reason when the block yields no message."""
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            text = block.get("text") or ""
            if not text.strip():
                return "empty_text"
            self.parts.append(
                AiMessage(next_id(), "assistant", "final_answer", text, timestamp, fresh(extra) or None)
            )
        elif kind in ("thinking", "redacted_thinking"):
            self.parts.append(thought(block, next_id(), timestamp, extra))
        elif kind == "tool_use":
            call = tool_call(block)
            if self.calls_head is None:
                self.calls_head = (next_id(), timestamp, fresh(extra))
            self.calls.append(call)
            self.tool_names[call["id"]] = call["function"]["name"]
        else:
            self.unmapped.append(unmapped_note(block))
            return f"block:{kind}"
        return None

    def finish(self) -> list[AiMessage]:
        messages = list(self.parts)
        if self.calls_head is not None:
            message_id, timestamp, extra = self.calls_head
            meta = {"tool_calls": self.calls, **extra}
            messages.append(AiMessage(message_id, "assistant", "tool_calls", "", timestamp, meta))
        if messages and (self.tail or self.unmapped):
            last = messages[-1]
            meta = dict(last.metadata or {})
            if self.tail:
                meta["source"] = {**meta.get("source", {}), **self.tail}
            if self.unmapped:
                meta["unmappedBlocks"] = self.unmapped
            messages[-1] = last.with_(metadata=meta)
        return messages + self.outputs
