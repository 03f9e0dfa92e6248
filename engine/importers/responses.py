"""OpenAI Responses API items as linnkit messages (also the items of a Codex CLI rollout).

Accepted inputs for the `openai-responses` format: a JSON array of items, JSONL of items, a request body
`{model, instructions, input: [...]}` or a response `{object: "response", output: [...]}`.

Mapping: `instructions` and `system`/`developer` messages before the first user message → `system_prompt`
(later ones → `context_injection`); `user` messages → `user_input`; `reasoning` summaries → `thought`
(reasoning with only encrypted content is counted, not imported); an assistant turn (its messages and the
calls that follow them, parallel calls together) → one `tool_calls` message, or `final_answer` when it calls
nothing; `function_call_output` / `custom_tool_call_output` → `tool_output` with the name of its call;
`web_search_call` (run by the provider, its results never recorded) → a call paired with a marked placeholder
output. Images become a placeholder text with their size, so their tokens can be estimated.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    compact_json,
    image_note,
    image_placeholder,
    iso_to_ms,
    read_items,
    summary_metadata,
)
from engine.importers._json import json_loads
from engine.messages import AiMessage
from engine.usage import RecordedUsage, openai_usage

FORMAT = "openai-responses"
TEXT_PARTS = ("input_text", "output_text", "text", "summary_text", "reasoning_text")
IMAGE_PARTS = ("input_image", "image_url")
CALL_ITEMS = ("function_call", "custom_tool_call", "local_shell_call")
OUTPUT_ITEMS = ("function_call_output", "custom_tool_call_output", "local_shell_call_output")
ITEM_TYPES = frozenset(
    {
        "message",
        "reasoning",
        "web_search_call",
        "file_search_call",
        "computer_call",
        *CALL_ITEMS,
        *OUTPUT_ITEMS,
    }
)
ASSISTANT_ITEMS = frozenset(
    {"reasoning", "web_search_call", "file_search_call", "computer_call", *CALL_ITEMS}
)
WEB_SEARCH_NOTE = "[web search run by the provider; its results are not in the transcript]"
PART_SEPARATOR = "\n\n"


def flatten_content(content: Any) -> tuple[str, list[dict[str, Any]]]:
    """The text of Responses content (a string or parts) with image placeholders; the images' notes."""
    if isinstance(content, str):
        return content, []
    if not isinstance(content, list):
        return ("" if content is None else compact_json(content)), []
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for part in content:
        if not isinstance(part, dict):
            texts.append(str(part))
            continue
        kind = part.get("type")
        if kind in TEXT_PARTS and isinstance(part.get("text"), str):
            texts.append(part["text"])
        elif kind == "refusal" and isinstance(part.get("refusal"), str):
            texts.append(part["refusal"])
        elif kind in IMAGE_PARTS:
            url = part.get("image_url")
            note = image_note({"url": url} if isinstance(url, str) else url if isinstance(url, dict) else {})
            images.append(note)
            texts.append(image_placeholder(note))
        else:
            texts.append(compact_json(part))
    return PART_SEPARATOR.join(t for t in texts if t), images


def _output_text(output: Any) -> tuple[str, dict[str, Any]]:
    """A tool output: a string (Codex 0.40 wraps it as JSON `{output, metadata}`), parts, or an object."""
    if isinstance(output, str):
        try:
            inner = json_loads(output)
        except ValueError:
            return output, {}
        if isinstance(inner, dict) and isinstance(inner.get("output"), str):
            meta = inner.get("metadata")
            return inner["output"], ({"outputMetadata": meta} if isinstance(meta, dict) else {})
        return output, {}
    if isinstance(output, dict) and "content" in output:
        text, images = flatten_content(output["content"])
        extra = {k: v for k, v in output.items() if k != "content"}
        return text, {
            **({"images": images} if images else {}),
            **({"outputMetadata": extra} if extra else {}),
        }
    text, images = flatten_content(output)
    return text, ({"images": images} if images else {})


@dataclass
class _Turn:
    """An assistant turn being collected: its texts and the calls that follow them."""

    texts: list[str] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)
    images: list[dict[str, Any]] = field(default_factory=list)
    first: tuple[int, int] | None = None  # (line, timestamp) of its first item
    web_searches: list[str] = field(default_factory=list)


@dataclass
class _Call:
    """One model call: where its messages start on the collector, and the usage recorded for it."""

    start: int
    usage: tuple[int, RecordedUsage] | None = None  # (line, usage)
    encrypted_reasoning: bool = False  # its reasoning came back encrypted: sent again within the turn


