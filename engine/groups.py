"""Tool interaction groups: the atomic unit of every keep/drop decision (spec §1).

A group is an assistant `tool_calls` message (the anchor) plus the `tool_output`s that answer its calls.
Every stage that keeps or drops tool messages works on whole groups, so a call and its output never part.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from itertools import compress
from operator import attrgetter, is_

from engine.jsvalues import js_trim
from engine.lanes import LaneLists
from engine.lineage import continued, grown
from engine.messages import AiMessage, call_id, call_name

CHECKPOINT_TOOL = "context_checkpoint"  # linnkit's built-in checkpoint tool name
CHECKPOINT_MARKER = f'"{CHECKPOINT_TOOL}"'


_ANCHOR_INDEX = attrgetter("anchor_index")
FOLD = 8  # a scan's own declarations fold into the shared ones past an eighth of them (and FOLD more)


@dataclass(slots=True)
class ToolGroup:
    anchor_index: int
    anchor_id: str
    call_ids: list[str]
    tool_names: list[str]
    run_ordinal: int
    output_indices: list[int]
    answered: list[str]  # the call ids an output answered, each once (a list: a set took 216 bytes a group)
    is_checkpoint: bool = False

    @property
    def start_index(self) -> int:
        return self.anchor_index

    @property
    def end_index(self) -> int:
        return max(self.output_indices, default=self.anchor_index)

    @property
    def complete(self) -> bool:
        # linnkit gives an output to the first call with its id: a call id declared twice is never answered
        answered, call_ids = self.answered, self.call_ids
        return all(cid in answered for cid in call_ids) and len(set(call_ids)) == len(call_ids)

    @property
    def indices(self) -> list[int]:
        return [self.anchor_index, *self.output_indices]


def is_anchor(message: AiMessage) -> bool:
    return (
        message.role == "assistant"
        and message.type == "tool_calls"
        and any(js_trim(call_id(c)) for c in message.tool_calls)
    )


# Rebuilds after a policy change see the very same message objects, and a replay's next step the last
# step's and a few more: a grouping goes on from the recent scan of the longest message list the new one
# starts with (a scan from the start was a tenth of a long default-policy step). The scans hold their
# messages, so an id reused by a new object can never match a stale scan.
_SCANS: LaneLists[tuple[tuple[AiMessage, ...], str, int | None, GroupScan]] = LaneLists(4)


def build_groups(
    messages: Sequence[AiMessage],
    *,
    checkpoint_tool: str = "context_checkpoint",
    max_pairing_distance: int | None = None,
) -> list[ToolGroup]:
    """Pair tool calls with outputs; an output joins the group that most recently declared its id.

    The returned groups are shared between calls with the same messages: treat them as read-only.
    """
    return group_scan(messages, checkpoint_tool, max_pairing_distance).groups


def group_scan(
    messages: Sequence[AiMessage], checkpoint_tool: str, max_pairing_distance: int | None
) -> GroupScan:
    """The scan `build_groups` reads its groups from, which can go on when `messages` grows."""
    frozen = tuple(messages)
    start = _longest_start(frozen, checkpoint_tool, max_pairing_distance)
    if start.length == len(frozen):
        return start
    scan = start.extend(frozen, checkpoint_tool, max_pairing_distance)
    _SCANS.add((frozen, checkpoint_tool, max_pairing_distance, scan))
    return scan


def _longest_start(messages: tuple[AiMessage, ...], checkpoint_tool: str, distance: int | None) -> GroupScan:
    """The recent scan of the longest message list that `messages` starts with (the same objects), made
    with the same settings; an empty scan when there is none."""
    held = [
        (frozen, scan)
        for frozen, tool, held_distance, scan in _SCANS.items()
        if tool == checkpoint_tool and held_distance == distance and len(frozen) <= len(messages)
    ]
    for frozen, scan in sorted(held, key=lambda item: len(item[0]), reverse=True):
        if all(map(is_, frozen, messages)):  # compared in C, up to the held list's length
            return scan
    return GroupScan()


@dataclass(slots=True)
class GroupScan:
    """The grouping of a message list, as a left-to-right scan that can go on when the list grows (a
    replay's next step): `extend` continues over the new messages only, sharing every group they leave
    unchanged. The groups are read-only for callers."""

    length: int = 0  # messages scanned
    groups: list[ToolGroup] = field(default_factory=list)
    complete: list[bool] = field(default_factory=list)  # per group: every call answered
    # call id -> the group that declared it last: this scan's own, over `declared_below`
    declared: dict[str, ToolGroup] = field(default_factory=dict)
    user_inputs: int = 0
    # Facts a compressor reads at each user input, so it need not look at every group: no two groups' anchors
    # share an id, and no group is a checkpoint. `anchor_at` (anchor id -> index) is shared by every scan
    # extended from this one, along any list: an id met at another index, by any of them, makes
    # `repeated_anchor` true; a false alarm only costs the look it spares.
    anchor_at: dict[str, int] = field(default_factory=dict)
    repeated_anchor: bool = False
    any_checkpoint: bool = False
    # the complete groups, made when first asked; until then, the complete groups of the scan this one was
    # extended from (if made) and the first position whose group this one changed or added
    made_complete: list[ToolGroup] | None = field(default=None, repr=False, compare=False)
    extended_from: tuple[list[ToolGroup] | None, int] | None = field(default=None, repr=False, compare=False)
    # the declarations of the scans this one goes on from, shared with them (never changed): a scan copies
    # only its own, folded in now and then (a copy of every call's was a pass over the session at each
    # user input's compression)
    declared_below: dict[str, ToolGroup] = field(default_factory=dict, repr=False, compare=False)

    def complete_groups(self) -> list[ToolGroup]:
        """The complete groups, in order (read only): those of the scan this one was extended from up to
        its first changed group, then the rest (in the line of the earlier list, `engine.lineage`: a copy
        of it was a pass over every group at each user input)."""
        if self.made_complete is None:
            earlier, first = self.extended_from or (None, 0)
            if earlier is None:
                self.made_complete = grown([], compress(self.groups, self.complete))
            else:
                same = len(earlier)
                if first < len(self.groups):
                    same = bisect_left(earlier, self.groups[first].anchor_index, key=_ANCHOR_INDEX)
                tail = list(compress(self.groups[first:], self.complete[first:]))
                self.made_complete = continued(earlier, same, tail)
            self.extended_from = None
        return self.made_complete

    def extend(
        self, messages: Sequence[AiMessage], checkpoint_tool: str, max_pairing_distance: int | None = None
    ) -> GroupScan:
        """The scan of `messages`, whose first `self.length` are the messages this scan has seen. Its group
        lists are this scan's up to the first group the new messages changed, then the rest (in the line of
        this scan's lists, `engine.lineage`: a copy of them was a pass over every group at every step)."""
        below, own = self.declared_below, self.declared
        if len(own) > len(below) // FOLD + FOLD:
            below, own = {**below, **own}, {}
        scan = GroupScan(
            self.length,
            [],
            [],
            dict(own),
            self.user_inputs,
            self.anchor_at,
            self.repeated_anchor,
            self.any_checkpoint,
            declared_below=below,
        )
        earlier = self.groups
        changed: dict[int, tuple[ToolGroup, int]] = {}  # id -> (group made or copied here, its position)
        added = 0
        for index in range(self.length, len(messages)):
            message = messages[index]
            kind = message.type
            if kind == "user_input":
                scan.user_inputs += message.role == "user"
            elif kind == "tool_calls" and message.role == "assistant":  # an anchor if a call has an id
                calls = [c for c in message.tool_calls if js_trim(call_id(c))]
                if calls:
                    group = scan._new_group(message, index, calls)
                    changed[id(group)] = (group, len(earlier) + added)
                    added += 1
            elif kind == "tool_output" and message.role == "tool":  # linnkit pairs a tool's output only
                answered = message.tool_call_id
                group = scan.declarer(answered) if answered is not None and js_trim(answered) else None
                if group is None:
                    continue
                if max_pairing_distance is not None and index - group.anchor_index > max_pairing_distance:
                    continue
                if id(group) not in changed:  # one of this scan's groups: `earlier` holds it
                    group, position = scan._copy(group, earlier)
                    changed[id(group)] = (group, position)
                group.output_indices.append(index)
                if answered not in group.answered:
                    group.answered.append(answered)
        at: dict[int, ToolGroup] = {}
        for group, position in changed.values():
            group.is_checkpoint = _is_checkpoint(group, messages, checkpoint_tool)
            scan.any_checkpoint = scan.any_checkpoint or group.is_checkpoint
            at[position] = group
        first = min(at, default=len(earlier))
        positions = range(first, len(earlier) + added)
        scan.groups = continued(earlier, first, [at[p] if p in at else earlier[p] for p in positions])
        complete = [at[p].complete if p in at else self.complete[p] for p in positions]
        scan.complete = continued(self.complete, first, complete)
        scan.length = len(messages)
        scan.extended_from = (self.made_complete, first)
        return scan

    def declarer(self, call: str) -> ToolGroup | None:
        """The group that declared the call id `call` last."""
        group = self.declared.get(call)
        return self.declared_below.get(call) if group is None else group

    def _new_group(self, anchor: AiMessage, index: int, calls: list[dict]) -> ToolGroup:
        """A new group for the anchor at `index`, declaring its `calls` (those with an id)."""
        group = ToolGroup(
            anchor_index=index,
            anchor_id=anchor.id,
            call_ids=[call_id(c) for c in calls],
            tool_names=[call_name(c) for c in calls],
            run_ordinal=self.user_inputs,
            output_indices=[],
            answered=[],
        )
        if self.anchor_at.setdefault(anchor.id, index) != index:
            self.repeated_anchor = True
        for cid in group.call_ids:
            self.declared[cid] = group
        return group

    def _copy(self, group: ToolGroup, earlier: list[ToolGroup]) -> tuple[ToolGroup, int]:
        """A copy of one of `earlier`'s groups (shared with the scans before), and its position there."""
        copy = replace(group, output_indices=list(group.output_indices), answered=list(group.answered))
        position = bisect_left(earlier, group.anchor_index, key=_ANCHOR_INDEX)
        for cid in group.call_ids:
            if self.declarer(cid) is group:
                self.declared[cid] = copy
        return copy, position


def _is_checkpoint(group: ToolGroup, messages: Sequence[AiMessage], checkpoint_tool: str) -> bool:
    """The group calls `checkpoint_tool`, or an output answers a `context_checkpoint` call (linnkit's name
    whatever the trigger tool is) or carries the checkpoint marker in its raw output."""
    names = group.tool_names
    if checkpoint_tool in names:
        return True
    builtin = CHECKPOINT_TOOL in names
    first_name = dict(zip(reversed(group.call_ids), reversed(names), strict=True))  # the first call per id
    return any(
        CHECKPOINT_MARKER in (messages[i].raw_output or "")
        or (builtin and first_name.get(messages[i].tool_call_id) == CHECKPOINT_TOOL)
        for i in group.output_indices
    )


def last_user_input_index(messages: Sequence[AiMessage]) -> int | None:
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].type == "user_input" and messages[index].role == "user":
            return index
    return None
