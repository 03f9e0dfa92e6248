"""Working memory's P2 over runs of plain text candidates, kept a run at a time.

On a long default-policy session P2 keeps thousands of messages at every step, nearly all of them plain
`text_conversation` candidates that nothing before it touched. Between two candidates that are not plain
(a thought, a summary, one core or P1 already holds) P2 keeps newest first while each fits, so what it
keeps of such a run is its newest part up to where the sum of their counts passes what is left: a search
over the run's running sums. Each plain candidate's kept state is made once per set of starting states
(its twin: kept by working memory, shared like a starting state, so a provider `own`s it before a change),
and a step keeps a run by placing those, not by making thousands of states.

The lists grow along a replay's line: the next step's set starts with this one's states, so its lists are
this set's with the new candidates appended in place (a set reads only its first `count`).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from functools import partial
from operator import attrgetter
from typing import Any

from engine.forksafe import fork_safe_lock
from engine.lineage import cut
from engine.messages import AiMessage
from engine.providers.state import KEEP_WM, ORDERED_FIRST, WORKING_MEMORY, Origin, Span, State, States

PLAIN = "text_conversation"
_MESSAGE = attrgetter("message")
_GROWING = fork_safe_lock()  # two builds growing one set's lists: only the first appends in place


@dataclass(frozen=True, slots=True)
class PlainRuns:
    """For the first `count` candidates of a set: `sums[k]` the counts of candidates `0..k-1`, `ids[k]`,
    `messages[k]` and `twins[k]` candidate k's message id, message and kept state (None: not plain),
    `special` the candidates that are not plain, ascending (its first `special_count`). A plain twin is
    never of a type the final order puts first (`engine.pipeline.final_order`). `where` holds, per id, every
    candidate any set of this line gave it, shared by them and only ever appended to: a set's are those
    below its `count` whose `ids` entry is the id (a copy of an index per set was a pass over every candidate
    at each user input's fork, and its free another).

    `made_for`: the starting list (`States.origin`) the twins were made from; `trusted`: every twin holds
    the very message its state there holds, so a build from that list places them without a look."""

    count: int
    sums: list[int]
    ids: list[str]
    messages: list[AiMessage]
    twins: list[State | None]
    special: list[int]
    special_count: int
    where: dict[str, list[int]]
    made_for: list[State] | None = None
    trusted: bool = False
    # when trusted: `made_for` with every plain candidate's twin in its place (grown in place along the line
    # as the other lists are; read below `size`), so a run is placed as one slice
    placed: list[State] | None = None
    size: int = 0
    # per content counter (`engine.tokens.content_counter`): `[k]` the sum of its count over the contents of
    # candidates `0..k-1`, made as far as asked (grown in place along the line as the other lists are)
    content: dict[Any, list[int]] = field(default_factory=dict)
    twin_ids: list[int] = field(default_factory=list)  # `id` of each twin (0: none), the same int objects

    def blocked_below(self, at: int, held: list[int]) -> int:
        """The newest candidate at or below `at` that is not plain or is in `held` (ascending), or -1."""
        special = bisect_right(self.special, at, 0, self.special_count)
        position = bisect_right(held, at)
        return max(self.special[special - 1] if special else -1, held[position - 1] if position else -1)

    def run_at(self, at: int, held: list[int], room: int, processed: set[str]) -> int | None:
        """Where P2, keeping newest first from candidate `at`, stops keeping: the oldest candidate `first`
        of the plain run ending at `at` such that `first..at` fit in `room`, stopping where the room is
        full (as P2 does: a zero-count candidate after that is not kept). `at + 1`: not even `at` fits,
        or a candidate of the run has an id a kept group holds (`processed`); None: `at` is not plain or
        is `held` (one this build changed)."""
        low = self.blocked_below(at, held) + 1
        if low > at:
            return None
        target = self.sums[at + 1] - room
        first = bisect_left(self.sums, target, low, at + 1)
        if first <= at and self.sums[first] == target:  # fills the room exactly: stop at the first to do so
            first = bisect_right(self.sums, target, first, at + 1) - 1
        if first <= at and self.holds_any(processed, first, at):
            return at + 1
        return first

    def holds_any(self, ids: set[str], first: int, at: int) -> bool:
        """Whether a candidate `first..at` has one of `ids` (a kept group's few, against thousands)."""
        for id_ in ids:
            for k in self.where.get(id_, ()):
                if first <= k <= at and self.ids[k] == id_:
                    return True
        return False

    def content_between(self, counter: Any, first: int, at: int) -> int | None:
        """The sum of `counter.precise_count` over the string contents of candidates `first..at`; None when
        one up to `at` cannot be counted (a special token in it: the check then counts the kept states one by
        one, and fails where linnkit fails)."""
        with _GROWING:
            sums = self.content.setdefault(counter, [0])
            try:
                while len(sums) <= at + 1:
                    content = self.messages[len(sums) - 1].content
                    count = counter.precise_count(content) if isinstance(content, str) else 0
                    sums.append(sums[-1] + count)
            except Exception:  # counted one by one instead, where a raise is linnkit's
                return None
            return sums[at + 1] - sums[first]

    def place(self, states: States, indices: list[int], first: int, at: int) -> int | None:
        """Keep candidates `first..at`: their twins in place, and a span of them (`States.spans`); their
        count. None, and nothing placed, when a twin holds another message than the state it would replace:
        the set's counts were taken over from an earlier set whose created messages had another id scope (a
        replay step after a summary), so its twins are that set's."""
        trusted = self.trusted and states.origin is not None and states.origin.states is self.made_for
        if trusted and self.placed is not None and states.owned is not None:
            # between the run's first and last position, `states` holds the starting states but where a
            # provider owned one (core, P1): the slice of `placed` with those put back
            low, high = indices[first], indices[at] + 1
            owned = [(p, states[p]) for p in states.owned if low <= p < high]
            states[low:high] = self.placed[low:high]
            for position, state in owned:
                states[position] = state
        else:
            run, twins = indices[first : at + 1], self.twins[first : at + 1]
            # compared in C: list equality takes the same object as equal without a look at it
            now = None if trusted else list(map(_MESSAGE, map(states.__getitem__, run)))
            if now is not None and now != self.messages[first : at + 1]:
                return None
            for position, twin in zip(run, twins, strict=True):
                states[position] = twin  # type: ignore[assignment]  # a plain candidate's twin is never None
        tokens = self.sums[at + 1] - self.sums[first]
        content = partial(self.content_between, first=first, at=at)
        states.spans.append(Span(indices, self.twins, tokens, content, self.twin_ids, first, at + 1))  # type: ignore[arg-type]
        return tokens


def plain_runs(
    states: list[State],
    tokens: list[int],
    indices: list[int],
    strategies: list[str | None],
    base: PlainRuns | None,
    kept: int,
    start: int = 0,
) -> PlainRuns | None:
    """The runs of the candidates `indices` (their `strategies`), of which the first `kept` are `base`'s,
    made for a set whose first `start` states are those of `base`'s set. None when a count is negative
    (the running sums would not grow)."""
    new = range(kept, len(indices))
    if any(tokens[indices[k]] < 0 for k in new):
        return None
    origin = states.origin if isinstance(states, States) else None
    # the twins are made from the starting states (the same messages as `states`, whose P1 may have
    # rewritten a tool output, never a plain text), so that a build from that list can trust them
    source = origin.states if origin is not None else states
    with _GROWING:
        if base is not None and base.count == kept == len(base.ids):  # the line's longest: grow in place
            sums, ids, messages, twins = base.sums, base.ids, base.messages, base.twins
            twin_ids = base.twin_ids
            special, where, content = base.special, base.where, base.content
        else:
            # a fork (a user input's): the lists' first items, made from the spares of an earlier fork
            sums = cut(base.sums, kept + 1) if base is not None else [0]
            ids = cut(base.ids, kept) if base is not None else []
            messages = cut(base.messages, kept) if base is not None else []
            twins = cut(base.twins, kept) if base is not None else []
            twin_ids = cut(base.twin_ids, kept) if base is not None else []
            special = base.special[: bisect_left(base.special, kept, 0, base.special_count)] if base else []
            where = base.where if base is not None else {}  # shared: read through `ids`
            content = {c: cut(counted, kept + 1) for c, counted in base.content.items()} if base else {}
        for k in new:
            index = indices[k]
            state, count = source[index], tokens[index]
            message = state.message
            sums.append(sums[-1] + count)
            ids.append(message.id)
            given = where.setdefault(message.id, [])
            if k not in given:  # a fork gives most of its ids the candidates the set before gave them
                given.append(k)
            messages.append(message)
            if strategies[k] == PLAIN and message.type not in ORDERED_FIRST:
                twin = State(message, state.index, state.origins, count, KEEP_WM, WORKING_MEMORY, PLAIN)
                twin.kept = twin.shared = True
                twins.append(twin)
                twin_ids.append(id(twin))
            else:
                twins.append(None)
                twin_ids.append(0)
                special.append(k)
        trusted = origin is not None and (
            not kept  # every twin made here, from `origin.states`
            or (  # the earlier twins were made from (or trusted for) the list whose states these took over
                base is not None
                and base.trusted
                and base.made_for is origin.earlier
                and indices[kept - 1] < origin.shared
            )
        )
        made_for = origin.states if origin is not None else None
        placed = _placed(base, origin, indices, twins, start) if trusted else None  # type: ignore[arg-type]
        lists = (sums, ids, messages, twins, special, len(special), where)
        return PlainRuns(len(indices), *lists, made_for, trusted, placed, len(source), content, twin_ids)


def _placed(
    base: PlainRuns | None, origin: Origin, indices: list[int], twins: list[State | None], start: int
) -> list[State]:
    """`origin.states` with each plain candidate's twin in its place: `base.placed` for the states both sets
    share (the very objects: in place when it is the line's longest), then the rest. Called under
    `_GROWING`."""
    reuse = 0
    if base is not None and base.placed is not None and base.made_for is origin.earlier:
        reuse = min(start, origin.shared)
    if reuse and reuse == base.size == len(base.placed):  # type: ignore[union-attr]
        placed = base.placed  # type: ignore[union-attr]
    else:
        placed = cut(base.placed, reuse) if reuse else []  # type: ignore[union-attr]
    placed += origin.states[reuse:]
    for k in range(bisect_left(indices, reuse), len(indices)):
        twin = twins[k]
        if twin is not None:
            placed[indices[k]] = twin
    return placed


def held_candidates(owned: list[int], indices: list[int]) -> list[int]:
    """The candidates (positions in `indices`, ascending) at the state positions `owned`: states this build
    already changed, which a run never places a twin over."""
    out = []
    for position in owned:
        k = bisect_left(indices, position)
        if k < len(indices) and indices[k] == position:
            out.append(k)
    return sorted(set(out))
