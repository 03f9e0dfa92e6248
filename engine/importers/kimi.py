"""Kimi CLI / Kimi Code `wire.jsonl` logs as linnkit messages.

Two dialects share the file name and the header line `{"type": "metadata", "protocol_version"}`:
- **kimi-cli** (Python, protocol 1.1–1.10; `src/kimi_cli/wire/types.py`, `soul/message.py`): each line
  `{timestamp, message: {type, payload}}`. `TurnBegin`/`SteerInput` carry the user's input, `StepBegin`
  opens a model call whose streamed `ContentPart`s (`text`, `think`) and `ToolCall`s (arguments completed
  by `ToolCallPart` fragments) make its answer, `ToolResult` answers a call (sent as kimi-cli's
  `tool_result_to_message` words it: `<system>ERROR: …</system>`, `<system>message</system>`, then the
  output), `StatusUpdate.token_usage` is the call's usage. The system prompt is not in this file.
- **Kimi Code** (TypeScript agent-core, records `{type, ..., time}`; `contextMemory/contextOps.ts`,
  `loopEventFold.ts`, `toolResultRender.ts`): `config.update.systemPrompt`, `context.append_message`,
  `context.append_loop_event` (`step.begin`, `content.part`, `tool.call`, `tool.result`, `step.end` with
  the call's usage), `context.apply_compaction` (a `history_summary`; the user messages it keeps stay),
  `context.clear` and `context.undo` (what they removed is left out, counted).
Usage (`input_other` / `inputOther` excludes the cache read and creation) is read in Anthropic's units.
Everything else (approvals, hooks, status, MCP, plan mode, notifications, sub-agent events) is
bookkeeping, counted by type.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    compact_json,
    image_note,
    image_placeholder,
    iter_jsonl,
    summary_metadata,
)
from engine.importers.registry import Sniff
from engine.messages import AiMessage
from engine.session_lines import field_type, json_type
from engine.usage import anthropic_usage

FORMAT = "kimi"
INTERRUPTED = (
    "Tool execution was interrupted before its result was recorded. "
    "Do not assume the tool completed successfully."
)
# Kimi Code records whose content is one object: the key that holds it
RECORD_OBJECTS = {"context.append_message": "message", "context.append_loop_event": "event"}
COMPACTION_PREFIX = "The conversation so far has been compacted to free up context."


def detect_kimi(sniff: Sniff) -> bool:
    """The wire header, and a record of either dialect."""
    objects = list(sniff.objects())
    header = any(o.get("type") == "metadata" and "protocol_version" in o for o in objects)
    return header and any(_legacy_type(o) or str(o.get("type", "")).startswith("context.") for o in objects)


def _legacy_type(record: dict[str, Any]) -> str | None:
    message = record.get("message")
    if isinstance(message, dict) and isinstance(message.get("payload"), dict) and "timestamp" in record:
        kind = message.get("type")
        return kind if isinstance(kind, str) else None
    return None


def import_kimi(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    reader = _Reader(out)
    version = None
    for number, record, error in iter_jsonl(text):
        if error:
            out.problem(number, error)
        elif not isinstance(record, dict):
            out.problem(number, f"expected a JSON object, found {type(record).__name__}")
        elif (wrong := _wrong_type(record)) is not None:  # read, it would change what is around it, unsaid
            out.problem(number, f"{wrong}; left out")
        elif record.get("type") == "metadata":
            version = record.get("protocol_version")
        elif (kind := _legacy_type(record)) is not None:
            reader.legacy(number, kind, record["message"]["payload"], record.get("timestamp"))
        elif isinstance(record.get("type"), str):
            reader.record(number, record["type"], record)
        else:
            out.problem(number, "neither a wire message nor a record (no 'type')")
    reader.settle()
    session = {"protocolVersion": version} if version else {}
    if reader.model:
        session["model"] = reader.model
    return out.result(FORMAT, session=session)


class _Reader:
    def __init__(self, out: Collector) -> None:
        self.out = out
        self.model: str | None = None
        self.step: _Step | None = None
        self.pending: dict[str, str] = {}  # call id -> tool name, not answered yet
        self.settled: tuple[int, int, int] | None = None  # the last model call's messages and line
        self.count = 0

    # -- both dialects -------------------------------------------------------------------------
    def _id(self, number: int) -> str:
        self.count += 1
        return self.out.unique_id(f"kimi-{number}")

    def _add(
        self, number: int, role: str, kind: str, text: str, time: Any, meta: dict[str, Any] | None
    ) -> None:
        self.out.add(AiMessage(self._id(number), role, kind, text, _ms(time, number), meta or None))

    def _open(self, number: int, time: Any) -> None:
        self.settle()
        self.step = _Step(number, time)

    def settle(self) -> None:
        """Close the open model call: its thoughts, text and calls, then results for calls left open."""
        step, self.step = self.step, None
        if step is None:
            return
        start = len(self.out.messages)
        for thought in step.thoughts:
            self._add(step.line, "assistant", "thought", thought, step.time, None)
        text = "".join(step.texts)
        if step.calls:
            calls = [_call(c) for c in step.calls]
            self._add(step.line, "assistant", "tool_calls", text, step.time, {"tool_calls": calls})
            self.pending.update({c["id"]: c["function"]["name"] for c in calls})
        elif text.strip():
            self._add(step.line, "assistant", "final_answer", text, step.time, None)
        elif not step.thoughts:
            self.out.skip("empty model call", step.line)
        self.settled = (start, len(self.out.messages), step.line)
        if step.usage is not None:
            self._attach(step.usage)
        for number, call_id, text, time, notes in step.results:  # results streamed while the call was open
            self._result(number, call_id, text, time, notes)

    def _attach(self, usage: Any) -> None:
        """A call's usage onto the model call settled last (its usage may come after its results)."""
        if self.settled is not None:
            start, end, line = self.settled
            self.out.attach_usage(start, end, usage, line, "a call with no message")

    def _result(self, number: int, call_id: str, text: str, time: Any, meta: dict[str, Any]) -> None:
        name = self.pending.pop(call_id, None)
        head = {"tool_call_id": call_id, "raw_output": text, **({"tool_name": name} if name else {})}
        self._add(number, "tool", "tool_output", text, time, {**head, **meta})

    def _close_pending(self, number: int, time: Any) -> None:
        for call_id in list(self.pending):
            self._result(number, call_id, INTERRUPTED, time, {"generated": "interrupted"})

    def _usage(self, number: int, usage: Any, keys: tuple[str, str, str, str], call_id: Any = None) -> Any:
        if not isinstance(usage, dict):
            return None
        counts = dict(zip(
            ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens"),
            (usage.get(k) for k in keys),
            strict=True,
        ))  # fmt: skip
        parsed = self.out.usage(
            number, anthropic_usage(counts, self.model, call_id if isinstance(call_id, str) else None)
        )
        return None if parsed is None else replace(parsed, raw=dict(usage))

    # -- kimi-cli (Python) ---------------------------------------------------------------------
    def legacy(self, number: int, kind: str, payload: dict[str, Any], time: Any) -> None:
        if kind in ("TurnBegin", "SteerInput"):
            self.settle()
            text, notes = _parts(payload.get("user_input"))
            self._add(number, "user", "user_input", text, time, notes)
        elif kind == "StepBegin":
            self._open(number, time)
        elif kind == "ContentPart" and self.step is not None:
            self.step.part(payload)
        elif kind == "ToolCall" and self.step is not None:
            function = payload.get("function") if isinstance(payload.get("function"), dict) else {}
            self.step.calls.append(
                {
                    "id": payload.get("id"),
                    "name": function.get("name"),
                    "arguments": function.get("arguments") or "",
                }
            )
        elif kind == "ToolCallPart" and self.step is not None and self.step.calls:
            self.step.calls[-1]["arguments"] += payload.get("arguments_part") or ""
        elif kind == "ToolResult":
            value = payload.get("return_value") if isinstance(payload.get("return_value"), dict) else {}
            self._answer(number, str(payload.get("tool_call_id") or ""), *_legacy_result(value), time)
        elif kind == "StatusUpdate" and payload.get("token_usage"):
            keys = ("input_other", "output", "input_cache_read", "input_cache_creation")
            self._step_usage(self._usage(number, payload["token_usage"], keys, payload.get("message_id")))
        else:
            self.out.skip(kind, number)

    def _answer(self, number: int, call_id: str, text: str, notes: dict[str, Any], time: Any) -> None:
        """A result: kept with the open model call (tools run while it still streams), else sent now."""
        if self.step is not None:
            self.step.results.append((number, call_id, text, time, notes))
        else:
            self._result(number, call_id, text, time, notes)

    def _step_usage(self, usage: Any) -> None:
        if self.step is not None:
            self.step.usage = usage
        elif usage is not None:
            self._attach(usage)

    # -- Kimi Code (TypeScript) ----------------------------------------------------------------
    def record(self, number: int, kind: str, record: dict[str, Any]) -> None:
        time = record.get("time")
        if kind == "config.update" and isinstance(record.get("systemPrompt"), str):
            if not any(m.type == "system_prompt" for m in self.out.messages):
                self._add(number, "system", "system_prompt", record["systemPrompt"], time, None)
            else:
                self.out.skip("config.update (a later system prompt)", number)
            if isinstance(record.get("modelAlias"), str):
                self.model = record["modelAlias"]
        elif kind == "context.append_message" and isinstance(record.get("message"), dict):
            self._append(number, record["message"], time)
        elif kind == "context.append_loop_event" and isinstance(record.get("event"), dict):
            self._loop(number, record["event"], time)
        elif kind == "context.apply_compaction":
            self._compaction(number, record, time)
        elif kind in ("context.clear", "context.undo"):
            self._remove(number, kind, record)
        elif kind == "usage.record" and isinstance(record.get("model"), str):
            self.model = record["model"]
            self.out.skip(kind, number)
        else:
            self.out.skip(kind, number)

    def _append(self, number: int, message: dict[str, Any], time: Any) -> None:
        self.settle()
        role = message.get("role")
        text, notes = _parts(message.get("content"))
        origin = message.get("origin") if isinstance(message.get("origin"), dict) else {}
        if origin.get("kind") not in (None, "user"):
            notes["generated"] = origin.get("kind")
        if role == "user":
            self._close_pending(number, time)
            self._add(number, "user", "user_input", text, time, notes)
        elif role == "system":
            self._add(
                number,
                "user",
                "user_input",
                text,
                time,
                {**notes, "generated": notes.get("generated", "system")},
            )
        elif role == "assistant":
            step = _Step(number, time)
            step.texts, step.calls = (
                [text],
                [_raw_call(c) for c in message.get("toolCalls") or [] if isinstance(c, dict)],
            )
            self.step = step
            self.settle()
        elif role == "tool":
            self._result(number, str(message.get("toolCallId") or ""), text, time, notes)
        else:
            self.out.problem(number, f"unknown message role {role!r}")

    def _loop(self, number: int, event: dict[str, Any], time: Any) -> None:
        kind = event.get("type")
        if kind == "step.begin":
            self._close_pending(number, time)
            self._open(number, time)
        elif kind == "content.part" and self.step is not None and isinstance(event.get("part"), dict):
            self.step.part(event["part"])
        elif kind == "tool.call" and self.step is not None:
            args = event.get("args")
            arguments = "" if args is None else json.dumps(args, ensure_ascii=False, separators=(",", ":"))
            self.step.calls.append(
                {"id": event.get("toolCallId"), "name": event.get("name"), "arguments": arguments}
            )
        elif kind == "tool.result" and isinstance(event.get("result"), dict):
            call_id = str(event.get("toolCallId") or "")
            open_calls = {c["id"] for c in self.step.calls} if self.step is not None else set()
            if call_id in self.pending or call_id in open_calls:  # Kimi Code drops a result for no call
                self._answer(number, call_id, *_rendered_result(event["result"]), time)
        elif kind == "step.end":
            if event.get("usage"):
                keys = ("inputOther", "output", "inputCacheRead", "inputCacheCreation")
                self._step_usage(self._usage(number, event["usage"], keys, event.get("messageId")))
            if event.get("finishReason") not in ("interrupted", "error"):
                self.settle()
                self._close_pending(number, time)
        else:
            self.out.skip(f"loop event {kind}", number)

    def _compaction(self, number: int, record: dict[str, Any], time: Any) -> None:
        self.settle()
        summary = (
            record.get("summary") if isinstance(record.get("summary"), str) else record.get("contextSummary")
        )
        if isinstance(summary, dict):
            summary, _ = _parts(summary.get("content"))
        text = f"{COMPACTION_PREFIX}\n\n{summary if isinstance(summary, str) else ''}"
        replaced = [m for m in self.out.messages if m.type not in ("system_prompt", "user_input")]
        seq = sum(1 for m in self.out.messages if m.type == "history_summary") + 1
        meta = {
            **summary_metadata(text, replaced, seq),
            "source": {
                k: record.get(k) for k in ("compactedCount", "tokensBefore", "tokensAfter") if k in record
            },
        }
        self._add(number, "system", "history_summary", text, time, meta)

    def _remove(self, number: int, kind: str, record: dict[str, Any]) -> None:
        """`context.clear` empties the context (the system prompt is the profile's, it stays);
        `context.undo` takes back the last `count` user turns and what followed them."""
        self.settle()
        messages = self.out.messages
        if kind == "context.clear":
            kept = [m for m in messages if m.type == "system_prompt"]
        else:
            count = record.get("count") if isinstance(record.get("count"), int) else 0
            users = [i for i, m in enumerate(messages) if m.type == "user_input" and not m.meta("generated")]
            kept = messages[: users[-count]] if 0 < count <= len(users) else list(messages)
        for _ in range(len(messages) - len(kept)):
            self.out.skip(f"removed by {kind}", number)
        messages[:] = kept
        self.pending.clear()
        self.settled = None


