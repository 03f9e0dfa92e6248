"""Codex CLI's `codex exec --json` output: one event a line, each thread item as the run went.

- `thread.started {thread_id}` opens the run (its id is kept in `session`); `turn.started` / `turn.completed
  {usage}` / `turn.failed {error}` frame a prompt's turn;
- `item.completed {item: {id, type, ...}}` is an item as it ended (`item.started` / `item.updated` are the
  same item in progress: counted, not read). The items become what Codex sent and received, read as the
  Responses items of a rollout (`engine.importers.responses`): `agent_message` and `plan` → assistant
  text; `reasoning` → a thought; `command_execution` → a `shell` call (`{"command": ...}`) and its
  `aggregated_output`; `mcp_tool_call` → a `<server>__<tool>` call with its arguments and the text of its
  result (or error); `web_search` → a provider-run search; `file_change` → an `apply_patch` call naming
  the files (the patch itself is not in the stream); `todo_list` → an `update_plan` call. `error` items are
  notices, left out; an item type of a newer Codex is named in the report and left out.
- Usage: `turn.completed` carries the thread's running total (input with its cached part, output), not
  one call's. The difference from the last total is the turn's (a total that went down starts anew: another
  run appended to the file): a turn of one model call gets it as that call's usage; a turn of several
  calls keeps it as one entry of `other_calls` (its total, for cost), since the stream does not say how it
  splits.
- The prompt given to `codex exec` is not in the stream (nor the instructions): the session starts with the
  model's first items, and the report says so.
Older streams (0.44-0.45) name an item's type `item_type` and the answer `assistant_message`: read alike.
"""

from __future__ import annotations

import json
from typing import Any

from engine.importers._common import Collector, ImportResult, iter_jsonl
from engine.importers.responses import ItemConverter
from engine.session_lines import json_type
from engine.usage import openai_usage

FORMAT = "codex-exec"
EVENTS = (
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.updated",
    "item.completed",
)
IN_PROGRESS_EVENTS = ("item.started", "item.updated", "item.plan.delta")
TEXT_ITEMS = ("agent_message", "assistant_message", "plan", "reasoning")
NO_PROMPT = "not in the stream (codex exec --json does not echo it)"


def detect_codex_exec(sniff: Any) -> bool:
    """A `thread.started` line, or an item event whose item has an id and a type."""
    for item in sniff.objects():
        kind = item.get("type")
        if kind == "thread.started" and isinstance(item.get("thread_id"), str):
            return True
        inner = item.get("item")
        if kind in EVENTS and isinstance(inner, dict) and isinstance(inner.get("id"), str):
            if isinstance(inner.get("type", inner.get("item_type")), str):
                return True
    return False


