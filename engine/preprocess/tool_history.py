"""ToolHistoryCompressor (priority 0): old tool groups are dropped or compressed to text (spec §5.1)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from engine.copyset import active_copy, summary_text
from engine.errors import TOOL_HISTORY_OVERFLOW, ContextProviderError
from engine.groups import ToolGroup, build_groups, last_user_input_index
from engine.jsvalues import js_json, js_key_order
from engine.messages import AiMessage, call_id, call_name
from engine.preprocess.base import (
    Entry,
    Removal,
    StageOutput,
    merged_origins,
    messages_of,
    new_id,
    parse_args,
)
from engine.result import Event
from engine.tool_summary import output_text, summarize_output

PROVIDER_NAME = "ToolHistoryCompressorPreprocessor"


@dataclass(slots=True)
class _Plan:
    """What compression made of the history before the last user input, reusable by a later build whose
    history starts with the very same entries (a replay's next step): only created ids change (each step
    has its own id scope); entries after the last user input pass through unchanged."""

    prefix: list[Entry]
    key: tuple[Any, ...]
    output: StageOutput  # for the prefix only
    replaced: list[tuple[int, int, str]]  # (removal index, output position, anchor id) per compressed group


_PLANS: list[_Plan] = []
_PLANS_KEPT = 4


def compress_tool_history(entries: list[Entry], tool_history: Any, checkpoint_tool: str) -> StageOutput:
    messages = messages_of(entries)
    last_user = last_user_input_index(messages)
    history_end = last_user if last_user is not None else len(messages)
    key = (tool_history, checkpoint_tool, active_copy())
    for plan in _PLANS:
        if plan.key == key and len(plan.prefix) == history_end and _starts_with(entries, plan.prefix):
            return _from_plan(plan, entries, history_end)
    prefix = entries[:history_end]
    output, replaced = _compress(prefix, messages[:history_end], tool_history, checkpoint_tool)
    _PLANS.insert(0, _Plan(prefix, key, output, replaced))
    del _PLANS[_PLANS_KEPT:]
    if output.entries is prefix:
        return StageOutput.unchanged(entries)
    out = output.entries + entries[history_end:]
    return StageOutput(out, output.strategy, list(output.removals), list(output.events))


def _starts_with(entries: list[Entry], prefix: list[Entry]) -> bool:
    return all(a is b for a, b in zip(prefix, entries, strict=False))


def _from_plan(plan: _Plan, entries: list[Entry], history_end: int) -> StageOutput:
    output = plan.output
    if output.entries is plan.prefix:
        return StageOutput.unchanged(entries)
    out, removals = list(output.entries), list(output.removals)
    for removal_index, position, anchor_id in plan.replaced:
        entry, fresh = out[position], new_id("compressed", anchor_id)
        m = entry.message
        if m.id != fresh:
            message = AiMessage(fresh, m.role, m.type, m.content, m.timestamp, m.metadata, m.extra)
            out[position] = Entry(message, entry.origins)
            removal = removals[removal_index]
            removals[removal_index] = Removal(removal.origins, removal.strategy, fresh, removal.note)
    return StageOutput(out + entries[history_end:], output.strategy, removals, list(output.events))


def _compress(
    entries: list[Entry], messages: list[AiMessage], tool_history: Any, checkpoint_tool: str
) -> tuple[StageOutput, list[tuple[int, int, str]]]:
    """Compression of the history before the last user input (`entries` end there)."""
    history_end = len(entries)
    if history_end < 2 or not any(m.role == "tool" or m.type == "tool_calls" for m in messages):
        return StageOutput.unchanged(entries), []
    groups = [g for g in build_groups(messages, checkpoint_tool=checkpoint_tool) if g.complete]
    if not groups:
        return StageOutput.unchanged(entries), []
    kept, selected = _select_kept(groups, tool_history)
    kept_ids = {id(k) for k in kept}
    removed = [g for g in groups if id(g) not in kept_ids]
    if not removed:
        return StageOutput.unchanged(entries), []
    output, replaced = _apply(entries, removed, compress=tool_history.retention_mode == "compress")
    if selected > len(kept):
        output.events.append(
            Event(
                kind="overflow",
                title=f"tool history: {selected} groups selected, maxInteractionGroups "
                f"{tool_history.max_interaction_groups} kept the latest {len(kept)} (keep-latest)",
                data={"selected": selected, "kept": len(kept), "cap": tool_history.max_interaction_groups},
            )
        )
    return output, replaced


def _select_kept(groups: list[ToolGroup], tool_history: Any) -> tuple[list[ToolGroup], int]:
    """The groups to keep, and how many the strategy selected before the `maxInteractionGroups` cap."""
    strategy = tool_history.strategy
    if strategy == "none":
        kept = list(groups)
    elif strategy == "per-run":
        newest_run = max(g.run_ordinal for g in groups)
        runs = tool_history.keep_latest_runs
        floor_ordinal = max(0, newest_run - runs + 1)
        kept = [g for g in groups if g.run_ordinal >= floor_ordinal] if runs > 0 else []
    else:  # per-pair
        plain = [g for g in groups if not g.is_checkpoint]
        count = tool_history.keep_latest_tool_pairs
        kept = plain[len(plain) - count :] if count > 0 else []
    checkpoint = _latest_checkpoint(groups)
    if checkpoint is not None and all(checkpoint is not k for k in kept):
        kept.append(checkpoint)
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
    return _keep_latest(kept, checkpoint, cap), len(kept)


def _latest_checkpoint(groups: list[ToolGroup]) -> ToolGroup | None:
    checkpoints = [g for g in groups if g.is_checkpoint]
    return max(checkpoints, key=lambda g: g.end_index) if checkpoints else None


def _keep_latest(kept: list[ToolGroup], checkpoint: ToolGroup | None, cap: int) -> list[ToolGroup]:
    """Keep the latest checkpoint group, then the newest groups (by endIndex) up to the cap."""
    chosen = [checkpoint] if checkpoint is not None else []
    for group in sorted(kept, key=lambda g: g.end_index, reverse=True):
        if len(chosen) >= cap:
            break
        if group is not checkpoint:
            chosen.append(group)
    return chosen


def _apply(
    entries: list[Entry], removed: list[ToolGroup], *, compress: bool
) -> tuple[StageOutput, list[tuple[int, int, str]]]:
    messages = messages_of(entries)
    strategy = "tool_history_compression" if compress else "tool_history_drop"
    drop_indices: set[int] = set()
    replacements: dict[int, Entry] = {}
    removals: list[Removal] = []
    for group in removed:
        indices = group.indices
        drop_indices.update(indices)
        origins = merged_origins(entries, indices)
        replacement_id = None
        if compress:
            message = _compressed_message(group, indices, messages)
            replacement_id = message.id
            replacements[group.anchor_index] = Entry(message, origins)
        removals.append(Removal(origins, strategy, replacement_id))
    out: list[Entry] = []
    positions: dict[int, int] = {}  # anchor index -> position of its compressed message in `out`
    for index, entry in enumerate(entries):
        if index in replacements:
            positions[index] = len(out)
            out.append(replacements[index])
        elif index not in drop_indices:
            out.append(entry)
    replaced = [
        (number, positions[g.anchor_index], g.anchor_id)
        for number, g in enumerate(removed)
        if g.anchor_index in positions
    ]
    verb = "compressed" if compress else "dropped"
    ids = tuple(messages[i].id for g in removed for i in g.indices)
    event = Event(
        kind="tool_history",
        title=f"tool history: {len(removed)} group(s) {verb} ({strategy})",
        message_ids=ids,
        data={"strategy": strategy, "groups": len(removed), "anchorIds": [g.anchor_id for g in removed]},
    )
    return StageOutput(out, strategy, removals, [event]), replaced


# Compressed text depends only on the group's messages: rebuilds after a policy change reuse it, so the
# text (and, through the tokenizer's content cache, its token count) is made once per group.
_CACHE: dict[tuple[Any, ...], tuple[tuple[AiMessage, ...], AiMessage]] = {}
_CACHE_LIMIT = 50_000


def _compressed_message(group: ToolGroup, indices: list[int], messages: list[AiMessage]) -> AiMessage:
    members = tuple(messages[i] for i in indices)
    key = (*map(id, members), group.is_checkpoint, active_copy())
    hit = _CACHE.get(key)
    if hit is not None and all(a is b for a, b in zip(hit[0], members, strict=True)):
        m = hit[1]
        fresh = new_id("compressed", members[0].id)  # a replay step gets its own ids, the text is reused
        # direct construction: dataclasses.replace costs several times more, once per group per step
        if m.id == fresh:
            return m
        return AiMessage(fresh, m.role, m.type, m.content, m.timestamp, m.metadata, m.extra)
    if len(_CACHE) >= _CACHE_LIMIT:
        _CACHE.clear()
    message = _make_compressed_message(group, messages)
    _CACHE[key] = (members, message)
    return message


def _make_compressed_message(group: ToolGroup, messages: list[AiMessage]) -> AiMessage:
    anchor = messages[group.anchor_index]
    outputs = [messages[i] for i in group.output_indices]
    calls = [c for c in anchor.tool_calls if call_id(c).strip()]
    parts = [_describe_call(call, [o for o in outputs if o.tool_call_id == call_id(call)]) for call in calls]
    source_ids = list(dict.fromkeys(messages[i].id for i in group.indices))
    return AiMessage(
        id=new_id("compressed", anchor.id),
        role="assistant",
        type="final_answer",
        content=summary_text("call_separator").join(parts) + summary_text("run_end"),
        timestamp=anchor.timestamp,
        metadata={
            "isCompressedToolHistory": True,
            "replacementSourceIds": source_ids,
            "compressedToolCallIds": group.call_ids,
            "compressedToolNames": group.tool_names,
            "toolInteractionGroupSize": len(group.call_ids),
            "containsCheckpoint": group.is_checkpoint,
        },
    )


def _describe_call(call: dict[str, Any], outputs: list[AiMessage]) -> str:
    name = call_name(call)
    raw = (call.get("function") or {}).get("arguments")
    args = parse_args(raw) if isinstance(raw, str) else {}  # linnkit parses only string arguments
    if not isinstance(args, dict):
        args = {}
    summaries = [summarize_output(output_text(o), tool_name=name, tool_args=args) for o in outputs]
    results = summary_text("result_separator").join(summaries)
    return summary_text("call", name=name, args=_format_args(args), results=results)


def _format_args(args: dict[str, Any]) -> str:
    shown = [f"{k}={js_json(args[k])}" for k in js_key_order(args) if args[k] is not None]
    return summary_text("call_args", args=", ".join(shown)) if shown else ""
