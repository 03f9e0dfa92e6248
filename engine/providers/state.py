"""The per-message state every provider reads and updates (spec §5, step 3).

A build starts from states shared with other builds of the same messages (`engine.stage_cache`: a replay's
next step, a rebuild after an edit): a provider takes its own copy (`own`) before it changes one, so making
a build's states costs a list copy and one copy per state changed, not one object per message."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from itertools import compress
from operator import attrgetter
from typing import Any, TypeVar

from engine.lanes import LaneLists
from engine.lineage import continued
from engine.messages import AiMessage

SKIP = "skip"
KEEP_CORE = "keep_core"
KEEP_WM = "keep_working_memory"

# the message types the final order puts first, in this order (spec §5.5)
ORDERED_FIRST = ("system_prompt", "history_summary")

CORE_CONTEXT = "CORE_CONTEXT"
WORKING_MEMORY = "WORKING_MEMORY"
CHECKPOINT = "CHECKPOINT"
CHECKPOINT_PURGED = "CHECKPOINT_PURGED"
SUMMARIZATION = "SUMMARIZATION"


@dataclass(slots=True)
class State:
    message: AiMessage
    index: int  # originalIndex: position in the preprocessed list, -1 for a new summary
    origins: tuple[int, ...]  # session message indices this state carries
    tokens: int
    action: str = SKIP
    phase: str | None = None
    strategy: str | None = None
    processed: AiMessage | None = None  # the message with processed (truncated) content
    replacement_source_ids: list[str] | None = None
    truncation: dict[str, Any] | None = None
    kept: bool = False  # action starts with keep_; a plain field because every provider reads it often
    shared: bool = field(default=False, compare=False)  # a starting state other builds read: never changed

    @property
    def current(self) -> AiMessage:
        """The message as it will be sent: processed content when non-empty, else the original."""
        if self.processed is not None and self.processed.content:
            return self.processed
        return self.message

    def keep(self, action: str, phase: str, strategy: str) -> None:
        if self.shared:
            raise RuntimeError(f"state {self.index} is shared with other builds: `own` it before changing it")
        self.action, self.phase, self.strategy, self.kept = action, phase, strategy, True

    def drop(self, phase: str, strategy: str) -> None:
        if self.shared:
            raise RuntimeError(f"state {self.index} is shared with other builds: `own` it before changing it")
        self.action, self.phase, self.strategy, self.kept = SKIP, phase, strategy, False


def own(states: list[State], position: int) -> State:
    """The state at `position`, this build's own: a shared state (a starting state, or a kept twin that
    working memory placed, `engine.providers.text_runs`) is replaced by a copy first."""
    state = states[position]
    if state.shared:
        state = states[position] = State(
            state.message, state.index, state.origins, state.tokens, state.action, state.phase,
            state.strategy, state.processed, state.replacement_source_ids, state.truncation, state.kept,
        )  # fmt: skip
        if isinstance(states, States) and states.owned is not None:
            states.owned.append(position)
    return state


def starting_states(
    entries: list, tokens: list[int], base: list[State] | None = None, start: int = 0
) -> list[State]:
    """Shared starting states for `entries` (their message, position, origins and count): `base`'s first
    `start` (made for the same entries and counts), then new ones; in the line of `base`
    (`engine.lineage`: made from a spare of it, not by copying the history's states)."""
    start = start if base else 0
    fresh = [
        State(e.message, i, e.origins, t, shared=True)
        for i, e, t in zip(range(start, len(entries)), entries[start:], tokens[start:], strict=True)
    ]
    return continued(base, start, fresh) if base and start else fresh


@dataclass(slots=True)
class ProviderReport:
    """What one provider did, for the trace's provider event."""

    name: str
    skipped: bool = False
    tokens_used: int = 0
    strategies: list[str] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class Span:
    """A run of kept twins working memory placed (`engine.providers.text_runs`): their positions, ascending,
    the twins (shared, so never changed: a provider `own`s one first, and its position joins `owned`), the
    sum of their counts, and `content(counter)`: the sum of `counter.precise_count` over their messages'
    contents (the summarization check's count), None when it cannot be told without them.

    The run is items `start..stop-1` of the three lists, which are working memory's own (read, never
    changed below `stop`): slices of them were three passes over the run at every step."""

    positions: list[int]
    twins: list[State]
    tokens: int
    content: Callable[[Any], int | None]
    ids: list[int]  # the twins' `id`s (int objects shared from step to step: compared by identity first)
    start: int
    stop: int


@dataclass(frozen=True, slots=True)
class Origin:
    """The shared starting list a build's states were copied from (`engine.stage_cache`), and the earlier
    starting list whose first `shared` states it took over, the very objects (None: made afresh)."""

    states: list[State]
    earlier: list[State] | None = None
    shared: int = 0


class States(list[State]):
    """The states of one build, with the token list they were made from. `engine.stage_cache` hands the same
    list object to every build of the same preprocessed messages, so what a provider derives from the states
    as they start (working memory's candidate floors) can be kept by its identity."""

    __slots__ = ("initial_tokens", "grown_from", "owned", "spans", "origin")

    def __init__(
        self,
        states: list[State],
        initial_tokens: list[int],
        grown_from: tuple[list[int], int] | None = None,
        *,
        starting: bool = False,  # every state is a shared starting state (`engine.stage_cache`)
        origin: Origin | None = None,  # where those came from (working memory's runs trust twins by it)
    ) -> None:
        super().__init__(states)
        self.origin = origin
        self.initial_tokens = initial_tokens
        # the token list whose first k counts `initial_tokens` took over for the same entries, and k
        self.grown_from = grown_from
        # The positions whose shared starting state this build replaced by its own (`own`); None once the
        # list was changed otherwise (a summary's states). With the runs of kept twins working memory
        # placed (`spans`), these are the only states that can be kept (a starting state never is): a long
        # build reads them instead of every state (`kept_of`).
        self.owned: list[int] | None = [] if starting else None
        self.spans: list[Span] = []


_KEPT, _TOKENS = attrgetter("kept"), attrgetter("tokens")


T = TypeVar("T")


def derived(
    held: LaneLists[tuple[list[int], Hashable, Any]],
    states: list[State],
    key: Hashable,
    make: Callable[[int, Any], T],
) -> T:
    """What a provider derives from a build's starting states (`make(start, base)`), kept in `held` per set
    of them (by the identity of `States.initial_tokens`) and per `key`. A set grown from one held
    (`States.grown_from`: its first `start` states are those) gets `make(start, what was derived for it)`,
    so only its new states are read; any other set `make(0, None)`, and states that are not a build's
    starting states (or were changed since) are not kept. `held` only ever gets whole new items: safe
    across threads, like the other caches."""
    initial = states.initial_tokens if isinstance(states, States) else None
    if initial is None or len(initial) != len(states):
        return make(0, None)
    grown = states.grown_from
    base = None
    for tokens, held_key, value in held.items():
        if held_key != key:
            continue
        if tokens is initial:
            return value
        if grown is not None and tokens is grown[0]:
            base = value
    value = make(grown[1], base) if base is not None else make(0, None)
    held.add((initial, key, value))
    return value


@dataclass(frozen=True, slots=True)
class Kept:
    """A build's kept states in list order, the sum of their counts, and those of them that are not in a
    span (None: not told apart, every state was read)."""

    states: list[State]
    tokens: int
    unspanned: list[State] | None
    spans: list[Span] = field(default_factory=list)  # those taken as slices, when told apart
    ids: list[int] | None = None  # the `id` of each of `states`, when told apart

    def spans_content(self, counter: Any) -> int | None:
        """The spans' content counts by `counter` (`Span.content`); None when not told apart or unknown."""
        if self.unspanned is None:
            return None
        total = 0
        for span in self.spans:
            count = span.content(counter)
            if count is None:
                return None
            total += count
        return total


def kept_states(states: list[State]) -> list[State]:
    """The kept states, in list order (`kept_of`)."""
    return kept_of(states).states


def kept_of(states: list[State]) -> Kept:
    """The kept states. Of a build's states (`States.owned`), only those it owned are read, and a span is
    taken as a slice: a long default-policy build keeps thousands of 64,000, nearly all in spans."""
    owned = states.owned if isinstance(states, States) else None
    if owned is None:
        kept = list(compress(states, map(_KEPT, states)))
        return Kept(kept, sum(map(_TOKENS, kept)), None)
    positions = sorted(set(owned))  # `owned` may list a position twice
    spans = sorted(states.spans, key=_first)
    out: list[State] = []
    ids: list[int] = []
    unspanned: list[State] = []
    tokens = 0
    at = 0  # the next of `positions`
    for span in spans:
        taken, stop = span.start, span.stop
        last = span.positions[stop - 1]
        while at < len(positions) and positions[at] <= last:
            cut = bisect_left(span.positions, positions[at], taken, stop)
            if span.positions[cut] == positions[at]:  # a twin owned since: read every owned position
                spanned = [p for s in spans for p in s.positions[s.start : s.stop]]
                return _kept_read(states, positions + spanned)
            out += span.twins[taken:cut]
            ids += span.ids[taken:cut]
            state = states[positions[at]]
            if state.kept:
                out.append(state)
                ids.append(id(state))
                unspanned.append(state)
                tokens += state.tokens
            taken, at = cut, at + 1
        out += span.twins[taken:stop]
        ids += span.ids[taken:stop]
        tokens += span.tokens
    for position in positions[at:]:
        state = states[position]
        if state.kept:
            out.append(state)
            ids.append(id(state))
            unspanned.append(state)
            tokens += state.tokens
    return Kept(out, tokens, unspanned, spans, ids)


def _kept_read(states: list[State], positions: list[int]) -> Kept:
    candidates = list(map(states.__getitem__, sorted(set(positions))))
    kept = list(compress(candidates, map(_KEPT, candidates)))
    return Kept(kept, sum(map(_TOKENS, kept)), None)


def _first(span: Span) -> int:
    return span.positions[span.start]


def kept_tokens(states: list[State]) -> int:
    return kept_of(states).tokens
