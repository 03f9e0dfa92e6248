"""A summary's `replacedMessageIds` that shares the old summary's list instead of copying it.

linnkit's new summary takes over the ids the summary it folds in replaced, so the list is cumulative: a
replay that summarizes every few steps would hold O(summaries x length) ids, one full copy per summary
(100,000 messages: ~1,200 summaries, ~690 MB of list slots). `SharedIds` holds only its own ids and a
reference to the old list: [its ids before the old summary's list] + old list + [its ids after it], so
all the summaries of a replay hold O(length) ids together.

It is a `list` to every reader: `len`, iteration, indexing, `==`, `json.dumps` (which iterates a list
subclass), `frozenset(...)`, `list(...)` give what the plain list would. It cannot be changed (nothing
changes a summary's metadata); a copy or pickle of it is a plain list.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Iterator, Sequence
from itertools import chain
from typing import Any, NoReturn


class SharedIds(list):
    """`head + parent + tail` without copying `parent` (a plain list or another `SharedIds`), whose ids
    are all distinct and none of them in `head` or `tail`. Its own `list` storage stays empty."""

    __slots__ = ("_head", "_parent", "_tail", "_size")

    def __init__(self, head: Sequence[str], parent: list[str], tail: Sequence[str]) -> None:
        super().__init__()
        self._head = tuple(head)
        self._parent = parent
        self._tail = tuple(tail)
        self._size = len(self._head) + len(parent) + len(self._tail)

    def __len__(self) -> int:
        return self._size

    def __bool__(self) -> bool:
        return self._size > 0

    def __iter__(self) -> Iterator[str]:
        # walked without recursion (a long replay chains hundreds of summaries), and read in C: a fold
        # reads every id of the old list, a generator cost ~60 ns an id more
        links: list[SharedIds] = []
        node: list[str] = self
        while isinstance(node, SharedIds):
            links.append(node)
            node = node._parent
        parts = [link._head for link in links]
        parts.append(node)
        parts.extend(link._tail for link in reversed(links))
        return chain.from_iterable(parts)

    def __reversed__(self) -> Iterator[str]:
        return reversed(list(self))

    def __getitem__(self, index: Any) -> Any:
        if isinstance(index, slice):
            return list(self)[index]
        position = index.__index__()
        if position < 0:
            position += self._size
        if not 0 <= position < self._size:
            raise IndexError("list index out of range")
        node: list[str] = self
        while isinstance(node, SharedIds):
            if position < len(node._head):
                return node._head[position]
            position -= len(node._head)
            if position >= len(node._parent):
                return node._tail[position - len(node._parent)]
            node = node._parent
        return list.__getitem__(node, position)

    def __contains__(self, item: object) -> bool:
        return any(item == value for value in self)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, list):
            return NotImplemented
        return len(other) == self._size and all(a == b for a, b in zip(self, other, strict=True))

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = None  # type: ignore[assignment]

    def __add__(self, other: Any) -> list[str]:
        return list(self) + other

    def __radd__(self, other: Any) -> list[str]:
        return other + list(self)

    def __repr__(self) -> str:
        return repr(list(self))

    def index(self, value: Any, *args: Any) -> int:
        return list(self).index(value, *args)

    def count(self, value: Any) -> int:
        return sum(1 for item in self if item == value)

    def copy(self) -> list[str]:
        return list(self)

    def __reduce__(self) -> tuple[type, tuple[list[str]]]:
        return list, (list(self),)

    def _immutable(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise TypeError("a summary's replacedMessageIds cannot be changed")

    append = extend = insert = pop = remove = clear = sort = reverse = _immutable
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _immutable


def folded_ids(before: list[str], old: list[str] | None, after: list[str]) -> list[str]:
    """`list(dict.fromkeys(before + old + after))` (distinct ids, first seen order), sharing `old` when
    its ids are distinct and none of `before` is among them (a summary's own list always is distinct)."""
    if not old:
        return list(dict.fromkeys([*before, *(old or ()), *after]))
    seen = id_set(old)
    head = list(dict.fromkeys(before))
    if len(seen) != len(old) or not seen.isdisjoint(head):
        return list(dict.fromkeys([*before, *old, *after]))
    in_head = set(head)
    tail = [value for value in dict.fromkeys(after) if value not in seen and value not in in_head]
    return SharedIds(head, old, tail)


class IdSet:
    """A set of ids that a summary folding the last one in extends without copying it: the ids of a part
    made at once (`_whole`) and those added since (`_since`, none of them in `_whole`). `_since` is folded
    into `_whole` once it passes an eighth of it, so a new summary's set costs about what the summary adds
    (a copy of the whole set was a cost of the session's length at every summary). Never changed."""

    __slots__ = ("_whole", "_since")

    def __init__(self, whole: frozenset[str], since: frozenset[str] = frozenset()) -> None:
        self._whole, self._since = whole, since

    def __contains__(self, item: object) -> bool:
        return item in self._whole or item in self._since

    def __len__(self) -> int:
        return len(self._whole) + len(self._since)

    def __iter__(self) -> Iterator[str]:
        return chain(self._whole, self._since)

    def isdisjoint(self, other: Collection[object]) -> bool:
        return self._whole.isdisjoint(other) and self._since.isdisjoint(other)

    def issubset(self, other: IdSet) -> bool:
        return all(map(other.__contains__, self))

    def with_ids(self, ids: Iterable[str]) -> IdSet:
        """This set and `ids`."""
        since = self._since.union(i for i in ids if i not in self._whole)
        if 8 * len(since) > len(self._whole):
            return IdSet(self._whole | since)
        return IdSet(self._whole, since)


NO_IDS = IdSet(frozenset())

# The id set made last, with its list: a replay's purification reads the set of each new summary's ids,
# and its next fold the same set. A new summary's list shares the last one's (`SharedIds`), so its set is
# the last set and a few ids more (`IdSet.with_ids`), where a set made from the ids hashed every id again.
# One set only: it is the one purification holds anyway.
_LATEST: list[tuple[list[str], IdSet]] = []


def id_set(ids: list[str]) -> IdSet:
    """The set of `ids`."""
    latest = _LATEST[0] if _LATEST else None
    if latest is not None and latest[0] is ids:
        return latest[1]
    if latest is not None and extends(ids, latest[0]):
        made = latest[1].with_ids(chain(ids._head, ids._tail))  # type: ignore[attr-defined]
    else:
        made = IdSet(frozenset(ids))
    _LATEST[:] = [(ids, made)]
    return made


def extends(ids: list[str], old: list[str]) -> bool:
    """`ids` is known to hold every id of `old` (it was folded from it) without a look at them."""
    return isinstance(ids, SharedIds) and ids._parent is old
