"""Claude Code's `--output-format stream-json` output (`claude -p --verbose --output-format stream-json`).

One JSON object a line (the Agent SDK's `SDKMessage`s):
- `{type: system, subtype: init, session_id, cwd, model, tools: [names], mcp_servers, permissionMode,
  claude_code_version, ...}` opens the run; its model and tool names are kept in `session`;
- `{type: assistant | user, message, parent_tool_use_id, session_id, uuid}`: the same Anthropic messages
  as a transcript's lines (one content block a line, `message.id` shared, `usage` per call); a message with
  a `parent_tool_use_id` is a sub-agent's (a separate conversation, as a transcript's sidechain);
- `{type: system, subtype: compact_boundary, compact_metadata}`: a compaction;
- `{type: result, subtype, num_turns, total_cost_usd, usage, modelUsage, ...}` closes the run: its totals
  are kept in `session.result`. Each call's usage is on its message, but as the CLI wrote it with the
  message, before the call's last output count (a real 2.1.7 run: 5 output tokens on the message, 25 in
  the result): when the run made one call whose other counts the result repeats, the result's usage is
  that call's final usage and replaces it; else the output tokens the result counts beyond every call in
  the file are kept as `session.result.outputTokensNotOnMessages`;
- `stream_event` lines (`--include-partial-messages`) are partial deltas of messages that follow whole:
  counted, not read.
The user's prompt is not echoed unless the run was given `--replay-user-messages`. Lines are turned into
transcript lines and read by `engine.importers.claude_code`, so blocks, pairing, compactions and usage
follow the same rules.
"""

from __future__ import annotations

import json
from typing import Any

from engine.importers._common import ImportResult, with_usage
from engine.importers.claude_code import import_claude_code
from engine.usage import RecordedUsage, anthropic_usage

FORMAT = "claude-code-stream"
INIT_KEYS = ("session_id", "model", "cwd", "claude_code_version", "permissionMode")


def _is_init(item: Any) -> bool:
    return isinstance(item, dict) and item.get("type") == "system" and item.get("subtype") == "init"


def _is_stream_line(item: Any) -> bool:
    """A line only stream-json writes: init, result, or a message with the snake_case `session_id` (a
    transcript line has `sessionId`)."""
    if not isinstance(item, dict):
        return False
    if _is_init(item) and "session_id" in item:
        return True
    if item.get("type") == "result" and "session_id" in item and ("num_turns" in item or "subtype" in item):
        return True
    return (
        item.get("type") in ("assistant", "user")
        and "session_id" in item
        and "parent_tool_use_id" in item
        and "sessionId" not in item
    )


def detect_claude_stream(sniff: Any) -> bool:
    """JSON lines, or one array of the same messages (`--output-format json --verbose`; Qwen Code's
    `-o json`)."""
    document = sniff.document
    return (document is None or isinstance(document, list)) and any(_is_stream_line(i) for i in sniff.items)


def import_claude_stream(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    session: dict[str, Any] = {}
    threads: dict[str | None, str | None] = {}
    lines: list[str] = []
    for raw in _stream_lines(text):  # one line out for each line in: problems keep their line numbers
        try:
            item = json.loads(raw) if raw.strip() else None
        except json.JSONDecodeError:
            item = None
        converted = _as_transcript_line(item, session) if isinstance(item, dict) else None
        if converted is not None and converted.get("type") in ("assistant", "user", "system"):
            _chain(converted, threads, len(lines) + 1)
        lines.append(raw if converted is None else json.dumps(converted, ensure_ascii=False))
    result = import_claude_code("\n".join(lines), path, conversation)
    result.format = FORMAT
    if isinstance(session.get("result"), dict):
        _reconcile(result, session["result"])
    result.session = {**session, **{k: v for k, v in result.session.items() if k not in session}}
    return result


def _stream_lines(text: str) -> list[str]:
    """The text's lines; an array document's elements, one a line (element N is line N + 1)."""
    if text.lstrip().startswith("["):
        try:
            elements = json.loads(text)
        except ValueError:
            elements = None
        if isinstance(elements, list):
            return [json.dumps(element, ensure_ascii=False) for element in elements]
    return text.split("\n")


def _chain(line: dict[str, Any], threads: dict[str | None, str | None], number: int) -> None:
    """Give a stream line the parent a transcript line names: stream-json has no `parentUuid`, and a thread's
    lines (the run's own, or one sub-agent's) follow each other in the file. Read as roots, the calls of a
    run without its echoed prompt looked like rewound branches. A compaction starts the thread anew."""
    if "parentUuid" in line:
        return
    thread = line.get("agentId") if line.get("isSidechain") else None
    uuid = line.get("uuid") if isinstance(line.get("uuid"), str) and line["uuid"] else f"stream-line-{number}"
    line["uuid"] = uuid
    if line.get("type") == "system":  # a compact boundary: a root, as in a transcript
        line["parentUuid"] = None
    else:
        line["parentUuid"] = threads.get(thread)
    threads[thread] = uuid


def _as_transcript_line(item: dict[str, Any], session: dict[str, Any]) -> dict[str, Any]:
    kind, subtype = item.get("type"), item.get("subtype")
    if kind in ("assistant", "user") and isinstance(item.get("message"), dict):
        line = {k: v for k, v in item.items() if k not in ("session_id", "parent_tool_use_id")}
        if isinstance(item.get("session_id"), str):
            line["sessionId"] = item["session_id"]
        parent = item.get("parent_tool_use_id")
        if isinstance(parent, str) and parent:
            line.update(isSidechain=True, agentId=parent)
        return line
    if _is_init(item):
        session.update({k: item[k] for k in INIT_KEYS if isinstance(item.get(k), str)})
        if isinstance(item.get("session_id"), str):
            session["sessionId"] = session.pop("session_id")
        if isinstance(item.get("tools"), list):
            session["tools"] = item["tools"]
        return {"type": "stream:init"}
    if kind == "system" and subtype == "compact_boundary":
        meta = item.get("compact_metadata")
        return {"type": "system", "subtype": "compact_boundary", "compactMetadata": meta or {}}
    if kind == "result":
        keys = ("subtype", "is_error", "num_turns", "total_cost_usd", "usage", "modelUsage", "duration_ms")
        session["result"] = {k: item[k] for k in keys if k in item}
        return {"type": f"stream:result ({subtype})" if subtype else "stream:result"}
    return {"type": f"stream:{kind}" + (f" ({subtype})" if isinstance(subtype, str) else "")}


def _reconcile(result: ImportResult, totals: dict[str, Any]) -> None:
    """A one-call run's final usage onto its call; else the result's output tokens no message carries."""
    final = anthropic_usage(totals.get("usage"))
    if not isinstance(final, RecordedUsage):
        return
    called = [i for i, m in enumerate(result.messages) if m.meta("usage")]
    counted = [result.messages[i].meta("usage") for i in called] + result.other_calls
    missing = final.output_tokens - sum(u["outputTokens"] for u in counted)
    if missing <= 0:
        return
    own = result.messages[called[0]].meta("usage") if len(called) == 1 and not result.other_calls else None
    if own and (own["promptTokens"], own["cacheReadTokens"], own["cacheWriteTokens"]) == (
        final.prompt_tokens, final.cache_read_tokens, final.cache_write_tokens
    ):  # fmt: skip
        usage = anthropic_usage(totals["usage"], own["model"], own.get("callId"))
        if isinstance(usage, RecordedUsage):
            result.messages[called[0]] = with_usage(result.messages[called[0]], usage)
            return
    totals["outputTokensNotOnMessages"] = missing
