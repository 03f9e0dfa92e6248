"""The one immutable result of `build_context`, rendered as is by the TUI, the notebook and the CLI.

Nothing here decides anything: the pipeline fills these records, front ends only read them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar, overload

from engine.messages import AiMessage
from engine.provider_check import check_wire

T = TypeVar("T")


class Deferred(Sequence[T], Generic[T]):
    """A tuple made on first read: a build's cards and decisions cost nothing until a reader asks.

    Reads as the tuple it makes (indexing, slicing, iteration, `==` with a tuple, `+`)."""

    __slots__ = ("_items", "_make")

    def __init__(self, make: Callable[[], Iterable[T]]) -> None:
        self._make: Callable[[], Iterable[T]] | None = make
        self._items: tuple[T, ...] | None = None

    @property
    def made(self) -> bool:
        return self._items is not None

    def items(self) -> tuple[T, ...]:
        if self._items is None:
            make, self._make = self._make, None
            self._items = tuple(make()) if make is not None else ()
        return self._items

    @overload
    def __getitem__(self, index: int) -> T: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[T, ...]: ...
    def __getitem__(self, index: int | slice) -> T | tuple[T, ...]:
        return self.items()[index]

    def __len__(self) -> int:
        return len(self.items())

    def __iter__(self) -> Iterator[T]:
        return iter(self.items())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Deferred):
            other = other.items()
        return self.items() == other if isinstance(other, tuple) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.items())

    def __add__(self, other: tuple[T, ...]) -> tuple[T, ...]:
        return self.items() + tuple(other)

    def __radd__(self, other: tuple[T, ...]) -> tuple[T, ...]:
        return tuple(other) + self.items()

    def __repr__(self) -> str:
        return repr(self.items())


# Budget-bar categories, in the order the bars stack them. Fence kinds are added as `fence:<kind>`.
CATEGORY_ORDER: tuple[str, ...] = (
    "core",
    "user",
    "fence",
    "working_memory",
    "tool_history",
    "summary",
    "reminder",
)


@dataclass(frozen=True, slots=True)
class Decision:
    """The fate of one message of the input session (or of a message the build created)."""

    index: int  # position in the session's message list; -1 for a message the build created
    message_id: str
    role: str
    type: str
    kept: bool
    stage: str  # "preprocess" | "provider" | "format"
    phase: str | None  # CORE_CONTEXT, WORKING_MEMORY, CHECKPOINT, CHECKPOINT_PURGED, SUMMARIZATION, ...
    reason: str  # kept_by_<phase> / dropped_by_<phase> / replaced_by_<strategy> / ...
    strategy: str | None  # the strategy that decided (e.g. text_conversation, tool_history_drop)
    tokens: int
    wire_index: int | None = None  # the wire message that carries it, if any
    replaced_by: str | None = None  # id of the created message that now carries its content
    note: str = ""


@dataclass(frozen=True, slots=True)
class WireCard:
    """One wire message with what a reader needs to know about where it came from."""

    index: int
    message: dict[str, Any]  # the OpenAI Chat Completions message
    message_id: str  # id of the final context message
    type: str
    tokens: int
    source_ids: tuple[str, ...]  # ids of the session messages this card carries
    marks: tuple[str, ...] = ()  # fence:<kind>, assembled, summary, compressed, degraded, truncated, reminder


class WireCards(Deferred[WireCard]):
    """A build's cards, each made when first read: a screen shows a few dozen of a long build's thousands
    (making all 4,000 of a 64,000-message build took ~13 ms). Reads as the tuple `Deferred` makes; a card
    read alone is the very object that tuple holds later."""

    __slots__ = ("_count", "_one", "_some", "_ids_of", "_ids", "_tokens_of")

    def __init__(
        self,
        count: int,
        one: Callable[[int], WireCard],
        ids_of: Callable[[], list[str]],
        tokens_of: Callable[[], list[int]],
    ) -> None:
        super().__init__(tuple)  # `items` makes them; no bound method held (a cycle outlives its result)
        self._count, self._one, self._ids_of = count, one, ids_of  # ids_of: each card's message id, in order
        self._tokens_of = tokens_of  # each card's tokens, in order
        self._some: dict[int, WireCard] = {}  # the cards read one at a time so far
        self._ids: list[str] | None = None

    def items(self) -> tuple[WireCard, ...]:
        if self._items is None:
            some, one = self._some, self._one
            self._items = tuple([some[k] if k in some else one(k) for k in range(self._count)])
        return self._items

    @overload
    def __getitem__(self, index: int) -> WireCard: ...
    @overload
    def __getitem__(self, index: slice) -> tuple[WireCard, ...]: ...
    def __getitem__(self, index: int | slice) -> WireCard | tuple[WireCard, ...]:
        if self._items is not None or isinstance(index, slice):
            return self.items()[index]
        position = range(self._count)[index]  # an IndexError as a tuple's; a negative index counts back
        card = self._some.get(position)
        if card is None:
            card = self._some[position] = self._one(position)
        return card

    def __len__(self) -> int:
        return self._count

    def tokens(self) -> list[int]:
        """Each card's `tokens`, in wire order, read without making the cards (a replay's cost reads them at
        every step; their marks and sources are for a reader of a few)."""
        if self._items is not None:
            return [card.tokens for card in self._items]
        return self._tokens_of()

    def position_of(self, message_id: str) -> int | None:
        """The wire index of the first card showing `message_id`, found without making the cards."""
        if self._ids is None:
            self._ids = self._ids_of()
        return self._ids.index(message_id) if message_id in self._ids else None


@dataclass(frozen=True, slots=True)
class Event:
    """Something a stage did that a user should see (compression, pruning, summarization, ...)."""

    kind: str
    title: str
    message_ids: Sequence[str] = ()  # a tuple, or a list `engine.lineage` made (never changed)
    data: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TokenAccount:
    """Budget numbers for the bars (spec §5.3, §6).

    `final_tokens` is linnkit's: the final context messages only. The reminder is appended after that
    count, so `by_category` (which has a `reminder` entry when one fired) sums to `used`, not to
    `final_tokens`.
    """

    max_tokens: int
    reserved_for_response: int
    total_budget: int
    wm_budget: int
    trigger_tokens: float
    summary_budget: int
    final_tokens: int
    by_category: dict[str, int]
    backend: str
    local_final_tokens: int | None = None  # final_tokens before token calibration (None: none applied)

    @property
    def used(self) -> int:
        return sum(self.by_category.values())

    @property
    def free(self) -> int:
        return self.total_budget - self.used

    @property
    def over_budget(self) -> bool:
        return self.final_tokens > self.total_budget


@dataclass(frozen=True, slots=True)
class ReminderOutcome:
    hit_rule_ids: tuple[str, ...] = ()
    texts: dict[str, str] = field(default_factory=dict)  # rule id -> the text it added
    appended_text: str | None = None  # separator + <system-reminder> block, as appended
    tokens: int = 0


@dataclass(frozen=True, slots=True)
class BuildFailure:
    code: str
    message: str
    provider_name: str = ""


def as_written(decision: Decision) -> bool:
    """The message went on the wire as itself (or merged into another message), not folded into a summary."""
    return decision.wire_index is not None and "summar" not in decision.reason


@dataclass(frozen=True, slots=True)
class WrittenOfType:
    """The session messages of one type at a build: how many, and which were sent as written (`as_written`),
    by their ranks among the type's messages (0: the first), ascending."""

    count: int
    ranks: tuple[int, ...]
    id_of: Callable[[int], str] = field(repr=False, compare=False)  # the id of the message of a rank


