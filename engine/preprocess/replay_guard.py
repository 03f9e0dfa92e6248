"""ToolReplayProtocolGuard (priority 0.5): providers that need reasoning sidecars to replay tool calls
(spec §5.1). Historical groups without `reasoning_details` are degraded to text or flagged."""

from __future__ import annotations

from typing import Any

from engine.groups import ToolGroup, build_groups, last_user_input_index
from engine.jsvalues import js_json, js_trim
from engine.messages import AiMessage, call_id, call_name
from engine.preprocess.base import (
    Entry,
    Removal,
    StageOutput,
    created_id,
    merged_origins,
    messages_of,
    parse_args,
)
from engine.result import Event

DEGRADE = "degrade_to_text"
EMPTY_FIELD = "provider_empty_replay_field"
REASON = "missing_required_reasoning_details"
STRATEGY = "tool_replay_protocol_guard"


def guard_tool_replay(entries: list[Entry], provider_replay: Any, checkpoint_tool: str) -> StageOutput:
    behavior = getattr(provider_replay, "missing_sidecar_behavior", None) or "allow"
    required = bool(getattr(provider_replay, "requires_reasoning_details_for_tool_replay", False))
    if not required or behavior == "allow":
        return StageOutput.unchanged(entries)
    messages = messages_of(entries)
    if not any(m.type == "tool_calls" for m in messages):
        return StageOutput.unchanged(entries)
    last_user = last_user_input_index(messages)
    run_start = last_user if last_user is not None else len(messages)
    targets = [
        g
        for g in build_groups(messages, checkpoint_tool=checkpoint_tool)
        if g.complete and g.end_index < run_start and not _has_sidecar(messages[g.anchor_index])
    ]
    if not targets:
        return StageOutput.unchanged(entries)
    if behavior == DEGRADE:
        return _degrade(entries, targets)
    return _flag(entries, targets, behavior)


def _has_sidecar(anchor: AiMessage) -> bool:
    details = anchor.meta("reasoning_details")
    return isinstance(details, list) and len(details) > 0


def _degrade(entries: list[Entry], targets: list[ToolGroup]) -> StageOutput:
    messages = messages_of(entries)
    drop: set[int] = set()
    replacements: dict[int, Entry] = {}
    removals = []
    for group in targets:
        message = _degraded_message(group, messages)
        origins = merged_origins(entries, group.indices)
        replacements[group.anchor_index] = Entry(message, origins, True)
        drop.update(group.indices)
        removals.append(Removal(origins, STRATEGY, message.id, "degraded to text: no reasoning_details"))
    out = [replacements.get(i, e) for i, e in enumerate(entries) if i in replacements or i not in drop]
    return StageOutput(out, STRATEGY, removals, [_event(targets, messages, DEGRADE)])


def _degraded_message(group: ToolGroup, messages: list[AiMessage]) -> AiMessage:
    anchor = messages[group.anchor_index]
    lines = [js_trim(anchor.content)] if js_trim(anchor.content) else []
    calls = [c for c in anchor.tool_calls if js_trim(call_id(c))]
    outputs = [messages[i] for i in group.output_indices]
    for call in calls:
        lines.append(f"Tool call {call_name(call)} args={_compact_args(call)}")
        answers = [o for o in outputs if o.tool_call_id == call_id(call)]
        for output in answers or [None]:
            raw = "" if output is None else _raw(output)
            lines.append(f"Tool result {call_id(call)}: {raw}")
    return AiMessage(
        id=created_id("degraded", anchor.id),
        role="assistant",
        type="final_answer",
        content="\n\n".join(lines),
        timestamp=anchor.timestamp,
        metadata={
            "isDegradedToolReplay": True,
            "degradationReason": REASON,
            "replacementSourceIds": list(dict.fromkeys(messages[i].id for i in group.indices)),
            "degradedToolCallIds": group.call_ids,
            "degradedToolNames": group.tool_names,
            "toolInteractionGroupSize": len(group.call_ids),
        },
    )


def _compact_args(call: dict) -> str:
    """The call's arguments as linnkit re-serialises them: a parsed JSON object, else `{}`."""
    raw = (call.get("function") or {}).get("arguments")
    parsed = parse_args(raw) if isinstance(raw, str) else None
    return js_json(parsed if isinstance(parsed, dict) else {})


def _raw(output: AiMessage) -> str:
    raw = output.raw_output
    return raw if raw is not None and js_trim(raw) else output.content


def _flag(entries: list[Entry], targets: list[ToolGroup], behavior: str) -> StageOutput:
    messages = messages_of(entries)
    out = list(entries)
    for group in targets:
        anchor = messages[group.anchor_index]
        flagged = anchor.with_metadata(
            provider_empty_replay_field=True,
            providerSidecarMissingBehavior=behavior,
            providerSidecarMissingReason=REASON,
            providerSidecarMissingSourceIds=[messages[i].id for i in group.indices],
            providerSidecarMissingToolCallIds=group.call_ids,
            providerSidecarMissingToolNames=group.tool_names,
        )
        out[group.anchor_index] = Entry(flagged, entries[group.anchor_index].origins)
    return StageOutput(out, STRATEGY, [], [_event(targets, messages, behavior)])


def _event(targets: list[ToolGroup], messages: list[AiMessage], behavior: str) -> Event:
    return Event(
        kind="replay_guard",
        title=f"provider replay: {len(targets)} tool group(s) without reasoning_details → {behavior}",
        message_ids=tuple(messages[i].id for g in targets for i in g.indices),
        data={"behavior": behavior, "groups": len(targets)},
    )
