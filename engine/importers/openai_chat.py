"""OpenAI Chat Completions message lists as linnkit messages.

Accepted shapes: a JSON array of messages, JSONL of messages, a request `{messages: [...]}`, and
fine-tuning JSONL (one `{"messages": [...]}` conversation a line; `conversation` picks one, default the
first; `ImportResult.conversations` tells how many there are). A chat completion response (`{choices:
[{message}]}`) after a request joins its conversation, as does one logged beside its request (`{messages,
response}`, litellm's logs); a response's `usage` is its call's `metadata.usage`.

Mapping: `system`/`developer` → `system_prompt`; `user` → `user_input`; assistant with `tool_calls` →
`tool_calls` (content kept), other assistant text → `final_answer`; `reasoning_content`/`reasoning` text →
a `thought` before it; `reasoning_details` stays on the message; `tool` → `tool_output` with the tool name
of its call. Content given as parts is flattened to its text; images are noted in `metadata.images`.
Messages have no ids: `oa-<index>` (`#n` for a second message from the same source message).

LLaMA-Factory's `{type, value}` parts (its v1 data format) are read too: `text`, `reasoning` (a thought),
`tool_call` (a call; ids made up, as the format has none, and each `tool` message answers the oldest
unanswered one; a `tool` message whose text is a JSON array of results answers as many calls, in order),
images by their path. A request's top-level `system_prompt` (Hermes Agent sessions) is the
system prompt when no message is; a side `images` list (LLaMA-Factory) fills the `<image>` tags in order,
and `videos` and `audios` their `<video>` and `<audio>` tags. A
role this importer does not know is drift: with text and before the model's last message it is carried as a
user-side message (`metadata.generated`), else it is left out; both are named in the report. The records
agents write for themselves (mini-swe-agent's `exit`, Hermes' `session_meta`, which names the model) are
bookkeeping: left out by role, wherever they are.
"""

from __future__ import annotations

import itertools
import json
from typing import Any

from engine.importers._common import (
    Collector,
    Conversation,
    ImportResult,
    NameMap,
    Names,
    compact_json,
    image_note,
    import_conversations,
    iso_to_ms,
    unmapped_note,
)
from engine.importers._media import SideImages
from engine.messages import AiMessage
from engine.session_lines import json_type
from engine.usage import openai_usage

FORMAT = "openai"
HEADER_KEYS = ("model", "preference")
TEXT_PARTS = ("text", "input_text", "output_text")
# records agents write beside their messages, never sent to a model
BOOKKEEPING_ROLES = NameMap(
    {"exit": "mini-swe-agent's exit record", "session_meta": "Hermes Agent's session record"}
)
VALUE_MEDIA = ("image", "video", "audio", "image_url", "video_url", "audio_url")
IMAGE_PARTS = ("image_url", "input_image")
PART_SEPARATOR = "\n\n"
# Keys with a place in the message model; any other key of a source message goes to metadata.source.
MAPPED_KEYS = Names(
    {"role", "content", "tool_calls", "tool_call_id", "id", "timestamp", "reasoning_content", "reasoning"}
    | {"reasoning_details", "usage"}
)


def import_openai(text: str, path: str = "<text>", *, conversation: int = 0) -> ImportResult:
    """Read OpenAI chat messages; `conversation` picks one when the input holds several."""
    return import_conversations(
        text,
        path,
        conversation,
        fmt=FORMAT,
        response_message=_response_message,
        convert=lambda out, chosen: _Converter(out, chosen).run(),
        header_keys=HEADER_KEYS,
    )


def _response_message(item: dict[str, Any]) -> dict[str, Any] | None:
    """The message a chat completion response carries, with the response's `usage` and `model`."""
    choices = item.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        message = choices[0].get("message")
        if not isinstance(message, dict):
            return None
        return {**message, **{k: item[k] for k in ("usage", "model") if k in item and k not in message}}
    return None


def _kept_response(message: dict[str, Any]) -> dict[str, Any] | None:
    """Where a message keeps its call's usage (and model): on itself (a response's message), or in the
    response an agent stored beside it (mini-swe-agent: `extra.response`, LiteLLM's `ModelResponse`)."""
    if "usage" in message:
        return message
    extra = message.get("extra")
    response = extra.get("response") if isinstance(extra, dict) else None
    return response if isinstance(response, dict) and "usage" in response else None


