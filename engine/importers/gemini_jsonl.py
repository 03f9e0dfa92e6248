"""Gemini CLI's JSONL recording (`~/.gemini/tmp/<project>/chats/session-*.jsonl`, 2026) as linnkit messages.

The CLI appends records and rebuilds the session from them on load (`loadConversationRecord` in
packages/core/src/services/chatRecordingService.ts), and so does this reader:
- a metadata line `{sessionId, projectHash, startTime?, lastUpdated?, kind?}` (the first line; a whole legacy
  record on one line also carries `messages`);
- a message line `{id, timestamp, type, content, ...}`: a message is written again when it changes (a
  reply once its tool calls finish), so a later record with the same `id` replaces the earlier one in its
  place;
- `{"$set": {...}}` updates the metadata; a `$set` with `messages` is a checkpoint that replaces them all;
- `{"$rewindTo": id}` drops that message and every one after it (all of them when the id is unknown).
The rebuilt record is then read exactly as a `session-*.json` file (`engine.importers.gemini_cli`): user
turns, thoughts, tool calls with their results, the CLI's notices left out, `tokens` as each call's usage.
Lines that replaced or rewound messages are counted under "left out" with their line numbers.
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import Collector, ImportResult, iter_jsonl
from engine.importers.gemini_cli import MESSAGE_TYPES, convert_messages, session_fields
from engine.session_lines import json_type

FORMAT = "gemini-cli-jsonl"
HEADER_KEYS = ("sessionId", "projectHash")


def _is_header(item: Any) -> bool:
    return isinstance(item, dict) and all(isinstance(item.get(k), str) for k in HEADER_KEYS)


def detect_gemini_jsonl(sniff: Any) -> bool:
    """A header line followed by Gemini message records or `$set`/`$rewindTo` lines (never one JSON
    document: that is the older `session-*.json`)."""
    if sniff.document is not None or not sniff.items or not _is_header(sniff.items[0]):
        return False
    rest = [i for i in sniff.items[1:] if isinstance(i, dict)]
    return not rest or any(
        "$set" in i or "$rewindTo" in i or (isinstance(i.get("id"), str) and i.get("type") in MESSAGE_TYPES)
        for i in rest
    )


def import_gemini_jsonl(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    metadata: dict[str, Any] = {}
    records: dict[str, tuple[int, dict[str, Any]]] = {}  # id → (line, record), in first-written order
    for number, item, error in iter_jsonl(text):
        if error:
            out.problem(number, error)
        elif not isinstance(item, dict):
            out.problem(number, f"expected a JSON object, found {type(item).__name__}")
        elif isinstance(item.get("$rewindTo"), str):
            _rewind(records, item["$rewindTo"], out, number)
        elif "id" in item and not isinstance(item["id"], str):
            # read as an unknown record: the message (or its latest writing) gone, an earlier one read instead
            out.problem(number, f"id: must be a message id (a string), got {json_type(item['id'])}; left out")
        elif isinstance(item.get("id"), str):
            if item["id"] in records:
                out.skip("earlier record of a message written again", records[item["id"]][0])
            records[item["id"]] = (number, item)
        elif isinstance(item.get("$set"), dict):
            update = item["$set"]
            if isinstance(update.get("messages"), list):
                _checkpoint(records, update["messages"], out, number)
            metadata.update({k: v for k, v in update.items() if k != "messages"})
            out.skip("metadata update ($set)", number)
        elif _is_header(item):
            metadata.update({k: v for k, v in item.items() if k != "messages"})
            if isinstance(item.get("messages"), list):
                _checkpoint(records, item["messages"], out, number)
        else:
            out.skip(f"unknown record (keys {', '.join(sorted(map(str, item))[:4])})", number)
    lines = [line for line, _ in records.values()]
    messages = [record for _, record in records.values()]
    convert_messages(out, messages, lines)
    session = session_fields({**metadata, "messages": messages})
    session.update({k: metadata[k] for k in ("kind", "summary") if isinstance(metadata.get(k), str)})
    return out.result(FORMAT, title=session.get("summary"), session=session)


def _rewind(records: dict[str, tuple[int, dict[str, Any]]], to: str, out: Collector, number: int) -> None:
    ids = list(records)
    dropped = ids[ids.index(to) :] if to in records else ids
    for message_id in dropped:
        out.skip("message undone by a rewind", records.pop(message_id)[0])
    out.skip("rewind", number)


def _checkpoint(
    records: dict[str, tuple[int, dict[str, Any]]], messages: list[Any], out: Collector, number: int
) -> None:
    for line, _ in records.values():
        out.skip("message replaced by a checkpoint", line)
    records.clear()
    for index, message in enumerate(messages):
        if isinstance(message, dict) and isinstance(message.get("id"), str):
            records[message["id"]] = (number, message)
        else:
            out.problem(number, f"$set.messages[{index}]: a message without an 'id'")
