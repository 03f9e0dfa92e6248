"""What every preprocessor works on: the message list plus, per message, the session indices it carries."""

from __future__ import annotations

import json
from collections.abc import Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from typing import Any

from engine.forksafe import fork_safe_lock
from engine.lineage import continued, same_line, shared_at_least
from engine.messages import AiMessage
from engine.result import Event


@dataclass(frozen=True, slots=True)
class Entry:
    """A message in the working list and the session message indices whose content it carries. `created`:
    a preprocessor made the message (compressed or degraded tool history); its id gets the build's scope
    when preprocessing ends (`scope_created`)."""

    message: AiMessage
    origins: tuple[int, ...]
    created: bool = False


_CREATED, _MESSAGE_ID = attrgetter("created"), attrgetter("message.id")


@dataclass(frozen=True, slots=True)
class Removal:
    """Session messages a preprocessor took out of the list, and what (if anything) now carries them."""

    origins: tuple[int, ...]
    strategy: str
    replaced_by: str | None = None
    note: str = ""


@dataclass(slots=True)
class StageOutput:
    entries: list[Entry]
    strategy: str | None = None
    removals: list[Removal] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    @classmethod
    def unchanged(cls, entries: list[Entry]) -> StageOutput:
        return cls(entries=entries)


def starts_with(items: Sequence[object], prefix: Sequence[object]) -> bool:
    """`items` begins with `prefix`, item by item the same object or an equal one. List equality is
    checked in C, identity first (ten times faster than an identity scan in Python); an equal item is as
    good as the same one, since a stage's output depends only on its input's values. Two lists of one line
    (`engine.lineage`) are told by their lengths alone."""
    size = len(prefix)
    if same_line(items, prefix):
        return size <= len(items)
    if size > len(items):
        return False
    if size and not (items[size - 1] is prefix[size - 1] or items[size - 1] == prefix[size - 1]):
        return False  # told at once, without a copy of the prefix (another run's list, in a diff)
    head = items if size == len(items) else items[:size]
    return _as_list(head) == _as_list(prefix)


def _as_list(items: Sequence[object]) -> list[object]:
    return items if isinstance(items, list) else list(items)


_CHUNK = 256  # items compared in C at a time when looking for where two lists part


def common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """How many items `a` and `b` share at the start (the same object, or an equal one: `starts_with`).
    Compared a chunk at a time in C; only the chunk where they part is walked in Python."""
    size = min(len(a), len(b))
    known = shared_at_least(a, b)  # lists of one line, or of a line forked from the other's
    if known == size:
        return size
    if not known and starts_with(b, a):  # the usual case in a replay: `b` is `a` and more
        return len(a)
    for low in range(known, size, _CHUNK):
        high = min(low + _CHUNK, size)
        if _as_list(a[low:high]) != _as_list(b[low:high]):
            return next(i for i in range(low, high) if not (a[i] is b[i] or a[i] == b[i]))
    return size


def messages_of(entries: list[Entry]) -> list[AiMessage]:
    return [e.message for e in entries]


def merged_origins(entries: list[Entry], indices: list[int]) -> tuple[int, ...]:
    return tuple(sorted({o for i in indices for o in entries[i].origins}))


# Set by a replay around each step's build: how many summaries the step's history holds (`e3`). A persisted
# summary lists the scoped ids it replaced; every later step holds one summary more, so its created copies
# never match those ids (linnkit's are random UUIDs). Steps of one scope give the same ids (and objects).
ID_SCOPE: ContextVar[str] = ContextVar("ID_SCOPE", default="")


def new_id(prefix: str, anchor_id: str) -> str:
    """Created messages get ids derived from their source, so rebuilds keep them stable."""
    scope = ID_SCOPE.get()
    return f"{prefix}:{scope}:{anchor_id}" if scope else f"{prefix}:{anchor_id}"


def created_id(prefix: str, anchor_id: str) -> str:
    """A preprocessor's created message id, before the scope: stage outputs stay the same objects across a
    replay's steps (reused, not re-made per step), and `scope_created` scopes what survives preprocessing."""
    return f"{prefix}:{anchor_id}"


