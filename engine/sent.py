"""What a build sends (spec §5.5-5.6): the final states' messages, their counts, their wire form and the
budget category each counts in.

A long default-policy build keeps thousands of messages, and a replay's next step or a rebuild after an edit
keeps nearly the same states: a replay's consecutive steps share all but about twenty of them, in a handful
of runs. So the last build's figures are kept per final state (`_Last`), a run of states the last build also
sent in the same order takes its figures as slices (compared and copied in C), and only the other states are
read one by one, their message's wire form and categories looked up by the message's identity (`_ROWS`).
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any

from engine.fences import FenceRegistry
from engine.lanes import LaneLists
from engine.matched_runs import FEW, NO_ID, matched_runs
from engine.messages import AiMessage
from engine.providers.state import KEEP_CORE, State
from engine.tokens import TokenizerPort
from engine.wire import format_message


@dataclass(slots=True)
class Sent:
    messages: list[AiMessage] = field(default_factory=list)  # each final state's message as sent: read only
    tokens: int = 0  # their count
    wire: list[dict[str, Any]] = field(default_factory=list)  # the formatted messages, shared: read only
    by_category: dict[str, int] = field(default_factory=dict)  # the count per budget category
    unformatted: list[State] = field(default_factory=list)  # kept states the wire formatter drops
    ids: list[int] = field(default_factory=list)  # each final state's `id`: read only
    state_tokens: list[int] = field(default_factory=list)  # each final state's own count: read only

    def positions(self, final: list[State]) -> list[int | None]:
        """Each final state's wire index (None: the formatter dropped it)."""
        if not self.unformatted:
            return list(range(len(final)))
        dropped = set(map(id, self.unformatted))
        out: list[int | None] = []
        index = 0
        for state in final:
            if id(state) in dropped:
                out.append(None)
            else:
                out.append(index)
                index += 1
        return out


@dataclass(frozen=True, slots=True)
class _Last:
    """The last build's figures per final state, for the next build to take runs of."""

    final: list[State]  # held so that no id below is reused while this is kept (a build's: never changed)
    ids: list[int]
    messages: list[AiMessage]
    tokens: list[int]
    state_tokens: list[int]
    categories: list[str]
    formatted: list[dict[str, Any] | None]
    sums: dict[str, int]  # tokens per category over all of `final`
    registry: FenceRegistry | None
    tokenizer: TokenizerPort
    model_id: str
    # positions whose figures may differ in another build: a state no other build shares (it may change),
    # and those whose wire form needs the registry or whose count needs the tokenizer, when those differ
    own: list[int]
    fenced: list[int]
    estimated: list[int]
    unformatted: list[int]


# per memory lane (the TUI's step series apart from the user's rebuilds), the last build's; replaced whole
_LAST: LaneLists[_Last] = LaneLists(1)


def sent(
    final: list[State],
    registry: FenceRegistry | None,
    tokenizer: TokenizerPort,
    model_id: str,
    ids: list[int] | None = None,
) -> Sent:
    """`final` (the kept states in final order) as sent. A state a provider processed (truncated) counts its
    message as sent (estimated by `tokenizer`), and so does a message with top-level call fields
    (`_counted_final`); any other its starting count. `ids`: each final state's `id`, when known."""
    last = _LAST.newest()
    ids = list(map(id, final)) if ids is None else ids
    figures = _Figures()
    if last is None or len(final) < FEW:
        for position, state in enumerate(final):
            figures.add(position, state, registry, tokenizer, model_id)
        sums = figures.sums_of_all()
    else:
        runs = _take_runs(figures, final, ids, last, registry, tokenizer, model_id)
        sums = figures.sums_after(last, runs)
    categories = figures.categories
    out = Sent(  # the lists are shared with `_LAST`, which only reads them: a copy each was a pass too many
        messages=figures.messages,
        tokens=sum(sums.values()),
        wire=[f for f in figures.formatted if f is not None] if figures.unformatted else figures.formatted,
        by_category={name: sums[name] for name in dict.fromkeys(categories)},
        unformatted=[final[p] for p in figures.unformatted],
        ids=ids,
        state_tokens=figures.state_tokens,
    )
    _LAST.add(_Last(
        final, ids, figures.messages, figures.tokens, figures.state_tokens, categories, figures.formatted,
        sums,
        registry, tokenizer, model_id, figures.own, figures.fenced, figures.estimated,
        figures.unformatted,
    ))  # fmt: skip
    return out


