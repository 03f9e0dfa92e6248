"""CheckpointProvider (priority 2.5): when the agent called the checkpoint tool, everything before it is
pruned except a few groups, regardless of budget (spec §5.4)."""

from __future__ import annotations

import json

from engine.groups import ToolGroup, build_groups
from engine.jsvalues import js_trim
from engine.lanes import LaneLists
from engine.messages import call_name
from engine.pipeline import BuildContext, ProviderOutcome
from engine.providers.state import (
    CHECKPOINT,
    CHECKPOINT_PURGED,
    KEEP_WM,
    SKIP,
    ProviderReport,
    State,
    derived,
    own,
)
from engine.result import Event

NAME = "CheckpointProvider"
STRATEGY = "checkpoint_trim_before"


def checkpoint_summary(raw: str | None) -> str | None:
    """The checkpoint summary when `raw_output` is a checkpoint result; the content is never read."""
    if not raw:
        return None
    try:
        parsed = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(parsed, dict):
        return None
    # linnkit reads `data` first, then the top level; a blank summary is no checkpoint (`if (summary)`)
    for found in (parsed.get("data"), parsed):
        if isinstance(found, dict) and found.get("_type") == "context_checkpoint":
            summary = found.get("summary")
            if isinstance(summary, str):
                return summary or None
    return None


def find_checkpoint(states: list[State], tool_name: str) -> tuple[ToolGroup, str, list[ToolGroup]] | None:
    if _first_call(states, tool_name) is None:
        return None  # no call of the checkpoint tool: no group to look at (a cheap pass before grouping)
    messages = [s.message for s in states]
    groups = build_groups(messages, checkpoint_tool=tool_name)
    for group in reversed(groups):
        if tool_name not in group.tool_names:
            continue
        for index in group.output_indices:
            summary = checkpoint_summary(states[index].message.raw_output)
            if summary is not None:
                return group, summary, groups
    return None


# per set of starting states and tool name (`derived`): the position of the first message calling it, if any
_FIRST_CALLS: LaneLists[tuple[list[int], str, tuple[int | None]]] = LaneLists(4)


def _first_call(states: list[State], tool_name: str) -> int | None:
    """The position of the first `tool_calls` message calling `tool_name`. Read of the starting states'
    messages (working memory replaces only tool outputs' messages before this provider runs), so it is kept
    per set of starting states and carried to a grown set, whose new states alone are read: a pass over
    every message was a twentieth of a rebuild on 64,000 messages."""

    def make(start: int, base: tuple[int | None] | None) -> tuple[int | None]:
        if base is not None and base[0] is not None and base[0] < start:
            return base
        return (_first_from(states, start, tool_name),)

    return derived(_FIRST_CALLS, states, tool_name, make)[0]


def _first_from(states: list[State], start: int, tool_name: str) -> int | None:
    for position in range(start, len(states)):
        message = states[position].message
        if message.type == "tool_calls" and any(call_name(c) == tool_name for c in message.tool_calls):
            return position
    return None


def run_checkpoint(states: list[State], available: int, ctx: BuildContext) -> ProviderOutcome:
    report = ProviderReport(NAME)
    policy = ctx.policy.checkpoint
    # linnkit trims the name and falls back to its default when that leaves nothing
    found = find_checkpoint(states, js_trim(policy.trigger_tool_name) or "context_checkpoint")
    if found is None:
        return ProviderOutcome(report)
    group, summary, groups = found
    start = group.start_index
    earlier = [g for g in groups if g.complete and not g.is_checkpoint and g.start_index < start]
    keep_groups = [group, *(earlier[-policy.keep_pairs_before :] if policy.keep_pairs_before > 0 else [])]
    keep_set = {i for g in keep_groups for i in g.indices}
    promoted, purged = [], []
    for index in sorted(keep_set):
        if states[index].action == SKIP:
            state = own(states, index)
            state.keep(KEEP_WM, CHECKPOINT, STRATEGY)
            promoted.append(state.message.id)
    candidates = [i for i, s in enumerate(states[:start]) if i not in keep_set and not _exempt(s)]
    if not candidates:  # nothing before it may be pruned: linnkit reports no pruning (promotions stay)
        return ProviderOutcome(report)
    for index in candidates:
        if states[index].kept:
            state = own(states, index)  # a state working memory kept may be shared (a run's twin)
            state.drop(CHECKPOINT_PURGED, STRATEGY)
            purged.append(state.message.id)
    report.strategies.append(STRATEGY)
    event = Event(
        kind="checkpoint",
        title=f"checkpoint {group.anchor_id}: {len(purged)} message(s) before it pruned, "
        f"{len(keep_groups) - 1} earlier group(s) kept",
        message_ids=tuple(purged),
        data={
            "anchorId": group.anchor_id,
            "summary": summary,
            "purgedIds": purged,
            "promotedIds": promoted,
            "keptGroupAnchors": [g.anchor_id for g in keep_groups],
        },
    )
    return ProviderOutcome(report, (event,))


def _exempt(state: State) -> bool:
    if state.message.type == "history_summary":
        return False
    return state.action == "keep_core" or state.message.role == "system"
