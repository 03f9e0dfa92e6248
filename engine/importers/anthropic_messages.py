"""Anthropic Messages API payloads as linnkit messages.

Accepted shapes: a request object `{system?, messages: [...]}` (system as a string or text blocks), a JSON
array or JSONL of such requests (each one a conversation; responses that follow a request join it), or a
JSON array / JSONL of messages (one conversation). Blocks map as in Claude Code transcripts: `thinking` →
`thought`, `text` → `final_answer`, all `tool_use` blocks of a message → one `tool_calls` message,
`tool_result` → `tool_output`. Messages have no ids, so a message's id is its own `id` (responses) or
`an-<index>`, with `#n` for the further messages one source message yields.
"""

from __future__ import annotations

from typing import Any

from engine.importers._blocks import AssistantTurn, as_blocks, flatten_blocks, tool_output
from engine.importers._common import (
    Collector,
    Conversation,
    ImportResult,
    import_conversations,
    iso_to_ms,
)
from engine.messages import AiMessage
from engine.usage import anthropic_usage

FORMAT = "anthropic"
HEADER_KEYS = ("model",)


def import_anthropic(text: str, path: str = "<text>", *, conversation: int = 0) -> ImportResult:
    """Read Anthropic Messages payloads; `conversation` picks one request when the input holds several."""
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
    """A Messages API response is itself the assistant message (`type: message`)."""
    return item if item.get("type") == "message" and item.get("role") == "assistant" else None


class _Converter:
    def __init__(self, out: Collector, conversation: Conversation) -> None:
        self.out = out
        self.conversation = conversation
        self.tool_names: dict[str, str] = {}

    def run(self) -> None:
        system = self.conversation.header.get("system")
        if system:
            self._system(self.conversation.line, None, system, "an-system", 0)
        for index, (line, label, message) in enumerate(self.conversation.entries):
            self._message(index, line, label, message)

    def _message(self, index: int, line: int | None, label: str | None, message: Any) -> None:
        where = line if line is not None else index
        if not isinstance(message, dict):
            self._problem(line, label, f"expected a message object, found {type(message).__name__}")
            return
        role = message.get("role")
        blocks = as_blocks(message.get("content"))
        if blocks is None:
            self._problem(line, label, "content is neither text nor a list of blocks")
            return
        base = message["id"] if isinstance(message.get("id"), str) else f"an-{index}"
        ms = iso_to_ms(message.get("timestamp"))
        timestamp = index if ms is None else ms
        if role == "user":
            self._user(where, blocks, base, timestamp)
        elif role == "assistant":
            self._assistant(where, blocks, base, timestamp, message)
        elif role == "system":
            self._system(line, label, message.get("content"), base, timestamp)
        else:
            self._problem(line, label, f"unknown role {role!r}")

    def _user(self, where: int, blocks: list[Any], base: str, timestamp: int | float) -> None:
        results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
        rest = [b for b in blocks if not (isinstance(b, dict) and b.get("type") == "tool_result")]
        for block in results:
            name = self.tool_names.get(block.get("tool_use_id") or "")
            self.out.add(tool_output(block, self.out.unique_id(base), timestamp, name, {}))
        text, notes = flatten_blocks(rest)
        if text.strip() or notes:
            message_id = self.out.unique_id(base)
            self.out.add(AiMessage(message_id, "user", "user_input", text, timestamp, notes or None))
        elif not results:
            self.out.skip("empty", where)

    def _assistant(
        self, where: int, blocks: list[Any], base: str, timestamp: int | float, message: dict[str, Any]
    ) -> None:
        turn = AssistantTurn(None, self.tool_names)
        extra = {"source": {"model": message["model"]}} if isinstance(message.get("model"), str) else {}
        for block in blocks:
            reason = turn.add_block(block, lambda: self.out.unique_id(base), timestamp, extra)
            if reason:
                self.out.skip(reason, where)
        if message.get("stop_reason") is not None:
            turn.tail = {"stop_reason": message["stop_reason"]}
        produced = turn.finish()
        if not produced and not blocks:
            self.out.skip("empty", where)
        start = len(self.out.messages)
        for produced_message in produced:
            self.out.add(produced_message)
        if "usage" in message:  # a response: what the provider counted for this call
            model = message.get("model") if isinstance(message.get("model"), str) else None
            call_id = message.get("id") if isinstance(message.get("id"), str) else None
            usage = self.out.usage(where, anthropic_usage(message["usage"], model, call_id))
            if usage is not None:
                end = len(self.out.messages)
                self.out.attach_usage(start, end, usage, where, "a response with no message")

    def _system(self, line: int | None, label: str | None, content: Any, base: str, timestamp: int) -> None:
        blocks = as_blocks(content)
        if blocks is None:
            self._problem(line, label, "system is neither text nor a list of blocks")
            return
        text, notes = flatten_blocks(blocks)
        message_id = self.out.unique_id(base)
        self.out.add(AiMessage(message_id, "system", "system_prompt", text, timestamp, notes or None))

    def _problem(self, line: int | None, label: str | None, reason: str) -> None:
        self.out.problem(line, f"{label}: {reason}" if label else reason)