def flatten_parts(content: Any) -> tuple[str, dict[str, Any]] | None:
    """Text of a content value (string or parts list) and notes for images and other parts."""
    if content is None:
        return "", {}
    if isinstance(content, str):
        return content, {}
    if not isinstance(content, list):
        return None
    texts: list[str] = []
    notes: dict[str, list[Any]] = {}
    for part in content:
        kind = part.get("type") if isinstance(part, dict) else None
        if isinstance(part, dict) and "value" in part and "text" not in part:  # LLaMA-Factory {type, value}
            _value_part(kind, part["value"], texts, notes)
        elif kind in TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "reasoning" and isinstance(part.get("reasoning"), str):  # Letta's reasoning parts
            notes.setdefault("reasoning", []).append(part["reasoning"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(part["refusal"])
        elif kind in IMAGE_PARTS:
            image = part.get(kind)
            notes.setdefault("images", []).append(
                image_note(image if isinstance(image, dict) else {"url": image})
            )
        else:
            notes.setdefault("unmappedParts", []).append(unmapped_note(part))
    return PART_SEPARATOR.join(t for t in texts if t), notes


def _value_part(kind: Any, value: Any, texts: list[str], notes: dict[str, list[Any]]) -> None:
    if kind == "text":
        texts.append(value if isinstance(value, str) else compact_json(value))
    elif kind == "reasoning":
        notes.setdefault("reasoning", []).append(value if isinstance(value, str) else compact_json(value))
    elif kind == "tool_call":
        notes.setdefault("valueToolCalls", []).append(value)
    elif kind in VALUE_MEDIA:
        notes.setdefault("images" if kind.startswith("image") else "media", []).append({"url": value})
    else:
        notes.setdefault("unmappedParts", []).append(unmapped_note({"type": kind, "value": value}))


def _value_call(value: Any, call_id: str) -> dict[str, Any]:
    """A LLaMA-Factory `tool_call` value (`{"name", "arguments"}`, often as a JSON string) as a call."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            value = {"name": "", "arguments": value}
    value = value if isinstance(value, dict) else {"name": "", "arguments": value}
    function = {"name": value.get("name") or "", "arguments": value.get("arguments", {})}
    return normalize_call({"id": value.get("id") or call_id, "type": "function", "function": function})


def normalize_call(call: Any) -> dict[str, Any]:
    """A tool call in linnkit's shape: arguments as a JSON string, unknown keys (e.g. extra_content) kept."""
    if not isinstance(call, dict):
        return {"id": "", "type": "function", "function": {"name": "", "arguments": compact_json(call)}}
    function = call.get("function") if isinstance(call.get("function"), dict) else {}
    args = function.get("arguments")
    arguments = args if isinstance(args, str) else compact_json({} if args is None else args)
    out = {k: v for k, v in call.items() if k not in ("id", "type", "function")}
    return {
        "id": call.get("id") if isinstance(call.get("id"), str) else "",
        "type": "function",
        "function": {"name": function.get("name") or "", "arguments": arguments},
        **out,
    }


class _Converter:
    def __init__(self, out: Collector, conversation: Conversation) -> None:
        self.out = out
        self.conversation = conversation
        self.tool_names: dict[str, str] = {}
        self.open_calls: list[str] = []  # made-up call ids not yet answered (LLaMA-Factory tool_call parts)
        self.made_up = itertools.count(1)
        self.last_model = -1  # index of the model's last message: unknown roles after it are bookkeeping
        texts = [m.get("content") for _, _, m in conversation.entries if isinstance(m, dict)]
        header = conversation.header  # LLaMA-Factory's side lists of media, filling their tags
        self.media = [SideImages(header.get(f"{kind}s"), texts, kind) for kind in ("image", "video", "audio")]
        self.exit_record = -1  # a mini-swe-agent 1.x exit record's index (written after the last call)

    def run(self) -> None:
        entries = self.conversation.entries
        self.last_model = max(
            (
                i
                for i, (_, _, m) in enumerate(entries)
                if isinstance(m, dict) and m.get("role") == "assistant"
            ),
            default=-1,
        )
        self._mini_swe_agent(entries)
        prompt = self.conversation.header.get("system_prompt")
        has_system = any(
            isinstance(m, dict) and m.get("role") in ("system", "developer") for _, _, m in entries
        )
        if isinstance(prompt, str) and prompt.strip() and not has_system:  # Hermes Agent sessions
            meta = {"source": {"field": "system_prompt"}}
            self._add({"id": "system-prompt"}, 0, "system", "system_prompt", prompt, meta)
        for index, (line, label, message) in enumerate(entries):
            self._message(index, line, label, message)

    def _mini_swe_agent(self, entries: list[tuple[int | None, str | None, Any]]) -> None:
        """A mini-swe-agent 1.x trajectory (`trajectory_format: mini-swe-agent-1`): its model names the
        session's, and a run that ended (`info.exit_status`) wrote the exit (the submission, a limit) as a
        user message after its last call, which no model read (2.x writes it with role `exit`)."""
        header = self.conversation.header
        kind, info = header.get("trajectory_format"), header.get("info")
        if not isinstance(kind, str) or not kind.startswith("mini-swe-agent") or not isinstance(info, dict):
            return
        responses = (_kept_response(m) for _, _, m in entries if isinstance(m, dict))
        answered = next((r.get("model") for r in responses if r is not None), None)  # the provider's name
        config = info.get("config")
        model = config.get("model") if isinstance(config, dict) else None
        name = answered or (model.get("model_name") if isinstance(model, dict) else None)
        if isinstance(name, str) and name:
            header.setdefault("model", name)
        last = entries[-1][2] if entries else None
        ended = isinstance(last, dict) and last.get("role") == "user"
        if info.get("exit_status") and ended and len(entries) - 1 > self.last_model:
            self.exit_record = len(entries) - 1

    def _message(self, index: int, line: int | None, label: str | None, message: Any) -> None:
        wrong = _wrong_type(message)
        if wrong is not None:
            self._problem(line, label, wrong)
            return
        if message.get("role") in BOOKKEEPING_ROLES or index == self.exit_record:
            self._bookkeeping(message, line if line is not None else index + 1)
            return
        flat = flatten_parts(message.get("content"))
        if flat is None:
            self._problem(line, label, "content is neither text nor a list of parts")
            return
        text, notes = flat
        text = self._filled(text, notes)
        reasoning = notes.pop("reasoning", None)
        value_calls = notes.pop("valueToolCalls", None)
        if reasoning and not message.get("reasoning_content"):
            message = {**message, "reasoning_content": "\n\n".join(reasoning)}
        if value_calls and not message.get("tool_calls"):
            message = {**message, "tool_calls": [self._made_up(v) for v in value_calls]}
        role = message.get("role")
        extras = {k: unmapped_note(v) for k, v in message.items() if k not in MAPPED_KEYS}
        if role in ("system", "developer"):
            if role == "developer":
                extras["role"] = role
            self._add(message, index, "system", "system_prompt", text, _meta(notes, extras))
        elif role == "user":
            meta = _meta(notes, {k: v for k, v in extras.items() if k != "generated"})
            if isinstance(message.get("generated"), str):  # a format's own automated user turn (Letta's)
                meta["generated"] = message["generated"]
            self._add(message, index, "user", "user_input", text, meta)
        elif role == "assistant":
            self._assistant(message, index, line, label, text, _meta(notes, extras))
        elif role == "tool":
            self._tool(message, index, line, label, text, _meta(notes, extras))
        else:
            self._unknown_role(message, index, line, text)

    def _filled(self, text: str, notes: dict[str, Any]) -> str:
        """`text` with the side-listed media its tags stand for, noted in `notes` (`images`, ...)."""
        for media in self.media:
            text, side = media.fill(text)
            if side:
                notes.setdefault(f"{media.kind}s", []).extend(side)
        return text

    def _bookkeeping(self, message: dict[str, Any], where: int) -> None:
        """A record the agent wrote for itself (never sent): left out; Hermes' names the session's model."""
        role = message["role"]
        if role not in BOOKKEEPING_ROLES:  # mini-swe-agent 1.x's exit, as a user message after the last call
            self.out.skip("mini-swe-agent's exit record (after its last call, not sent to the model)", where)
            return
        if role == "session_meta" and isinstance(message.get("model"), str):
            self.conversation.header.setdefault("model", message["model"])
        self.out.skip(f"role {role} ({BOOKKEEPING_ROLES[role]}, not sent to the model)", where)

    def _unknown_role(self, message: dict[str, Any], index: int, line: int | None, text: str) -> None:
        where = line if line is not None else index + 1
        label = f"role {message.get('role')!r}"
        if text.strip() and index < self.last_model:  # the model saw what came before its last call
            self.out.drift(label, where, "user_input")
            meta = {"generated": str(message.get("role")), "source": {"role": message.get("role")}}
            self._add(message, index, "user", "user_input", text, meta)
        else:
            self.out.drift(label, where)

    def _made_up(self, value: Any) -> dict[str, Any]:
        call = _value_call(value, f"lf-call-{next(self.made_up)}")
        self.open_calls.append(call["id"])
        return call

    def _assistant(
        self, message: dict[str, Any], index: int, line: int | None, label: str | None, text: str, meta: dict
    ) -> None:
        reasoning = message.get("reasoning_content") or message.get("reasoning")
        if isinstance(reasoning, str) and reasoning.strip():
            self._add(message, index, "assistant", "thought", reasoning, {})
        details = message.get("reasoning_details")
        if details:
            meta["reasoning_details"] = details
        start = len(self.out.messages)
        calls = self._calls(message.get("tool_calls"), line, label)
        if calls:
            meta["tool_calls"] = [normalize_call(c) for c in calls]
            for call in meta["tool_calls"]:
                if not call["id"]:
                    self._problem(line, label, "tool call without an id")
                self.tool_names[call["id"]] = call["function"]["name"]
            self._add(message, index, "assistant", "tool_calls", text, meta)
        elif text.strip() or any(key != "source" for key in meta):  # not a reasoning-only reply
            self._add(message, index, "assistant", "final_answer", text, meta)
        else:
            self.out.skip("empty", line if line is not None else index)
        response = _kept_response(message)
        if response is not None:  # what the provider counted for this call
            self._usage(response, start, line if line is not None else index + 1)

    def _usage(self, message: dict[str, Any], start: int, where: int) -> None:
        model = message.get("model") if isinstance(message.get("model"), str) else None
        usage = self.out.usage(where, openai_usage(message["usage"], model))
        if usage is not None:
            self.out.attach_usage(start, len(self.out.messages), usage, where, "a response with no message")

    def _tool(
        self, message: dict[str, Any], index: int, line: int | None, label: str | None, text: str, meta: dict
    ) -> None:
        call_id = message.get("tool_call_id")
        results = _results(text) if not call_id and len(self.open_calls) > 1 else None
        if results is not None and len(results) <= len(self.open_calls):  # one message answers parallel calls
            for result in results:
                answer = {**message, "tool_call_id": self.open_calls[0]}
                self._tool(answer, index, line, label, result, dict(meta))
            return
        if not call_id and self.open_calls:  # LLaMA-Factory: results answer the calls in order
            call_id = self.open_calls[0]
        if call_id in self.open_calls:
            self.open_calls.remove(call_id)
        if not isinstance(call_id, str) or not call_id:
            self._problem(line, label, "tool message without a tool_call_id")
            call_id = ""
        name = self.tool_names.get(call_id) or meta.get("source", {}).get("name")
        head = {"tool_call_id": call_id, "raw_output": text, **({"tool_name": name} if name else {})}
        self._add(message, index, "tool", "tool_output", text, {**head, **meta})

    def _add(self, source: dict[str, Any], index: int, role: str, kind: str, text: str, meta: dict) -> None:
        base = source["id"] if isinstance(source.get("id"), str) else f"oa-{index}"
        ms = iso_to_ms(source.get("timestamp"))
        message = AiMessage(
            self.out.unique_id(base), role, kind, text, index if ms is None else ms, meta or None
        )
        self.out.add(message)

    def _calls(self, calls: Any, line: int | None, label: str | None) -> list[dict[str, Any]]:
        """The message's tool calls that are objects; anything else is named and left out."""
        if calls is None:
            return []
        if not isinstance(calls, list):
            reason = f"must be an array, got {_json_kind(calls)}; read as no calls"
            self._problem(line, label, f"tool_calls: {reason}")
            return []
        for index, call in enumerate(calls):
            if not isinstance(call, dict):
                reason = f"must be an object, got {_json_kind(call)}; the call is left out"
                self._problem(line, label, f"tool_calls[{index}]: {reason}")
            elif call.get("function") is not None and not isinstance(call["function"], dict):
                kind = _json_kind(call["function"])
                reason = f"must be an object, got {kind}; read as a call of no function"
                self._problem(line, label, f"tool_calls[{index}].function: {reason}")
        return [call for call in calls if isinstance(call, dict)]

    def _problem(self, line: int | None, label: str | None, reason: str) -> None:
        self.out.problem(line, f"{label}: {reason}" if label else reason)


def _wrong_type(message: Any) -> str | None:
    """Why a message cannot be read: not an object, or a `role` that is not a name (read as a newer role it
    was carried as the user's words, or left out as bookkeeping, and only counted as drift); else None."""
    if not isinstance(message, dict):
        return f"expected a message object, found {type(message).__name__}"
    if "role" in message and not isinstance(message["role"], str):
        return f"role: must be a role name (a string), got {json_type(message['role'])}; left out"
    return None


def _meta(notes: dict[str, Any], extras: dict[str, Any]) -> dict[str, Any]:
    return {**notes, "source": extras} if extras else dict(notes)


def convert_chat_messages(out: Collector, entries: list[tuple[int | None, str | None, Any]]) -> None:
    """Convert (line, label, message) entries already in chat shape; for formats that map onto it."""
    _Converter(out, Conversation(None, {}, entries)).run()


def _results(text: str) -> list[str] | None:
    """The results of a tool message that answers several calls at once (LLaMA-Factory writes a JSON array
    of `{tool_call_id, name, content}`): each result's content, or None when the text is not such a list."""
    try:
        value = json.loads(text) if text.lstrip().startswith("[") else None
    except ValueError:
        return None
    if not isinstance(value, list) or len(value) < 2 or not all(isinstance(v, dict) for v in value):
        return None
    return [v["content"] if isinstance(v.get("content"), str) else compact_json(v) for v in value]


def _json_kind(value: Any) -> str:
    kinds = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}
    return "null" if value is None else kinds.get(type(value), "an object")
