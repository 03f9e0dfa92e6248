"""What a build sends (spec §5.5-5.6): the final states' messages, their counts, their wire form and the
budget category each counts in, made in one pass over the final states.

A long default-policy build keeps thousands of messages, and a replay's next step or a rebuild after an edit
keeps nearly the same message objects: each message's wire form and categories are looked up by its
identity (`_ROWS`), and the pass reads each state once instead of once per figure.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from engine.fences import FenceRegistry
from engine.messages import AiMessage
from engine.providers.state import KEEP_CORE, State
from engine.wire import format_message


@dataclass(slots=True)
class Sent:
    messages: list[AiMessage] = field(default_factory=list)  # each final state's message as sent
    tokens: int = 0  # their count
    positions: list[int | None] = field(default_factory=list)  # each final state's wire index (None: dropped)
    wire: list[dict[str, Any]] = field(default_factory=list)  # the formatted messages (dicts of this build)
    by_category: dict[str, int] = field(default_factory=dict)  # the count per budget category
    unformatted: list[State] = field(default_factory=list)  # kept states the wire formatter drops


def sent(final: list[State], registry: FenceRegistry | None, estimate: Callable[[AiMessage], int]) -> Sent:
    """`final` (the kept states in final order) as sent. A state a provider processed (truncated) counts its
    message as sent (`estimate`), and so does a message with top-level call fields (`_counted_final`); any
    other its starting count."""
    out = Sent()
    messages, positions, wire, by_category = out.messages, out.positions, out.wire, out.by_category
    total = 0
    rows, limit = _ROWS, _ROWS_LIMIT
    for state in final:
        processed = state.processed
        message = state.message if processed is None or not processed.content else processed
        row = rows.get(id(message))
        if row is None or row[0] is not message or (row[1] is not None and row[1] is not registry):
            if len(rows) >= limit:
                rows.clear()
            row = rows[id(message)] = _row(message, registry)
        if row[5] is not None:  # counted as linnkit's final message, without its top-level call fields
            tokens = estimate(row[5])
        else:
            tokens = state.tokens if processed is None else estimate(message)
        category = row[3] if state.action == KEEP_CORE else row[4]
        by_category[category] = by_category.get(category, 0) + tokens
        total += tokens
        messages.append(message)
        formatted = row[2]
        if formatted is None:
            positions.append(None)
            out.unformatted.append(state)
        else:
            positions.append(len(wire))
            wire.append(dict(formatted))  # the build's own dict: a reminder replaces the last one
    out.tokens = total
    return out


# id of a message -> (the message, kept so its id is not reused while held; the fence registry its wire form
# was made with, None when it does not depend on one; its wire form; its category when kept by core; else;
# the message as linnkit counts it once final when that differs, else None)
_Row = tuple[AiMessage, FenceRegistry | None, dict[str, Any] | None, str, str, AiMessage | None]
_ROWS: dict[int, _Row] = {}
_ROWS_LIMIT = 20_000  # a long default-policy build sends ~2,500 messages


def _row(message: AiMessage, registry: FenceRegistry | None) -> _Row:
    fenced = message.type == "context_injection"
    return (
        message,
        registry if fenced else None,
        format_message(message, registry),
        category(message, core=True),
        category(message, core=False),
        _counted_final(message),
    )


_TOP_LEVEL_COUNTED = ("tool_calls", "tool_call_id")  # the fields the token counter reads off the message


def _counted_final(message: AiMessage) -> AiMessage | None:
    """linnkit makes each final message anew from its id, role, type, content, timestamp and metadata, and
    counts that: top-level `tool_calls` / `tool_call_id`, which the counter reads off an input message, are
    gone by then. The message without them when it has them, else None."""
    extra = message.extra
    if not any(key in extra for key in _TOP_LEVEL_COUNTED):
        return None
    return message.with_(extra={k: v for k, v in extra.items() if k not in _TOP_LEVEL_COUNTED})


def category(message: AiMessage, *, core: bool) -> str:
    """The budget category a kept message counts in (`core`: kept by the core provider)."""
    metadata = message.metadata or _NO_METADATA
    kind = metadata.get("fenceKind")
    if isinstance(kind, str) and kind:
        return f"fence:{kind}"
    if message.type == "history_summary":
        return "summary"
    if message.type == "user_input" and core:
        return "user"
    if (
        message.role == "tool"
        or message.type == "tool_calls"
        or metadata.get("isCompressedToolHistory")
        or metadata.get("isDegradedToolReplay")
    ):
        return "tool_history"
    return "core" if core else "working_memory"


_NO_METADATA: dict[str, Any] = {}