def _wrong_type(record: dict[str, Any]) -> str | None:
    """A record holding a value of a type Kimi never writes where it changes what is read without a word,
    or None: a loop event that is no object or has no type ends no step, a call id that is no string answers
    no call, a content part with no type or no text is dropped, an undo count that is no number undoes
    nothing."""
    if _legacy_type(record) == "ContentPart":
        return _wrong_part(record["message"]["payload"], "message.payload")
    kind = record.get("type")
    if kind == "context.undo" and "count" in record and not _is_int(record["count"]):
        return f"count: must be a number of turns, got {json_type(record['count'])}"
    key = RECORD_OBJECTS.get(kind) if isinstance(kind, str) else None
    if key is None:
        return None
    value = record.get(key)
    if not isinstance(value, dict):
        return f"{key}: must be an object, got {json_type(value)}"
    return _wrong_event(value) if key == "event" else None


def _wrong_event(event: dict[str, Any]) -> str | None:
    kind = event.get("type")
    if not isinstance(kind, str):
        return f"event.type: must be a loop event type (a string), got {field_type(event, 'type')}"
    if kind in ("tool.call", "tool.result") and not isinstance(event.get("toolCallId"), str):
        return f"event.toolCallId: must be a tool call id (a string), got {field_type(event, 'toolCallId')}"
    if kind != "content.part":
        return None
    part = event.get("part")
    return (
        _wrong_part(part, "event.part")
        if isinstance(part, dict)
        else f"event.part: must be an object, got {field_type(event, 'part')}"
    )


