"""The types every stage of one build shares: what a stage may read (`BuildContext`), what the build has
made so far (`Pipeline`), and the one protocol every context provider implements (`ContextProvider`,
returning a `ProviderOutcome`).

`engine.build` runs the stages and `engine.assemble` turns a finished `Pipeline` into the `BuildResult`;
both import this module and neither imports the other's internals.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import chain
from operator import attrgetter
from typing import Any, Protocol

from engine.calibration import CalibrationState
from engine.fences import FenceRegistry
from engine.messages import AiMessage
from engine.policy.model import ContextPolicy
from engine.preprocess.base import Entry, Removal
from engine.preprocess.renames import created_renames
from engine.providers.origin_positions import origin_positions
from engine.providers.state import ORDERED_FIRST, Kept, ProviderReport, State, States, kept_of
from engine.removal_index import RemovedBy
from engine.result import Event
from engine.summarizer import SummarizerPort
from engine.tokens import TokenizerPort, content_token_count
from engine.trace import TraceRecorder


@dataclass(frozen=True, slots=True)
class TruncationRule:
    fence_kind: str | None
    max_budget_fraction: float
    strategy_name: str


@dataclass(frozen=True, slots=True)
class MustKeep:
    """Core's must-keep policy: the policy's `mustKeep` group joined with fence descriptors (spec §9 D6)."""

    types: frozenset[str]
    fence_kinds: frozenset[str]
    rules: tuple[TruncationRule, ...]


@dataclass(slots=True)
class TriggerCheck:
    """Both stages of linnkit's summarization trigger, kept for the UI (the lesson of §9 D8)."""

    used: int
    available: int
    threshold: float
    precheck_passed: bool = False
    content_tokens: int | None = None
    fired: bool = False
    notes: list[str] = field(default_factory=list)
    # the states list checked and its kept states: the final order's, when nothing changed them after
    kept_of: tuple[list[State], Kept] | None = field(default=None, repr=False, compare=False)


@dataclass(frozen=True, slots=True)
class BuildContext:
    """What every stage may read: the effective policy, budget numbers, the tokenizer, the summarizer."""

    policy: ContextPolicy
    tokenizer: TokenizerPort
    total_budget: int
    avg_chars_per_token: float
    summarizer: SummarizerPort | None
    model_id: str
    now: int
    must_keep: MustKeep
    calibration: CalibrationState | None = None  # linnkit's token calibration, whether applied or not

    def estimate(self, message: AiMessage) -> int:
        return self.tokenizer.estimate_message(message, self.model_id)

    def content_tokens(self, texts: list[str]) -> int:
        """The summarization pre-check's count: tiktoken by `tokenEstimation.encoding` (linnkit's
        TOKEN_ENCODING_NAME, never the model id), as linnkit (spec §5.4, §9 D8)."""
        encoding = self.policy.token_estimation.encoding
        return content_token_count(texts, encoding, self.avg_chars_per_token, self.tokenizer)


@dataclass(frozen=True, slots=True)
class ProviderOutcome:
    """What one context provider did: its report, UI events, the `history_summary` events a host would
    persist, and (summarization only) both trigger stages' numbers."""

    report: ProviderReport
    events: tuple[Event, ...] = ()
    persisted: tuple[dict[str, Any], ...] = ()
    trigger_check: TriggerCheck | None = None


class ContextProvider(Protocol):
    """A context provider (spec §5.2): updates `states` in place within `available` tokens."""

    def __call__(self, states: list[State], available: int, ctx: BuildContext) -> ProviderOutcome: ...


