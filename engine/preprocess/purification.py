"""HistoryPurification (priority 1): after a summary, the messages it replaced leave the list
(spec §5.1, §9 D7: summary-replacement cleanup only; hygiene problems are reported, not repaired).

A replay's next step gives this stage the previous step's list with a few entries more (the stages before it
hand on the very same entry objects), so the last run is kept: the part of the list it saw is not looked at
again when the latest summary is the same.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass

from engine.lanes import LaneLists
from engine.messages import AiMessage
from engine.preprocess.base import Entry, Removal, StageOutput, common_prefix
from engine.result import Event

STRATEGY = "summary_replacement_cleanup"


def _seq(message: AiMessage) -> int | float:
    """A summary's `summarySeq`; a missing or non-numeric one counts as -1."""
    seq = message.meta("summarySeq")
    return seq if isinstance(seq, (int, float)) and not isinstance(seq, bool) else -1


def _summaries(entries: list[Entry], start: int, last: _Run | None) -> tuple[list[int], list[int]]:
    """The indices of the summaries in `entries` and, for each, the index of the latest summary (highest
    `summarySeq`, the first wins a tie) up to it, carried from `last` for `entries[:start]`."""
    if last is None:
        at, best = [], []
    else:
        kept = bisect_left(last.summaries, start)
        at, best = last.summaries[:kept], last.best[:kept]
    for index in range(start, len(entries)):
        message = entries[index].message
        if message.type != "history_summary":
            continue
        if not best or _seq(message) > _seq(entries[best[-1]].message):
            best.append(index)
        else:
            best.append(best[-1])
        at.append(index)
    return at, best


@dataclass(frozen=True, slots=True)
class _Run:
    """One run of the stage: its input, the latest summary's index, and what left the list. The lists
    `stays`, `removed`, `removed_ids` and `removals` may be longer than this run's: the run after it, on a
    list that extends this one, appends to them instead of copying them (see `_carried`)."""

    entries: list[Entry]
    summary: int | None
    replaced: frozenset[str]  # the summary's replacedMessageIds
    stays: list[bool]  # per input entry (empty when no summary replaced anything)
    kept: int  # how many of `stays` are True
    out: list[Entry]
    removed: list[Entry]
    removed_ids: list[str]
    removals: list[Removal]
    summaries: list[int]  # the summaries' indices in `entries`
    best: list[int]  # per summary, the latest summary's index up to it


_LAST: LaneLists[_Run] = LaneLists(1)  # the last run, per memory lane (`engine.lanes`)


def purify_history(entries: list[Entry]) -> StageOutput:
    last = _LAST.newest()
    seen = common_prefix(last.entries, entries) if last is not None else 0
    summaries, best_at = _summaries(entries, seen, last)
    best = best_at[-1] if best_at else None
    # The same latest summary (the very message) decides the same for the part both lists share.
    reusable = (
        last is not None
        and best is not None
        and last.summary is not None
        and entries[best].message is last.entries[last.summary].message
    )
    run = _purify(entries, best, last if reusable else None, seen, summaries, best_at)
    _LAST.add(run)
    if run.kept == len(entries) or run.summary is None:
        return StageOutput.unchanged(entries)
    summary_id = entries[run.summary].message.id
    removed_ids = run.removed_ids[: len(entries) - run.kept]
    event = Event(
        kind="purification",
        title=f"purification: {len(removed_ids)} message(s) already covered by summary {summary_id}",
        message_ids=tuple(removed_ids),
        data={"summaryId": summary_id},
    )
    return StageOutput(run.out, STRATEGY, run.removals[: len(removed_ids)], [event])


def _carried(last: _Run, seen: int) -> tuple[list[bool], list[Entry], list[str], list[Removal], int]:
    """`last`'s stays, removed entries, ids and removals for `entries[:seen]`, and how many stay: its own
    lists, to append to, when the new list extends its whole list and no later run has appended to them
    (the usual replay step: no copy of the history's length), else copies cut at `seen`."""
    if seen == len(last.entries) == len(last.stays) and len(last.removed) == seen - last.kept:
        return last.stays, last.removed, last.removed_ids, last.removals, last.kept
    stays = last.stays[:seen]
    kept = last.kept if seen == len(last.entries) else sum(stays)
    gone = seen - kept
    return stays, last.removed[:gone], last.removed_ids[:gone], last.removals[:gone], kept


def _purify(
    entries: list[Entry],
    best: int | None,
    last: _Run | None,
    seen: int,
    summaries: list[int],
    best_at: list[int],
) -> _Run:
    """The run for `entries`, reusing `last` (a run with the same latest summary) for `entries[:seen]`."""
    summary = entries[best].message if best is not None else None
    if last is not None:
        replaced = last.replaced
    else:
        replaced = frozenset(summary.meta("replacedMessageIds") or []) if summary is not None else frozenset()
    if summary is None or not replaced:
        return _Run(entries, best, replaced, [], len(entries), entries, [], [], [], summaries, best_at)
    start, kept = 0, 0
    stays: list[bool] = []
    out: list[Entry] = []
    removed: list[Entry] = []
    removed_ids: list[str] = []
    removals: list[Removal] = []
    if last is not None and last.stays:
        stays, removed, removed_ids, removals, kept = _carried(last, seen)
        start, out = seen, last.out[:kept]
    for entry in entries[start:]:
        message = entry.message
        sources = message.metadata.get("replacementSourceIds") if message.metadata else None
        covered = message.id in replaced or (isinstance(sources, list) and not replaced.isdisjoint(sources))
        if covered and message.id != summary.id:
            removed.append(entry)
            removed_ids.append(message.id)
            removals.append(Removal(entry.origins, STRATEGY, summary.id))
            stays.append(False)
        else:
            out.append(entry)
            stays.append(True)
            kept += 1
    gone = len(entries) != kept
    return _Run(
        entries, best, replaced, stays, kept, out if gone else entries, removed, removed_ids, removals,
        summaries, best_at,
    )  # fmt: skip