def _wrong_part(part: dict[str, Any], where: str) -> str | None:
    kind = part.get("type")
    if not isinstance(kind, str):
        return f"{where}.type: must be a part type (a string), got {field_type(part, 'type')}"
    if kind in ("text", "think") and not isinstance(part.get(kind), str):
        return f"{where}.{kind}: must be text (a string), got {field_type(part, kind)}"
    return None


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


class _Step:
    """One model call being streamed."""

    def __init__(self, line: int, time: Any) -> None:
        self.line, self.time = line, time
        self.texts: list[str] = []
        self.thoughts: list[str] = []
        self.calls: list[dict[str, Any]] = []
        self.usage: Any = None
        self.results: list[tuple[int, str, str, Any, dict[str, Any]]] = []
        self._last: str | None = None

    def part(self, part: dict[str, Any]) -> None:
        kind = part.get("type")
        if kind == "text":
            self.texts.append(str(part.get("text") or ""))
        elif kind == "think":
            chunk = str(part.get("think") or "")
            if self._last == "think" and self.thoughts:
                self.thoughts[-1] += chunk  # streamed pieces of one thought
            elif chunk:
                self.thoughts.append(chunk)
        self._last = kind


def _ms(time: Any, number: int) -> int:
    if isinstance(time, int | float) and not isinstance(time, bool):
        return int(time * 1000) if time < 1e11 else int(time)
    return number


