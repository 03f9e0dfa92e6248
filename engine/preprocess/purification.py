"""HistoryPurification (priority 1): after a summary, the messages it replaced leave the list
(spec §5.1, §9 D7: summary-replacement cleanup only; hygiene problems are reported, not repaired).

A replay's next step gives this stage the previous step's list with a few entries more (the stages before it
hand on the very same entry objects), so the last run is kept: the part of the list it saw is not looked at
again when the latest summary is the same.
"""

from __future__ import annotations

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


def _latest_summary(entries: list[Entry], start: int, best: int | None) -> int | None:
    """The index of the summary with the highest `summarySeq` (the first wins a tie), given the best
    among `entries[:start]` (None: there is none)."""
    best_seq = _seq(entries[best].message) if best is not None else None
    for index in range(start, len(entries)):
        message = entries[index].message
        if message.type != "history_summary":
            continue
        seq = _seq(message)
        if best_seq is None or seq > best_seq:
            best, best_seq = index, seq
    return best


@dataclass(frozen=True, slots=True)
class _Run:
    """One run of the stage: its input, the latest summary's index, and what left the list."""

    entries: list[Entry]
    summary: int | None
    replaced: frozenset[str]  # the summary's replacedMessageIds
    stays: list[bool]  # per input entry (empty when no summary replaced anything)
    out: list[Entry]
    removed: list[Entry]
    removed_ids: list[str]
    removals: list[Removal]


_LAST: LaneLists[_Run] = LaneLists(1)  # the last run, per memory lane (`engine.lanes`)


def purify_history(entries: list[Entry]) -> StageOutput:
    last = _LAST.newest()
    seen = common_prefix(last.entries, entries) if last is not None else 0
    if last is None or (last.summary is not None and last.summary >= seen):
        best = _latest_summary(entries, 0, None)
    else:  # the last run's latest summary (or its having none) holds for the part both lists share
        best = _latest_summary(entries, seen, last.summary)
    reusable = last is not None and best is not None and best == last.summary and best < seen
    run = _purify(entries, best, last if reusable else None, seen)
    _LAST.add(run)
    if not run.removed or run.summary is None:
        return StageOutput.unchanged(entries)
    summary_id = entries[run.summary].message.id
    event = Event(
        kind="purification",
        title=f"purification: {len(run.removed)} message(s) already covered by summary {summary_id}",
        message_ids=tuple(run.removed_ids),
        data={"summaryId": summary_id},
    )
    return StageOutput(run.out, STRATEGY, list(run.removals), [event])


def _purify(entries: list[Entry], best: int | None, last: _Run | None, seen: int) -> _Run:
    """The run for `entries`, reusing `last` (a run with the same latest summary) for `entries[:seen]`."""
    summary = entries[best].message if best is not None else None
    if last is not None:
        replaced = last.replaced
    else:
        replaced = frozenset(summary.meta("replacedMessageIds") or []) if summary is not None else frozenset()
    if summary is None or not replaced:
        return _Run(entries, best, replaced, [], entries, [], [], [])
    start = 0
    stays: list[bool] = []
    out: list[Entry] = []
    removed: list[Entry] = []
    removed_ids: list[str] = []
    removals: list[Removal] = []
    if last is not None and last.stays:
        start, stays = seen, last.stays[:seen]
        kept = sum(stays)
        out, removed = last.out[:kept], last.removed[: seen - kept]
        removed_ids, removals = last.removed_ids[: seen - kept], last.removals[: seen - kept]
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
    return _Run(entries, best, replaced, stays, out if removed else entries, removed, removed_ids, removals)
