"""Where a step's cached prefix broke, and which mechanism broke it.

A provider caches a prompt by its prefix: the wire messages of a step that are identical, from the start,
to the previous step's (whole messages, in the wire shape in use: OpenAI's chat messages, or Anthropic's
`system` followed by its merged turns) can be read from the cache. `wire_units` cuts a build's wire into
those units with the build's own token counts; `break_mechanism` says why the first differing unit
differs, read from the two builds' decisions and card marks, never re-derived.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple, overload

from engine.preprocess.base import common_prefix  # equal from the start: a chunk at a time, in C
from engine.result import BuildResult, Decision
from engine.wire import anthropic_turns, to_anthropic

__all__ = ["MECHANISMS", "SHAPES", "WireUnit", "WireUnits", "break_mechanism", "common_prefix", "wire_units"]

SHAPES = ("openai", "anthropic")
# what changed the first differing wire message, by id → how a reader calls it
MECHANISMS = {
    "tool_history": "tool-history compression",
    "working_memory": "working-memory drop",
    "summary": "summary",
    "checkpoint": "checkpoint",
    "fence": "fence",
    "reminder": "reminder",
    "replay_guard": "tool replay guard",
    "failed": "failed step",
    "expired": "cache expired (idle past its time to live)",
    "model": "another model (its own cache)",
    "other": "other",
}
# the first needle found in a decision's reason, strategy and phase names its mechanism
_NEEDLES = (
    ("tool_history", "tool_history"),
    ("checkpoint", "checkpoint"),
    ("summar", "summary"),  # ai_history_summarization, SUMMARIZATION, summary_replacement_cleanup
    ("fence", "fence"),  # fence_lifetime, fence-budget:<kind> truncation
    ("current_turn_message_assembly", "fence"),
    ("tool_replay_protocol_guard", "replay_guard"),
    ("working_memory", "working_memory"),
    ("budget_or_priority", "working_memory"),  # not selected by any provider: working memory's budget
)


class WireUnit(NamedTuple):
    """One wire message in the shape in use, its tokens, and the OpenAI-shaped messages it carries. A named
    tuple: a replay's cost makes one per wire message at every step (a frozen dataclass took twice as long
    to make)."""

    payload: Any
    tokens: int
    indexes: tuple[int, ...]


class WireUnits(Sequence[WireUnit]):
    """A build's wire units kept as their payloads, tokens and indexes, each `WireUnit` made when read. A
    replay's cost reads only the payloads (the last step's, to find the cached prefix) and sums of the
    tokens at every step: a unit per wire message made at every step was a fifth of a long `replay`'s time.
    Never changed once made."""

    __slots__ = ("payloads", "tokens", "_indexes")

    def __init__(
        self, payloads: Sequence[Any], tokens: list[int], indexes: Sequence[tuple[int, ...]] | None = None
    ) -> None:
        self.payloads = payloads
        self.tokens = tokens
        self._indexes = indexes  # None: unit i carries OpenAI-shaped message i alone

    def __len__(self) -> int:
        return len(self.tokens)

    @overload
    def __getitem__(self, index: int) -> WireUnit: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[WireUnit, ...]: ...

    def __getitem__(self, index: int | slice) -> WireUnit | tuple[WireUnit, ...]:
        if isinstance(index, slice):
            return tuple(map(self.__getitem__, range(*index.indices(len(self)))))
        at = range(len(self))[index]  # a negative index counted from the end; IndexError past it
        return WireUnit(self.payloads[at], self.tokens[at], self.indexes(at))

    def indexes(self, at: int) -> tuple[int, ...]:
        """The OpenAI-shaped messages unit `at` carries."""
        return (at,) if self._indexes is None else self._indexes[at]

    def counted(self, counts: Sequence[int]) -> WireUnits:
        """The same units, each with the sum of `counts` over the messages it carries."""
        if self._indexes is None:
            return WireUnits(self.payloads, list(counts[: len(self)]), None)
        return WireUnits(self.payloads, [sum(counts[i] for i in ix) for ix in self._indexes], self._indexes)


def wire_units(result: BuildResult, shape: str = "openai") -> WireUnits:
    """The build's wire as whole messages of `shape`, each with the build's token count."""
    if shape not in SHAPES:
        raise ValueError(f"wire shape {shape!r}: expected one of {', '.join(SHAPES)}")
    wire = result.wire
    if wire and not result.cards:
        raise ValueError("the cost of a step needs a detailed build (detail=True): its wire cards")
    tokens = result.wire_tokens()
    if tokens:
        tokens[-1] += result.reminder.tokens  # the reminder rides on the last wire message
    if shape == "openai":
        return WireUnits(wire, tokens)
    anthropic = to_anthropic(wire)
    payloads: list[Any] = []
    counts: list[int] = []
    indexes: list[tuple[int, ...]] = []
    system = tuple(i for i, m in enumerate(wire) if m["role"] == "system")
    if system:
        payloads.append(("system", anthropic["system"]))
        counts.append(sum(tokens[i] for i in system))
        indexes.append(system)
    for (_, carried), message in zip(anthropic_turns(wire), anthropic["messages"], strict=True):
        payloads.append(message)
        counts.append(sum(tokens[i] for i in carried))
        indexes.append(tuple(carried))
    return WireUnits(payloads, counts, indexes)


def _mechanism_of(decision: Decision) -> str:
    text = f"{decision.reason} {decision.strategy or ''} {decision.phase or ''}".lower()
    return next((mechanism for needle, mechanism in _NEEDLES if needle in text), "other")


def _changed(before: Decision, after: Decision) -> Decision:
    """Of two fates of one message, the one that names the change: a drop or replacement now, else the
    one it came back from (re-admitted), else the new keep (another phase or a truncation)."""
    for decision in (after, before):
        if not decision.kept or decision.reason.startswith("replaced_by_"):
            return decision
    return after


def break_mechanism(before: BuildResult, after: BuildResult, index: int) -> str:
    """Why OpenAI-shaped wire message `index` of `before` differs in `after`, from the builds' own records."""
    if after.error is not None:
        return "failed"
    old = before.cards[index]
    new = after.cards[index] if index < len(after.cards) else None
    if new is not None and set(old.source_ids) == set(new.source_ids):
        if "reminder" in old.marks or "reminder" in new.marks:
            return "reminder"
    sources = dict.fromkeys(old.source_ids + (new.source_ids if new is not None else ()))
    for source in sources:
        was, now = before.decision_for(source), after.decision_for(source)
        if (
            was is not None
            and now is not None
            and (was.kept, was.reason, was.strategy)
            != (
                now.kept,
                now.reason,
                now.strategy,
            )
        ):
            return _mechanism_of(_changed(was, now))
    marks = set(new.marks if new is not None else old.marks)
    if "summary" in marks:
        return "summary"
    if "compressed" in marks:
        return "tool_history"
    if marks & {"truncated"} or any(m.startswith(("fence:", "assembled:")) for m in marks):
        return "fence"
    return "other"