@dataclass(slots=True)
class Pipeline:
    """Intermediate products of one build, handed to `engine.assemble` to make the result."""

    ctx: BuildContext
    session: list[AiMessage]
    registry: FenceRegistry | None = None
    entries: list[Entry] = field(default_factory=list)
    unscoped: list[Entry] = field(default_factory=list)  # `entries` before created ids were scoped
    # each stage's removals in stage order: the stages' own lists, read only (a copy into one list grew
    # with the history at every step; only a reader of decisions walks them)
    removal_lists: list[list[Removal]] = field(default_factory=list)
    scope: str = ""  # the id scope created messages got when preprocessing ended (`scope_created`)
    renames: dict[str, str] | None = None  # made on first need (`renamed`)
    removed_by_origin: RemovedBy | None = None  # made on first need (`engine.assemble`)
    by_origin: dict[int, State] | None = None  # made on first need (`states_by_origin`)
    by_id: dict[str, State] | None = None  # made on first need (`carriers`)
    summary_looked_up: bool = False  # `made_summary` looked for it
    summary_state: State | None = None
    states: list[State] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    strategies: list[str] = field(default_factory=list)
    summary_events: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    preprocess_done: bool = False
    trace: TraceRecorder | None = None
    traced: bool = True  # the trace will be made: each provider's event counts what it kept
    trigger_check: TriggerCheck | None = None

    def state_of_origin(self, origin: int) -> State | None:
        """`states_by_origin().get(origin)`, without that map when the states are the build's starting
        states with its own copies in their places (`States.owned`): the starting list's position of the
        origin is then theirs (`origin_positions`)."""
        states = self.states
        if self.by_origin is None and isinstance(states, States) and states.owned is not None:
            starting = states.origin.states if states.origin is not None else None
            if starting is not None and len(starting) == len(states):
                at = origin_positions(starting).get(origin)
                return None if at is None else states[at]
        return self.states_by_origin().get(origin)

    def states_by_origin(self) -> dict[int, State]:
        """Each session message's state (the last that carries it). A created summary is left out: what it
        replaced gets its own decision. Made once, when the states are final: for readers of decisions."""
        if self.by_origin is None:
            self.by_origin = {origin: s for s in self.states if s.index >= 0 for origin in s.origins}
        return self.by_origin

    def made_summary(self) -> State | None:
        """The summary this build made (the state of index -1), if any. Looked for once, when the states
        are final: for readers of decisions (a build that made one is a pass over every state)."""
        if not self.summary_looked_up:
            # only summarization makes such a state, and it persists an event when it does
            made = self.summary_events
            self.summary_state = next((s for s in self.states if s.index == -1), None) if made else None
            self.summary_looked_up = True
        return self.summary_state

    def carriers(self) -> dict[str, State]:
        """Each state by its message's id (the last, when ids repeat): what a removal's carrier names. Made
        once, when the states are final: for readers of decisions."""
        if self.by_id is None:
            self.by_id = {s.message.id: s for s in self.states}
        return self.by_id

    def last_removals(self) -> dict[int, Removal]:
        """Each removed session message's last removal (the last stage's, when several removed it), its
        carrier named as the stage named it (`renamed` gives the scoped id)."""
        return {origin: r for r in chain.from_iterable(self.removal_lists) for origin in r.origins}

    @property
    def renamed(self) -> dict[str, str]:
        """Each created id as the stages made it → as scoped when preprocessing ended. Made when first read:
        only a reader of decisions needs it."""
        if self.renames is None:
            self.renames = created_renames(self.entries, self.scope)
        return self.renames


_INDEX, _TYPE = attrgetter("index"), attrgetter("message.type")


def final_order(states: list[State], kept: Kept | None = None) -> list[State]:
    """Kept states: system_prompt, then summaries, then the rest, each by originalIndex (spec §5.5). `kept`:
    the kept states in list order, when already known. The usual case is read in C: the kept states
    already in index order, the system prompts and summaries first (a long default-policy build keeps
    thousands); in a build's own states whose positions never moved (`States.owned`), each state's index
    is its position, so list order is index order. A span's twins are never of the types put first, so
    those are counted among the others only."""
    kept = kept_of(states) if kept is None else kept
    ordered = kept.states
    if getattr(states, "owned", None) is None:
        indices = list(map(_INDEX, ordered))
        if indices != sorted(indices):
            ordered = sorted(ordered, key=_INDEX)  # stable, as the sort by (block, index) is
    counted = ordered if kept.unspanned is None else kept.unspanned
    types = list(map(_TYPE, counted))
    prompts, summaries = types.count(ORDERED_FIRST[0]), types.count(ORDERED_FIRST[1])
    first = list(map(_TYPE, ordered[: prompts + summaries]))
    if first == [ORDERED_FIRST[0]] * prompts + [ORDERED_FIRST[1]] * summaries:
        return ordered
    return sorted(ordered, key=_block)


def _block(state: State) -> int:
    kind = state.message.type
    return ORDERED_FIRST.index(kind) if kind in ORDERED_FIRST else len(ORDERED_FIRST)
