"""Fence lifetime (priority 15, spec §4): registered `turn-only` fences of earlier turns leave the list.

Positional, as linnkit 0.21: any turn-only fence before the latest `user_input` (all of them when there
is none) is removed; persisted and unregistered fences stay.
"""

from __future__ import annotations

from engine.groups import last_user_input_index
from engine.preprocess.base import Entry, Removal, StageOutput, messages_of
from engine.result import Event

STRATEGY = "fence_lifetime"


def apply_fence_lifetime(entries: list[Entry], registry) -> StageOutput:
    messages = messages_of(entries)
    last_user = last_user_input_index(messages)
    limit = last_user if last_user is not None else len(messages)
    drop = [i for i in range(limit) if _is_turn_only(messages[i], registry)]
    if not drop:
        return StageOutput.unchanged(entries)
    removed = set(drop)
    out = [e for i, e in enumerate(entries) if i not in removed]
    removals = [
        Removal(entries[i].origins, STRATEGY, None, "turn-only fence of an earlier turn") for i in drop
    ]
    event = Event(
        kind="fence_lifetime",
        title=f"fence lifetime: {len(drop)} turn-only fence(s) of earlier turns removed",
        message_ids=tuple(messages[i].id for i in drop),
        data={"kinds": sorted({messages[i].fence_kind or "" for i in drop})},
    )
    return StageOutput(out, STRATEGY, removals, [event])


def _is_turn_only(message, registry) -> bool:
    if message.type != "context_injection" or message.fence_kind is None:
        return False
    descriptor = registry.get(message.fence_kind)
    return descriptor is not None and descriptor.lifetime == "turn-only"
