"""Gemini CLI sessions (`~/.gemini/tmp/<project>/chats/session-*.json`) as linnkit messages.

One JSON object `{sessionId, projectHash, startTime, lastUpdated, messages: [...]}`. A message is
`{id, timestamp, type: user|gemini|info|error|warning, content, thoughts?, toolCalls?, tokens?, model?}`.
`user` → `user_input`; a `gemini` message → its `thoughts` (subject and description) as `thought`s, then one
`tool_calls` message (the text with the calls) followed by each call's result as `tool_output` — results live
inside the calling message —, or a `final_answer` when it calls nothing. `info`/`error`/`warning` are the
CLI's own notices, never sent to the model: counted, not imported. No system prompt is stored. A `gemini`
message's `tokens` (usageMetadata: `input` includes `cached`) is its call's `metadata.usage`, on the last
message it produced; `tokens: null` (a reply written before its usage came) is a call without usage.

`content` may also hold the model's own parts, as the CLI writes a history it rebuilt (`$set` of
`messages` after a compression or a masking: `updateMessagesFromHistory`): `{"text", "thought": true}` is a
thought, a `functionCall` part in a `gemini` message is a call, and a `functionResponse` part in a `user`
message is that call's result (once: a result the call's own record already gave is not repeated).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    Names,
    compact_json,
    iso_to_ms,
    load_json_document,
)
from engine.importers.responses import PART_SEPARATOR
from engine.messages import AiMessage
from engine.session_lines import json_type
from engine.usage import UsageProblem, gemini_usage

FORMAT = "gemini-cli"
CLI_NOTICES = Names({"info", "error", "warning"})  # the CLI's own notices, never sent
MESSAGE_TYPES = Names({"user", "gemini", "info", "error", "warning"})


def detect_gemini(sniff: Any) -> bool:
    doc = sniff.document
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        return False
    messages = [m for m in doc["messages"] if isinstance(m, dict)]
    typed = bool(messages) and all(m.get("type") in MESSAGE_TYPES and "role" not in m for m in messages)
    return typed or ("sessionId" in doc and "projectHash" in doc)


def import_gemini(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    doc, error, line = load_json_document(text)
    if error is not None:
        out.problem(line, error)
        return out.result(FORMAT)
    if not isinstance(doc, dict) or not isinstance(doc.get("messages"), list):
        out.problem(None, "expected an object with a 'messages' list")
        return out.result(FORMAT)
    convert_messages(out, doc["messages"])
    return out.result(FORMAT, session=session_fields(doc))


def convert_messages(out: Collector, messages: list[Any], lines: list[int] | None = None) -> None:
    """The messages of a session record, in order; `lines` (when the record was read from JSONL) gives the
    line each message was last written on, for skip and problem reports."""
    answered: set[str] = set()  # call ids whose result came in
    for index, message in enumerate(messages):
        line = lines[index] if lines else None
        label = f"messages[{index}]"
        if not isinstance(message, dict):
            out.problem(line, f"{label}: expected a message object, found {type(message).__name__}")
            continue
        wrong = _wrong_type(message)
        if wrong is not None:
            out.problem(line, f"{label}.{wrong}; left out")
            continue
        start = len(out.messages)
        _message(out, index, line or index + 1, message, answered)
        if message.get("type") == "gemini" and message.get("tokens") is not None:
            _attach_tokens(out, start, index, line, message)


def _wrong_type(message: dict[str, Any]) -> str | None:
    """A value of a type the CLI never writes that would change what is read without a word (a `type` read
    as a newer kind, thoughts or calls read as none), or None: the message is then left out, named."""
    kind = message.get("type")
    if "type" not in message:
        return "type: missing"
    if not isinstance(kind, str):
        return f"type: must be a message type (a string), got {json_type(kind)}"
    for key, what in (("thoughts", "a thought"), ("toolCalls", "a tool call")):
        items = message.get(key)
        if items is not None and not isinstance(items, list):
            return f"{key}: must be a list, got {json_type(items)}"
        for n, item in enumerate(items or []):
            if not isinstance(item, dict):
                return f"{key}[{n}]: must be {what} (an object), got {json_type(item)}"
            for part in ("subject", "description") if key == "thoughts" else ():
                if item.get(part) is not None and not isinstance(item[part], str):
                    return f"{key}[{n}].{part}: must be text, got {json_type(item[part])}"
    return None


def session_fields(doc: dict[str, Any]) -> dict[str, Any]:
    session = {k: doc[k] for k in ("sessionId", "startTime", "lastUpdated") if isinstance(doc.get(k), str)}
    model = next((m.get("model") for m in doc["messages"] if isinstance(m, dict) and m.get("model")), None)
    if model:
        session["model"] = model
    return session


def _attach_tokens(out: Collector, start: int, index: int, line: int | None, message: dict[str, Any]) -> None:
    model = message.get("model") if isinstance(message.get("model"), str) else None
    call_id = message.get("id") if isinstance(message.get("id"), str) else None
    parsed = gemini_usage(message["tokens"], model, call_id)
    if isinstance(parsed, UsageProblem):
        if parsed.placeholder:  # counted where the message's other left-out parts are (its position)
            out.usage_problem(line or index + 1, parsed)
        else:
            out.problem(line, f"messages[{index}].tokens: {str(parsed).removeprefix('usage.')}")
        return
    out.attach_usage(start, len(out.messages), parsed, line, f"messages[{index}]: a reply with no message")


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return PART_SEPARATOR.join(
            p["text"]
            for p in content
            if isinstance(p, dict) and isinstance(p.get("text"), str) and p.get("thought") is not True
        )
    return "" if content is None else compact_json(content)


def _parts(content: Any, key: str) -> list[dict[str, Any]]:
    """The `key` objects (`functionCall`, `functionResponse`) among a message's content parts."""
    parts = content if isinstance(content, list) else []
    return [p[key] for p in parts if isinstance(p, dict) and isinstance(p.get(key), dict)]