class ItemConverter:
    """Turns Responses items, one at a time, into messages on a Collector."""

    def __init__(self, out: Collector, id_prefix: str) -> None:
        self.out = out
        self.prefix = id_prefix
        self.turn = _Turn()
        self.tool_names: dict[str, str] = {}
        self.seen_user = False
        self.summary_seq = -1
        self.calls: list[_Call] = []
        self.open_call: _Call | None = None  # the call whose items are being read
        self.pending: tuple[int, RecordedUsage] | None = None  # usage recorded before its call's items

    def system(self, text: str, line: int, ts: int, source: dict[str, Any] | None = None) -> None:
        kind = "context_injection" if self.seen_user else "system_prompt"
        self._add(line, "system", kind, text, ts, {"source": source} if source else None)

    def item(self, item: dict[str, Any], line: int, ts: int) -> None:
        kind = item.get("type", "message" if "role" in item else None)
        if kind in ASSISTANT_ITEMS or (kind == "message" and item.get("role") == "assistant"):
            self._call_item(new_call=kind == "reasoning" and bool(self.turn.calls))
        elif kind in OUTPUT_ITEMS or kind == "message":
            self.open_call = None
        if kind == "message":
            self._message(item, line, ts)
        elif kind == "reasoning":
            self._reasoning(item, line, ts)
        elif kind in CALL_ITEMS:
            self._call(item, kind, line, ts)
        elif kind in OUTPUT_ITEMS:
            self._output(item, line, ts)
        elif kind == "web_search_call":
            self._web_search(item, line, ts)
        else:
            self.out.skip(f"item type {kind!r}", line)

    def usage(self, line: int, usage: RecordedUsage) -> None:
        """What the provider counted for a model call: the call being read if it has none yet (usage
        written after its items), else the next call to begin (usage written before them, as Codex 0.40
        does)."""
        if self.open_call is not None and self.open_call.usage is None:
            self.open_call.usage = (line, usage)
            return
        if self.pending is not None:
            self.out.other_call(self.pending[1], self.pending[0], "usage no model call's items followed")
        self.pending = (line, usage)

    def finish_usage(self) -> None:
        """Put each call's usage on the last message it produced (call after the last `flush`)."""
        if self.pending is not None:
            self.out.other_call(self.pending[1], self.pending[0], "usage no model call's items followed")
            self.pending = None
        bounds = [c.start for c in self.calls[1:]] + [len(self.out.messages)]
        for call, end in zip(self.calls, bounds, strict=True):
            if call.usage is None:
                continue
            line, usage = call.usage
            if call.encrypted_reasoning:
                usage = replace(usage, reasoning_carried=True)
            self.out.attach_usage(call.start, end, usage, line, "a call whose items were left out")

    def _call_item(self, new_call: bool) -> None:
        if new_call:
            self.flush()
            self.open_call = None
        if self.open_call is None:
            self.open_call = _Call(len(self.out.messages))
            self.calls.append(self.open_call)
            if self.pending is not None:
                self.open_call.usage, self.pending = self.pending, None

    def compaction(
        self, summary: str, retained_user_texts: set[str], line: int, ts: int, source: dict
    ) -> None:
        """A compaction: a `history_summary` that replaces what came before, except retained user messages."""
        self.flush()
        self.open_call = None
        replaced = [
            m
            for m in self.out.messages
            if m.type != "system_prompt" and not (m.type == "user_input" and m.content in retained_user_texts)
        ]
        self.summary_seq += 1
        meta = {**summary_metadata(summary, replaced, self.summary_seq), "source": source}
        self._add(line, "system", "history_summary", summary, ts, meta)

    def flush(self) -> None:
        """End the assistant turn being collected: one tool_calls message, or a final answer."""
        turn, self.turn = self.turn, _Turn()
        if turn.first is None:
            return
        line, ts = turn.first
        text = PART_SEPARATOR.join(t for t in turn.texts if t)
        meta: dict[str, Any] = {"images": turn.images} if turn.images else {}
        if turn.calls:
            self._add(line, "assistant", "tool_calls", text, ts, {**meta, "tool_calls": turn.calls})
            for call_id in turn.web_searches:
                head = {"tool_call_id": call_id, "raw_output": WEB_SEARCH_NOTE, "tool_name": "web_search"}
                self._add(line, "tool", "tool_output", WEB_SEARCH_NOTE, ts, {**head, "synthetic": True})
        elif text:
            self._add(line, "assistant", "final_answer", text, ts, meta or None)

    def _message(self, item: dict[str, Any], line: int, ts: int) -> None:
        role = item.get("role")
        text, images = flatten_content(item.get("content"))
        if role == "assistant":
            self._turn(line, ts).texts.append(text)
            self.turn.images.extend(images)
            return
        self.flush()
        if role in ("system", "developer"):
            self.system(text, line, ts, {"role": role})
        elif role == "user":
            self.seen_user = True
            self._add(line, "user", "user_input", text, ts, {"images": images} if images else None)
        else:
            self.out.problem(line, f"message with unknown role {role!r}")

    def _reasoning(self, item: dict[str, Any], line: int, ts: int) -> None:
        summary, _ = flatten_content(item.get("summary"))
        content, _ = flatten_content(item.get("content"))
        text = summary or content
        encrypted = item.get("encrypted_content")
        if self.open_call is not None and isinstance(encrypted, str) and encrypted:
            self.open_call.encrypted_reasoning = True
        if text:
            if self.turn.calls:  # a new model call begins: the calls before it are answered
                self.flush()
            self._add(line, "assistant", "thought", text, ts, None)
        else:
            self.out.skip("reasoning without a readable summary (encrypted)", line)

    def _call(self, item: dict[str, Any], kind: str, line: int, ts: int) -> None:
        call_id = item.get("call_id") or item.get("id")
        if not isinstance(call_id, str) or not call_id:
            self.out.problem(line, f"{kind} without a call_id")
            call_id = f"{self.prefix}-call-{line}"
        name = item.get("name") or ("local_shell" if kind == "local_shell_call" else "")
        if kind == "function_call":
            args = item.get("arguments")
            arguments = args if isinstance(args, str) else compact_json(args or {})
        elif kind == "custom_tool_call":
            arguments = compact_json({"input": item.get("input", "")})
        else:
            arguments = compact_json(item.get("action") or {})
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        if kind != "function_call":
            call["sourceType"] = kind
        self.tool_names[call_id] = name
        self._turn(line, ts).calls.append(call)

    def _output(self, item: dict[str, Any], line: int, ts: int) -> None:
        self.flush()
        call_id = item.get("call_id")
        if not isinstance(call_id, str) or not call_id:
            self.out.problem(line, f"{item.get('type')} without a call_id")
            call_id = ""
        text, extra = _output_text(item.get("output"))
        head = {"tool_call_id": call_id, "raw_output": text}
        if call_id in self.tool_names:
            head["tool_name"] = self.tool_names[call_id]
        self._add(line, "tool", "tool_output", text, ts, {**head, **extra})

    def _web_search(self, item: dict[str, Any], line: int, ts: int) -> None:
        call_id = item.get("id") if isinstance(item.get("id"), str) else f"{self.prefix}-ws-{line}"
        action = item.get("action") if isinstance(item.get("action"), dict) else {}
        call = {
            "id": call_id,
            "type": "function",
            "function": {"name": "web_search", "arguments": compact_json(action)},
            "sourceType": "web_search_call",
        }
        self._turn(line, ts).calls.append(call)
        self.turn.web_searches.append(call_id)

    def _turn(self, line: int, ts: int) -> _Turn:
        if self.turn.first is None:
            self.turn.first = (line, ts)
        return self.turn

    def _add(self, line: int, role: str, kind: str, text: str, ts: int, meta: dict[str, Any] | None) -> None:
        message_id = self.out.unique_id(f"{self.prefix}-{line}")
        self.out.add(AiMessage(message_id, role, kind, text, ts, meta or None))