@dataclass(frozen=True, slots=True)
class BuildResult:
    wire: tuple[dict[str, Any], ...]
    cards: Sequence[WireCard]  # a tuple, or a Deferred one made on first read
    messages: tuple[AiMessage, ...]  # final context messages, before wire formatting
    preprocessed: Sequence[AiMessage]  # what the providers received: a tuple, or a Deferred one
    decisions: Sequence[Decision]  # a tuple, or a Deferred one made on first read
    tokens: TokenAccount
    events: tuple[Event, ...]
    trace: dict[str, Any] | None
    reminder: ReminderOutcome
    summary_events: tuple[dict[str, Any], ...] = ()  # history_summary events a host would persist
    strategies_applied: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    error: BuildFailure | None = None
    effective_policy: dict[str, Any] = field(default_factory=dict)
    summarization_check: dict[str, Any] | None = None  # both trigger stages' numbers (spec §9 D8)
    # decisions of the session messages of a type ("type", t) or of an id ("id", i), made without the rest
    # (see `decisions_of_type`, `decision_for`)
    decide: Callable[[str, str], tuple[Decision, ...]] | None = field(default=None, repr=False, compare=False)
    # `sent_as_written`, made from the wire's messages only
    written_of: Callable[[str], WrittenOfType] | None = field(default=None, repr=False, compare=False)
    # how many decisions are not kept, counted without making them (see `dropped_count`)
    count_dropped: Callable[[], int] | None = field(default=None, repr=False, compare=False)

    @property
    def ok(self) -> bool:
        return self.error is None

    @property
    def provider_problems(self) -> list[Any]:
        """Why OpenAI or Anthropic would reject this wire (`engine.provider_check`); empty if both accept."""
        return self.check_providers()

    def check_providers(self, anthropic: dict[str, Any] | None = None) -> list[Any]:
        """`provider_problems`, given the wire's Anthropic projection when the caller made it already."""
        return check_wire(self.wire, anthropic) if self.error is None else []

    @property
    def kept_ids(self) -> tuple[str, ...]:
        return tuple(m.id for m in self.messages)

    def _all_made(self) -> bool:
        return not isinstance(self.decisions, Deferred) or self.decisions.made

    def wire_tokens(self) -> list[int]:
        """Each wire message's tokens (its card's, the reminder apart), read without making the cards."""
        if isinstance(self.cards, WireCards):
            return self.cards.tokens()
        tokens = [0] * len(self.wire)
        for card in self.cards:
            tokens[card.index] = card.tokens
        return tokens

    def decisions_of_type(self, message_type: str) -> tuple[Decision, ...]:
        """The decisions of the session messages of `message_type`: cheaper than all of them when those
        were not made yet (a replay's cost reads its user requests at every step)."""
        if self._all_made() or self.decide is None:
            return tuple(d for d in self.decisions if d.index >= 0 and d.type == message_type)
        return self.decide("type", message_type)

    def sent_as_written(self, message_type: str) -> WrittenOfType:
        """Of the session messages of `message_type`, how many there are and which were sent as written:
        cheaper than all their decisions (`decisions_of_type`) when those were not made yet, as it reads
        only the messages the wire carries (a replay's cost asks it for the user requests at every step)."""
        if self._all_made() or self.written_of is None:
            of_type = self.decisions_of_type(message_type)
            ranks = tuple(rank for rank, decision in enumerate(of_type) if as_written(decision))
            return WrittenOfType(len(of_type), ranks, lambda rank: of_type[rank].message_id)
        return self.written_of(message_type)

    def dropped_count(self) -> int:
        """How many session and created messages the build did not keep (`not d.kept` over `decisions`);
        cheaper than that when the decisions were not made yet."""
        if self._all_made() or self.count_dropped is None:
            return sum(1 for d in self.decisions if not d.kept)
        return self.count_dropped()

    def decision_for(self, message_id: str) -> Decision | None:
        if not self._all_made() and self.decide is not None:
            found = self.decide("id", message_id)  # a session message's, made alone
            if found:
                return found[0]
        return next((d for d in self.decisions if d.message_id == message_id), None)

    def events_touching(self, message_id: str) -> list[Event]:
        """Events naming the message, or naming the message that now carries it."""
        decision = self.decision_for(message_id)
        ids = {message_id} | ({decision.replaced_by} if decision and decision.replaced_by else set())
        return [e for e in self.events if ids.intersection(e.message_ids)]

    def cards_carrying(self, message_id: str) -> list[int]:
        """Wire indexes of the cards that carry the message (itself, or merged into another)."""
        return [c.index for c in self.cards if message_id in c.source_ids or c.message_id == message_id]