def _part_thoughts(content: Any) -> list[str]:
    parts = content if isinstance(content, list) else []
    return [
        p["text"]
        for p in parts
        if isinstance(p, dict) and p.get("thought") is True and isinstance(p.get("text"), str) and p["text"]
    ]


Add = Callable[..., None]  # add(id suffix, role, type, content, metadata=None)


def _message(out: Collector, index: int, where: int, message: dict[str, Any], answered: set[str]) -> None:
    kind = message.get("type")
    base = message["id"] if isinstance(message.get("id"), str) and message["id"] else f"gm-{index}"
    ts = iso_to_ms(message.get("timestamp"))
    ts = index if ts is None else ts

    def add(suffix: str, role: str, type_: str, content: str, meta: dict[str, Any] | None = None) -> None:
        out.add(AiMessage(out.unique_id(base + suffix), role, type_, content, ts, meta or None))

    if kind == "user":
        _user(add, base, message.get("content"), answered)
    elif kind in CLI_NOTICES:
        out.skip(f"{kind} notice (shown by the CLI, not sent to the model)", where)
    elif kind != "gemini":  # a newer message type: named, left out
        out.drift(f"message type {kind!r}", where)
    elif not _reply(add, base, message, answered):
        out.skip("empty reply", where)


def _user(add: Add, base: str, content: Any, answered: set[str]) -> None:
    """A user turn, and the results its `functionResponse` parts carry (each call's once)."""
    text, responses = _text(content), _parts(content, "functionResponse")
    if text or not responses:
        add("", "user", "user_input", text)
    for n, response in enumerate(responses):
        call_id = response.get("id") if isinstance(response.get("id"), str) else f"{base}-response-{n}"
        if call_id in answered:
            continue
        answered.add(call_id)
        name = response.get("name") if isinstance(response.get("name"), str) else ""
        output = _response_text(response)
        add(f"-result-{call_id}", "tool", "tool_output", output,
            {"tool_call_id": call_id, "raw_output": output, "tool_name": name})  # fmt: skip


def _reply(add: Add, base: str, message: dict[str, Any], answered: set[str]) -> bool:
    """A `gemini` message's thoughts, then its answer or its calls and their recorded results; False when it
    held nothing."""
    content = message.get("content")
    thoughts = [_thought(t) for t in message.get("thoughts") or [] if isinstance(t, dict)]
    thoughts += _part_thoughts(content)
    for n, thought in enumerate(thoughts):
        add(f"-thought-{n}", "assistant", "thought", thought)
    calls = [c for c in message.get("toolCalls") or [] if isinstance(c, dict)]
    recorded = len(calls)
    ids = {c.get("id") for c in calls}
    calls += [c for c in _parts(content, "functionCall") if c.get("id") is None or c["id"] not in ids]
    meta = {"model": message["model"]} if isinstance(message.get("model"), str) else {}
    text = _text(content)
    if not calls:
        if text:
            add("", "assistant", "final_answer", text, meta)
        return bool(text or thoughts)
    wire_calls = [_call(call, f"{base}-call-{n}") for n, call in enumerate(calls)]
    add("", "assistant", "tool_calls", text, {**meta, "tool_calls": wire_calls})
    # the calls read from the content (after the recorded ones) get their results from a later user message
    for call, wire in zip(calls[:recorded], wire_calls[:recorded], strict=True):
        answered.add(wire["id"])
        output, extra = _result(call)
        head = {"tool_call_id": wire["id"], "raw_output": output, "tool_name": wire["function"]["name"]}
        add(f"-result-{wire['id']}", "tool", "tool_output", output, {**head, **extra})
    return True


def _thought(thought: dict[str, Any]) -> str:
    words = [thought.get("subject"), thought.get("description")]
    return "\n".join(w for w in words if isinstance(w, str) and w)


def _call(call: dict[str, Any], fallback_id: str) -> dict[str, Any]:
    call_id = call["id"] if isinstance(call.get("id"), str) and call["id"] else fallback_id
    args = call.get("args")
    arguments = args if isinstance(args, str) else compact_json(args if args is not None else {})
    return {
        "id": call_id,
        "type": "function",
        "function": {"name": call.get("name") or "", "arguments": arguments},
    }


def _result(call: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The text the model got back for a call: its functionResponse output (or error), else the display."""
    extra = {"status": call["status"]} if isinstance(call.get("status"), str) else {}
    texts: list[str] = []
    for part in call.get("result") or []:
        response = part.get("functionResponse") if isinstance(part, dict) else None
        if isinstance(response, dict) and isinstance(response.get("response"), dict):
            texts.append(_response_text(response))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    if not texts and isinstance(call.get("resultDisplay"), str):
        texts.append(call["resultDisplay"])
    return PART_SEPARATOR.join(texts), extra


def _response_text(response: dict[str, Any]) -> str:
    """A functionResponse's output (or error), as the model read it."""
    body = response.get("response")
    if not isinstance(body, dict):
        return "" if body is None else compact_json(body)
    value = body.get("output", body.get("error", body))
    return value if isinstance(value, str) else compact_json(value)