def import_codex_exec(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    """Read a `codex exec --json` stream; malformed lines are reported in `problems` and skipped."""
    out = Collector(path)
    reader = _Exec(out)
    for number, entry, error in iter_jsonl(text):
        if error:
            out.problem(number, error)
        elif not isinstance(entry, dict) or not isinstance(entry.get("type"), str):
            got = json_type(entry.get("type")) if isinstance(entry, dict) else json_type(entry)
            out.problem(number, f"type: expected an event type (text), got {got}; left out")
        else:
            reader.line(number, entry)
    reader.finish()
    return out.result(FORMAT, session={**reader.session, "prompt": NO_PROMPT})


class _Exec:
    def __init__(self, out: Collector) -> None:
        self.out = out
        self.converter = ItemConverter(out, "cx")
        self.session: dict[str, Any] = {}
        self.started: dict[str, int] = {}  # item id -> the line it started on, until it completes
        self.total: tuple[int, int, int] = (0, 0, 0)  # the thread's running total: input, cached, output
        self.turn_calls = 0  # calls before this turn
        self.runs = 0  # runs started in the file: a later run's item ids (item_0, ...) are made unique

    def line(self, number: int, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "item.completed":
            self._completed(event.get("item"), number)
        elif kind == "item.started":
            item = event.get("item")
            if isinstance(item, dict) and isinstance(item.get("id"), str):
                self.started.setdefault(item["id"], number)
            self.out.skip("item.started (the item in progress)", number)
        elif kind in IN_PROGRESS_EVENTS:
            self.out.skip(f"{kind} (the item in progress)", number)
        elif kind == "thread.started":
            self.runs += 1
            if isinstance(event.get("thread_id"), str):
                self.session.setdefault("id", event["thread_id"])
            self.out.skip("thread.started (the run's id, kept in the session)", number)
        elif kind == "turn.started":
            self.converter.new_turn()
            self.turn_calls = len(self.converter.calls)
            self.out.skip("turn.started", number)
        elif kind == "turn.completed":
            self._turn_usage(event.get("usage"), number)
        elif kind in ("turn.failed", "error"):
            error = event.get("error") if kind == "turn.failed" else event
            message = error.get("message") if isinstance(error, dict) else None
            self.out.skip(f"{kind}: {message}" if isinstance(message, str) else kind, number)
        else:  # an event of a newer Codex
            self.out.drift(f"event type {kind!r}", number)

    def _completed(self, item: Any, number: int) -> None:
        if not isinstance(item, dict) or not isinstance(item.get("id"), str):
            self.out.problem(number, "item: expected an object with an id (text); left out")
            return
        kind = item.get("type", item.get("item_type"))
        if not isinstance(kind, str):
            self.out.problem(number, f"item.type: expected text, got {json_type(kind)}; left out")
            return
        self.started.pop(item["id"], None)
        if self.runs > 1:
            item = {**item, "id": f"{item['id']}@run{self.runs}"}
        responses = _as_responses(item, kind)
        if responses is None:
            if kind == "error":
                self.out.skip("error item (a notice, not sent to the model)", number)
            else:
                self.out.drift(f"item type {kind!r}", number)
            return
        if isinstance(responses, str):
            self.out.problem(number, f"{responses}; left out")
            return
        for response in responses:
            self.converter.item(response, number, number)

    def _turn_usage(self, raw: Any, number: int) -> None:
        """The difference between this running total and the last: one call's usage, or a turn's."""
        self.converter.flush()
        if not isinstance(raw, dict):
            self.out.skip("turn.completed without usage", number)
            return
        counts = tuple(raw.get(k) for k in ("input_tokens", "cached_input_tokens", "output_tokens"))
        if not all(isinstance(c, int) and not isinstance(c, bool) and c >= 0 for c in counts):
            self.out.problem(number, "usage: expected input_tokens, cached_input_tokens and output_tokens")
            return
        spent = [now - before for now, before in zip(counts, self.total, strict=True)]
        if min(spent) < 0:  # a total that went down: another run's, appended to the same file
            spent = list(counts)  # type: ignore[arg-type]  # three ints, checked above
        turn = {
            "input_tokens": spent[0],
            "input_tokens_details": {"cached_tokens": spent[1]},
            "output_tokens": spent[2],
        }
        self.total = counts  # type: ignore[assignment]  # three ints, checked above
        usage = self.out.usage(number, openai_usage(turn, None))
        calls = len(self.converter.calls) - self.turn_calls
        if usage is None:
            return
        if calls == 1:
            self.converter.call_usage(self.turn_calls, number, usage)
        elif calls:
            self.out.other_call(usage, number, f"a turn's {calls} calls together (exec reports per turn)")
        else:
            self.out.other_call(usage, number, "a turn whose calls left no item in the stream")

    def finish(self) -> None:
        self.converter.flush()
        self.converter.finish_usage()
        for line in self.started.values():
            self.out.skip("an item that started and never completed", line)


def _as_responses(item: dict[str, Any], kind: str) -> list[dict[str, Any]] | str | None:
    """The Responses items an exec item stands for; a reason when a field has the wrong type; None for an
    item type that is not read."""
    if kind in TEXT_ITEMS:
        text = item.get("text")
        if not isinstance(text, str):
            return f"item.text: expected text, got {json_type(text)}"
        if kind == "reasoning":
            return [{"type": "reasoning", "summary": [{"type": "summary_text", "text": text}]}]
        return [{"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": text}]}]
    return _tool_items(item, kind)


def _tool_items(item: dict[str, Any], kind: str) -> list[dict[str, Any]] | str | None:
    call_id = item["id"]
    if kind == "command_execution":
        command, output = item.get("command"), item.get("aggregated_output", "")
        if not isinstance(command, str) or not isinstance(output, str):
            return "item.command and item.aggregated_output: expected text"
        return _call("shell", {"command": command}, call_id, output)
    if kind == "mcp_tool_call":
        server, tool = item.get("server"), item.get("tool")
        if not isinstance(server, str) or not isinstance(tool, str):
            return "item.server and item.tool: expected text"
        result = item.get("result")
        if result is not None and not isinstance(result, dict):
            return f"item.result: expected an object, got {json_type(result)}"
        if result is not None and not isinstance(result.get("content", []), list):
            return f"item.result.content: expected a list of blocks, got {json_type(result['content'])}"
        return _call(f"{server}__{tool}", item.get("arguments") or {}, call_id, _mcp_output(item))
    if kind == "web_search":
        action = item.get("action")
        action = action if isinstance(action, dict) else {"type": "search", "query": item.get("query")}
        return [{"type": "web_search_call", "id": call_id, "action": action}]
    if kind == "file_change":
        changes = item.get("changes")
        if not isinstance(changes, list):
            return f"item.changes: expected a list, got {json_type(changes)}"
        return _call("apply_patch", {"changes": changes}, call_id, f"status: {item.get('status')}")
    if kind == "todo_list":
        todos = item.get("items")
        if not isinstance(todos, list):
            return f"item.items: expected a list, got {json_type(todos)}"
        plan = [
            {"step": t.get("text"), "status": "completed" if t.get("completed") else "pending"}
            for t in todos
            if isinstance(t, dict)
        ]
        return _call("update_plan", {"plan": plan}, call_id, "Plan updated")
    return None


def _call(name: str, arguments: Any, call_id: str, output: str) -> list[dict[str, Any]]:
    args = json.dumps(arguments, ensure_ascii=False, separators=(",", ":"))
    return [
        {"type": "function_call", "name": name, "arguments": args, "call_id": call_id},
        {"type": "function_call_output", "call_id": call_id, "output": output},
    ]


def _mcp_output(item: dict[str, Any]) -> str:
    error = item.get("error")
    if isinstance(error, dict) and isinstance(error.get("message"), str):
        return error["message"]
    result = item.get("result")
    blocks = result.get("content") if isinstance(result, dict) else None
    texts = [b["text"] for b in blocks or () if isinstance(b, dict) and isinstance(b.get("text"), str)]
    return "\n".join(texts)  # checked by the caller: a list of blocks, or no result
