"""Re-inject a session's fences as if the host had used another descriptor (role, placement, kind name).

A recorded session holds its fences as `context_injection` messages at the place their descriptor put
them. When the playground edits a descriptor, `reinject` moves those messages to where the edited
descriptor would have put them in the same turn, so the build shows the effect of the edit. Kinds that
were not edited are left exactly as recorded (the CLI's builds of the same files stay identical).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from engine.fences import FenceDescriptor
from engine.messages import AiMessage

BEFORE_USER = frozenset({"after-system", "before-current-user"})


def _is_fence_of(message: AiMessage, kinds: Mapping[str, FenceDescriptor]) -> bool:
    return message.type == "context_injection" and message.fence_kind in kinds


def _anchor(messages: Sequence[AiMessage], index: int) -> str | None:
    """Id of the user_input the fence at `index` was injected for, judged by its recorded placement."""
    users = [i for i, m in enumerate(messages) if m.type == "user_input"]
    after = [i for i in users if i > index]
    before = [i for i in users if i < index]
    if messages[index].meta("fencePlacement") in BEFORE_USER:
        chosen = after[0] if after else (before[-1] if before else None)
    else:
        chosen = before[-1] if before else (after[0] if after else None)
    return messages[chosen].id if chosen is not None else None


def _insert_at(messages: list[AiMessage], placement: str, anchor: str | None, placed: int) -> int:
    """Where a fence with `placement` goes; `placed` counts fences already put at this spot."""
    ids = [m.id for m in messages]
    if placement == "after-system" or anchor is None:
        start = next((i + 1 for i, m in enumerate(messages) if m.type == "system_prompt"), 0)
        return start + placed
    user = ids.index(anchor)
    if placement == "before-current-user":
        return user
    if placement == "after-current-user":
        return user + 1 + placed
    end = next((i for i in range(user + 1, len(messages)) if messages[i].type == "user_input"), len(messages))
    outputs = [i for i in range(user + 1, end) if messages[i].type == "tool_output"]
    return outputs[-1] + 1 + placed if outputs else end


def reinject(messages: Sequence[AiMessage], changes: Mapping[str, FenceDescriptor]) -> list[AiMessage]:
    """The session with the fences of each recorded kind in `changes` re-placed by its new descriptor.

    `changes` maps the kind recorded in the messages to the descriptor now in effect (which may carry
    a new kind name). Each fence keeps its turn; its role, `fenceKind` and `fencePlacement` follow the
    descriptor.
    """
    if not changes:
        return list(messages)
    moving = [(i, _anchor(messages, i)) for i, m in enumerate(messages) if _is_fence_of(m, changes)]
    out = [m for m in messages if not _is_fence_of(m, changes)]
    placed: dict[tuple[str, str | None], int] = {}
    for index, anchor in moving:
        message = messages[index]
        descriptor = changes[message.fence_kind or ""]
        moved = message.with_(role=descriptor.llm_role).with_metadata(
            fenceKind=descriptor.kind, fencePlacement=descriptor.placement
        )
        spot = (descriptor.placement, anchor)
        out.insert(_insert_at(out, descriptor.placement, anchor, placed.get(spot, 0)), moved)
        placed[spot] = placed.get(spot, 0) + 1
    return out
