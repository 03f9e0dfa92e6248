"""Inspect AI eval logs (`.json`, and `.eval` archives through `archives.py`) as linnkit messages.

Read from the documented log shape (`EvalLog`: `eval`, `samples[]`; each `EvalSample` has `messages`,
`events`, `attachments`), not through `inspect_ai.log.read_eval_log`: that reader needs the whole
`inspect_ai` package (hundreds of MB of dependencies) for what is plain JSON. Each sample (each epoch of
it) is a conversation (`conversation` picks one, default the first). Its `messages` are what the model
received: `system` → `system_prompt`, `user` → `user_input` (images as placeholders), `assistant` →
`reasoning` contents as thoughts, then the text, with `tool_calls` as one `tool_calls` message, `tool` →
`tool_output` (a tool `error` kept as `is_error` and `error`). Content Inspect moved to `attachments`
(`attachment://<hash>`) is put back. Each `model` event's usage (`ModelUsage`) goes on the assistant message
it produced (by message id, else in order); a model call whose answer is not among the messages (a scorer,
a sub-agent) is an other billed call. Scores, the store and the other events are left out.
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    compact_json,
    image_note,
    image_placeholder,
    load_json_document,
    pick_conversation,
    unmapped_note,
)
from engine.importers.registry import Sniff
from engine.messages import AiMessage
from engine.usage import inspect_usage

FORMAT = "inspect-ai"
ATTACHMENT = "attachment://"
MAX_DEPTH = 100


def detect_inspect(sniff: Sniff) -> bool:
    """An eval log: an `eval` spec naming its `task`, with `samples` or a `status`."""
    document = sniff.document
    if not isinstance(document, dict) or not isinstance(document.get("eval"), dict):
        return False
    return "task" in document["eval"] and ("samples" in document or "status" in document)


def import_inspect(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    document, error, line = load_json_document(text)
    if error is not None:
        out.problem(line, error)
        return out.result(FORMAT)
    samples = [s for s in document.get("samples") or [] if isinstance(s, dict)]
    spec = document.get("eval") or {}
    session: dict[str, Any] = {"task": spec.get("task")}
    if not samples:
        out.problem(None, "the log holds no samples (written with --no-log-samples, or not finished)")
    chosen = pick_conversation(samples, conversation or 0, path)
    if chosen is not None:
        _Sample(out, chosen).run()
        session.update(sample=chosen.get("id"), epoch=chosen.get("epoch"))
        model = (chosen.get("output") or {}).get("model") or spec.get("model")
        if isinstance(model, str):
            session["model"] = model
    return out.result(FORMAT, session=session, conversations=len(samples))


def resolve_attachments(value: Any, attachments: dict[str, Any], depth: int = 0) -> Any:
    """`value` with every `attachment://<hash>` string replaced by the attachment's text."""
    if depth > MAX_DEPTH:
        return value
    if isinstance(value, str):
        if value.startswith(ATTACHMENT):
            found = attachments.get(value[len(ATTACHMENT) :])
            return found if isinstance(found, str) else value
        return value
    if isinstance(value, list):
        return [resolve_attachments(v, attachments, depth + 1) for v in value]
    if isinstance(value, dict):
        return {k: resolve_attachments(v, attachments, depth + 1) for k, v in value.items()}
    return value


