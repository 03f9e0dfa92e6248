"""What a build sends (spec §5.5-5.6): the final states' messages, their counts, their wire form and the
budget category each counts in.

A long default-policy build keeps thousands of messages, and a replay's next step or a rebuild after an edit
keeps nearly the same message objects: each message's wire form and categories are looked up by its
identity (`_ROWS`), in passes over whole lists that run in C.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import compress
from operator import attrgetter, is_not, itemgetter
from typing import Any

from engine.fences import FenceRegistry
from engine.messages import AiMessage
from engine.providers.state import KEEP_CORE, State
from engine.wire import format_message

_PROCESSED, _MESSAGE, _TOKENS, _ACTION = (
    attrgetter("processed"), attrgetter("message"), attrgetter("tokens"), attrgetter("action"),
)  # fmt: skip
_OF, _REGISTRY, _FORMATTED, _WM_CATEGORY = itemgetter(0), itemgetter(1), itemgetter(2), itemgetter(4)
_NOT_NONE = partial(is_not, None)


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
    message as sent (`estimate`); any other its starting count. Read in passes over whole lists (in C): a
    long default-policy build sends thousands of messages, nearly all as the last build sent them."""
    out = Sent()
    processed = list(map(_PROCESSED, final))
    if processed.count(None) == len(final):
        messages, tokens = list(map(_MESSAGE, final)), list(map(_TOKENS, final))
    else:
        messages, tokens = [], []
        for state, shortened in zip(final, processed, strict=True):
            if shortened is None:
                messages.append(state.message)
                tokens.append(state.tokens)
            else:
                message = shortened if shortened.content else state.message
                messages.append(message)
                tokens.append(estimate(message))
    rows = _rows(messages, registry)
    categories = list(map(_WM_CATEGORY, rows))
    actions = list(map(_ACTION, final))
    for at in _positions(actions, KEEP_CORE):
        categories[at] = rows[at][3]
    out.messages, out.tokens = messages, sum(tokens)
    out.by_category = {c: sum(compress(tokens, map(c.__eq__, categories))) for c in dict.fromkeys(categories)}
    formatted = list(map(_FORMATTED, rows))
    if None not in formatted:
        out.positions, out.wire = list(range(len(final))), list(map(dict, formatted))  # the build's own dicts
        return out
    for state, form in zip(final, formatted, strict=True):
        if form is None:
            out.positions.append(None)
            out.unformatted.append(state)
        else:
            out.positions.append(len(out.wire))
            out.wire.append(dict(form))  # the build's own dict: a reminder replaces the last one
    return out


def _rows(messages: list[AiMessage], registry: FenceRegistry | None) -> list[_Row]:
    """Each message's row: the one kept for it (`_ROWS`) when made for this very message and, for a fenced
    one, this registry; else made now."""
    rows = list(map(_ROWS.get, map(id, messages)))
    if (
        None not in rows
        and True not in map(is_not, map(_OF, rows), messages)
        and set(map(id, filter(_NOT_NONE, map(_REGISTRY, rows)))) <= {id(registry)}
    ):
        return rows
    for at, (message, row) in enumerate(zip(messages, rows, strict=True)):
        if row is None or row[0] is not message or (row[1] is not None and row[1] is not registry):
            rows[at] = _made_row(message, registry)
    return rows


def _made_row(message: AiMessage, registry: FenceRegistry | None) -> _Row:
    if len(_ROWS) >= _ROWS_LIMIT:
        _ROWS.clear()
    row = _ROWS[id(message)] = _row(message, registry)
    return row


def _positions(items: list[Any], value: Any) -> Iterator[int]:
    """Where `value` is in `items` (found in C: a few among thousands)."""
    at = -1
    while True:
        try:
            at = items.index(value, at + 1)
        except ValueError:
            return
        yield at


# id of a message -> (the message, kept so its id is not reused while held; the fence registry its wire form
# was made with, None when it does not depend on one; its wire form; its category when kept by core; else)
_Row = tuple[AiMessage, FenceRegistry | None, dict[str, Any] | None, str, str]
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
    )


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
