"""Current-turn message assembler (priority 10, spec §4): this turn's fences join the system prompt and
the current user message, so that the positional lifetime rule cannot strip them."""

from __future__ import annotations

import re

from engine.groups import last_user_input_index
from engine.jsvalues import js_trim
from engine.messages import AiMessage
from engine.preprocess.base import Entry, Removal, StageOutput, merged_origins, messages_of
from engine.result import Event

STRATEGY = "current_turn_message_assembly"
_USER_REQUEST = re.compile(r"<user_request(?:\s[^>]*)?>[\s\S]*</user_request>")


def is_fence(message: AiMessage, role: str, placement: str, registry) -> bool:
    """A registered fence whose *descriptor* has this role and placement (linnkit reads the registry)."""
    if message.type != "context_injection" or message.fence_kind is None:
        return False
    descriptor = registry.get(message.fence_kind)
    return descriptor is not None and descriptor.llm_role == role and descriptor.placement == placement


def format_fence(message: AiMessage, registry) -> str:
    return registry.format(message.fence_kind, message.content, message.meta("fenceAttrs") or {})


def assemble_current_turn(entries: list[Entry], registry) -> StageOutput:
    entries, system_kinds, absorbed_system = _into_system_prompt(entries, registry)
    entries, user_kinds, absorbed_user = _into_user_input(entries, registry)
    kinds = system_kinds + user_kinds
    if not kinds:
        return StageOutput.unchanged(entries)
    removals = [Removal(origins, STRATEGY, target) for origins, target in absorbed_system + absorbed_user]
    event = Event(
        kind="assembly",
        title=f"current turn: fences {', '.join(kinds)} merged into the system prompt / user request",
        data={"assembledFenceKinds": kinds},
    )
    return StageOutput(entries, STRATEGY, removals, [event])


def _into_system_prompt(entries: list[Entry], registry):
    messages = messages_of(entries)
    start = next(
        (i for i, m in enumerate(messages) if m.type == "system_prompt" and m.role == "system"), None
    )
    if start is None:
        return entries, [], []
    end = start + 1
    while end < len(messages) and is_fence(messages[end], "system", "after-system", registry):
        end += 1
    if end == start + 1:
        return entries, [], []
    fences = messages[start + 1 : end]
    prompt = messages[start]
    merged = prompt.with_(
        content="\n\n".join([prompt.content, *(format_fence(f, registry) for f in fences)]),
        metadata={**(prompt.metadata or {}), "assembledFenceKinds": [f.fence_kind for f in fences]},
    )
    absorbed = [(entries[i].origins, prompt.id) for i in range(start + 1, end)]
    new_entry = Entry(merged, merged_origins(entries, list(range(start, end))))
    return [*entries[:start], new_entry, *entries[end:]], [f.fence_kind for f in fences], absorbed


def _into_user_input(entries: list[Entry], registry):
    messages = messages_of(entries)
    last_user = last_user_input_index(messages)
    if last_user is None:
        return entries, [], []
    first = last_user
    while first > 0 and is_fence(messages[first - 1], "user", "before-current-user", registry):
        first -= 1
    end = last_user + 1
    while end < len(messages) and is_fence(messages[end], "user", "after-current-user", registry):
        end += 1
    if first == last_user and end == last_user + 1:
        return entries, [], []
    before, after = messages[first:last_user], messages[last_user + 1 : end]
    user = messages[last_user]
    parts = [format_fence(f, registry) for f in before]
    parts.append(_wrapped(user.content))
    parts.extend(format_fence(f, registry) for f in after)
    kinds = [f.fence_kind for f in (*before, *after)]
    merged = user.with_(
        content="\n\n".join(parts),
        metadata={**(user.metadata or {}), "assembledFenceKinds": kinds},
    )
    absorbed = [(entries[i].origins, user.id) for i in range(first, end) if i != last_user]
    new_entry = Entry(merged, merged_origins(entries, list(range(first, end))))
    return [*entries[:first], new_entry, *entries[end:]], kinds, absorbed


def _wrapped(text: str) -> str:
    trimmed = js_trim(text)
    if _USER_REQUEST.search(trimmed):
        return trimmed
    return f"<user_request>\n{trimmed}\n</user_request>"
