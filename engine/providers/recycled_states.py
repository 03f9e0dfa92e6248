"""A build's states list, made from the list of an earlier build that nobody holds any more.

Every build copies its shared starting states into a list of its own (`States`), which its providers change
in place. On a long default-policy replay that list is the session's length: its copy, and the free of the
list a few steps older, were two passes over every message at every step while the build itself reads only
what fits in the budget. An earlier build's list differs from its own starting states only where a provider
changed it, and those places are known: the positions it owned (`States.owned`) and the ranges where
working memory placed runs of kept twins (`States.spans`). So such a list, once no result holds it, is put
back to its starting states there, cut where its starting list and the new one part, and extended: a pass
over what fits in the budget and the new messages, not over the session.

A list whose positions moved (a summary's, `owned` None) is not taken. Lists are taken under a lock and only
when the reference count shows that only this module holds them: no result, cache or thread can see the
list change.
"""

from __future__ import annotations

import sys

from engine.forksafe import fork_safe_lock
from engine.lanes import current_lane
from engine.lineage import CLOSE, shared_at_least
from engine.providers.state import Origin, State, States

KEPT = 4  # per memory lane, the lists of its most recent builds (a replay's step holds its own and the last)
_HELD_HERE_ONLY = 3  # sys.getrefcount of a list only `_RECENT` holds, in `_recycled`: its lane's list, the
# loop's name for it and the call's argument
_RECENT: dict[str, list[States]] = {}  # per memory lane (`engine.lanes`), oldest first
_LOCK = fork_safe_lock()


def build_states(origin: Origin, tokens: list[int], grown_from: tuple[list[int], int] | None) -> States:
    """The states a build starts from: `origin.states` in a list of the build's own (`States`)."""
    with _LOCK:
        recent = _RECENT.setdefault(current_lane(), [])
        states = _recycled(recent, origin.states)
        if states is None:
            states = States(origin.states, tokens, grown_from, starting=True, origin=origin)
        else:
            states.initial_tokens, states.grown_from, states.origin = tokens, grown_from, origin
            states.owned, states.spans = [], []
        recent.append(states)
        del recent[:-KEPT]
    return states


def _recycled(recent: list[States], starting: list[State]) -> States | None:
    """The list of `recent` (the lane's) that nobody else holds and that shares the most with `starting`, put
    back to it (None: none can be). Only a list that lacks or holds at most `CLOSE` states past the part they
    share is taken: putting back a list of a step far before or after this one costs a copy, and cutting a
    long list short holds the lock while it frees the cut part. Called under `_LOCK`."""
    best, best_shared = -1, 0
    for at in range(len(recent)):  # not `enumerate`: its reused tuple would hold a reference too
        spare = recent[at]
        if sys.getrefcount(spare) > _HELD_HERE_ONLY or spare.owned is None or spare.origin is None:
            continue
        was = spare.origin.states
        shared = len(starting) if was is starting else shared_at_least(was, starting)
        if len(spare) - shared > CLOSE or len(starting) - shared > CLOSE:
            continue  # another step's list (the TUI's series beside its main build): no cheaper than a copy
        if shared > best_shared:
            best, best_shared = at, shared
    if best < 0:
        return None
    spare = recent.pop(best)
    _restore(spare, starting, best_shared)
    return spare


def _restore(spare: States, starting: list[State], shared: int) -> None:
    """Make `spare` hold `starting`'s states: its first `shared` are those of the list it was made from,
    changed only at the positions it owned and in its spans' ranges."""
    for span in spare.spans:
        low = span.positions[span.start]
        high = min(span.positions[span.stop - 1] + 1, shared)
        if low < high:
            spare[low:high] = starting[low:high]
    for position in spare.owned or ():
        if position < shared:
            spare[position] = starting[position]
    del spare[shared:]
    spare.extend(starting[shared:])


def forget() -> None:
    with _LOCK:
        _RECENT.clear()
