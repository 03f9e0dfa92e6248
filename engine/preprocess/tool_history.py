"""ToolHistoryCompressor (priority 0): old tool groups are dropped or compressed to text (spec §5.1)."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import filterfalse
from operator import attrgetter
from typing import Any

from engine.copyset import active_copy, summary_templates
from engine.errors import TOOL_HISTORY_OVERFLOW, ContextProviderError
from engine.groups import GroupScan, ToolGroup
from engine.jsvalues import js_json, js_key_order, js_trim
from engine.lanes import LaneLists
from engine.lineage import continued, forked, grown, head, same_line
from engine.messages import AiMessage, call_id, call_name
from engine.preprocess.base import (
    Entry,
    Removal,
    StageOutput,
    common_prefix,
    created_id,
    merged_origins,
    parse_args,
    starts_with,
)
from engine.result import Event
from engine.tool_summary import output_text, summarize_output

PROVIDER_NAME = "ToolHistoryCompressorPreprocessor"
# read of every group at each extension: in C (a Python loop per group grew with the history)
_ANCHOR_ID, _IS_CHECKPOINT = attrgetter("anchor_id"), attrgetter("is_checkpoint")


@dataclass(slots=True)
class _Plan:
    """What compression made of the history before the last user input (`prefix`). A later build whose
    history starts with the very same entries (a replay's next step, a rebuild after an edit) starts from
    it: the grouping scan goes on over the new messages only, and the output is redone from the first
    group whose fate changed (groups only ever leave the kept set as history grows)."""

    prefix: list[Entry]
    key: tuple[Any, ...]
    scan: GroupScan = field(default_factory=GroupScan)
    removed: list[ToolGroup] = field(default_factory=list)  # dropped or compressed, in history order
    entries: list[Entry] = field(default_factory=list)  # the prefix's output
    removals: list[Removal] = field(default_factory=list)  # one per removed group
    # the removed groups' message ids, group by group: the stage event's own (`engine.lineage`: made from
    # the last plan's list, where a tuple of them was a copy of every removed message's id at a user input)
    member_ids: list[str] = field(default_factory=list)
    members_before: list[int] = field(default_factory=lambda: [0])  # [k]: messages in removed[:k]
    ends: list[int] = field(default_factory=list)  # [k]: the last message index of removed[:k + 1]
    events: list[Event] = field(default_factory=list)
    anchor_ids: list[str] = field(default_factory=list)  # the removed groups' anchor ids (event's anchorIds)
    # the last list given the plan's output for, and that output: a longer list in its line (a replay's
    # next step) gets that output and its new entries, in the output's line (`_output`)
    made: tuple[list[Entry], list[Entry]] | None = None


# Two a lane: the latest (a replay's next step, a rebuild) and the one before it (a step back over a user
# input). Each holds lists of the history's length: four held 12 MB at 100,000 messages.
_PLANS: LaneLists[_Plan] = LaneLists(2)


def compress_tool_history(entries: list[Entry], tool_history: Any, checkpoint_tool: str) -> StageOutput:
    history_end = _last_user_input(entries)
    key = (tool_history, checkpoint_tool, active_copy())
    start = None
    for plan in sorted(_PLANS.items(), key=lambda p: len(p.prefix), reverse=True):  # the longest that fits
        if plan.key == key and len(plan.prefix) <= history_end and starts_with(entries, plan.prefix):
            start = plan
            break
    if start is None or len(start.prefix) < history_end:
        start = _extended(start or _Plan([], key), entries, history_end, tool_history, checkpoint_tool)
        _PLANS.add(start)
    if not start.removed:
        return StageOutput.unchanged(entries)
    # the plan's own lists, read only (one removal per removed group: a copy grew with the history)
    return StageOutput(_output(start, entries, history_end), start.removals[0].strategy, start.removals,
                       start.events)  # fmt: skip


def _output(plan: _Plan, entries: list[Entry], history_end: int) -> list[Entry]:
    """`plan.entries + entries[history_end:]` (the plan is for `entries[:history_end]`), made from the last
    output when `entries` extends the list it was made for: then the next stage, which compared this output
    with the last one, tells they agree without a look at their items (`engine.lineage`)."""
    made = plan.made
    if made is not None and same_line(made[0], entries) and len(made[0]) <= len(entries):
        out = grown(made[1], entries[len(made[0]) :])
    else:
        out = grown(plan.entries, entries[history_end:])
    plan.made = (entries, out)
    return out


def _last_user_input(entries: list[Entry]) -> int:
    """The index of the last user input (the current request starts there), or the list's length."""
    for index in range(len(entries) - 1, -1, -1):
        message = entries[index].message
        if message.type == "user_input" and message.role == "user":
            return index
    return len(entries)


class _Messages(Sequence[AiMessage]):
    """The messages of `entries[:end]`, read on demand (a scan extension reads only the new ones)."""

    def __init__(self, entries: list[Entry], end: int) -> None:
        self._entries, self._end = entries, end

    def __len__(self) -> int:
        return self._end

    def __getitem__(self, index):  # type: ignore[override]
        if type(index) is int and 0 <= index < self._end:  # the scan's and the compressor's every read
            return self._entries[index].message
        if isinstance(index, slice):
            return [e.message for e in self._entries[: self._end][index]]
        if not -self._end <= index < self._end:
            raise IndexError(index)
        return self._entries[index % self._end].message


def _extended(
    plan: _Plan, entries: list[Entry], history_end: int, tool_history: Any, checkpoint_tool: str
) -> _Plan:
    """The plan for `entries[:history_end]`, which starts with `plan.prefix`."""
    messages = _Messages(entries, history_end)
    scan = plan.scan.extend(messages, checkpoint_tool)
    prefix = head(entries, history_end)  # in the line of `entries`: the next step's fits it at once
    groups = scan.complete_groups() if history_end >= 2 else []
    if not groups:
        return _Plan(prefix, plan.key, scan, entries=prefix)
    kept, selected = _select_kept(groups, tool_history, scan)
    removed = _removed(groups, kept)
    if not removed:
        return _Plan(prefix, plan.key, scan, entries=prefix)
    # Keep the first `same` removed groups' output; redo from the first group whose fate changed.
    same = common_prefix(plan.removed, removed)
    redo_from = min(
        [len(plan.prefix)]
        + [g.anchor_index for g in (*plan.removed[same : same + 1], *removed[same : same + 1])]
    )
    while same and plan.ends[same - 1] >= redo_from:  # a group before the cut has a member past it: redo it
        same = bisect_left(plan.ends, redo_from, hi=same)
        redo_from = min(redo_from, removed[same].anchor_index)
    compress = tool_history.retention_mode == "compress"
    kept_out = redo_from - plan.members_before[same] + (same if compress else 0)
    tail = _apply(entries, redo_from, history_end, removed[same:], compress=compress)
    # the last output's first `kept_out` entries are these: the next stage compares only past them
    keep = min(kept_out, len(plan.entries))
    out = forked(plan.made[1] if plan.made is not None else plan.entries, keep, tail.entries)
    member_ids = continued(plan.member_ids, plan.members_before[same], tail.member_ids)
    # the lists of every removed group are the last plan's first `same` and the new groups' (made from a
    # spare of the plan before, `engine.lineage.continued`: a copy of each was a pass over the history)
    members, last_end = plan.members_before[same], plan.ends[same - 1] if same else None
    new_members: list[int] = []
    new_ends: list[int] = []
    for group in removed[same:]:
        members += len(group.output_indices) + 1
        new_members.append(members)
        last_end = group.end_index if last_end is None else max(group.end_index, last_end)
        new_ends.append(last_end)
    members_before = continued(plan.members_before, same + 1, new_members)
    ends = continued(plan.ends, same, new_ends)
    anchor_ids = continued(plan.anchor_ids, same, list(map(_ANCHOR_ID, removed[same:])))
    events = _events(anchor_ids, member_ids, compress, selected, len(kept), tool_history)
    removals = continued(plan.removals, same, tail.removals)
    return _Plan(prefix, plan.key, scan, removed, out, removals, member_ids, members_before, ends, events,
                 anchor_ids)  # fmt: skip


def _events(
    anchor_ids: list[str],
    member_ids: list[str],
    compress: bool,
    selected: int,
    kept: int,
    tool_history: Any,
) -> list[Event]:
    """The stage's event (and the overflow event when the cap cut the selection)."""
    strategy = "tool_history_compression" if compress else "tool_history_drop"
    verb = "compressed" if compress else "dropped"
    events = [
        Event(
            kind="tool_history",
            title=f"tool history: {len(anchor_ids)} group(s) {verb} ({strategy})",
            message_ids=member_ids,
            # shared with the plan: never changed while held (`engine.lineage`), like the rest of a result
            data={"strategy": strategy, "groups": len(anchor_ids), "anchorIds": anchor_ids},
        )
    ]
    if selected > kept:
        events.append(
            Event(
                kind="overflow",
                title=f"tool history: {selected} groups selected, maxInteractionGroups "
                f"{tool_history.max_interaction_groups} kept the latest {kept} (keep-latest)",
                data={"selected": selected, "kept": kept, "cap": tool_history.max_interaction_groups},
            )
        )
    return events


def _select_kept(groups: list[ToolGroup], tool_history: Any, scan: GroupScan) -> tuple[list[ToolGroup], int]:
    """The groups to keep (of `groups`, the complete groups of `scan`), and how many the strategy selected
    before the `maxInteractionGroups` cap."""
    strategy = tool_history.strategy
    if strategy == "none":
        kept = list(groups)
    elif strategy == "per-run":  # run ordinals never decrease along the groups (a scan counts user inputs)
        newest_run = groups[-1].run_ordinal
        runs = tool_history.keep_latest_runs
        floor_ordinal = max(0, newest_run - runs + 1)
        kept = groups[bisect_left(groups, floor_ordinal, key=lambda g: g.run_ordinal) :] if runs > 0 else []
    else:  # per-pair
        plain = list(filterfalse(_IS_CHECKPOINT, groups)) if scan.any_checkpoint else groups
        count = tool_history.keep_latest_tool_pairs
        kept = plain[max(0, len(plain) - count) :] if count > 0 else []  # JS slice(-count): all when fewer
    checkpoint = _latest_checkpoint(groups) if scan.any_checkpoint else None
    if checkpoint is not None and all(checkpoint is not k for k in kept):
        kept.append(checkpoint)
    if scan.repeated_anchor:
        kept = _same_anchor_ids(groups, kept)
    cap = tool_history.max_interaction_groups
    if len(kept) <= cap:
        return kept, len(kept)
    if tool_history.overflow_strategy == "fail-fast":
        raise ContextProviderError(
            f"{len(kept)} tool interaction groups exceed toolHistory.maxInteractionGroups ({cap})",
            code=TOOL_HISTORY_OVERFLOW,
            fatal=True,
            provider_name=PROVIDER_NAME,
        )
    chosen = _keep_latest(kept, checkpoint, cap)
    return (_same_anchor_ids(kept, chosen) if scan.repeated_anchor else chosen), len(kept)


def _same_anchor_ids(groups: list[ToolGroup], kept: list[ToolGroup]) -> list[ToolGroup]:
    """linnkit keeps groups by anchor id: a group whose anchor shares its id with a kept one's is kept too
    (repeated message ids); `kept` itself when no other group shares one."""
    ids = set(map(_ANCHOR_ID, kept))
    if sum(map(ids.__contains__, map(_ANCHOR_ID, groups))) == len(kept):  # in C: no Python loop per group
        return kept
    return [g for g in groups if g.anchor_id in ids]


def _removed(groups: list[ToolGroup], kept: list[ToolGroup]) -> list[ToolGroup]:
    """The groups not kept, in order: the groups before the kept ones when those are the latest in order
    (the usual selection, read without a walk over every group; in the line of `groups`, `engine.lineage`:
    a copy, and the free of the last plan's, were two passes over every group at each user input)."""
    cut = len(groups) - len(kept)
    if cut >= 0 and all(a is b for a, b in zip(kept, groups[cut:], strict=True)):
        return head(groups, cut)
    kept_ids = {id(k) for k in kept}
    return [g for g in groups if id(g) not in kept_ids]


def _latest_checkpoint(groups: list[ToolGroup]) -> ToolGroup | None:
    checkpoints = list(filter(_IS_CHECKPOINT, groups))
    return max(checkpoints, key=lambda g: g.end_index) if checkpoints else None


def _keep_latest(kept: list[ToolGroup], checkpoint: ToolGroup | None, cap: int) -> list[ToolGroup]:
    """Keep the latest checkpoint group, then the newest groups (by endIndex) up to the cap."""
    chosen = [checkpoint] if checkpoint is not None else []
    ids = {checkpoint.anchor_id} if checkpoint is not None else set()
    for group in sorted(kept, key=lambda g: g.end_index, reverse=True):
        if len(ids) >= cap:  # linnkit counts distinct anchor ids
            break
        if group is not checkpoint:
            chosen.append(group)
            ids.add(group.anchor_id)
    return chosen


@dataclass(slots=True)
class _Applied:
    entries: list[Entry]
    removals: list[Removal]
    member_ids: list[str]


def _apply(
    entries: list[Entry], start: int, end: int, removed: list[ToolGroup], *, compress: bool
) -> _Applied:
    """The output of `entries[start:end]` with the `removed` groups (all inside it) dropped or compressed."""
    strategy = "tool_history_compression" if compress else "tool_history_drop"
    drop_indices: set[int] = set()
    replacements: dict[int, Entry] = {}
    removals: list[Removal] = []
    member_ids: list[str] = []
    for group in removed:
        indices = group.indices
        members = tuple([entries[i].message for i in indices])
        drop_indices.update(indices)
        member_ids += [m.id for m in members]
        origins = merged_origins(entries, indices)
        replacement_id = None
        if compress:
            message = _compressed_message(group, members)
            replacement_id = message.id
            replacements[group.anchor_index] = Entry(message, origins, True)
        removals.append(Removal(origins, strategy, replacement_id))
    out: list[Entry] = []
    for index in range(start, end):
        if index in replacements:
            out.append(replacements[index])
        elif index not in drop_indices:
            out.append(entries[index])
    return _Applied(out, removals, member_ids)


# Compressed text depends only on the group's messages: rebuilds after a policy change reuse it, so the
# text (and, through the tokenizer's content cache, its token count) is made once per group.
_CACHE: dict[tuple[Any, ...], tuple[tuple[AiMessage, ...], AiMessage]] = {}
_CACHE_LIMIT = 50_000


def _compressed_message(group: ToolGroup, members: tuple[AiMessage, ...]) -> AiMessage:
    """The message replacing `group`, whose messages are `members` (its anchor, then its outputs)."""
    key = (*map(id, members), group.is_checkpoint, active_copy())
    hit = _CACHE.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], members, strict=True)):
        return hit[1]
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    message = _make_compressed_message(group, members)
    _CACHE[key] = (members, message)
    return message