def _parts(content: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(content, str):
        return content, {}
    texts: list[str] = []
    notes: dict[str, Any] = {}
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("text") or ""))
        elif kind in ("image_url", "video_url", "audio_url"):
            inner = part.get(kind) if isinstance(part.get(kind), dict) else {}
            note = image_note({"url": inner.get("url")})
            notes.setdefault("images", []).append(note)
            texts.append(image_placeholder(note))
    return "\n".join(t for t in texts if t), notes


def _legacy_result(value: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """As kimi-cli's `tool_result_to_message` words a result for the model."""
    output, notes = _parts(value.get("output"))
    message = value.get("message") or ""
    parts: list[str] = []
    if value.get("is_error"):
        parts.append(f"<system>ERROR: {message}</system>")
        notes["is_error"] = True
    elif message:
        parts.append(f"<system>{message}</system>")
    if output:
        parts.append(output)
    if not parts:
        parts.append("<system>Tool output is empty.</system>")
    return "\n".join(parts), notes


def _rendered_result(result: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """As Kimi Code's `renderToolResultForModel` words a result."""
    output, notes = _parts(result.get("output"))
    if result.get("isError"):
        notes["is_error"] = True
        text = "<system>ERROR: Tool execution failed.</system>" + (f"\n{output}" if output else "")
        if not output:
            text = "<system>ERROR: Tool execution failed. Tool output is empty.</system>"
    else:
        empty = not output.strip() or output.strip() == "Tool output is empty."
        text = "<system>Tool output is empty.</system>" if empty else output
    note = result.get("note")
    return (f"{text}\n{note}" if note else text), notes


def _raw_call(call: dict[str, Any]) -> dict[str, Any]:
    return {"id": call.get("id"), "name": call.get("name"), "arguments": call.get("arguments") or ""}


def _call(raw: dict[str, Any]) -> dict[str, Any]:
    arguments = raw.get("arguments")
    text = arguments if isinstance(arguments, str) else compact_json(arguments or {})
    return {
        "id": str(raw.get("id") or ""),
        "type": "function",
        "function": {"name": str(raw.get("name") or ""), "arguments": text},
    }
