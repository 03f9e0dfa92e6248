"""Lists that know which other lists they start like, so a replay's step tells "the same items and more"
without comparing the items.

A replay's step hands the engine the last step's history and a few messages more, and each stage's output
is the last step's and a few entries more. Comparing such lists item by item (in C) was most of what a
step's cost grew by with the session's length. A list made here (`grown`, `head`) is never changed while
anyone but this module holds it (one made by `cut` is only appended to, by its maker), and belongs to a
line: every list of a line is a prefix of the line's longest (its tip), so two lists of one line share
their first `min(len)` items without a look at them. A list joins a line only when it is made from the
line's tip by appending, or is a prefix of a member; any other list starts a line of its own.

The lists stay plain lists (a list subclass is copied item by item where a list is copied in one go):
their lines are kept beside them, for the most recent lists made. An older list is one of no known line,
compared as any list is.

A list that only this module still holds can never be seen again, so it may change: the newest few such
lists are kept as spares, and a list grown or forked from a list whose line (or a line it forked from) a
spare belongs to is made from that spare, cut where the two may differ and extended, instead of copying
the whole list and freeing the spare. A replay's step makes six lists of the session's length (the step
list, its entries, compression's output, the scoped output, the counts, the starting states), and the
spares, a few steps old, lack only the last few items; on a long session the copies' cold reads were a
third of a step.
"""

from __future__ import annotations

import sys
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from typing import Any

from engine.forksafe import fork_safe_lock

KEPT = 96  # lists whose line is known: a replay makes six a step, read back a few steps later

# A scan that reads a long list at once (a session opened, a step the timeline jumps to: more than
# MARK_AFTER items) also keeps a scan of the list without its last MARK_BACK items. A build of an earlier
# step (the timeline going back) goes on from that mark instead of reading the list again. Used by
# `engine.hygiene` and by working memory's grouping; a replay's steps read a few items each.
MARK_AFTER, MARK_BACK = 4096, 1024

_HELD_HERE_ONLY = 2  # sys.getrefcount of a list only `_LINES` holds: its tuple and the call's argument
# lists nobody holds, kept to be extended (a replay's step lets go about six, of several lines). With 24, a
# user input's step, whose lists fork from older lines, found none for five of them at 32,000 messages:
# five copies and five lists let go of the session's length at each; from 32 on, none
SPARES = 32
_ANCESTRY = 4  # lines looked through for a spare: a list's own and those it forked from
PER_LINE = 3  # spares kept of one line (with two, compression's prefix at a user input found none: a copy)
# The sweep for lists nobody holds any more runs every SWEEP_EVERY lists kept, and when no spare lacks
# fewer than CLOSE items of the list to make (a replay's spares lack a few steps' items)
SWEEP_EVERY, CLOSE = 8, 1024
_kept_since_sweep = 0
_LOCK = fork_safe_lock()  # two threads extending one tip: only the first joins the line


class _Line:
    __slots__ = ("tip", "parent", "fork")

    def __init__(self, tip: int, parent: _Line | None = None, fork: int = 0) -> None:
        self.tip = tip  # the length of the line's longest list
        # a line forked from another: its lists share their first `fork` items with the parent's
        self.parent, self.fork = parent, fork


# id of a list -> (the list, kept alive so its id is not reused while it is here, its line); oldest first
_LINES: dict[int, tuple[list[Any], _Line]] = {}
# lists only this module holds, by the line they were of (up to PER_LINE each, shortest first); the lines
# whose spares came first come first
_SPARES: dict[_Line, list[list[Any]]] = {}


def _line(items: Sequence[Any]) -> _Line | None:
    """`items`' line, if known; a list asked about is kept as if just made (a compressor's plan is read
    at every step until the next user input, however many steps later that is)."""
    held = _LINES.get(id(items))
    if held is None or held[0] is not items:
        return None
    with _LOCK:
        if _LINES.get(id(items)) is held:
            del _LINES[id(items)]
            _LINES[id(items)] = held
    return held[1]


def _keep(items: list[Any], line: _Line) -> None:
    """Called under `_LOCK`."""
    global _kept_since_sweep
    _LINES[id(items)] = (items, line)
    if len(_LINES) > KEPT:
        del _LINES[next(iter(_LINES))]
    _kept_since_sweep += 1
    if _kept_since_sweep >= SWEEP_EVERY:
        _sweep()


