"""The session messages of one type that a build's wire carries, state by state, taken over from the last
build's answer in runs (`engine.matched_runs`).

`BuildResult.sent_as_written` (a replay's cost asks it for the user requests at every step) reads, for each
wire state, which of the session messages it carries are of the type asked, and whether its decision reason
is a summary's. A replay's consecutive steps put nearly the same states on the wire, the very objects (a
state other builds share is never changed: a provider `own`s a copy first), so each run of states the last
build also sent takes that build's answer as slices, and only the other states are read. The answer holds
for the same positions of the same session list, or of a list of its line (`engine.lineage`: the same
messages up to the shorter one's length, and a state of both builds carries origins below both lengths).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import accumulate

from engine.lanes import LaneLists
from engine.lineage import same_line
from engine.matched_runs import matched_runs
from engine.messages import AiMessage
from engine.providers.state import State
from engine.trace import decision_reason


@dataclass(frozen=True, slots=True)
class WireOrigins:
    """Per wire state in wire order, its origins of one type (none for a summary made in this build), and per
    such origin whether its state's decision reason is not a summary's (its decision when no preprocessor
    removed it)."""

    origins: list[int]
    own_written: list[bool]
    counts: list[int]  # per wire state, how many of `origins` are its


@dataclass(frozen=True, slots=True)
class _Held:
    session: Sequence[AiMessage]
    kind: str
    states: list[State]  # held, so that no id of `ids` is reused while this is kept
    ids: list[int]
    found: WireOrigins


_HELD: LaneLists[_Held] = LaneLists(2)  # per lane, the last answers (a replay's cost asks for one type)


def wire_origins(
    session: Sequence[AiMessage], states: list[State], kind: str, ids: list[int] | None = None
) -> WireOrigins:
    """The origins of type `kind` the wire `states` carry (`ids`: each state's `id`, when known)."""
    ids = [id(state) for state in states] if ids is None else ids
    held = next((h for h in _HELD.items() if h.kind == kind and _same_messages(h.session, session)), None)
    found = WireOrigins([], [], [])
    if held is None:
        for state in states:
            _read(session, state, kind, found)
    else:
        _take_runs(session, states, ids, kind, held, found)
    _HELD.add(_Held(session, kind, states, ids, found))
    return found


def _same_messages(a: Sequence[AiMessage], b: Sequence[AiMessage]) -> bool:
    return a is b or same_line(a, b)


def _take_runs(
    session: Sequence[AiMessage],
    states: list[State],
    ids: list[int],
    kind: str,
    held: _Held,
    found: WireOrigins,
) -> None:
    last = held.found
    starts: list[int] | None = None  # where each of the last states' origins start in `last.origins`
    for position, start, length in matched_runs(ids, held.ids):
        if start < 0:
            _read(session, states[position], kind, found)
            continue
        if starts is None:
            starts = [0, *accumulate(last.counts)]
        first, end = starts[start], starts[start + length]
        found.origins.extend(last.origins[first:end])
        found.own_written.extend(last.own_written[first:end])
        found.counts.extend(last.counts[start : start + length])


def _read(session: Sequence[AiMessage], state: State, kind: str, found: WireOrigins) -> None:
    mine = [o for o in state.origins if session[o].type == kind] if state.index >= 0 else []
    if mine:
        found.origins.extend(mine)
        found.own_written.extend([_not_summarized(state)] * len(mine))
    found.counts.append(len(mine))


def _not_summarized(state: State) -> bool:
    return "summar" not in decision_reason(state)


def forget() -> None:
    _HELD.clear()
