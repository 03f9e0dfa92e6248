"""A session, or the wire of one step, written in the shapes other tools read: OpenAI chat JSONL, an
Anthropic Messages request, and OpenTelemetry GenAI spans (OTLP JSON).

A whole session is written losslessly: each message keeps its `id`, and a `linn` key beside it holds what
the provider shape has no place for (the linnkit type and role, timestamp, metadata, the exact argument
text of calls); the top-level `linn` key holds the session header. `engine.importers.linn_export` reads
these back to the same messages. A step's wire is already what a provider receives, so it is written
plain (no ids, no `linn` keys): a request a provider accepts as it is.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from engine.importers._common import compact_json
from engine.messages import AiMessage
from engine.session_lines import messages_from
from engine.wire import to_anthropic

FORMATS = ("openai", "anthropic", "otel")
SIDE_KEY = "linn"
EXPORT_VERSION = 1
# metadata the provider shape itself carries; everything else rides in the `linn` key
NATIVE_META = ("tool_calls",)
OTEL_SCOPE = {"name": "linn-playground", "version": "1"}
TRACE_ID = "4c696e6e706c617967726f756e640001"  # fixed: an export is a document, not a live trace
_LAST_OTLP_MS = (2**64 - 1) // 1_000_000  # the last time in milliseconds OTLP's nanoseconds can hold
SPAN_ID = "6c696e6e00000001"


def export_session(messages: Sequence[AiMessage], header: Mapping[str, Any] | None, fmt: str) -> str:
    """The session as text in `fmt` (one of FORMATS), readable back to the same messages."""
    if header is not None and not isinstance(header, Mapping):
        raise TypeError(f"header: expected a mapping of header keys or None, not {type(header).__name__}")
    messages = messages_from(messages, "messages")
    head = {"export": fmt, "version": EXPORT_VERSION, "header": dict(header or {})}
    if fmt == "openai":
        line = {"messages": [_openai(m) for m in messages], SIDE_KEY: head}
        return _json(line)
    if fmt == "anthropic":
        return _dump(_anthropic_request(messages, head))
    if fmt == "otel":
        model = (header or {}).get("modelId")
        inputs, outputs = _split_output(messages)
        span_messages = ([_otel(m) for m in inputs], [_otel(m) for m in outputs])
        times = (messages[0].timestamp, messages[-1].timestamp) if messages else None
        return _dump(otlp_document(*span_messages, model=model, extra={SIDE_KEY: head}, times_ms=times))
    raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")


def export_wire(wire: Sequence[Mapping[str, Any]], fmt: str, model: str | None = None) -> str:
    """A built wire (OpenAI-shaped messages) as the request a provider receives, in `fmt`."""
    messages = [dict(m) for m in wire]
    if fmt == "openai":
        line = {"model": model, "messages": messages} if model else {"messages": messages}
        return _json(line)
    if fmt == "anthropic":
        request = to_anthropic(messages)
        return _dump({"model": model, **request} if model else request)
    if fmt == "otel":
        return _dump(otlp_document([_otel_wire(m) for m in messages], [], model=model))
    raise ValueError(f"unknown export format {fmt!r}; choose one of {', '.join(FORMATS)}")


def _dump(value: Any) -> str:
    return _json(value, indent=1)


def _json(value: Any, indent: int | None = None) -> str:
    """One JSON text; NaN and infinity (which JSON cannot hold, and `json` would write as bare words) are
    refused with the reason."""
    try:
        return json.dumps(value, ensure_ascii=False, indent=indent, allow_nan=False) + "\n"
    except ValueError:
        raise ValueError(
            "export: a header value or a message holds NaN or infinity, which JSON cannot write"
        ) from None


def side_info(message: AiMessage) -> dict[str, Any]:
    """What a provider shape cannot hold: type, role, timestamp, metadata, unknown top-level keys."""
    side: dict[str, Any] = {"type": message.type, "role": message.role, "timestamp": message.timestamp}
    meta = {k: v for k, v in (message.metadata or {}).items() if k not in NATIVE_META}
    if message.metadata is not None:
        side["metadata"] = meta
    if message.extra:
        side["extra"] = dict(message.extra)
    arguments = {
        call.get("id"): call["function"]["arguments"]
        for call in _calls(message)
        if _reformatted(call["function"].get("arguments"))
    }
    if arguments:
        side["arguments"] = arguments  # argument text that parsing and re-serialising would change
    return side


def _calls(message: AiMessage) -> list[dict[str, Any]]:
    calls = message.meta("tool_calls") if message.type == "tool_calls" else None
    return [c for c in calls if isinstance(c, dict) and isinstance(c.get("function"), dict)] if calls else []


def _reformatted(arguments: Any) -> bool:
    if not isinstance(arguments, str):
        return True
    try:
        return compact_json(json.loads(arguments)) != arguments
    except ValueError:
        return True


def parsed_arguments(arguments: Any) -> Any:
    """A call's arguments as a JSON value (Anthropic `input`, OTel `arguments`); unparsable text as is."""
    if not isinstance(arguments, str):
        return arguments if arguments is not None else {}
    try:
        return json.loads(arguments) if arguments else {}
    except ValueError:
        return arguments