def _make_compressed_message(group: ToolGroup, members: tuple[AiMessage, ...]) -> AiMessage:
    anchor, outputs = members[0], members[1:]
    answers: dict[str | None, list[AiMessage]] = {}  # outputs by the call they answer, in order
    for output in outputs:
        answers.setdefault(output.tool_call_id, []).append(output)
    words = summary_templates()
    calls = [c for c in anchor.tool_calls if js_trim(call_id(c))]
    parts = [_describe_call(call, answers.get(call_id(call), []), words) for call in calls]
    return AiMessage(
        id=created_id("compressed", anchor.id),
        role="assistant",
        type="final_answer",
        content=words["call_separator"].join(parts) + words["run_end"],
        timestamp=anchor.timestamp,
        metadata={
            "isCompressedToolHistory": True,
            "replacementSourceIds": list(dict.fromkeys([m.id for m in members])),
            "compressedToolCallIds": group.call_ids,
            "compressedToolNames": group.tool_names,
            "toolInteractionGroupSize": len(group.call_ids),
            "containsCheckpoint": group.is_checkpoint,
        },
    )


def _describe_call(call: dict[str, Any], outputs: list[AiMessage], words: Mapping[str, str]) -> str:
    name = call_name(call)
    raw = (call.get("function") or {}).get("arguments")
    args = parse_args(raw) if isinstance(raw, str) else {}  # linnkit parses only string arguments
    if not isinstance(args, dict):
        args = {}
    summaries = [summarize_output(output_text(o), tool_name=name, tool_args=args) for o in outputs]
    shown = _format_args(args)
    call_args = words["call_args"].format(args=shown) if shown else ""
    return words["call"].format(name=name, args=call_args, results=words["result_separator"].join(summaries))


def _format_args(args: dict[str, Any]) -> str:
    """`k=JSON(v), …` over the arguments that are not null, in JavaScript key order ("" when none)."""
    return ", ".join([f"{k}={js_json(args[k])}" for k in js_key_order(args) if args[k] is not None])
