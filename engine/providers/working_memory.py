"""WorkingMemoryProvider (priority 2): fill the working-memory budget in three passes (spec §5.3).

P1 keeps the most recent tool groups (current-turn groups first, forced up to the minimum), P2 keeps text
newest first wherever it fits, P3 keeps older tool groups and compressed tool history. There is no P4
(spec §9 D3). A group is kept whole or not at all; an oversized one is first truncated to summaries.
"""

from __future__ import annotations

import math
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from operator import attrgetter

from engine.forksafe import fork_safe_lock
from engine.groups import GroupScan, ToolGroup, group_scan
from engine.lanes import LaneLists
from engine.lineage import MARK_AFTER, MARK_BACK, cut
from engine.messages import AiMessage
from engine.pipeline import BuildContext, ProviderOutcome
from engine.preprocess.base import ID_SCOPE
from engine.providers.state import (
    KEEP_CORE,
    KEEP_WM,
    SKIP,
    WORKING_MEMORY,
    ProviderReport,
    State,
    States,
    derived,
    kept_tokens,
    own,
)
from engine.providers.text_runs import PLAIN, PlainRuns, held_candidates, plain_runs
from engine.result import Event
from engine.tool_summary import output_text, preview_chars_for, summarize_output

NAME = "WorkingMemoryProvider"


@dataclass(slots=True)
class _Fill:
    """The running state of one working-memory pass over the states."""

    states: list[State]
    ctx: BuildContext
    budget: int
    total: int
    events: list[Event]
    strategies: list[str]
    hist_kept: int = 0
    processed: set[str] = field(default_factory=set)  # ids of messages a kept group already covers
    floors: _Floors | None = None  # made on first need


@dataclass(frozen=True, slots=True)
class _Floors:
    """What P2 and P3 may still keep, as the states start: a pass stops once nothing left fits, instead of
    reading every older message (on 10,000 messages, most of a warm rebuild's working memory).

    `text[i]` / `compressed[i]`: the fewest tokens of a P2 text candidate / a compressed tool history message
    at index <= i (inf: none). Both passes read newest first, so what is left is always a prefix. A floor
    only ever errs low for a state as the pass meets it: before working memory only core changes states
    (those it keeps, which the passes skip), and P1 and P3 rewrite tool outputs, which are neither."""

    text: list[float]
    compressed: list[float]
    compressed_indices: list[int]  # ascending (its first `compressed_count`)
    text_indices: list[int]  # the P2 candidates' indices, ascending (its first `text_count`)
    text_strategies: list[str | None]  # and their strategies (P2 reads them at every candidate)
    size: int  # the states these are for: `text` and `compressed` are read below it only
    text_count: int
    compressed_count: int
    runs: PlainRuns | None = None  # for keeping plain candidates a run at a time (None: one by one)


# per set of starting states (`derived`). The lists grow along a replay's line as `PlainRuns`' do: the next
# step's floors are this one's lists with its new states' appended in place.
_FLOORS: LaneLists[tuple[list[int], None, _Floors]] = LaneLists(4)
_GROWING = fork_safe_lock()  # two builds growing one set's lists: only the first appends in place


def _floors(states: list[State]) -> _Floors:
    # a grown set's first states are the entries an earlier build's floors were made from (the same counts)
    return derived(
        _FLOORS, states, None, lambda start, base: _made_floors(states, _initial_tokens(states), base, start)
    )


def _initial_tokens(states: list[State]) -> list[int]:
    """The counts the states started with: a build's own list, else their counts now."""
    if isinstance(states, States) and len(states.initial_tokens) == len(states):
        return states.initial_tokens
    return [s.tokens for s in states]