def looks_like_items(values: list[Any]) -> bool:
    """Responses items: typed objects of the Responses vocabulary, with at least one that chat lacks."""
    typed = [v for v in values if isinstance(v, dict)]
    if not typed or not all(v.get("type") in ITEM_TYPES for v in typed):
        return False
    return any(v.get("type") != "message" or _has_responses_parts(v) for v in typed)


def _has_responses_parts(item: dict[str, Any]) -> bool:
    content = item.get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") in ("input_text", "output_text", "input_image") for p in content
    )


def detect_responses(sniff: Any) -> bool:
    doc = sniff.document
    if isinstance(doc, dict):
        if doc.get("object") == "response" and isinstance(doc.get("output"), list):
            return True
        return isinstance(doc.get("input"), list) and looks_like_items(doc["input"])
    return looks_like_items(list(sniff.items))


def import_responses(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    """Read a Responses API item list, request body or response."""
    out = Collector(path)
    converter = ItemConverter(out, "rs")
    items = read_items(text, out)
    model = usage = call_id = None
    if len(items) == 1 and isinstance(items[0][1], dict) and items[0][0] is None:
        body = items[0][1]
        model = body.get("model")
        if body.get("object") == "response" and "usage" in body:
            usage, call_id = body["usage"], body.get("id") if isinstance(body.get("id"), str) else None
        if isinstance(body.get("instructions"), str) and body["instructions"]:
            converter.system(body["instructions"], 1, 0, {"field": "instructions"})
        listed = body.get("input") if isinstance(body.get("input"), list) else body.get("output") or []
        if isinstance(body.get("input"), str):
            listed = [{"type": "message", "role": "user", "content": body["input"]}]
        items = [(index + 1, item) for index, item in enumerate(listed)]
    for number, item in items:
        line = number if number is not None else 1
        if not isinstance(item, dict):
            out.problem(line, f"expected an item object, found {type(item).__name__}")
            continue
        ts = iso_to_ms(item.get("created_at") or item.get("timestamp"))
        converter.item(item, line, line if ts is None else ts)
    if usage is not None:  # a response: what the provider counted for its call
        parsed = out.usage(1, openai_usage(usage, model if isinstance(model, str) else None, call_id))
        if parsed is not None:
            converter.usage(1, parsed)
    converter.flush()
    converter.finish_usage()
    return out.result(FORMAT, session={"model": model} if model else {})
