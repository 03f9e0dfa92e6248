"""OpenTelemetry GenAI and OpenInference traces (OTLP JSON) as linnkit messages.

A file is one OTLP JSON document (`{resourceSpans: [...]}`) or JSONL of them (the collector's file
exporter), or OpenTelemetry JS's span lines (`{type: "span", ...}`, as Copilot CLI's file exporter writes).
A trace whose model-call spans were recorded without their messages (content capture off, the usual
default) is claimed too, and its import says so rather than the file going unrecognised.
Each trace is a conversation (`conversation` picks one, default the first). Its model calls are
its LLM spans (`otel_spans.is_llm_span`) in start order; the conversation is what the last call received
(its system instructions and input messages) followed by its output, so it is what the model saw at the
end, in order. Each call's usage (`gen_ai.usage.*`, OpenInference `llm.token_count.*`) goes on the
assistant message that answered it, found by its output; a call whose answer is not in that history (a
side call, a sub-agent) is an other billed call.

Parts map as: `text` → the message's text, `reasoning` → `thought`, `tool_call` → one `tool_calls`
message with every call of the message, `tool_call_response` → `tool_output`, `blob`/`uri`/`file` →
an image or file placeholder; other part types are noted on the message (`unmappedParts`) and counted.
Messages that carry a `linn` key (written by `engine.export`) come back exactly as they were exported.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    compact_json,
    image_placeholder,
    pick_conversation,
    read_items,
    unmapped_note,
)
from engine.importers.otel_spans import (
    MAX_SPANS,
    Span,
    attributes_of,
    has_llm_messages,
    is_model_call,
    iter_raw_spans,
    read_span,
)
from engine.importers.registry import Sniff
from engine.messages import AiMessage
from engine.usage import RecordedUsage, UsageProblem, otel_usage

FORMAT = "otel"
SIDE_KEY = "linn"
DETECT_SPANS = 200
OPENINFERENCE_USAGE = {
    "gen_ai.usage.input_tokens": "llm.token_count.prompt",
    "gen_ai.usage.output_tokens": "llm.token_count.completion",
    "gen_ai.usage.cache_read.input_tokens": "llm.token_count.prompt_details.cache_read",
    "gen_ai.usage.cache_creation.input_tokens": "llm.token_count.prompt_details.cache_write",
    "gen_ai.response.model": "llm.model_name",
}
# the GenAI conventions before 1.27 named the counts after OpenAI's
OLD_USAGE = {
    "gen_ai.usage.input_tokens": "gen_ai.usage.prompt_tokens",
    "gen_ai.usage.output_tokens": "gen_ai.usage.completion_tokens",
}


def detect_otel(sniff: Sniff) -> bool:
    """An OTLP JSON document with at least one span carrying GenAI or OpenInference messages, or of a model
    call (recorded without its messages, it is claimed so that the import can say why nothing came in)."""
    for item in sniff.objects():
        for raw in iter_raw_spans(item)[:DETECT_SPANS]:
            attributes = attributes_of(raw.get("attributes"))
            if has_llm_messages(attributes) or is_model_call(attributes):
                return True
    return False


def import_otel(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    notes: list[str] = []
    traces: dict[str, list[Span]] = {}
    header: dict[str, Any] = {}
    seen = blind = 0
    for line, document in read_items(text, out):
        if isinstance(document, dict) and isinstance(document.get(SIDE_KEY), dict):
            header = document[SIDE_KEY].get("header") or {}
        for raw in iter_raw_spans(document):
            seen += 1
            if seen > MAX_SPANS:
                out.problem(line, f"more than {MAX_SPANS:,} spans; the rest is not read")
                break
            span = read_span(raw, line, notes)
            if span is not None:
                traces.setdefault(span.trace_id, []).append(span)
            elif is_model_call(attributes_of(raw.get("attributes"))):
                blind += 1
                out.skip("model-call span without its messages", line or 0)
    for note in notes:
        out.problem(None, note)
    if blind and not traces:
        out.problem(None, f"{blind} model-call span(s) and none records its messages: the trace was exported "
                    "without message content (content capture off, as Copilot CLI and most instrumentations "
                    "default to), so there is no conversation to import")  # fmt: skip
    chosen = pick_conversation(list(traces.values()), conversation or 0, path)
    session: dict[str, Any] = {}
    if chosen is not None:
        calls = sorted(chosen, key=lambda s: s.start)  # stable: spans written in order keep it on ties
        _Conversation(out, calls).run()
        model = header.get("modelId") or _model(calls[-1].attributes)
        if isinstance(model, str):
            session["model"] = model
        session["traceId"] = calls[-1].trace_id
    return out.result(FORMAT, session=session, conversations=len(traces), title=header.get("title"))


def _model(attributes: dict[str, Any]) -> Any:
    return (
        attributes.get("gen_ai.response.model")
        or attributes.get("gen_ai.request.model")
        or attributes.get("llm.model_name")
    )


class _Conversation:
    def __init__(self, out: Collector, calls: list[Span]) -> None:
        self.out = out
        self.calls = calls
        self.tool_names: dict[str, str] = {}
        self.count = 0
        # each source message of the last call: (fingerprint, first produced index, end index)
        self.spans_of: list[tuple[str, int, int]] = []

    def run(self) -> None:
        last = self.calls[-1]
        timestamp = last.start // 1_000_000
        # system instructions: the conventions' list of parts is one system message (some SDKs write messages)
        parts = [p for p in last.system if isinstance(p, dict) and "role" not in p]
        if parts:
            self._message({"role": "system", "parts": parts}, last, timestamp)
        for message in (m for m in last.system if isinstance(m, dict) and "role" in m):
            self._message(message, last, timestamp)
        for message in last.inputs:
            self._message(message, last, timestamp)
        start = len(self.out.messages)
        for message in last.outputs:
            self._message(message, last, timestamp)
        # earlier calls first: a wrapper span (LangChain's around OpenAI's) repeating the last call's
        # messages then gives way to the last call's own usage
        for call in self.calls[:-1]:
            found = self._find(call.outputs)
            if found is None:
                usage = self._parsed_usage(call)
                if usage is not None:
                    self.out.other_call(
                        usage, call.line, "a call whose answer is not in the last call's history"
                    )
            else:
                self._usage(call, *found)
        self._usage(last, start, len(self.out.messages))

    def _message(self, message: Any, span: Span, timestamp: int) -> None:
        start = len(self.out.messages)
        if not isinstance(message, dict):
            self.out.problem(
                span.line, f"span {span.span_id}: expected a message object, found {type(message).__name__}"
            )
            return
        self.count += 1
        base = message["id"] if isinstance(message.get("id"), str) else f"ot-{self.count - 1}"
        side = message.get(SIDE_KEY)
        if "parts" in message and not isinstance(message["parts"], list):
            self.out.problem(span.line, f"span {span.span_id}: message {self.count - 1}: parts is not a list")
            return
        parts = _parts(message)
        if isinstance(side, dict) and isinstance(side.get("type"), str):
            self.out.add(_restored(base, parts, side))  # as exported, even a repeated id
        else:
            self._convert(base, str(message.get("role") or "user"), parts, timestamp, span)
        self.spans_of.append((_fingerprint(message), start, len(self.out.messages)))

    def _convert(self, base: str, role: str, parts: list[Any], timestamp: int, span: Span) -> None:
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        notes: dict[str, list[Any]] = {}
        for part in parts:
            kind = part.get("type") if isinstance(part, dict) else None
            if kind == "text":
                texts.append(str(part.get("content") or ""))
            elif kind == "reasoning" and role != "user":
                self._add(base, "assistant", "thought", str(part.get("content") or ""), timestamp, {})
            elif kind == "tool_call":
                call = _call(part)
                calls.append(call)
                self.tool_names[call["id"]] = call["function"]["name"]
            elif kind == "tool_call_response":
                self._response(base, part, timestamp)
            elif kind in ("blob", "uri", "file"):
                note = _media_note(part)
                notes.setdefault("images", []).append(note)
                texts.append(image_placeholder(note))
            else:
                notes.setdefault("unmappedParts", []).append(unmapped_note(part))
                self.out.skip(f"part:{kind}", span.line or 0)
        text = "\n\n".join(t for t in texts if t)
        if role == "system":
            self._add(base, "system", "system_prompt", text, timestamp, notes)
        elif role in ("assistant", "model"):
            if calls:
                self._add(base, "assistant", "tool_calls", text, timestamp, {"tool_calls": calls, **notes})
            elif text or notes:
                self._add(base, "assistant", "final_answer", text, timestamp, notes)
        elif text or notes:
            self._add(base, "user", "user_input", text, timestamp, notes)

    def _response(self, base: str, part: dict[str, Any], timestamp: int) -> None:
        call_id = str(part.get("id") or "")
        response = part.get("response")
        text = response if isinstance(response, str) else compact_json(response)
        meta = {"tool_call_id": call_id, "raw_output": text}
        if call_id in self.tool_names:
            meta["tool_name"] = self.tool_names[call_id]
        self._add(base, "tool", "tool_output", text, timestamp, meta)

    def _add(self, base: str, role: str, kind: str, text: str, timestamp: int, meta: dict[str, Any]) -> None:
        self.out.add(AiMessage(self.out.unique_id(base), role, kind, text, timestamp, meta or None))

    def _find(self, outputs: list[Any]) -> tuple[int, int] | None:
        """Where a call's output messages sit in the conversation (its last one, first unused match)."""
        if not outputs or not isinstance(outputs[-1], dict):
            return None
        wanted = _fingerprint(outputs[-1])
        for fingerprint, start, end in self.spans_of:
            if fingerprint == wanted and end > start:
                return start, end
        return None

    def _usage(self, span: Span, start: int, end: int) -> None:
        usage = self._parsed_usage(span)
        if usage is not None:
            self.out.attach_usage(start, end, usage, span.line, "a call with no message in the history")

    def _parsed_usage(self, span: Span) -> RecordedUsage | None:
        attributes = span.attributes
        if span.convention == "openinference":
            if "llm.token_count.prompt" not in attributes:
                return None
            data = {k: attributes[v] for k, v in OPENINFERENCE_USAGE.items() if v in attributes}
        else:
            data = {
                k: attributes[k]
                for k in attributes
                if k.startswith("gen_ai.usage.") or k.startswith("gen_ai.response.")
            }
            for new, old in OLD_USAGE.items():
                if new not in data and old in data:
                    data[new] = data[old]
            if "gen_ai.usage.input_tokens" not in data:
                return None
        call_id = attributes.get("gen_ai.response.id")
        parsed = otel_usage(data, _model(attributes), call_id if isinstance(call_id, str) else None)
        if isinstance(parsed, UsageProblem):
            self.out.usage_problem(span.line, parsed, f"span {span.span_id}: ")
            return None
        raw = {k: v for k, v in attributes.items() if k.startswith(("gen_ai.usage.", "llm.token_count."))}
        return replace(parsed, raw=raw)


