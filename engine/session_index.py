"""Where a session list's messages of one type sit, and where the first message of an id sits.

A replay's cost asks every step for the fates of its user requests and of a few messages by id. Finding
them by a look at every message made each step's cost grow with the session's length. The answers are kept
per line of lists (`engine.lineage`): a replay's next list is the last one and a few messages more, so only
those few are read, and every list of the line is answered by cutting the line's answers at its length.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field

from engine.forksafe import fork_safe_lock
from engine.lanes import LaneLists
from engine.lineage import same_line
from engine.messages import AiMessage


@dataclass(slots=True)
class _Index:
    source: Sequence[AiMessage]  # the longest list read so far, of its line
    size: int = 0
    by_type: dict[str, list[int]] = field(default_factory=dict)  # ascending positions
    first_of_id: dict[str, int] = field(default_factory=dict)


_INDEXES: LaneLists[_Index] = LaneLists(2)
_LOCK = fork_safe_lock()  # a replay thread and the TUI's build may read lists of one line


def positions_of_type(session: Sequence[AiMessage], kind: str) -> list[int]:
    """The positions of the messages of type `kind` in `session`, ascending."""
    found, count = of_type(session, kind)
    return found[:count]


def of_type(session: Sequence[AiMessage], kind: str) -> tuple[list[int], int]:
    """The positions of the messages of type `kind` in `session`: the first `count` of `found`, ascending.
    `found` is the line's own list, not a copy: only ever appended to, so those first `count` stay."""
    with _LOCK:
        found = _index_of(session).by_type.get(kind)
        if found is None:
            return [], 0
        return found, bisect_left(found, len(session))


def position_of_id(session: Sequence[AiMessage], message_id: str) -> int | None:
    """The position of the first message with id `message_id` in `session`, if any."""
    with _LOCK:
        at = _index_of(session).first_of_id.get(message_id)
    return at if at is not None and at < len(session) else None


def _index_of(session: Sequence[AiMessage]) -> _Index:
    """Called under `_LOCK`. A list of a held index's line is read past what the index has read, if longer;
    any other list gets an index of its own."""
    for index in _INDEXES.items():
        if index.source is session or same_line(index.source, session):
            if len(session) > index.size:
                _read(index, session)
            return index
    index = _Index(session)
    _read(index, session)
    _INDEXES.add(index)
    return index


def _read(index: _Index, session: Sequence[AiMessage]) -> None:
    by_type, first_of_id = index.by_type, index.first_of_id
    for position in range(index.size, len(session)):
        message = session[position]
        found = by_type.get(message.type)
        if found is None:
            found = by_type[message.type] = []
        found.append(position)
        first_of_id.setdefault(message.id, position)
    index.source, index.size = session, len(session)


def forget() -> None:
    with _LOCK:
        _INDEXES.clear()
