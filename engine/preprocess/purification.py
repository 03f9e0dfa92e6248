"""HistoryPurification (priority 1): after a summary, the messages it replaced leave the list
(spec §5.1, §9 D7: summary-replacement cleanup only; hygiene problems are reported, not repaired).

A replay's next step gives this stage the previous step's list with a few entries more (the stages before it
hand on the very same entry objects), so the last run is kept: the part of the list it saw is not looked at
again when the latest summary is the same, and the run appends to the last run's lists instead of copying
them. A new summary that replaces everything the last one did (it folds the old one in) only looks again at
what the last one kept. So no step walks the whole history in Python.
"""

from __future__ import annotations

from bisect import bisect_left
from dataclasses import dataclass
from operator import is_
from typing import Any

from engine.jsvalues import js_greater
from engine.lanes import LaneLists
from engine.messages import AiMessage
from engine.preprocess.base import Entry, Removal, StageOutput, common_prefix
from engine.result import Event
from engine.shared_ids import NO_IDS, IdSet, extends, id_set

STRATEGY = "summary_replacement_cleanup"


def _seq(message: AiMessage) -> Any:
    """A summary's `summarySeq` as written (`?? -1`: a missing or null one counts as -1); compared with
    JavaScript's `>` (`js_greater`: `"2"` beats 1; one that is no number never beats another)."""
    seq = message.meta("summarySeq")
    return -1 if seq is None else seq


@dataclass(frozen=True, slots=True)
class _Run:
    """One run of the stage: its input, the latest summary's index, and what left the list. The position
    lists, ids and origins may be longer than this run's own: the run after it, on a list that extends
    this one, appends to them instead of copying them (`_carried` reads only this run's part)."""

    entries: list[Entry]
    summary: int | None
    replaced: IdSet  # the summary's replacedMessageIds
    kept: int  # how many entries stay
    out: list[Entry]  # the entries that stay (`entries` itself when none left)
    kept_at: list[int]  # their positions (empty when no summary replaced anything)
    removed_at: list[int]  # the positions of the entries that left, in order
    removed_ids: list[str]  # their message ids
    first_removed: dict[str, int]  # each of those ids' first index in `removed_ids` (read below its length)
    origins: list[int]  # their session indices, entry after entry
    origin_ends: list[int]  # per entry that left: len(origins) up to it
    summaries: list[int]  # the summaries' indices in `entries`
    best: list[int]  # per summary, the latest summary's index up to it


_LAST: LaneLists[_Run] = LaneLists(1)  # the last run, per memory lane (`engine.lanes`)
# the last event and removal made, with the lists and the count they were made from
_SAID: LaneLists[tuple[tuple[list, ...], tuple[int, str], tuple[Event, Removal]]] = LaneLists(1)


def purify_history(entries: list[Entry]) -> StageOutput:
    last = _LAST.newest()
    seen = common_prefix(last.entries, entries) if last is not None else 0
    summaries, best_at = _summaries(entries, seen, last)
    best = best_at[-1] if best_at else None
    run = _purify(entries, best, last, seen, summaries, best_at)
    _LAST.add(run)
    gone = len(entries) - run.kept
    if not gone or run.summary is None:
        return StageOutput.unchanged(entries)
    summary_id = entries[run.summary].message.id
    said = _SAID.newest()
    lists = (run.removed_ids, run.origins, run.origin_ends)
    if said is not None and all(map(is_, said[0], lists)) and said[1] == (gone, summary_id):
        # the last step's lists and as many gone: its very event and removal (the ids listed are the
        # first `gone` of lists that are only appended to), not copies of the history's length again
        return StageOutput(run.out, STRATEGY, [said[2][1]], [said[2][0]])
    event = Event(
        kind="purification",
        title=f"purification: {gone} message(s) already covered by summary {summary_id}",
        message_ids=_head(run.removed_ids, gone),
        data={"summaryId": summary_id},
    )
    # One removal carries every session index that left: they all left for the same summary.
    removal = Removal(_head(run.origins, run.origin_ends[gone - 1]), STRATEGY, summary_id)
    _SAID.add((lists, (gone, summary_id), (event, removal)))
    return StageOutput(run.out, STRATEGY, [removal], [event])


def _head(items: list, size: int) -> tuple:
    """`tuple(items[:size])`, without the slice when that is all of them (the usual step: one copy)."""
    return tuple(items) if size == len(items) else tuple(items[:size])


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
        if not best or js_greater(_seq(message), _seq(entries[best[-1]].message)):
            best.append(index)
        else:
            best.append(best[-1])
        at.append(index)
    return at, best


class _Lists:
    """The lists a run fills: what stays (entries, positions) and what leaves (positions, ids, origins)."""

    __slots__ = ("out", "kept_at", "removed_at", "removed_ids", "first_removed", "origins", "origin_ends")

    def __init__(
        self, out=None, kept_at=None, removed_at=None, removed_ids=None, first=None, origins=None, ends=None
    ):
        self.out: list[Entry] = out if out is not None else []
        self.kept_at: list[int] = kept_at if kept_at is not None else []
        self.removed_at: list[int] = removed_at if removed_at is not None else []
        self.removed_ids: list[str] = removed_ids if removed_ids is not None else []
        self.first_removed: dict[str, int] = first if first is not None else {}
        self.origins: list[int] = origins if origins is not None else []
        self.origin_ends: list[int] = ends if ends is not None else []