def _fingerprint(message: Any) -> str:
    if not isinstance(message, dict):
        return ""
    return json.dumps({k: v for k, v in message.items() if k != "finish_reason"}, sort_keys=True, default=str)


def _parts(message: dict[str, Any]) -> list[Any]:
    """A message's parts; an OpenAI-shaped message (content, tool_calls, tool_call_id) as parts."""
    parts = message.get("parts")
    if isinstance(parts, list):
        return parts
    content = message.get("content")
    out: list[Any] = []
    if message.get("role") == "tool":
        text = content if isinstance(content, str) else compact_json(content)
        return [{"type": "tool_call_response", "id": message.get("tool_call_id"), "response": text}]
    if isinstance(content, str):
        out.append({"type": "text", "content": content})
    elif isinstance(content, list):
        for part in content:
            if isinstance(part, dict) and isinstance(part.get("text"), str):
                out.append({"type": "text", "content": part["text"]})
            elif isinstance(part, dict) and "content" in part and part.get("type"):
                out.append(part)
    for call in message.get("tool_calls") or []:
        function = (
            call.get("function") if isinstance(call, dict) and isinstance(call.get("function"), dict) else {}
        )
        out.append(
            {
                "type": "tool_call",
                "id": call.get("id"),
                "name": function.get("name"),
                "arguments": function.get("arguments"),
            }
        )
    return out