# -- OpenAI chat --------------------------------------------------------------------------------------


def _openai(message: AiMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"role": _openai_role(message), "id": message.id}
    if message.type == "thought":
        out["content"] = ""
        out["reasoning_content"] = message.content
    elif message.type == "tool_calls":
        out["content"] = message.content or None
        out["tool_calls"] = _calls(message)
    elif message.type == "tool_output":
        out["tool_call_id"] = message.tool_call_id or ""
        out["content"] = message.content
    else:
        out["content"] = message.content
    out[SIDE_KEY] = side_info(message)
    return out


def _openai_role(message: AiMessage) -> str:
    return message.role if message.role in ("system", "user", "assistant", "tool") else "user"


# -- Anthropic Messages -------------------------------------------------------------------------------


def _anthropic_request(messages: Sequence[AiMessage], head: dict[str, Any]) -> dict[str, Any]:
    """The leading system messages as `system` blocks; every other message as its own turn (the API joins
    consecutive same-role turns), a later system message as a user turn (the type says what it was)."""
    lead = 0
    while lead < len(messages) and messages[lead].role == "system":
        lead += 1
    system = [{"type": "text", "text": m.content} for m in messages[:lead]]
    head = {**head, "system": [{"id": m.id, **side_info(m)} for m in messages[:lead]]}
    request: dict[str, Any] = {}
    model = head["header"].get("modelId")
    if isinstance(model, str):
        request["model"] = model
    request["system"] = system
    request["messages"] = [_anthropic(m) for m in messages[lead:]]
    request[SIDE_KEY] = head
    return request


def _anthropic(message: AiMessage) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    role = "assistant" if message.role == "assistant" else "user"
    if message.type == "thought":
        blocks.append(_thinking_block(message))
    elif message.type == "tool_output":
        block = {"type": "tool_result", "tool_use_id": message.tool_call_id or "", "content": message.content}
        if isinstance(message.meta("is_error"), bool):
            block["is_error"] = message.meta("is_error")
        blocks.append(block)
    else:
        if message.content:
            blocks.append({"type": "text", "text": message.content})
        for call in _calls(message):
            function = call["function"]
            use = {"type": "tool_use", "id": call.get("id") or "", "name": function.get("name") or ""}
            blocks.append({**use, "input": parsed_arguments(function.get("arguments"))})
    return {"role": role, "id": message.id, "content": blocks, SIDE_KEY: side_info(message)}


def _thinking_block(message: AiMessage) -> dict[str, Any]:
    details = message.meta("reasoning_details") or []
    first = details[0] if isinstance(details, list) and details and isinstance(details[0], dict) else {}
    if first.get("type") == "reasoning.encrypted":
        return {"type": "redacted_thinking", "data": first.get("data") or ""}
    block = {"type": "thinking", "thinking": message.content}
    if first.get("signature"):
        block["signature"] = first["signature"]
    return block


