"""ShareGPT conversations (fine-tuning datasets) as linnkit messages.

A file is a JSON array (or JSONL) of `{conversations: [{from, value}], system?, tools?}`; `conversation`
picks one (default the first). `system`/a `system` turn → `system_prompt`; `human`/`user` → `user_input`;
`gpt`/`assistant` → `final_answer`; `function_call` (its value `{"name", "arguments"}`) → a `tool_calls`
message, answered by the `observation` that follows (call ids are made up: ShareGPT has none). Glaive's
spelling (`function-call`, `function-response`, the arguments often a single-quoted string: read as a
Python literal, never run) and Hermes' (a `gpt` turn's `<tool_call>{…}</tool_call>` blocks are its calls,
answered by the `tool` turns after it) are read too. The `tools` declarations are kept in the session
header, not as messages.

Preference items (`chosen` / `rejected` beside the conversation, as in LLaMA-Factory's DPO data) are two
conversations: the turns with the `chosen` answer, then the same turns with the `rejected` one (the next
`conversation` index; the import report names it). A side `images` list (LLaVA: one `image`) fills the
`<image>` tags of the turns, in order, as image placeholders (`metadata.images`); `videos` and `audios`
fill `<video>` and `<audio>` tags alike (`metadata.videos`, `metadata.audios`).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    NameMap,
    compact_json,
    leading_reasoning,
    pick_conversation,
    read_items,
)
from engine.importers._json import json_loads
from engine.importers._media import SideImages
from engine.messages import AiMessage

FORMAT = "sharegpt"
SPEAKERS = NameMap(
    {
        "human": ("user", "user_input"),
        "user": ("user", "user_input"),
        "gpt": ("assistant", "final_answer"),
        "assistant": ("assistant", "final_answer"),
        "system": ("system", "system_prompt"),
    }
)
CALL_SPEAKERS = ("function_call", "tool_call", "function-call")
RESULT_SPEAKERS = ("observation", "tool", "function-response")
HERMES_CALL = re.compile(r"<tool_call>\s*(.*?)\s*</tool_call>", re.DOTALL)
LITERAL_CHARS = 100_000  # a call written as a Python literal is read only up to this size


def detect_sharegpt(sniff: Any) -> bool:
    for item in sniff.objects():
        turns = item.get("conversations")
        if isinstance(turns, list) and any(
            isinstance(t, dict) and "from" in t and "value" in t for t in turns
        ):
            return True
    return False


def import_sharegpt(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    items = read_items(text, out)
    if len(items) == 1 and isinstance(items[0][1], list):  # a whole-document array
        items = [(None, item) for item in items[0][1]]
    found = [
        (line, item, answer)
        for line, item in items
        if isinstance(item, dict) and "conversations" in item
        for answer in _answers(item)
    ]
    index = conversation or 0
    chosen = pick_conversation(found, index, path) if found else None
    session: dict[str, Any] = {}
    if chosen is not None:
        line, record, answer = chosen
        turns = record.get("conversations") if isinstance(record.get("conversations"), list) else []
        texts = [t.get("value") for t in turns if isinstance(t, dict)]
        listed = [("image", record.get("images", record.get("image"))), ("video", record.get("videos")),
                  ("audio", record.get("audios"))]  # fmt: skip
        reader = _Reader(out, line, [SideImages(items, texts, kind) for kind, items in listed])
        reader.read(record)
        if answer is not None:
            session["preference"] = answer
            reader.answer(record[answer], len(turns))
            if answer == "chosen" and "rejected" in record:
                where = index % len(found) + 1
                out.skip(
                    f"rejected answer: conversation {where} of the file (--conversation {where})", line or 1
                )
        for media in reader.media:
            if media.unused:
                kind = media.kind
                out.problem(line, f"{media.unused} of the listed {kind}s have no <{kind}> tag in the turns")
        if record.get("tools"):
            session["tools"] = record["tools"]
    return out.result(FORMAT, session=session, conversations=len(found))


def _answers(item: dict[str, Any]) -> list[str | None]:
    """The conversations one item holds: one, or one per preference answer (`chosen`, `rejected`)."""
    answers = [key for key in ("chosen", "rejected") if isinstance(item.get(key), dict | str)]
    return list(answers) if answers else [None]


class _Reader:
    def __init__(self, out: Collector, line: int | None, media: list[SideImages]) -> None:
        self.out = out
        self.line = line
        self.media = media  # the images, videos and sounds listed beside the turns
        self.open_calls: list[tuple[str, str]] = []  # (id, name) of calls not yet answered
        self.calls = 0

    def read(self, record: dict[str, Any]) -> None:
        if isinstance(record.get("system"), str) and record["system"]:
            self._add("system", "system", "system_prompt", record["system"], None)
        turns = record.get("conversations")
        for index, turn in enumerate(turns if isinstance(turns, list) else []):
            if not isinstance(turn, dict) or not isinstance(turn.get("value"), str) or "from" not in turn:
                self.out.problem(
                    self.line, f"conversations[{index}]: expected {{from, value}} with a text value"
                )
                continue
            self._turn(index, turn["from"], turn["value"])

    def answer(self, value: Any, index: int) -> None:
        """A preference item's answer (`{from, value}` or text): the model's last turn."""
        turn = value if isinstance(value, dict) else {"from": "gpt", "value": value}
        if isinstance(turn.get("value"), str):
            self._turn(index, turn.get("from", "gpt"), turn["value"])
        else:
            self.out.problem(self.line, "a preference answer without a text value")

    def _turn(self, index: int, speaker: Any, value: str) -> None:
        reasoning = leading_reasoning(value) if speaker in ("gpt", "assistant") else None
        if reasoning is not None:  # a `<think>` block opening the reply: the model's reasoning
            thought, value = reasoning
            if thought:
                self._add(f"sg-{index}-think", "assistant", "thought", thought, None)
        calls = _hermes_calls(value) if speaker in ("gpt", "assistant") else None
        if calls:
            self._calls(index, calls, HERMES_CALL.sub("", value).strip())
        elif speaker in SPEAKERS:
            role, kind = SPEAKERS[speaker]
            notes = {}
            for media in self.media:
                value, taken = media.fill(value)
                if taken:
                    notes[f"{media.kind}s"] = taken
            self._add(f"sg-{index}", role, kind, value, notes or None)
        elif speaker in CALL_SPEAKERS:
            self._call(index, value)
        elif speaker in RESULT_SPEAKERS:
            call_id, name = self.open_calls.pop(0) if self.open_calls else ("", "")
            if not call_id:
                self.out.problem(self.line, f"conversations[{index}]: an observation with no call before it")
            head = {"tool_call_id": call_id, "raw_output": value, **({"tool_name": name} if name else {})}
            self._add(f"sg-{index}", "tool", "tool_output", value, head)
        elif value.strip():  # a speaker this importer does not know: what it said reached the model
            self.out.drift(f"speaker {speaker!r}", self.line or 1, "user_input")
            self._add(f"sg-{index}", "user", "user_input", value, {"generated": str(speaker)})
        else:
            self.out.drift(f"speaker {speaker!r}", self.line or 1)

    def _call(self, index: int, value: str) -> None:
        parsed = _call_value(value)
        self._calls(index, parsed if isinstance(parsed, list) else [parsed], "")

    def _calls(self, index: int, calls: list[Any], text: str) -> None:
        wire = []
        for call in calls:
            call = call if isinstance(call, dict) else {"name": "", "arguments": call}
            self.calls += 1
            call_id = f"sg-call-{self.calls}"
            args = call.get("arguments", {})
            arguments = args if isinstance(args, str) else compact_json(args)
            wire.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": call.get("name") or "", "arguments": arguments},
                }
            )
            self.open_calls.append((call_id, call.get("name") or ""))
        self._add(f"sg-{index}", "assistant", "tool_calls", text, {"tool_calls": wire})

    def _add(self, base: str, role: str, kind: str, text: str, meta: dict[str, Any] | None) -> None:
        order = len(self.out.messages)
        self.out.add(AiMessage(self.out.unique_id(base), role, kind, text, order, meta))


def _call_value(value: str) -> Any:
    """A call turn's value: JSON, else a Python literal (Glaive quotes the arguments with '), else text."""
    try:
        return json_loads(value)
    except ValueError:
        pass
    if len(value) <= LITERAL_CHARS:
        try:
            return ast.literal_eval(value)
        except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
            pass
    return {"name": "", "arguments": value}


def _hermes_calls(value: str) -> list[Any] | None:
    """The calls of a Hermes-style reply (`<tool_call>{"name", "arguments"}</tool_call>` blocks), or None
    when it has none that read as JSON."""
    if "<tool_call>" not in value:
        return None
    calls = []
    for block in HERMES_CALL.findall(value):
        try:
            calls.append(json_loads(block))
        except ValueError:
            return None
    return calls or None
