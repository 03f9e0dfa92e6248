"""ShareGPT conversations (fine-tuning datasets) as linnkit messages.

A file is a JSON array (or JSONL) of `{conversations: [{from, value}], system?, tools?}`; `conversation`
picks one (default the first). `system`/a `system` turn → `system_prompt`; `human`/`user` → `user_input`;
`gpt`/`assistant` → `final_answer`; `function_call` (its value `{"name", "arguments"}`) → a `tool_calls`
message, answered by the `observation` that follows (call ids are made up: ShareGPT has none). The
`tools` declarations are kept in the session header, not as messages.
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    compact_json,
    pick_conversation,
    read_items,
)
from engine.importers._json import json_loads
from engine.messages import AiMessage

FORMAT = "sharegpt"
SPEAKERS = {
    "human": ("user", "user_input"),
    "user": ("user", "user_input"),
    "gpt": ("assistant", "final_answer"),
    "assistant": ("assistant", "final_answer"),
    "system": ("system", "system_prompt"),
}
TOOL_TURNS = ("function_call", "observation", "tool_call", "tool")


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
    found = [(line, item) for line, item in items if isinstance(item, dict) and "conversations" in item]
    chosen = pick_conversation(found, conversation or 0, path) if found else None
    session: dict[str, Any] = {}
    if chosen is not None:
        line, record = chosen
        _Reader(out, line).read(record)
        if record.get("tools"):
            session["tools"] = record["tools"]
    return out.result(FORMAT, session=session, conversations=len(found))


class _Reader:
    def __init__(self, out: Collector, line: int | None) -> None:
        self.out = out
        self.line = line
        self.open_calls: list[tuple[str, str]] = []  # (id, name) of calls not yet answered
        self.calls = 0

    def read(self, record: dict[str, Any]) -> None:
        if isinstance(record.get("system"), str) and record["system"]:
            self._add("system", "system", "system_prompt", record["system"], None)
        turns = record.get("conversations")
        for index, turn in enumerate(turns if isinstance(turns, list) else []):
            if not isinstance(turn, dict) or not isinstance(turn.get("value"), str):
                self.out.problem(
                    self.line, f"conversations[{index}]: expected {{from, value}} with a text value"
                )
                continue
            self._turn(index, turn["from"], turn["value"])

    def _turn(self, index: int, speaker: Any, value: str) -> None:
        if speaker in SPEAKERS:
            role, kind = SPEAKERS[speaker]
            self._add(f"sg-{index}", role, kind, value, None)
        elif speaker in ("function_call", "tool_call"):
            self._call(index, value)
        elif speaker in ("observation", "tool"):
            call_id, name = self.open_calls.pop(0) if self.open_calls else ("", "")
            if not call_id:
                self.out.problem(self.line, f"conversations[{index}]: an observation with no call before it")
            head = {"tool_call_id": call_id, "raw_output": value, **({"tool_name": name} if name else {})}
            self._add(f"sg-{index}", "tool", "tool_output", value, head)
        else:
            self.out.problem(self.line, f"conversations[{index}]: unknown speaker {speaker!r}")

    def _call(self, index: int, value: str) -> None:
        try:
            parsed = json_loads(value)
        except ValueError:
            parsed = {"name": "", "arguments": value}
        calls = parsed if isinstance(parsed, list) else [parsed]
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
        self._add(f"sg-{index}", "assistant", "tool_calls", "", {"tool_calls": wire})

    def _add(self, base: str, role: str, kind: str, text: str, meta: dict[str, Any] | None) -> None:
        order = len(self.out.messages)
        self.out.add(AiMessage(self.out.unique_id(base), role, kind, text, order, meta))