def _carried(last: _Run, seen: int) -> _Lists:
    """`last`'s lists for `entries[:seen]`: its own, to append to, when the new list extends its whole list
    and no later run has appended to them (the usual replay step: no copy of the history's length), else
    copies cut at `seen`."""
    own_gone = len(last.entries) - last.kept
    out = last.out[: bisect_left(last.kept_at, seen, hi=last.kept)]
    kept, gone = len(out), bisect_left(last.removed_at, seen, hi=own_gone)
    if len(last.removed_at) == own_gone and gone == own_gone:  # what left did so before `seen`
        # a list that differs from the last one only past `seen` (compression changed a group near the
        # end): what left is handed on whole too, and the kept positions cut (as few as the budget keeps)
        kept_at = last.kept_at if seen == len(last.entries) and len(last.kept_at) == last.kept else None
        return _Lists(out, kept_at if kept_at is not None else last.kept_at[:kept], last.removed_at,
                      last.removed_ids, last.first_removed, last.origins, last.origin_ends)  # fmt: skip
    origins = last.origins[: last.origin_ends[gone - 1]] if gone else []
    ids = last.removed_ids[:gone]
    return _Lists(out, last.kept_at[:kept], last.removed_at[:gone], ids, _first_indices(ids), origins,
                  last.origin_ends[:gone])  # fmt: skip


def _purify(
    entries: list[Entry],
    best: int | None,
    last: _Run | None,
    seen: int,
    summaries: list[int],
    best_at: list[int],
) -> _Run:
    """The run for `entries`, reusing `last` for `entries[:seen]` when its summary is the same message or
    one the new summary folds in (it replaces all the old one did)."""
    summary = entries[best].message if best is not None else None
    held = _summary_of(last)
    if summary is not None and summary is held:
        replaced = last.replaced
    else:
        replaced = id_set(summary.meta("replacedMessageIds") or []) if summary is not None else NO_IDS
    if summary is None or not replaced:
        nothing_left: tuple[list, list, list, dict, list, list] = ([], [], [], {}, [], [])
        return _Run(entries, best, replaced, len(entries), entries, *nothing_left, summaries, best_at)
    lists, start = _Lists(), 0
    if held is not None and last.replaced and _folds(summary, held, last.replaced, replaced):
        lists, start = _carried(last, seen), seen
        if summary is not held and not _refolded(lists, entries, replaced, summary.id):
            lists, start = _Lists(), 0  # an entry the old summary removed is the new one: look at all
    _walk(entries, start, replaced, summary.id, lists)
    kept = len(lists.out)
    out = lists.out if kept != len(entries) else entries
    return _Run(entries, best, replaced, kept, out, lists.kept_at, lists.removed_at, lists.removed_ids,
                lists.first_removed, lists.origins, lists.origin_ends, summaries, best_at)  # fmt: skip


def _folds(summary: AiMessage, held: AiMessage, held_ids: IdSet, ids: IdSet) -> bool:
    """`summary` replaces every message `held` did (it is held, its list was folded from held's, or a look
    at the sets says so)."""
    if summary is held:
        return True
    folded = extends(summary.meta("replacedMessageIds"), held.meta("replacedMessageIds"))
    return folded or held_ids.issubset(ids)


def _summary_of(run: _Run | None) -> AiMessage | None:
    """The summary message `run` purified under, if any."""
    return run.entries[run.summary].message if run is not None and run.summary is not None else None


def _covered(message: AiMessage, replaced: IdSet) -> bool:
    sources = message.metadata.get("replacementSourceIds") if message.metadata else None
    return message.id in replaced or (isinstance(sources, list) and not replaced.isdisjoint(sources))


def _walk(entries: list[Entry], start: int, replaced: IdSet, summary_id: str, lists: _Lists) -> None:
    """Decide `entries[start:]`, appending to `lists`."""
    out, kept_at = lists.out, lists.kept_at
    for index in range(start, len(entries)):
        entry = entries[index]
        message = entry.message
        if message.id != summary_id and _covered(message, replaced):
            _leave(lists, index, entry)
        else:
            out.append(entry)
            kept_at.append(index)


def _leave(lists: _Lists, index: int, entry: Entry) -> None:
    """`entries[index]` leaves: appended to the lists of what left (in place: a run that shares them reads
    only its own part, `_carried`)."""
    lists.first_removed.setdefault(entry.message.id, len(lists.removed_ids))
    lists.removed_at.append(index)
    lists.removed_ids.append(entry.message.id)
    lists.origins.extend(entry.origins)
    lists.origin_ends.append(len(lists.origins))


def _first_indices(ids: list[str]) -> dict[str, int]:
    """Each id's first index in `ids`."""
    first: dict[str, int] = {}
    for index, id_ in enumerate(ids):
        first.setdefault(id_, index)
    return first


def _refolded(lists: _Lists, entries: list[Entry], replaced: IdSet, summary_id: str) -> bool:
    """Turn `lists` (carried from a run under a summary whose replaced ids all are in `replaced`) into the new
    summary's: what left stays out, what stayed is looked at again. False when an entry that left is the
    new summary (it stays under its own summary): the caller then looks at every entry."""
    if lists.first_removed.get(summary_id, len(lists.removed_ids)) < len(lists.removed_ids):
        return False
    newly = [p for p, e in zip(lists.kept_at, lists.out, strict=True) if e.message.id != summary_id
             and _covered(e.message, replaced)]  # fmt: skip
    if not newly:
        return True
    leaving = set(newly)
    lists.out = [e for p, e in zip(lists.kept_at, lists.out, strict=True) if p not in leaving]
    lists.kept_at = [p for p in lists.kept_at if p not in leaving]
    if lists.removed_at and newly[0] < lists.removed_at[-1]:  # some leave between those that left
        newly = sorted(lists.removed_at + newly)  # two sorted runs: merged in C; all made again
        lists.removed_at, lists.removed_ids, lists.origins, lists.origin_ends = [], [], [], []
        lists.first_removed = {}
    for index in newly:  # after every position that left: appended, as a walk appends
        _leave(lists, index, entries[index])
    return True