def _made_floors(
    states: list[State], tokens: list[int], base: _Floors | None = None, start: int = 0
) -> _Floors:
    """The floors of `states`, whose first `start` are those `base` was made for (their floors are kept)."""
    base = base if start else None
    with _GROWING:
        if base is not None and _is_tip(base, start):  # the line's longest: grow in place
            text, compressed = base.text, base.compressed
            indices, candidates, strategies = base.compressed_indices, base.text_indices, base.text_strategies
            kept = base.text_count
        elif base is not None:
            # a fork (a user input's): the lists' first items, made from the spares of an earlier fork
            text, compressed = cut(base.text, start), cut(base.compressed, start)
            indices = cut(base.compressed_indices, bisect_right(base.compressed_indices, start - 1))
            kept = bisect_right(base.text_indices, start - 1)
            candidates, strategies = cut(base.text_indices, kept), cut(base.text_strategies, kept)
        else:
            text, compressed, indices, candidates, strategies, kept = [], [], [], [], [], 0
        text_floor = text[start - 1] if start else math.inf
        compressed_floor = compressed[start - 1] if start else math.inf
        for index in range(start, len(states)):
            message = states[index].message
            strategy = _text_strategy(message)
            if strategy is not None:
                if tokens[index] < text_floor:
                    text_floor = tokens[index]
                candidates.append(index)
                strategies.append(strategy)
            if message.type == "final_answer" and is_compressed_tool_history(message):
                if tokens[index] < compressed_floor:
                    compressed_floor = tokens[index]
                indices.append(index)
            text.append(text_floor)
            compressed.append(compressed_floor)
        runs = base.runs if base is not None else None
        if base is None or runs is not None:
            runs = plain_runs(states, tokens, candidates, strategies, runs, kept, start)
        counts = (len(states), len(candidates), len(indices))
        return _Floors(text, compressed, indices, candidates, strategies, *counts, runs)


def _is_tip(floors: _Floors, start: int) -> bool:
    """`floors` are for the first `start` states and nobody grew their lists since."""
    return start == floors.size == len(floors.text) == len(floors.compressed) and (
        floors.text_count == len(floors.text_indices) == len(floors.text_strategies)
        and floors.compressed_count == len(floors.compressed_indices)
    )


def run_working_memory(states: list[State], available: int, ctx: BuildContext) -> ProviderOutcome:
    report = ProviderReport(NAME)
    wm = ctx.policy.working_memory
    core = kept_tokens(states)
    budget = math.floor(ctx.total_budget * ctx.policy.budget.working_memory_budget_percentage)
    fill = _Fill(states, ctx, budget, core, [], report.strategies)
    if budget - core <= 0 and wm.min_tool_interactions_to_keep <= 0:
        return ProviderOutcome(report)
    groups = _grouping(states, ctx.policy.checkpoint.trigger_tool_name, wm.tool_pairing_search_range)
    last_user = next(
        (i for i in range(len(states) - 1, -1, -1) if states[i].message.type == "user_input"
         and states[i].message.role == "user"), None,
    )  # fmt: skip
    _p1_recent_groups(fill, groups, last_user)
    if fill.total < budget:
        _p2_text(fill)
    if fill.total < budget and last_user is not None:
        _p3_historical_tools(fill, groups, last_user)
    report.tokens_used = fill.total - core
    return ProviderOutcome(report, tuple(fill.events))


# per set of starting states, checkpoint tool, pairing range and id scope (`derived`): their grouping, and
# the scans of shorter sets of their line (newest first, the oldest at each power of two of how much shorter:
# `_spaced`)
_Scans = tuple[GroupScan, tuple[GroupScan, ...]]
_SCANS: LaneLists[tuple[list[int], tuple[str, int | None, str], _Scans]] = LaneLists(4)
ANCESTORS = 14  # reaching back up to 2^14 messages


def _grouping(states: list[State], checkpoint_tool: str, distance: int | None) -> list[ToolGroup]:
    """The states' tool groups. A replay's next step goes on over its new states only, from the last step's
    scan, or at a user input (where the compressor replaced a group a few messages back) from the scan of
    an earlier step that ends before that, keeping a scan where this set parts from the last one: the next
    user input's change lies past it (without it, the nearest earlier scan was often the first step's, and
    a long default-policy replay scanned its whole history at every user input). Groups hold ids, and a
    created message's id depends on the id scope: it is part of the key."""

    def make(start: int, base: _Scans | None) -> _Scans:
        if base is not None:
            line = [scan for scan in (base[0], *base[1]) if scan.length <= start]
            if line:
                scan = line[0]
                if scan.length < start:  # the scan at `start` too: the next change is likely past it
                    scan = scan.extend(_MessagesOf(states, start), checkpoint_tool, distance)
                    line.insert(0, scan)
                scan = scan.extend(_MessagesOf(states), checkpoint_tool, distance)
                return scan, _spaced(line, len(states))
        # afresh, and a long list with its mark (`engine.lineage.MARK_BACK`): a build of an earlier step
        # (the TUI's timeline going back over a user input) goes on from it
        messages = list(map(_MESSAGE, states))
        if len(messages) <= MARK_AFTER:
            return group_scan(messages, checkpoint_tool, distance), ()
        mark = group_scan(messages[: len(messages) - MARK_BACK], checkpoint_tool, distance)
        return mark.extend(messages, checkpoint_tool, distance), (mark,)

    return derived(_SCANS, states, (checkpoint_tool, distance, ID_SCOPE.get()), make)[0].groups


