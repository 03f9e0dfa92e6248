"""How many of a build's decisions are not kept, counted without making them (the wire's title shows it after
every build; the decisions are made only when a reader asks).

The count follows `engine.assemble._fates` case by case. What it needs of the removals and of which entry
carries which session message is the same for every build of the same stage outputs (a rebuild after an
edit the stages do not read), so it is tallied once for them (`_Tally`); a build then reads its states in C:
on a 64,000-message session, 27 → 2 ms after an edit of the budget.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import compress
from operator import attrgetter, is_, not_
from typing import Any

from engine.pipeline import Pipeline
from engine.providers.state import State

_INDEX, _KEPT = attrgetter("index"), attrgetter("kept")


@dataclass(frozen=True, slots=True)
class _Tally:
    removed: int  # session messages a stage removed
    dropped: int  # of them, those no entry carries: dropped outright, or their carrier summarised in turn
    # their carriers' last positions among the entries, each once, and how many removed messages each carries
    positions: list[int]
    counts: list[int]
    no_id: int  # removed messages whose carrier's id is empty (a carrier no state can be: dropped)
    # per entry position, the session messages not removed whose last carrier it is, and their sum
    carried_by: list[int]
    carried: int
    shared: bool  # some session message is carried by two entries: count message by message


_TALLIES: list[tuple[tuple[Any, ...], str, _Tally]] = []  # the latest few, newest first


def dropped_count(run: Pipeline, final: list[State]) -> int:
    """`final`: the build's kept states. Without a summary made by the build, the states are the entries', one
    each and in order, so a state is found by its entry's position."""
    if run.summary_events or len(run.states) != len(run.entries):
        return _counted_one_by_one(run)
    tally = _tally_of(run)
    if tally.shared:
        return _counted_one_by_one(run)
    states = run.states
    dropped = tally.carried - sum(map(tally.carried_by.__getitem__, map(_INDEX, final)))
    kept = map(_KEPT, map(states.__getitem__, tally.positions))
    dropped += sum(compress(tally.counts, map(not_, kept)))  # carried by a state not kept
    dropped += tally.dropped + tally.no_id
    return dropped + len(run.session) - tally.removed - tally.carried  # neither removed nor carried


def _tally_of(run: Pipeline) -> _Tally:
    # the stage outputs, by identity; an empty removal list tallies nothing (governance makes a new one each
    # build: its stage cannot be reused, as it reads the observation store)
    key = (run.entries, *filter(None, run.removal_lists))
    for held, scope, tally in _TALLIES:
        if len(held) == len(key) and all(map(is_, held, key)) and scope == run.scope:
            return tally
    tally = _tallied(run)
    _TALLIES.insert(0, (key, run.scope, tally))
    del _TALLIES[4:]
    return tally


def _tallied(run: Pipeline) -> _Tally:
    removed = run.last_removals()
    renamed = run.renamed
    counts: dict[str | None, int] = {}
    for removal in removed.values():
        target = removal.replaced_by
        target = renamed.get(target, target) if target else target
        counts[target] = counts.get(target, 0) + 1
    no_carrier, no_id = counts.pop(None, 0), counts.pop("", 0)
    entries = run.entries
    at = {e.message.id: position for position, e in enumerate(entries)}  # an id's last entry
    present = [t for t in counts if t in at]
    dropped = no_carrier + sum(n for t, n in counts.items() if t not in at)
    last: dict[int, int] = {}
    shared = False
    for position, entry in enumerate(entries):
        for origin in entry.origins:
            shared = shared or origin in last
            last[origin] = position
    carried_by = [0] * len(entries)
    for origin, position in last.items():
        if origin not in removed:
            carried_by[position] += 1
    return _Tally(
        len(removed),
        dropped,
        [at[t] for t in present],
        [counts[t] for t in present],
        no_id,
        carried_by,
        sum(carried_by),
        shared,
    )


def _counted_one_by_one(run: Pipeline) -> int:
    """The same count over a map of each session message's carrier, for entries that share a message."""
    carriers = run.carriers()
    summarised = run.made_summary() is not None
    dropped = sum(1 for s in run.states if s.index == -1 and not s.kept)
    removed = run.last_removals()
    renamed = run.renamed
    by_origin = run.states_by_origin()
    carried = [s.kept for origin, s in by_origin.items() if origin not in removed]
    dropped += len(carried) - sum(carried)
    for removal in removed.values():
        target = removal.replaced_by
        if target:
            target = renamed.get(target, target)
        if target is None or target in carriers:
            carrier = carriers.get(target) if target else None
            dropped += carrier is None or not carrier.kept
        else:  # its carrier was summarised in turn
            dropped += not summarised
    neither = len(run.session) - len(removed) - len(carried)  # no removal and no state: summarised
    return dropped + (0 if summarised else neither)