def _sweep() -> None:
    """A list nobody else holds can never be asked about: it becomes a spare, to be extended (`_start`).
    Of one line's spares the PER_LINE longest are kept, and SPARES in all, those of the lines whose spares
    came first let go first, with the entries only they hold (kept alive, up to KEPT lists of a long
    session's length were ~9 MB at 100,000 messages). Called under `_LOCK`."""
    global _kept_since_sweep
    _kept_since_sweep = 0
    dead = [key for key, held in _LINES.items() if sys.getrefcount(held[0]) <= _HELD_HERE_ONLY]
    if not dead:
        return
    for items, line in map(_LINES.pop, dead):
        spares = _SPARES.setdefault(line, [])
        # of one line's spares the longest serve wherever a shorter one would: past PER_LINE, let go
        spares.insert(bisect_right(spares, len(items), key=len), items)
        del spares[:-PER_LINE]
    extra = sum(map(len, _SPARES.values())) - SPARES
    while extra > 0:
        oldest = next(iter(_SPARES))
        spares = _SPARES[oldest]
        let_go = min(extra, len(spares))
        del spares[:let_go]
        extra -= let_go
        if not spares:
            del _SPARES[oldest]


def _closest(known: dict[_Line, int]) -> tuple[_Line | None, int, int]:
    """The line and position in `_SPARES` of the spare sharing the most items with the list `known`
    describes, and how many (None, -1, 0: none)."""
    chosen, at, best = None, -1, 0
    for line, shared in known.items():
        for index, items in enumerate(_SPARES.get(line, ())):
            alike = min(len(items), shared)
            if alike > best:
                chosen, at, best = line, index, alike
    return chosen, at, best


def _start(base: Sequence[Any], line: _Line | None, size: int) -> list[Any]:
    """A new list holding `base[:size]`: the spare that starts most like `base` (by its lines: a member of
    `base`'s line, or of a line it forked from up to the fork), cut there and extended to `size`, else a
    copy. Called under `_LOCK`."""
    known: dict[_Line, int] = {}  # a line of `base`'s ancestry -> how many items its lists share with `base`
    shared = size
    while line is not None and len(known) < _ANCESTRY:
        known[line] = shared
        line, shared = line.parent, min(shared, line.fork)
    chosen, at, best = _closest(known)
    if known and (chosen is None or best + CLOSE < size):  # none lacks only a few items: any let go since?
        _sweep()
        chosen, at, best = _closest(known)
    if chosen is None:
        out = base[:size]
        return out if type(out) is list else list(out)
    spares = _SPARES[chosen]
    spare = spares.pop(at)
    if not spares:
        del _SPARES[chosen]
    del spare[best:]
    spare.extend(base[best:size])
    return spare


def grown(base: Sequence[Any], more: Iterable[Any]) -> list[Any]:
    """`base` and then `more`, as a new list in `base`'s line when `base` is that line's longest."""
    more = more if type(more) is list else list(more)  # read before the lock: it may be lazy
    line = _line(base)
    with _LOCK:
        out = _start(base, line, len(base))
        out.extend(more)
        if line is not None and line.tip == len(base):
            line.tip = len(out)
        else:
            line = _Line(len(out))
        _keep(out, line)
    return out


def head(base: Sequence[Any], size: int) -> list[Any]:
    """`base[:size]`, in `base`'s line (a prefix of a member is a prefix of the tip)."""
    line = _line(base)
    with _LOCK:
        out = _start(base, line, size)
        _keep(out, line or _Line(len(out)))
    return out


def forked(base: Sequence[Any], keep: int, more: Iterable[Any]) -> list[Any]:
    """`base[:keep]` and then `more`, as a new line known to share its first `keep` items with `base`'s
    (a compressor's output when a group's fate changed: the next stage compares only from there)."""
    more = more if type(more) is list else list(more)
    parent = _line(base)
    with _LOCK:
        out = _start(base, parent, keep)
        out.extend(more)
        _keep(out, _Line(len(out), parent, keep) if parent is not None else _Line(len(out)))
    return out


def cut(base: Sequence[Any], keep: int) -> list[Any]:
    """`base[:keep]`, in a line forked from `base`'s at `keep`, for a maker that then only appends to it in
    place (working memory's floors and runs grow so along a replay's line): a list made from it later
    takes its first items as they were then, which appending never changes."""
    return forked(base, keep, [])


def continued(base: Sequence[Any], keep: int, more: Iterable[Any]) -> list[Any]:
    """`base[:keep]` and then `more`: grown when `keep` is all of `base`, else forked."""
    return grown(base, more) if keep == len(base) else forked(base, keep, more)


def shared_at_least(a: Sequence[Any], b: Sequence[Any]) -> int:
    """How many items `a` and `b` are known to share at the start without a look at them: all of the
    shorter one's in one line, up to the fork when one's line forked from the other's, else 0."""
    la, lb = _line(a), _line(b)
    if la is None or lb is None:
        return 0
    size = min(len(a), len(b))
    if la is lb:
        return size
    if lb.parent is la:
        return min(lb.fork, size)
    if la.parent is lb:
        return min(la.fork, size)
    return 0


def known(items: Sequence[Any]) -> bool:
    """`items` was made here (and is never changed) and is one of the recent lists."""
    return _line(items) is not None


def same_line(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """True when the shorter of `a` and `b` is known to be the start of the other (the same objects)."""
    line = _line(a)
    return line is not None and line is _line(b)


def forget() -> None:
    with _LOCK:
        _LINES.clear()
        _SPARES.clear()