def _spaced(line: list[GroupScan], length: int) -> tuple[GroupScan, ...]:
    """Of a line's scans (newest first), the oldest at each power of two of how far it ends before `length`
    (the oldest, so that scans age into the next power): whatever a later step changes, it goes on from a
    scan not much farther back (the last few steps' scans alone sent a change a turn back to the first)."""
    spaced = {(length - scan.length).bit_length(): scan for scan in line}
    return tuple(spaced.values())[:ANCESTORS]


class _MessagesOf(Sequence[AiMessage]):
    """The states' messages, read where asked (a scan going on reads only the new ones)."""

    __slots__ = ("_states", "_length")

    def __init__(self, states: list[State], length: int | None = None) -> None:
        self._states = states
        self._length = len(states) if length is None else length

    def __getitem__(self, index):  # type: ignore[override]  # an int only: a scan never slices
        if index >= self._length:
            raise IndexError(index)
        return self._states[index].message

    def __len__(self) -> int:
        return self._length


def _p1_recent_groups(fill: _Fill, groups: list[ToolGroup], last_user: int | None) -> None:
    wm, tool_history = fill.ctx.policy.working_memory, fill.ctx.policy.tool_history
    max_p1 = min(wm.max_recent_tool_interactions, tool_history.max_interaction_groups)
    min_p1 = min(max_p1, wm.min_tool_interactions_to_keep)
    for group in reversed(groups):
        current = last_user is None or group.start_index > last_user
        if not current and fill.hist_kept >= max_p1:
            return
        forced = fill.hist_kept < min_p1
        if not forced and fill.total >= fill.budget:
            return
        if group.anchor_id in fill.processed or not group.complete:
            continue
        limit = math.inf if forced else fill.budget
        outcome = _keep_group(fill, group, limit, "tool_interaction_pairing", "tool_interaction_truncation")
        if outcome is _TOO_BIG:  # even its summary does not fit: older groups would not either
            return
        if outcome is _KEPT and not current:
            fill.hist_kept += 1


def _p2_text(fill: _Fill) -> None:
    """Text newest first. Only the candidates are visited: between two of them the floor and the total stay
    as they are, so a stop that a message between them would have made, the next candidate makes. A
    candidate kept when working memory started is still kept (nothing before P2 drops, and P1 keeps tool
    groups only), so `kept` alone tells what P2 skips. A run of plain candidates is kept in one go
    (`engine.providers.text_runs`) until one does not fit; from there, and for every other candidate, one
    at a time."""
    thoughts = 0
    floors = _floors_of(fill)
    floor, states, processed, budget = floors.text, fill.states, fill.processed, fill.budget
    noted, total = fill.strategies, fill.total
    indices, strategies = floors.text_indices, floors.text_strategies
    owned = states.owned if isinstance(states, States) else None
    # a run places twins over starting states only: the positions this build changed are held
    runs = floors.runs if owned is not None else None
    held = held_candidates(owned, indices) if runs is not None else []
    at = floors.text_count - 1
    try:
        while at >= 0:
            index = indices[at]
            if total >= budget or floor[index] > budget - total:
                return
            if runs is not None and (first := runs.run_at(at, held, budget - total, processed)) is not None:
                # a run of plain candidates ends at `at` (`owned` is set: `runs` is None without it)
                placed = runs.place(states, indices, first, at) if first <= at else None  # type: ignore[arg-type]
                if placed is None:  # `at` does not fit, one of them was kept in a group, or stale: one by one
                    runs = None
                    continue
                total += placed
                if PLAIN not in noted:
                    noted.append(PLAIN)
                at = first - 1
                continue
            at -= 1
            total, thoughts = _one_text(fill, index, strategies[at + 1], total, thoughts)
    finally:
        fill.total = total


