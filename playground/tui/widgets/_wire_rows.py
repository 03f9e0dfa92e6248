"""The rows the wire view draws: one per wire card, plus dropped messages in session order."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from engine.messages import AiMessage
from engine.result import BuildResult, Decision, WireCard


@dataclass(frozen=True, slots=True)
class WireRow:
    """A card (a wire message), a dropped message, or a plain message of another wire shape."""

    kind: str  # "card" | "dropped" | "plain"
    role: str
    type: str
    text: str
    message_id: str | None = None
    tokens: int | None = None
    marks: tuple[str, ...] = ()
    source_ids: tuple[str, ...] = ()
    reason: str = ""
    replaced_by: str | None = None
    reminder: str = ""  # the appended <system-reminder> block, kept apart from `text`

    @property
    def height(self) -> int:
        """Lines the row takes in the list."""
        if self.kind == "dropped":
            return 1
        return 3 if self.reminder else 2


def message_text(message: dict[str, Any]) -> str:
    """Readable text of a chat message: its content, then one `name(arguments)` line per tool call."""
    lines = [content_text(message.get("content"))]
    for call in message.get("tool_calls") or ():
        fn = call.get("function", {})
        lines.append(f"{fn.get('name', '?')}({fn.get('arguments', '')})")
    return "\n".join(line for line in lines if line)


def content_text(content: Any) -> str:
    """Text of a string content or of a list of content blocks (OpenAI parts or Anthropic blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block_text(b) for b in content)
    return json.dumps(content, ensure_ascii=False)


def block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return str(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return f"{block.get('name', '?')}({json.dumps(block.get('input', {}), ensure_ascii=False)})"
    if kind == "tool_result":
        return f"[{block.get('tool_use_id', '?')}] {content_text(block.get('content'))}"
    return f"[{kind}]"


def card_row(card: WireCard, reminder: str | None) -> WireRow:
    text, apart = message_text(card.message), ""
    if "reminder" in card.marks and reminder:
        apart = reminder.strip()
        text = text[: -len(reminder)] if text.endswith(reminder) else text
    return WireRow(
        "card",
        str(card.message.get("role", "?")),
        card.type,
        text,
        card.message_id,
        card.tokens,
        card.marks,
        card.source_ids,
        reminder=apart,
    )


def dropped_row(decision: Decision, original: AiMessage | None) -> WireRow:
    return WireRow(
        "dropped",
        decision.role,
        decision.type,
        original.content if original else "",
        decision.message_id,
        decision.tokens,
        reason=decision.reason,
        replaced_by=decision.replaced_by,
    )


def wire_rows(result: BuildResult, show_dropped: bool = False) -> list[WireRow]:
    """Cards in wire order; with `show_dropped`, each dropped message placed where it stood in the session."""
    cards = sorted(result.cards, key=lambda c: c.index)
    rows = [card_row(c, result.reminder.appended_text) for c in cards]
    if not show_dropped:
        return rows
    originals = {m.id: m for m in result.preprocessed}
    merged: list[WireRow] = []
    emitted = 0
    for decision in sorted((d for d in result.decisions if d.index >= 0), key=lambda d: d.index):
        if decision.kept and decision.wire_index is not None:
            while emitted < len(cards) and cards[emitted].index <= decision.wire_index:
                merged.append(rows[emitted])
                emitted += 1
        elif not decision.kept:
            merged.append(dropped_row(decision, originals.get(decision.message_id)))
    return merged + rows[emitted:]


def anthropic_rows(payload: dict[str, Any]) -> list[WireRow]:
    """Rows for an Anthropic Messages payload: `{"system": ..., "messages": [...]}`."""
    rows = []
    if payload.get("system"):
        rows.append(WireRow("plain", "system", "system", content_text(payload["system"])))
    for message in payload.get("messages", ()):
        content = message.get("content")
        kinds = (
            [b.get("type", "?") for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        )
        rows.append(
            WireRow(
                "plain",
                message.get("role", "?"),
                ",".join(dict.fromkeys(kinds)) or "text",
                content_text(content),
            )
        )
    return rows
