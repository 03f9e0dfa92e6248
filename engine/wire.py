"""Wire formatters: final context messages → what the provider API receives (spec §5.6).

`to_openai` is linnkit's agent formatter (OpenAI Chat Completions, native tools). `to_anthropic` is a
host-side projection of that output onto the Anthropic Messages shape.
"""

from __future__ import annotations

import json
from typing import Any

from engine.jsvalues import js_json, js_truthy
from engine.messages import LEGACY_TYPES, AiMessage

PLAIN_TYPES = frozenset({"system_prompt", "user_input", "final_answer", "task_request", "task_completion"})
CHAT_ROLES = frozenset({"user", "assistant", "system"})


def format_message(message: AiMessage, registry=None) -> dict[str, Any] | None:
    """One message in OpenAI chat shape, or None when the formatter drops it. As linnkit's agent formatter:
    native calls, answers and outputs only for their own role; any other message by its type, with its
    role (a role outside user, assistant and system is dropped)."""
    native = _native(message)
    if native is not None:
        return native
    role, kind = message.role, message.type
    if kind == "tool_output" or role not in CHAT_ROLES or kind in LEGACY_TYPES:
        return None
    if kind in PLAIN_TYPES:
        return {"role": role, "content": message.content}
    if kind == "history_summary":
        return {"role": "system", "content": message.content}
    if kind == "thought":
        content = message.content if "<think>" in message.content else f"<think>{message.content}</think>"
        return {"role": role, "content": content}
    if kind == "context_injection":
        return _format_fence(message, registry)
    if kind == "tool_calls":
        return _first_call_as_text(message)
    if kind == "tool_code":
        return _format_tool_code(message)
    return None


def _native(message: AiMessage) -> dict[str, Any] | None:
    """An assistant's calls or answer, a tool's output (with its call id), in their native shape."""
    role, kind = message.role, message.type
    if role == "assistant" and kind == "tool_calls":
        calls = message.meta("tool_calls")
        return _native_calls(message, calls) if js_truthy(calls) else None  # `[]` is truthy too
    if role == "assistant" and kind == "final_answer":
        return _with_sidecars({"role": "assistant", "content": message.content}, message)
    if role == "tool" and kind == "tool_output":
        call_id = message.meta("tool_call_id")
        if js_truthy(call_id):
            return {"role": "tool", "tool_call_id": call_id, "content": message.content}
    return None


def _native_calls(message: AiMessage, calls: Any) -> dict[str, Any]:
    wire: dict[str, Any] = {"role": "assistant", "content": message.content or None}
    if isinstance(calls, list) and calls:  # linnkit sends `tool_calls: []`, which providers reject: omitted
        wire["tool_calls"] = calls
    return _with_sidecars(wire, message)


def _first_call_as_text(message: AiMessage) -> dict[str, Any] | None:
    """A `tool_calls` message linnkit does not send natively (not the assistant's, or no calls): its first
    call as `<tool_code>` text, when it has a name and arguments; arguments linnkit cannot parse as JSON
    make linnkit throw, and the message is dropped here."""
    calls = message.meta("tool_calls")
    first = calls[0] if isinstance(calls, list) and calls else None
    function = first.get("function") if isinstance(first, dict) else None
    name = function.get("name") if isinstance(function, dict) else None
    args = function.get("arguments") if isinstance(function, dict) else None
    if not (js_truthy(name) and js_truthy(args)):
        return None
    if isinstance(args, str):
        try:
            args = json.loads(args)
        except ValueError:
            return None
    payload = js_json({"name": name, "arguments": args})
    return {"role": message.role, "content": f"<tool_code>{payload}</tool_code>"}


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
    if not (js_truthy(name) and js_truthy(args)):  # linnkit: `if (tool_name && args)`
        return None
    payload = js_json({"name": name, "arguments": args})
    return {"role": message.role, "content": f"<tool_code>{payload}</tool_code>"}


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