def _one_text(fill: _Fill, index: int, strategy: str | None, total: int, thoughts: int) -> tuple[int, int]:
    """P2 at one candidate, given the total and the thoughts kept so far: both after it."""
    state, budget = fill.states[index], fill.budget
    if state.kept or state.message.id in fill.processed or strategy is None:  # None: a test's non-candidate
        return total, thoughts
    if strategy == "thought_processing":
        if thoughts >= fill.ctx.policy.reasoning_retention.keep_latest_thoughts:
            return total, thoughts
        thoughts += total + state.tokens <= budget
    if total + state.tokens > budget:
        return total, thoughts
    state = own(fill.states, index)
    state.keep(KEEP_WM, WORKING_MEMORY, strategy)
    _note(fill, strategy)
    if strategy == "history_summary":  # linnkit marks a kept summary's id processed (P3 skips it)
        fill.processed.add(state.message.id)
    return total + state.tokens, thoughts


# P2 asks about every message on every build; the answer reads the message's role, type and metadata only.
# Rebuilds see the very same metadata objects, and so does a replay's next step in the created messages it
# makes anew with another id (`scope_created` shares their metadata): look the answer up by the metadata's
# identity (the cache holds it, so its id cannot be reused while cached).
_STRATEGIES: dict[tuple[str, str, int], tuple[object, str | None]] = {}
_STRATEGIES_LIMIT = 50_000


def _text_strategy(message: AiMessage) -> str | None:
    metadata = message.metadata
    key = (message.role, message.type, id(metadata))
    seen = _STRATEGIES.get(key)
    if seen is not None and seen[0] is metadata:
        return seen[1]
    if len(_STRATEGIES) >= _STRATEGIES_LIMIT:
        _STRATEGIES.clear()
    strategy = _STRATEGIES[key] = (metadata, _strategy_of(message))
    return strategy[1]


def _strategy_of(message: AiMessage) -> str | None:
    """P2's candidates, as linnkit's TextConversationRetention picks them."""
    if message.role == "system" and message.type == "history_summary":
        return "history_summary"
    if message.role == "user":
        usable = not _truthy(message.meta("tool_name")) and message.meta("fragmentType") != "document"
        return "text_conversation" if usable else None
    if message.role != "assistant" or message.type == "tool_calls":
        return None
    if _truthy(message.meta("tool_name")) or _truthy(message.meta("tool_calls")):
        return None
    if is_compressed_tool_history(message):
        return None  # compressed tool history is P3's
    return "thought_processing" if message.type == "thought" else "text_conversation"


def _truthy(value: object) -> bool:
    """JavaScript truthiness: empty lists and objects count as true."""
    return True if isinstance(value, (list, dict)) else bool(value)


def is_compressed_tool_history(message: AiMessage) -> bool:
    return (
        message.role == "assistant"
        and message.type == "final_answer"
        and message.meta("isCompressedToolHistory") is True
    )


def _p3_historical_tools(fill: _Fill, groups: list[ToolGroup], last_user: int) -> None:
    max_groups = fill.ctx.policy.tool_history.max_interaction_groups
    max_p3 = max(0, max_groups - fill.hist_kept)
    min_p3 = min(fill.hist_kept + max_p3, fill.ctx.policy.working_memory.min_tool_interactions_to_keep)
    kept_p3 = 0
    for candidate, floor in _p3_candidates(fill.states, _floors_of(fill), groups, last_user):
        if kept_p3 >= max_p3:
            return
        forced = fill.hist_kept + kept_p3 < min_p3
        if not forced and fill.total >= fill.budget:
            return
        if isinstance(candidate, int):  # a compressed message's position
            if not forced and floor > fill.budget - fill.total:
                return  # no group is left, and no compressed message left fits
            state = fill.states[candidate]
            if state.kept or state.message.id in fill.processed:
                continue
            if forced or fill.total + state.tokens <= fill.budget:
                state = own(fill.states, candidate)
                state.keep(KEEP_WM, WORKING_MEMORY, "compressed_tool_history")
                fill.total += state.tokens
                fill.processed.add(state.message.id)
                _note(fill, "compressed_tool_history")
                kept_p3 += 1
            continue
        if candidate.anchor_id in fill.processed or not candidate.complete:
            continue
        limit = math.inf if forced else fill.budget
        strategies = ("historical_tool_interaction", "historical_tool_interaction_truncation")
        if _keep_group(fill, candidate, limit, *strategies) is _KEPT:
            kept_p3 += 1