# -- OpenTelemetry GenAI ------------------------------------------------------------------------------


def _split_output(messages: Sequence[AiMessage]) -> tuple[list[AiMessage], list[AiMessage]]:
    """The span's input (everything before the last model call) and output (that call's messages)."""
    start = len(messages)
    while start > 0 and messages[start - 1].role == "assistant":
        start -= 1
    return list(messages[:start]), list(messages[start:])


def _otel(message: AiMessage) -> dict[str, Any]:
    role = message.role if message.role in ("system", "user", "assistant", "tool") else "user"
    parts: list[dict[str, Any]] = []
    if message.type == "thought":
        parts.append({"type": "reasoning", "content": message.content})
    elif message.type == "tool_output":
        parts.append(
            {"type": "tool_call_response", "id": message.tool_call_id or "", "response": message.content}
        )
    else:
        if message.content or not _calls(message):
            parts.append({"type": "text", "content": message.content})
        for call in _calls(message):
            function = call["function"]
            arguments = parsed_arguments(function.get("arguments"))
            parts.append(
                {
                    "type": "tool_call",
                    "id": call.get("id"),
                    "name": function.get("name"),
                    "arguments": arguments,
                }
            )
    return {"role": role, "parts": parts, "id": message.id, SIDE_KEY: side_info(message)}


def _otel_wire(message: Mapping[str, Any]) -> dict[str, Any]:
    role = message.get("role") or "user"
    content = message.get("content")
    if role == "tool":
        part = {"type": "tool_call_response", "id": message.get("tool_call_id"), "response": content or ""}
        return {"role": "tool", "parts": [part]}
    parts: list[dict[str, Any]] = [{"type": "text", "content": content}] if content else []
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {}
        arguments = parsed_arguments(function.get("arguments"))
        parts.append(
            {"type": "tool_call", "id": call.get("id"), "name": function.get("name"), "arguments": arguments}
        )
    return {"role": role, "parts": parts}


def otlp_document(
    inputs: list[dict[str, Any]],
    outputs: list[dict[str, Any]],
    *,
    model: Any = None,
    extra: dict[str, Any] | None = None,
    times_ms: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """One `chat` span in OTLP JSON (`resourceSpans` → `scopeSpans` → `spans`), messages as the GenAI
    semantic conventions' `gen_ai.input.messages` / `gen_ai.output.messages` JSON strings."""
    attributes = [_attribute("gen_ai.operation.name", "chat")]
    if isinstance(model, str):
        attributes.append(_attribute("gen_ai.request.model", model))
    attributes.append(_attribute("gen_ai.input.messages", json.dumps(inputs, ensure_ascii=False)))
    if outputs:
        finished = [{**m, "finish_reason": _finish_reason(m)} for m in outputs]
        attributes.append(_attribute("gen_ai.output.messages", json.dumps(finished, ensure_ascii=False)))
    span = {
        "traceId": TRACE_ID,
        "spanId": SPAN_ID,
        "name": f"chat {model}" if isinstance(model, str) else "chat",
        "kind": 3,  # SPAN_KIND_CLIENT
        "attributes": attributes,
    }
    # the session's first and last message times, as the span's (nanoseconds, an unsigned 64-bit number in
    # OTLP: a time it cannot hold, before 1970 or after 2554, leaves them out)
    if times_ms is not None and all(0 <= t <= _LAST_OTLP_MS for t in times_ms):
        span["startTimeUnixNano"], span["endTimeUnixNano"] = (str(int(t * 1_000_000)) for t in times_ms)
    document: dict[str, Any] = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attribute("service.name", "linn-playground")]},
                "scopeSpans": [{"scope": OTEL_SCOPE, "spans": [span]}],
            }
        ]
    }
    return {**document, **(extra or {})}


def _finish_reason(message: dict[str, Any]) -> str:
    return "tool_call" if any(p.get("type") == "tool_call" for p in message["parts"]) else "stop"


def _attribute(key: str, value: str) -> dict[str, Any]:
    return {"key": key, "value": {"stringValue": value}}
