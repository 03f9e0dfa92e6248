"""OTLP JSON traces read into plain spans, and each LLM span's messages in one shape whatever the convention.

OTLP JSON (`resourceSpans` → `scopeSpans` → `spans`, attributes as `{key, value: AnyValue}`) is what the
OpenTelemetry collector's file exporter and `opentelemetry-proto`'s JSON mapping write; its AnyValue
(`stringValue`, `intValue` as a string, `arrayValue`, `kvlistValue`, ...) is decoded here as the
mapping says. Three ways of recording messages are read:
- the GenAI semantic conventions: `gen_ai.system_instructions`, `gen_ai.input.messages`,
  `gen_ai.output.messages` (JSON strings, or structured values), messages `{role, parts: [...]}`;
- the older flattened GenAI form: `gen_ai.prompt.N.role`/`.content`/`.tool_calls.M.*`/`.tool_call_id`
  and `gen_ai.completion.N.*`;
- OpenInference: `llm.input_messages.N.message.role`/`.content`/`.contents.M.message_content.*`/
  `.tool_calls.M.tool_call.*`/`.tool_call_id` and `llm.output_messages.N.message.*`.
The flattened forms are rebuilt as OpenAI-shaped messages; `otel.py` turns both shapes into linnkit's.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from engine.importers._common import Names

INPUT, OUTPUT, SYSTEM = "gen_ai.input.messages", "gen_ai.output.messages", "gen_ai.system_instructions"
FLAT_KEY = re.compile(
    r"^(gen_ai\.prompt|gen_ai\.completion|llm\.input_messages|llm\.output_messages)\.(\d+)\.(.+)$"
)
LLM_OPERATIONS = Names({"chat", "text_completion", "generate_content", "completion"})
MAX_SPANS = 100_000  # a trace file with more is cut there, said as a problem


@dataclass(slots=True)
class Span:
    trace_id: str
    span_id: str
    name: str
    start: int
    attributes: dict[str, Any]
    line: int | None
    inputs: list[Any] = field(default_factory=list)
    outputs: list[Any] = field(default_factory=list)
    system: list[Any] = field(default_factory=list)
    convention: str = "gen_ai"


def any_value(value: Any) -> Any:
    """An OTLP JSON AnyValue as a Python value (`intValue` is a decimal string in the JSON mapping)."""
    if not isinstance(value, dict):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        raw = value["intValue"]
        try:
            return int(raw)
        except (TypeError, ValueError):
            return raw
    for key in ("boolValue", "doubleValue", "bytesValue"):
        if key in value:
            return value[key]
    if "arrayValue" in value:
        return [any_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        pairs = (value["kvlistValue"] or {}).get("values") or []
        return {p.get("key"): any_value(p.get("value")) for p in pairs if isinstance(p, dict)}
    return None


def attributes_of(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):  # some exporters write attributes as a plain object
        return dict(raw)
    if not isinstance(raw, list):
        return {}
    return {
        a["key"]: any_value(a.get("value"))
        for a in raw
        if isinstance(a, dict) and isinstance(a.get("key"), str)
    }


def iter_raw_spans(document: Any) -> list[dict[str, Any]]:
    """The span objects of an OTLP JSON document (`resourceSpans`, or `scopeSpans`, or a bare `spans`), or
    the document itself when it is one span as OpenTelemetry JS's file exporters write them, a line each
    (`{type: "span", traceId, spanId, attributes: {...}, startTime: [s, ns]}`: Copilot CLI's span file)."""
    if not isinstance(document, dict):
        return []
    if document.get("type") == "span" and "traceId" in document:
        return [document]
    spans: list[dict[str, Any]] = []
    for resource in document.get("resourceSpans") or []:
        if not isinstance(resource, dict):
            continue
        for scope in resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans") or []:
            if isinstance(scope, dict):
                spans.extend(s for s in scope.get("spans") or [] if isinstance(s, dict))
    return spans


def has_llm_messages(attributes: dict[str, Any]) -> bool:
    return any(key in attributes for key in (INPUT, OUTPUT)) or any(
        key.startswith(("gen_ai.prompt.", "llm.input_messages.")) for key in attributes
    )


def is_model_call(attributes: dict[str, Any]) -> bool:
    """A span of a model call, whether or not it recorded the messages."""
    operation = attributes.get("gen_ai.operation.name")
    return operation in LLM_OPERATIONS or attributes.get("openinference.span.kind") == "LLM"


def is_llm_span(attributes: dict[str, Any]) -> bool:
    """A model call: GenAI messages on a span whose operation is a model call (not an agent or a tool run),
    or an OpenInference LLM span."""
    kind = attributes.get("openinference.span.kind")
    if kind is not None:
        return kind == "LLM" and has_llm_messages(attributes)
    operation = attributes.get("gen_ai.operation.name")
    return has_llm_messages(attributes) and (operation is None or operation in LLM_OPERATIONS)


def read_span(raw: dict[str, Any], line: int | None, problems: list[str]) -> Span | None:
    attributes = attributes_of(raw.get("attributes"))
    if not is_llm_span(attributes):
        return None
    span = Span(
        trace_id=str(raw.get("traceId") or ""),
        span_id=str(raw.get("spanId") or ""),
        name=str(raw.get("name") or ""),
        start=_nanos(raw.get("startTimeUnixNano", raw.get("startTime"))),
        attributes=attributes,
        line=line,
    )
    if INPUT in attributes or OUTPUT in attributes:
        span.inputs = _message_list(attributes.get(INPUT), INPUT, span, problems)
        span.outputs = _message_list(attributes.get(OUTPUT), OUTPUT, span, problems)
        span.system = _message_list(attributes.get(SYSTEM), SYSTEM, span, problems)
    else:
        flat = _unflatten(attributes)
        openinference = "llm.input_messages" in flat or "llm.output_messages" in flat
        span.convention = "openinference" if openinference else "gen_ai.prompt"
        span.inputs = flat.get("llm.input_messages" if openinference else "gen_ai.prompt", [])
        span.outputs = flat.get("llm.output_messages" if openinference else "gen_ai.completion", [])
    return span


def _nanos(value: Any) -> int:
    if isinstance(value, list) and len(value) == 2:  # OpenTelemetry JS's HrTime: [seconds, nanoseconds]
        return _nanos(value[0]) * 1_000_000_000 + _nanos(value[1])
    try:
        return int(value)
    except (TypeError, ValueError):
        return 0


def _message_list(value: Any, key: str, span: Span, problems: list[str]) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            problems.append(f"span {span.span_id}: {key}: not JSON; read as one text message")
            return [{"role": "user" if key == INPUT else "assistant", "content": value}]
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list):
        problems.append(f"span {span.span_id}: {key}: expected a list, found {type(value).__name__}")
        return []
    return value