def _p3_candidates(
    states: list[State], floors: _Floors, groups: list[ToolGroup], last_user: int
) -> Iterator[tuple[int | ToolGroup, float]]:
    """Compressed messages (by position) and groups at or before the current input, newest first (a
    compressed message is never a group's anchor, so no two share an index). Each comes with the fewest
    tokens of any candidate left once no group is left (-inf while one is: a group may fit after
    truncation)."""
    compressed = floors.compressed_indices
    older = [g for g in reversed(groups) if g.start_index <= last_user]
    next_group, position = 0, bisect_right(compressed, last_user) - 1
    while position >= 0 or next_group < len(older):
        if next_group < len(older) and (position < 0 or older[next_group].start_index > compressed[position]):
            next_group += 1
            yield older[next_group - 1], -math.inf
        else:
            index, position = compressed[position], position - 1
            yield index, -math.inf if next_group < len(older) else floors.compressed[index]


def _floors_of(fill: _Fill) -> _Floors:
    if fill.floors is None:
        fill.floors = _floors(fill.states)
    return fill.floors


_KEPT, _REJECTED, _TOO_BIG = object(), object(), object()
_MESSAGE = attrgetter("message")


def _keep_group(fill: _Fill, group: ToolGroup, limit: float, direct: str, truncated: str) -> object:
    """Keep a group whole, truncating its outputs first if it is too big (linnkit's keepToolGroup).

    `_REJECTED`: truncation saved nothing; `_TOO_BIG`: truncated and still over the limit."""
    states = [own(fill.states, i) for i in group.indices]
    # linnkit's ReplacementSourceTagger: the group's ids once each, merged into what a state holds already
    source_ids = list(dict.fromkeys(s.message.id for s in states if s.message.id))
    for state in states if source_ids else ():
        held = state.replacement_source_ids
        state.replacement_source_ids = list(dict.fromkeys([*held, *source_ids])) if held else source_ids
    strategy = direct
    if not _fits(fill, states, limit):
        if not _truncate_outputs(fill, [fill.states[i] for i in group.output_indices]):
            return _REJECTED
        if not _fits(fill, states, limit):
            return _TOO_BIG
        strategy = truncated
    added = 0
    for state in states:
        if state.action == SKIP:  # a member some earlier stage kept is not counted twice
            state.keep(KEEP_WM, WORKING_MEMORY, strategy)
            added += state.tokens
        fill.processed.add(state.message.id)
    fill.total += added
    _note(fill, strategy)
    return _KEPT


def _fits(fill: _Fill, states: list[State], limit: float) -> bool:
    pair = sum(s.tokens for s in states)
    return fill.total + pair <= limit and pair <= fill.ctx.policy.tool_history.max_pair_tokens


def _truncate_outputs(fill: _Fill, outputs: list[State]) -> bool:
    """Replace every output by the summary of its raw output, as linnkit's ToolPairTruncator does (the
    summary stays even if the group is then rejected); True when that saves tokens overall."""
    policy = fill.ctx.policy
    preview = preview_chars_for(policy.tool_history.max_output_summary_tokens, fill.ctx.avg_chars_per_token)
    saved, changes = 0, []
    for state in outputs:
        # linnkit summarises the output as it was when the groups were made (item.rawOutputs), also when
        # P3 tries again a group P1 already summarised
        raw = (state.truncation or {}).get("raw") or output_text(state.message)
        summary = summarize_output(raw, preview_chars=preview)
        before = state.tokens
        summarised = state.message.with_metadata(
            truncated=True, originalLength=len(raw), truncatedLength=len(summary)
        ).with_(content=summary)
        # linnkit rewrites the message itself, so later stages (summarization) read the summary too; a
        # core-kept output is sent as core's processedContent, its text before this summary
        if state.action == KEEP_CORE and state.processed is None:
            state.processed = state.message
        elif state.action != KEEP_CORE:
            state.processed = summarised
        state.message = summarised
        state.tokens = fill.ctx.estimate(summarised)
        state.truncation = {"originalLength": len(raw), "truncatedLength": len(summary), "raw": raw}
        saved += before - state.tokens
        changes.append((state, len(raw), len(summary), before))
    if saved <= 0:
        return False
    for state, original, shortened, before in changes:
        fill.events.append(
            Event(
                kind="tool_output_truncation",
                title=f"tool output {state.message.id} summarised by working memory: "
                f"{original} → {shortened} chars, {before} → {state.tokens} tokens",
                message_ids=(state.message.id,),
                data={
                    "originalLength": original,
                    "truncatedLength": shortened,
                    "tokensBefore": before,
                    "tokensAfter": state.tokens,
                },
            )
        )
    return True


def _note(fill: _Fill, strategy: str) -> None:
    if strategy not in fill.strategies:
        fill.strategies.append(strategy)