def _call(part: dict[str, Any]) -> dict[str, Any]:
    arguments = part.get("arguments")
    text = arguments if isinstance(arguments, str) else compact_json({} if arguments is None else arguments)
    return {
        "id": str(part.get("id") or ""),
        "type": "function",
        "function": {"name": str(part.get("name") or ""), "arguments": text},
    }


def _media_note(part: dict[str, Any]) -> dict[str, Any]:
    if part.get("type") == "uri" and isinstance(part.get("uri"), str):
        return {"url": part["uri"]}
    if part.get("type") == "file":
        return {"url": f"file {part.get('file_id')}"}
    content = part.get("content")
    return {
        "media_type": part.get("mime_type") or part.get("modality"),
        "base64Chars": len(content) if isinstance(content, str) else 0,
    }


def _restored(message_id: str, parts: list[Any], side: dict[str, Any]) -> AiMessage:
    """A message written by `engine.export`: its text and calls from the parts, the rest from `linn`."""
    kind = side["type"]
    meta = dict(side["metadata"]) if isinstance(side.get("metadata"), dict) else None
    texts = [
        str(p.get("content") or "")
        for p in parts
        if isinstance(p, dict) and p.get("type") in ("text", "reasoning")
    ]
    content = "\n\n".join(texts)
    calls = [_call(p) for p in parts if isinstance(p, dict) and p.get("type") == "tool_call"]
    responses = [p for p in parts if isinstance(p, dict) and p.get("type") == "tool_call_response"]
    if kind == "tool_calls":
        exact = side.get("arguments") or {}
        calls = [_with_arguments(c, exact.get(c["id"])) for c in calls]
        meta = {"tool_calls": calls, **(meta or {})}
    if responses:
        response = responses[0].get("response")
        content = response if isinstance(response, str) else compact_json(response)
    return AiMessage(
        message_id,
        side.get("role") or "user",
        kind,
        content,
        side.get("timestamp") or 0,
        meta,
        dict(side.get("extra") or {}),
    )


def _with_arguments(call: dict[str, Any], exact: Any) -> dict[str, Any]:
    if exact is None:
        return call
    return {**call, "function": {**call["function"], "arguments": exact}}
