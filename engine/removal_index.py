"""Each removed session message's removal, found without a map of every removed message per build.

A replay's cost asks every step for the fates of its user requests, and a removed message's fate is its last
removal. One map per build cost a pass over every message removed so far, at every step. Here each stage's
list of removals has a map of its own, kept by the list, or by the removals it holds (a stage may hand on the
same removals in a new list). The compressor's next list holds the last one's removals and more: its map
is the last one's with the new removals added.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from operator import is_

from engine.lanes import LaneLists
from engine.preprocess.base import Removal

# a step reads two stage maps (the compressor's, the summary cleanup's) and carries the last step's
_MAPS: LaneLists[tuple[list[Removal], dict[int, Removal]]] = LaneLists(3)


class RemovedBy:
    """`get(origin)`: the removal of session message `origin` by the last stage that removed it (the last
    of that stage's, when it removed it twice), naming its carrier by the id the carrier got when
    preprocessing ended (`renamed`)."""

    __slots__ = ("_maps", "_renames", "_renamed", "_scoped")

    def __init__(self, removal_lists: list[list[Removal]], renamed: Callable[[], dict[str, str]]) -> None:
        self._maps = [stage_map(removals) for removals in reversed(removal_lists) if removals]
        # made when a removal naming a carrier is first read: a pass over every created message, which a
        # reader of kept messages' fates alone never needs
        self._renames, self._renamed = renamed, None
        self._scoped: dict[int, Removal] = {}

    def get(self, origin: int) -> Removal | None:
        for mapping in self._maps:
            removal = mapping.get(origin)
            if removal is not None:
                return self._scope(removal)
        return None

    def of(self, origins: Sequence[int]) -> list[Removal | None]:
        """`get` of each of `origins`, the maps read in C."""
        found: list[Removal | None] = [None] * len(origins)
        for mapping in reversed(self._maps):  # the earliest stage first: a later one's removal wins
            found = [g if g is not None else f for f, g in zip(found, map(mapping.get, origins), strict=True)]
        if any(r is not None and r.replaced_by is not None for r in found):
            found = [None if r is None else self._scope(r) for r in found]
        return found

    def _scope(self, removal: Removal) -> Removal:
        carrier = removal.replaced_by
        if carrier is None:
            return removal
        if self._renamed is None:
            self._renamed = self._renames()
        if carrier not in self._renamed:
            return removal
        scoped = self._scoped.get(id(removal))  # the maps hold `removal`: its id is not reused meanwhile
        if scoped is None:
            scoped = Removal(removal.origins, removal.strategy, self._renamed[carrier], removal.note)
            self._scoped[id(removal)] = scoped
        return scoped


def stage_map(removals: list[Removal]) -> dict[int, Removal]:
    """origin -> the last of `removals` that removed it. Read only: it is shared with later builds."""
    start, base = 0, None
    for held, mapping in _MAPS.items():
        if held is removals:
            return mapping
        size = len(held)
        if start < size <= len(removals) and held[0] is removals[0] and held[-1] is removals[size - 1]:
            if all(map(is_, held, removals)):  # compared in C, up to the held list's length
                start, base = size, mapping
    if base is not None and start == len(removals):
        return base
    mapping = dict(base) if base is not None else {}
    for removal in removals[start:]:
        for origin in removal.origins:
            mapping[origin] = removal
    _MAPS.add((removals, mapping))
    return mapping


def forget() -> None:
    _MAPS.clear()
