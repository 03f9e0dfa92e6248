"""Each session message's position in a list of starting states (the last position carrying it).

A reader of one message's fate (a replay's cost, where its cached prefix broke) needs the state that
carries it. A build's states are its starting states with its own copies put in their places, and every
state a provider makes in a starting state's place carries that state's origins (`own`, working memory's
twins), so the position the starting list gives is the build's too. Mapped afresh, that was a pass in
Python over every state at each such step; like the starting lists themselves, a step's map is the last
one's and a few positions more: the last few lists' maps are kept, and a list that extends one of them, or
forks from it near its end (`engine.lineage`), gets a copy of its map with the cut tail's positions taken
out and its own tail's put in. A map, once handed out, is never changed.
"""

from __future__ import annotations

from engine.forksafe import fork_safe_lock
from engine.lanes import LaneLists
from engine.lineage import shared_at_least
from engine.preprocess.base import FORK_TAIL
from engine.providers.state import State

# (starting list, its map, whether no origin is carried twice); newest first
_KEPT: LaneLists[tuple[list[State], dict[int, int], bool]] = LaneLists(3)
_LOCK = fork_safe_lock()


def origin_positions(states: list[State]) -> dict[int, int]:
    """origin -> the last position in `states` whose state carries it. Read only: it may be shared."""
    base = None  # the kept list sharing the most states with `states`, and how many
    with _LOCK:
        for held, positions, unique in _KEPT.items():
            if held is states:
                return positions
            shared = shared_at_least(held, states)
            # of an origin carried twice, which position is left once the later one is cut is not known
            if unique and shared and len(held) - shared <= FORK_TAIL and (base is None or shared > base[1]):
                base = (held, shared, positions)
    if base is None:
        positions = {}
        unique = _add(states, 0, positions)
    else:
        held, shared, kept = base
        positions = dict(kept)
        for state in held[shared:]:
            for origin in state.origins:
                del positions[origin]
        unique = _add(states, shared, positions)
    with _LOCK:
        _KEPT.add((states, positions, unique))
    return positions


def _add(states: list[State], start: int, positions: dict[int, int]) -> bool:
    """Put the positions of `states[start:]` into `positions` (a later one wins); False when one of their
    origins was there already."""
    unique = True
    for position in range(start, len(states)):
        for origin in states[position].origins:
            unique = unique and origin not in positions
            positions[origin] = position
    return unique


def forget() -> None:
    with _LOCK:
        _KEPT.clear()