def distinct_created(entries: list[Entry]) -> list[Entry]:
    """`entries` with every created message's id distinct: created ids come from their anchor's id, so two
    groups whose anchors repeat an id (messy input) would give two messages one id, where linnkit makes a
    fresh id for each. The second and later get `#2`, `#3`, …; `entries` itself when no id repeats."""
    with _CHECK_LOCK:
        if _no_repeat(entries):
            return entries
    created = list(compress(range(len(entries)), map(_CREATED, entries)))
    ids = list(map(_MESSAGE_ID, map(entries.__getitem__, created)))
    out, used, seen = list(entries), set(ids), set()
    for position, message_id in zip(created, ids, strict=True):
        if message_id not in seen:
            seen.add(message_id)
            continue
        count = 2
        while f"{message_id}#{count}" in used:
            count += 1
        used.add(f"{message_id}#{count}")
        entry = out[position]
        out[position] = Entry(entry.message.with_(id=f"{message_id}#{count}"), entry.origins, True)
    return out


def _no_repeat(entries: list[Entry]) -> bool:
    """No created id repeats in `entries`. What the last list checked shares with this one is not read
    again (`engine.lineage`): a replay's next step extends it, or forks from it a few entries back (at each
    user input the compressor replaces a group near the end). The checked ids are one set, changed in place
    (a copy cost 1.4 ms at 24,000 entries), hence the lock."""
    global _checked
    start, known = 0, None
    if _checked is not None:
        held, ids = _checked
        shared = shared_at_least(held, entries)
        if shared and len(held) - shared <= FORK_TAIL:
            ids.difference_update(created_ids(held, shared))  # the ids of the tail this list does not share
            start, known = shared, ids
    _checked = None
    new_ids = created_ids(entries, start)  # in C: thousands in a long build's first list
    fresh = set(new_ids)
    if len(fresh) != len(new_ids) or (known is not None and not known.isdisjoint(fresh)):
        return False
    if known is None:
        known = fresh
    else:
        known |= fresh
    _checked = (entries, known)
    return True


def created_ids(entries: list[Entry], start: int) -> list[str]:
    """The ids of the created messages of `entries[start:]`."""
    tail = entries[start:]
    return list(map(_MESSAGE_ID, compress(tail, map(_CREATED, tail))))


# the last list `_no_repeat` found without a repeated created id, and those ids (a replay's steps each extend
# the last one's or fork from it near its end)
_checked: tuple[list[Entry], set[str]] | None = None
_CHECK_LOCK = fork_safe_lock()
FORK_TAIL = 1_000  # a list forking further back than this from a kept one is read whole (ids, renames)


def forget_checked() -> None:
    global _checked
    with _CHECK_LOCK:
        _checked = None


def scope_created(entries: list[Entry], base: tuple[list[Entry], list[Entry]] | None = None) -> list[Entry]:
    """`entries` with every created message's id scoped (see `new_id`). Only the preprocessed list gets
    scoped: a created message a later stage removed again never reaches a provider, and its scope-free id in
    that stage's event cannot meet a persisted summary's (scoped) ids. `base`: an earlier input under the
    same scope and its output; the entries both start with keep their scoped copies (a replay's next step
    re-scopes only what is new since the last, and hands the providers the very same messages)."""
    scope = ID_SCOPE.get()
    if not scope:
        return entries
    shared = common_prefix(base[0], entries) if base is not None else 0
    tail = entries[shared:]
    # the created entries found in C (a Python loop over every entry was a tenth of a long replay's step)
    for position in compress(range(len(tail)), map(_CREATED, tail)):
        entry = tail[position]
        m = entry.message
        prefix, anchor_id = m.id.split(":", 1)
        fresh = AiMessage(
            f"{prefix}:{scope}:{anchor_id}", m.role, m.type, m.content, m.timestamp, m.metadata, m.extra
        )
        tail[position] = Entry(fresh, entry.origins, True)
    if not shared:
        return tail
    kept = base[1]
    if shared == len(kept) == len(entries):
        return kept
    return continued(kept, shared, tail)


def parse_args(raw: str) -> Any:
    """Parsed call arguments, or None when they are not valid JSON."""
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        return None
