"""Cursor agent transcripts (`~/.cursor/projects/<encoded cwd>/agent-transcripts/<id>/<id>.jsonl`, 2026).

One JSON object a line: `{role: user | assistant, message: {content: [blocks]}}`, the blocks Anthropic's
(`text`, `tool_use`, `thinking`, and `tool_result` where a version writes them), plus boundary lines
`{type: turn_ended, status}` (any line with a `type` and no `role` is counted by its type). The user's
text comes wrapped as the model got it (`<user_query>`, sometimes a `<timestamp>` before it): kept as is.
Cursor writes `tool_use` blocks without ids and, in the versions seen, no tool results: each call gets an id
`cursor-<line>-<n>`, and calls with no result stay unpaired (the import report lists them), because the
transcript does not hold what the tools returned. No usage, model or system prompt is recorded.
"""

from __future__ import annotations

import re
from typing import Any

from engine.importers._blocks import AssistantTurn, flatten_blocks, tool_output
from engine.importers._common import TITLE_CHARS, Collector, ImportResult, iter_jsonl
from engine.messages import AiMessage

FORMAT = "cursor-agent"
QUERY = re.compile(r"<user_query>\s*(.*?)\s*</user_query>", re.S)


def _is_line(item: Any) -> bool:
    """`role` at the top and the content under `message` (a Claude Code line has `type` there instead)."""
    if not isinstance(item, dict) or item.get("role") not in ("user", "assistant") or "type" in item:
        return False
    message = item.get("message")
    return isinstance(message, dict) and isinstance(message.get("content"), list) and "role" not in message


def detect_cursor_agent(sniff: Any) -> bool:
    if sniff.document is not None and not isinstance(sniff.document, dict):
        return False
    return any(_is_line(i) for i in sniff.items) and all(_is_line(i) or _is_marker(i) for i in sniff.items)


def _is_marker(item: Any) -> bool:
    """A bookkeeping line (`{type: turn_ended, status}`, or a newer version's like it): a `type`, no role."""
    return isinstance(item, dict) and isinstance(item.get("type"), str) and "role" not in item


def import_cursor_agent(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    names: dict[str, str] = {}
    title: str | None = None
    for number, item, error in iter_jsonl(text):
        if error:
            out.problem(number, error)
        elif _is_marker(item):
            out.skip(item["type"], number)
        elif not _is_line(item):
            out.problem(number, "expected {role, message: {content: [blocks]}}")
        elif item["role"] == "user":
            _user(out, number, item["message"]["content"], names)
            title = title or _title(out)
        else:
            _assistant(out, number, item["message"]["content"], names)
    return out.result(FORMAT, title=title, session={"toolResultsRecorded": _has_results(out)})


def _user(out: Collector, number: int, blocks: list[Any], names: dict[str, str]) -> None:
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    for block in results:
        name = names.get(block.get("tool_use_id") or "")
        out.add(
            tool_output(block, out.unique_id(f"cursor-{number}"), number, name, {"source": {"line": number}})
        )
    text, notes = flatten_blocks([b for b in blocks if b not in results])
    if text.strip() or notes:
        meta = {**notes, "source": {"line": number}}
        out.add(AiMessage(out.unique_id(f"cursor-{number}"), "user", "user_input", text, number, meta))
    elif not results:
        out.skip("empty", number)


def _assistant(out: Collector, number: int, blocks: list[Any], names: dict[str, str]) -> None:
    turn = AssistantTurn(None, names)
    calls = 0
    for block in blocks:
        if isinstance(block, dict) and block.get("type") == "tool_use" and not block.get("id"):
            block = {**block, "id": f"cursor-{number}-{calls}"}  # Cursor writes calls without ids
        calls += isinstance(block, dict) and block.get("type") == "tool_use"
        reason = turn.add_block(
            block, lambda: out.unique_id(f"cursor-{number}"), number, {"source": {"line": number}}
        )
        if reason:
            out.skip(reason, number)
    produced = turn.finish()
    if not produced:
        out.skip("empty", number)
    for message in produced:
        out.add(message)


def _title(out: Collector) -> str | None:
    first = next((m.content for m in out.messages if m.type == "user_input"), "")
    match = QUERY.search(first)
    lines = (match.group(1) if match else first).strip().splitlines()
    return lines[0][:TITLE_CHARS] if lines else None


def _has_results(out: Collector) -> bool:
    return any(m.type == "tool_output" for m in out.messages)