def _unflatten(attributes: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """`gen_ai.prompt.0.role` style keys as OpenAI-shaped message lists, by prefix, in index order."""
    tree: dict[str, dict[int, dict[str, Any]]] = {}
    for key, value in attributes.items():
        match = FLAT_KEY.match(key)
        if match:
            prefix, index, rest = match.group(1), int(match.group(2)), match.group(3)
            rest = rest.removeprefix("message.")
            _put(tree.setdefault(prefix, {}).setdefault(index, {}), rest.split("."), value)
    return {prefix: [_as_chat(m) for _, m in sorted(items.items())] for prefix, items in tree.items()}


def _put(node: dict[str, Any], path: list[str], value: Any) -> None:
    for part in path[:-1]:
        child = node.get(part)
        if not isinstance(child, dict):
            child = node[part] = {}
        node = child
    node[path[-1]] = value


def _indexed(node: Any) -> list[Any]:
    if not isinstance(node, dict):
        return []
    return [v for k, v in sorted(node.items(), key=lambda kv: int(kv[0]) if str(kv[0]).isdigit() else 0)]


def _as_chat(node: dict[str, Any]) -> dict[str, Any]:
    """One flattened message as an OpenAI chat message (content text, tool_calls, tool_call_id)."""
    out: dict[str, Any] = {"role": node.get("role") or "user"}
    content = node.get("content")
    if content is None and "contents" in node:  # OpenInference's multi-part content
        texts = []
        for part in _indexed(node["contents"]):
            inner = part.get("message_content") if isinstance(part, dict) else None
            if isinstance(inner, dict) and isinstance(inner.get("text"), str):
                texts.append(inner["text"])
        content = "\n\n".join(texts)
    out["content"] = content if isinstance(content, str) else ("" if content is None else json.dumps(content))
    calls = []
    for call in _indexed(node.get("tool_calls")):
        call = call.get("tool_call", call) if isinstance(call, dict) else {}
        function = call.get("function") if isinstance(call.get("function"), dict) else call
        arguments = function.get("arguments")
        calls.append(
            {
                "id": str(call.get("id") or ""),
                "type": "function",
                "function": {
                    "name": function.get("name") or "",
                    "arguments": arguments if isinstance(arguments, str) else json.dumps(arguments or {}),
                },
            }
        )
    if calls:
        out["tool_calls"] = calls
    if node.get("tool_call_id") is not None:
        out["tool_call_id"] = str(node["tool_call_id"])
    return out