class _Sample:
    def __init__(self, out: Collector, sample: dict[str, Any]) -> None:
        self.out = out
        attachments = sample.get("attachments") if isinstance(sample.get("attachments"), dict) else {}
        self.attachments = attachments
        self.messages = resolve_attachments(sample.get("messages") or [], attachments)
        events = sample.get("events") or []
        self.events = [e for e in events if isinstance(e, dict) and e.get("event") == "model"]
        self.tool_names: dict[str, str] = {}
        self.produced: dict[str, tuple[int, int]] = {}  # source message id -> its messages' range
        self.assistant_ranges: list[tuple[int, int]] = []
        self.by_answer: dict[Any, list[tuple[int, int]]] = {}  # an answer's text and calls -> its spans

    def run(self) -> None:
        for index, message in enumerate(self.messages):
            start = len(self.out.messages)
            if not isinstance(message, dict):
                found = type(message).__name__
                self.out.problem(None, f"messages[{index}]: expected an object, found {found}")
                continue
            base = message["id"] if isinstance(message.get("id"), str) else f"ia-{index}"
            self._message(message, base, index)
            span = (start, len(self.out.messages))
            self.produced.setdefault(base, span)
            if message.get("role") == "assistant":
                self.assistant_ranges.append(span)
                self.by_answer.setdefault(_answer_key(message), []).append(span)
        self._usage()

    def _message(self, message: dict[str, Any], base: str, index: int) -> None:
        role = message.get("role")
        text, thoughts, notes = _content(message.get("content"))
        if role == "system":
            self._add(base, "system", "system_prompt", text, index, notes)
        elif role == "user":
            self._add(base, "user", "user_input", text, index, notes)
        elif role == "assistant":
            for thought, meta in thoughts:
                self._add(base, "assistant", "thought", thought, index, meta)
            calls = [_call(c) for c in message.get("tool_calls") or [] if isinstance(c, dict)]
            for call in calls:
                self.tool_names[call["id"]] = call["function"]["name"]
            if isinstance(message.get("model"), str):
                notes["source"] = {"model": message["model"]}
            if calls:
                self._add(base, "assistant", "tool_calls", text, index, {"tool_calls": calls, **notes})
            elif text or not thoughts:
                self._add(base, "assistant", "final_answer", text, index, notes)
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            meta: dict[str, Any] = {"tool_call_id": call_id, "raw_output": text, **notes}
            name = message.get("function") or self.tool_names.get(call_id)
            if name:
                meta["tool_name"] = name
            if isinstance(message.get("error"), dict):
                meta.update(is_error=True, error=message["error"])
            self._add(base, "tool", "tool_output", text, index, meta)
        else:
            self.out.problem(None, f"messages[{index}]: unknown role {role!r}")

    def _add(self, base: str, role: str, kind: str, text: str, index: int, meta: dict[str, Any]) -> None:
        self.out.add(AiMessage(self.out.unique_id(base), role, kind, text, index, meta or None))

    def _usage(self) -> None:
        """Each model event's usage on the assistant message it produced: by the output message's id, else
        (logs before ids, 0.3.5x) the n-th model event on the n-th assistant message when they are as many,
        else the assistant message whose text and calls are the answer's (a scorer's own call, say, makes
        one event more: it stays an other call)."""
        by_order = len(self.events) == len(self.assistant_ranges)
        for n, event in enumerate(self.events):
            output = event.get("output") if isinstance(event.get("output"), dict) else {}
            usage = output.get("usage")
            if not isinstance(usage, dict):
                continue
            model = output.get("model") if isinstance(output.get("model"), str) else None
            parsed = self.out.usage(None, inspect_usage(usage, model))
            if parsed is None:
                continue
            choices = output.get("choices") or [{}]
            answer = choices[0].get("message") if isinstance(choices[0], dict) else None
            answer_id = answer.get("id") if isinstance(answer, dict) else None
            span = self.produced.get(answer_id) if isinstance(answer_id, str) else None
            if span is None and answer_id is None and isinstance(answer, dict):
                if by_order:
                    span = self.assistant_ranges[n]
                else:
                    same = self.by_answer.get(_answer_key(resolve_attachments(answer, self.attachments)))
                    span = same.pop(0) if same else None
            if span is None:
                self.out.other_call(parsed, None, "a model call whose answer is not in the sample's messages")
            else:
                self.out.attach_usage(*span, parsed, None, "a model call with no message")


def _answer_key(message: dict[str, Any]) -> tuple[str, tuple[tuple[str, str], ...]]:
    """What tells an assistant message by its content: its text and its calls (name and arguments)."""
    calls = [c for c in message.get("tool_calls") or [] if isinstance(c, dict)]
    named = tuple((str(c.get("function") or ""), compact_json(c.get("arguments"))) for c in calls)
    return _content(message.get("content"))[0], named


def _content(content: Any) -> tuple[str, list[tuple[str, dict[str, Any]]], dict[str, Any]]:
    """The text of a message's content, its reasoning parts (text, metadata), and notes (images, others)."""
    if isinstance(content, str):
        return content, [], {}
    texts: list[str] = []
    thoughts: list[tuple[str, dict[str, Any]]] = []
    notes: dict[str, Any] = {}
    for part in content if isinstance(content, list) else []:
        kind = part.get("type") if isinstance(part, dict) else None
        if kind == "text":
            texts.append(str(part.get("text") or ""))
        elif kind == "reasoning":
            meta = (
                {"reasoning_details": [{"type": "reasoning.text", "signature": part["signature"]}]}
                if part.get("signature")
                else {}
            )
            if part.get("redacted"):
                meta["redacted"] = True
            thoughts.append((str(part.get("reasoning") or ""), meta))
        elif kind == "image":
            note = image_note({"url": part.get("image")})
            notes.setdefault("images", []).append(note)
            texts.append(image_placeholder(note))
        else:
            notes.setdefault("unmappedParts", []).append(unmapped_note(part))
    return "\n\n".join(t for t in texts if t), thoughts, notes


def _call(call: dict[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments")
    text = arguments if isinstance(arguments, str) else compact_json({} if arguments is None else arguments)
    return {
        "id": str(call.get("id") or ""),
        "type": "function",
        "function": {"name": str(call.get("function") or ""), "arguments": text},
    }