@dataclass(slots=True)
class _Figures:
    """A build's figures per final state, made state by state (`add`) or taken as runs (`take`)."""

    messages: list[AiMessage] = field(default_factory=list)
    tokens: list[int] = field(default_factory=list)
    state_tokens: list[int] = field(default_factory=list)  # the states' own counts (a wire card's)
    categories: list[str] = field(default_factory=list)
    formatted: list[dict[str, Any] | None] = field(default_factory=list)
    added: list[int] = field(default_factory=list)  # positions read state by state
    unformatted: list[int] = field(default_factory=list)
    own: list[int] = field(default_factory=list)
    fenced: list[int] = field(default_factory=list)
    estimated: list[int] = field(default_factory=list)

    def add(
        self,
        position: int,
        state: State,
        registry: FenceRegistry | None,
        tokenizer: TokenizerPort,
        model: str,
    ) -> None:
        processed = state.processed
        message = state.message if processed is None or not processed.content else processed
        row = _ROWS.get(id(message))
        if row is None or row[0] is not message or (row[1] and row[2] is not registry):
            if len(_ROWS) >= _ROWS_LIMIT:
                _ROWS.clear()
            row = _ROWS[id(message)] = _row(message, registry)
        if row[6] is not None:  # counted as linnkit's final message, without its top-level call fields
            tokens = tokenizer.estimate_message(row[6], model)
        elif processed is not None:
            tokens = tokenizer.estimate_message(message, model)
        else:
            tokens = state.tokens
        if row[6] is not None or processed is not None:
            self.estimated.append(position)
        if row[1]:
            self.fenced.append(position)
        if not state.shared:
            self.own.append(position)
        if row[3] is None:
            self.unformatted.append(position)
        self.added.append(position)
        self.messages.append(message)
        self.tokens.append(tokens)
        self.state_tokens.append(state.tokens)
        self.categories.append(row[4] if state.action == KEEP_CORE else row[5])
        self.formatted.append(row[3])

    def take(self, last: _Last, start: int, length: int) -> None:
        """The last build's states `start`..`start + length`, sent again from the next position on."""
        end, shift = start + length, len(self.messages) - start
        self.messages += last.messages[start:end]
        self.tokens += last.tokens[start:end]
        self.state_tokens += last.state_tokens[start:end]
        self.categories += last.categories[start:end]
        self.formatted += last.formatted[start:end]
        for mine, theirs in (
            (self.own, last.own),
            (self.fenced, last.fenced),
            (self.estimated, last.estimated),
            (self.unformatted, last.unformatted),
        ):
            mine.extend(p + shift for p in theirs[bisect_left(theirs, start) : bisect_left(theirs, end)])

    def sums_of_all(self) -> dict[str, int]:
        sums: dict[str, int] = {}
        for name, tokens in zip(self.categories, self.tokens, strict=True):
            sums[name] = sums.get(name, 0) + tokens
        return sums

    def sums_after(self, last: _Last, runs: list[tuple[int, int]]) -> dict[str, int]:
        """The sums per category: the last build's, less its states no run took, plus the states added."""
        runs.sort()
        sums = dict(last.sums)
        taken_to = 0
        for start, end in [*runs, (len(last.ids), len(last.ids))]:
            if start < taken_to:  # a state taken twice: no run order to trust
                return self.sums_of_all()
            for position in range(taken_to, start):
                sums[last.categories[position]] -= last.tokens[position]
            taken_to = end
        for position in self.added:
            name = self.categories[position]
            sums[name] = sums.get(name, 0) + self.tokens[position]
        return sums


def _take_runs(
    figures: _Figures,
    final: list[State],
    ids: list[int],
    last: _Last,
    registry: FenceRegistry | None,
    tokenizer: TokenizerPort,
    model_id: str,
) -> list[tuple[int, int]]:
    """Fill `figures` for `final`: runs the last build sent in the same order taken whole, the other states
    read; returns the runs as `(start, end)` positions of the last build."""
    known = last.ids
    stale = last.own[:]
    if registry is not last.registry:
        stale += last.fenced
    if tokenizer is not last.tokenizer or model_id != last.model_id:
        stale += last.estimated
    if stale:
        known = known[:]
        for position in stale:
            known[position] = NO_ID
    runs: list[tuple[int, int]] = []
    for position, start, length in matched_runs(ids, known):
        if start < 0:
            figures.add(position, final[position], registry, tokenizer, model_id)
        else:
            figures.take(last, start, length)
            runs.append((start, start + length))
    return runs


# id of a message -> (the message, kept so its id is not reused while held; whether its wire form depends on
# the fence registry; the registry it was made with; its wire form; its category when kept by core; else;
# the message as linnkit counts it once final when that differs, else None)
_Row = tuple[AiMessage, bool, FenceRegistry | None, dict[str, Any] | None, str, str, AiMessage | None]
_ROWS: dict[int, _Row] = {}
_ROWS_LIMIT = 20_000  # a long default-policy build sends ~2,500 messages


def forget() -> None:
    _ROWS.clear()
    _LAST.clear()


def _row(message: AiMessage, registry: FenceRegistry | None) -> _Row:
    fenced = message.type == "context_injection"
    return (
        message,
        fenced,
        registry,
        format_message(message, registry),
        category(message, core=True),
        category(message, core=False),
        _counted_final(message),
    )


_TOP_LEVEL_COUNTED = ("tool_calls", "tool_call_id")  # the fields the token counter reads off the message


def _counted_final(message: AiMessage) -> AiMessage | None:
    """linnkit makes each final message anew from its id, role, type, content, timestamp and metadata, and
    counts that: top-level `tool_calls` / `tool_call_id`, which the counter reads off an input message, are
    gone by then. The message without them when it has them, else None."""
    extra = message.extra
    if not any(key in extra for key in _TOP_LEVEL_COUNTED):
        return None
    return message.with_(extra={k: v for k, v in extra.items() if k not in _TOP_LEVEL_COUNTED})


def category(message: AiMessage, *, core: bool) -> str:
    """The budget category a kept message counts in (`core`: kept by the core provider)."""
    metadata = message.metadata or _NO_METADATA
    kind = metadata.get("fenceKind")
    if isinstance(kind, str) and kind:
        return f"fence:{kind}"
    if message.type == "history_summary":
        return "summary"
    if message.type == "user_input" and core:
        return "user"
    if (
        message.role == "tool"
        or message.type == "tool_calls"
        or metadata.get("isCompressedToolHistory")
        or metadata.get("isDegradedToolReplay")
    ):
        return "tool_history"
    return "core" if core else "working_memory"


_NO_METADATA: dict[str, Any] = {}
