"""Wire formatters: final context messages → what the provider API receives (spec §5.6).

`to_openai` is linnkit's agent formatter (OpenAI Chat Completions, native tools). `to_anthropic` is a
host-side projection of that output onto the Anthropic Messages shape.
"""

from __future__ import annotations

import json
from typing import Any

from engine.jsvalues import js_json
from engine.messages import LEGACY_TYPES, AiMessage

PLAIN_TYPES = frozenset({"system_prompt", "user_input", "task_request", "task_completion"})


def format_message(message: AiMessage, registry=None) -> dict[str, Any] | None:
    """One message in OpenAI chat shape, or None when the formatter drops it."""
    kind = message.type
    if kind in LEGACY_TYPES:
        return None
    if kind == "tool_calls":
        return _format_tool_calls(message)
    if kind == "final_answer":
        return _with_sidecars({"role": "assistant", "content": message.content}, message)
    if kind == "tool_output":
        call_id = message.tool_call_id
        return {"role": "tool", "tool_call_id": call_id, "content": message.content} if call_id else None
    if kind in PLAIN_TYPES:
        return {"role": message.role, "content": message.content}
    if kind == "history_summary":
        return {"role": "system", "content": message.content}
    if kind == "thought":
        content = message.content if "<think>" in message.content else f"<think>{message.content}</think>"
        return {"role": "assistant", "content": content}
    if kind == "context_injection":
        return _format_fence(message, registry)
    if kind == "tool_code":
        return _format_tool_code(message)
    return None


def _format_tool_calls(message: AiMessage) -> dict[str, Any] | None:
    calls = message.meta("tool_calls")
    if not isinstance(calls, list):
        return None  # linnkit formats a tool_calls message only from its metadata.tool_calls
    wire: dict[str, Any] = {"role": "assistant", "content": message.content or None}
    if calls:  # linnkit sends `tool_calls: []` for an empty list, which providers reject; the port omits it
        wire["tool_calls"] = calls
    return _with_sidecars(wire, message)


def _with_sidecars(wire: dict[str, Any], message: AiMessage) -> dict[str, Any]:
    details = message.meta("reasoning_details")
    if isinstance(details, list) and details:
        wire["reasoning_details"] = details
    if message.meta("provider_empty_replay_field") is True:
        wire["provider_empty_replay_field"] = True
    return wire


def _format_fence(message: AiMessage, registry) -> dict[str, Any] | None:
    kind = message.fence_kind
    descriptor = registry.get(kind) if registry is not None and kind else None
    if descriptor is None:
        return None
    content = registry.format(kind, message.content, message.meta("fenceAttrs") or {})
    return {"role": descriptor.llm_role, "content": content}


def _format_tool_code(message: AiMessage) -> dict[str, Any] | None:
    name, args = message.meta("tool_name"), message.meta("args")
    if not (_js_truthy(name) and _js_truthy(args)):  # linnkit: `if (tool_name && args)`
        return None
    payload = js_json({"name": name, "arguments": args})
    return {"role": "assistant", "content": f"<tool_code>{payload}</tool_code>"}


def _js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value: empty lists and objects are true, 0 and "" false."""
    return isinstance(value, (list, dict)) or bool(value)


def to_anthropic(wire: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """Project OpenAI-shaped wire messages onto the Anthropic Messages API: `system` apart, tool calls as
    `tool_use` blocks, tool results as `tool_result` blocks in user turns, same-role turns merged."""
    system = [m["content"] for m in wire if m["role"] == "system" and m.get("content")]
    messages = []
    for role, indexes in anthropic_turns(wire):
        blocks = [block for i in indexes for block in _anthropic_blocks(wire[i])[1]]
        messages.append({"role": role, "content": blocks})
    return {"system": "\n\n".join(system), "messages": messages}


def anthropic_turns(wire: list[dict[str, Any]] | tuple[dict[str, Any], ...]) -> list[tuple[str, list[int]]]:
    """The Anthropic messages `to_anthropic` makes of a wire: each one's role and the indexes of the
    OpenAI-shaped messages it carries (system messages apart; consecutive same-role turns merged)."""
    turns: list[tuple[str, list[int]]] = []
    for index, message in enumerate(wire):
        if message["role"] == "system":
            continue
        role = "user" if message["role"] == "tool" else message["role"]
        if turns and turns[-1][0] == role:
            turns[-1][1].append(index)
        else:
            turns.append((role, [index]))
    return turns


def _anthropic_blocks(message: dict[str, Any]) -> tuple[str, list[dict[str, Any]]]:
    if message["role"] == "tool":
        block = {"type": "tool_result", "tool_use_id": message["tool_call_id"], "content": message["content"]}
        return "user", [block]
    blocks: list[dict[str, Any]] = []
    if message.get("content"):
        blocks.append({"type": "text", "text": message["content"]})
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        blocks.append(
            {
                "type": "tool_use",
                "id": call.get("id"),
                "name": function.get("name"),
                "input": _parsed_input(function.get("arguments")),
            }
        )
    return message["role"], blocks


def _parsed_input(arguments: Any) -> Any:
    if not isinstance(arguments, str):
        return arguments or {}
    try:
        parsed = json.loads(arguments) if arguments else {}
    except ValueError:
        return {"_raw": arguments}
    return parsed if isinstance(parsed, dict) else {"_value": parsed}
