"""Factory Droid session files (`~/.factory/sessions/<workspace>/<uuid>.jsonl`) as linnkit messages.

Droid is closed source: read from the shape its files have (as third-party readers of them document it):
a `{type: "session_start", id, title, cwd, owner?, version?}` line, then `{type: "message", id, timestamp,
message: {role, content}}` lines whose content is Anthropic blocks (`text`, `thinking`, `tool_use` in
assistant messages; `text` and `tool_result` in user messages; the user's words often wrapped in
`<user_query>` and followed by `<system-reminder>` blocks, which the model receives as they are). Blocks map
as in Claude Code transcripts (`engine.importers._blocks`). A message's `usage`, when a version writes one,
is read in Anthropic's units; Droid's per-session totals live in the `.settings.json` beside the file (not
per call, not read). Other line types (`todo_state`, ...) are bookkeeping, counted.
"""

from __future__ import annotations

from typing import Any

from engine.importers._blocks import AssistantTurn, as_blocks, flatten_blocks, tool_output
from engine.importers._common import Collector, ImportResult, iso_to_ms, iter_jsonl
from engine.importers.registry import Sniff
from engine.messages import AiMessage
from engine.usage import anthropic_usage

FORMAT = "factory-droid"
USAGE_KEYS = {
    "input_tokens": ("inputTokens", "input_tokens"),
    "output_tokens": ("outputTokens", "output_tokens"),
    "cache_read_input_tokens": ("cacheReadTokens", "cache_read_input_tokens"),
    "cache_creation_input_tokens": ("cacheCreationTokens", "cache_creation_input_tokens"),
}


def detect_factory_droid(sniff: Sniff) -> bool:
    """A `session_start` line and `message` lines holding a role and a block list."""
    objects = list(sniff.objects())
    start = any(o.get("type") == "session_start" and "id" in o for o in objects)
    return start and any(
        o.get("type") == "message"
        and isinstance(o.get("message"), dict)
        and o["message"].get("role") in ("user", "assistant")
        and isinstance(o["message"].get("content"), list)
        for o in objects
    )


def import_factory_droid(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    tool_names: dict[str, str] = {}
    session: dict[str, Any] = {}
    title = None
    for number, entry, error in iter_jsonl(text):
        if error:
            out.problem(number, error)
            continue
        kind = entry.get("type") if isinstance(entry, dict) else None
        if kind == "session_start":
            session.update({k: entry[k] for k in ("id", "cwd", "owner", "version") if k in entry})
            title = entry.get("title") if isinstance(entry.get("title"), str) else None
            if isinstance(entry.get("model"), str):
                session["model"] = entry["model"]
        elif kind == "message" and isinstance(entry.get("message"), dict):
            _message(out, number, entry, tool_names, session)
        elif isinstance(kind, str):
            out.skip(kind, number)
        else:
            out.problem(number, "expected a line with a 'type'")
    return out.result(FORMAT, session=session, title=title)


def _message(
    out: Collector, number: int, entry: dict[str, Any], tool_names: dict[str, str], session: dict[str, Any]
) -> None:
    message = entry["message"]
    blocks = as_blocks(message.get("content"))
    if blocks is None:
        out.problem(number, "message content is neither text nor a list of blocks")
        return
    base = entry["id"] if isinstance(entry.get("id"), str) else f"droid-{number}"
    timestamp = iso_to_ms(entry.get("timestamp")) or number
    if message.get("role") == "assistant":
        start = len(out.messages)
        turn = AssistantTurn(base, tool_names)
        for block in blocks:
            reason = turn.add_block(block, lambda: out.unique_id(base), timestamp, {})
            if reason:
                out.skip(reason, number)
        for produced in turn.finish():
            out.add(produced)
        model = message.get("model") if isinstance(message.get("model"), str) else None
        if model:
            session["model"] = model
        _usage(out, number, message, model, start)
        return
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    for block in results:
        name = tool_names.get(block.get("tool_use_id") or "")
        out.add(tool_output(block, out.unique_id(base), timestamp, name, {}))
    text, notes = flatten_blocks([b for b in blocks if b not in results])
    if text.strip() or notes:
        out.add(AiMessage(out.unique_id(base), "user", "user_input", text, timestamp, notes or None))
    elif not results:
        out.skip("empty", number)


def _usage(out: Collector, number: int, message: dict[str, Any], model: str | None, start: int) -> None:
    usage = message.get("usage")
    if not isinstance(usage, dict):
        return
    counts = {key: next((usage[n] for n in names if n in usage), None) for key, names in USAGE_KEYS.items()}
    parsed = out.usage(number, anthropic_usage(counts, model))
    if parsed is not None:
        out.attach_usage(start, len(out.messages), parsed, number, "a reply with no message")
