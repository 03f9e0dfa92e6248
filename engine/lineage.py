"""Lists that know which other lists they start like, so a replay's step tells "the same items and more"
without comparing the items.

A replay's step hands the engine the last step's history and a few messages more, and each stage's output
is the last step's and a few entries more. Comparing such lists item by item (in C) was most of what a
step's cost grew by with the session's length. A `Grown` list is never changed after it is made, and
belongs to a line: every list of a line is a prefix of the line's longest (its tip), so two lists of one
line share their first `min(len)` items without a look at them. A list joins a line only when it is made
from the line's tip by appending, or is a prefix of a member; any other list starts a line of its own.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable, Sequence
from typing import Any

_LOCK = threading.Lock()  # two threads extending one tip: only the first joins the line


class _Line:
    __slots__ = ("tip",)

    def __init__(self, tip: int) -> None:
        self.tip = tip  # the length of the line's longest list


class Grown(list):
    """A list nobody changes once it is made (like a stage's input and output), and its line."""

    __slots__ = ("line",)

    line: _Line


def grown(base: Sequence[Any], more: Iterable[Any]) -> Grown:
    """`base` and then `more`, as a new list in `base`'s line when `base` is that line's longest."""
    out = Grown(base)
    out.extend(more)
    line = base.line if type(base) is Grown else None
    with _LOCK:
        if line is not None and line.tip == len(base):
            line.tip = len(out)
            out.line = line
            return out
    out.line = _Line(len(out))
    return out


def head(base: Sequence[Any], size: int) -> Grown:
    """`base[:size]`, in `base`'s line (a prefix of a member is a prefix of the tip)."""
    out = Grown(base[:size])
    out.line = base.line if type(base) is Grown else _Line(len(out))
    return out


def same_line(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """True when the shorter of `a` and `b` is known to be the start of the other (the same objects)."""
    return type(a) is Grown and type(b) is Grown and a.line is b.line
