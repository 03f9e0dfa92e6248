"""Gemini CLI's prompt log (`~/.gemini/tmp/<project>/logs.json`) as linnkit messages.

The CLI logs what the user typed, for its input history (packages/core/src/core/logger.ts): a JSON array
of `{sessionId, messageId, type: "user", message, timestamp}`, every session of the project in one file.
It holds no reply, no tool call and no system prompt (those are in `chats/session-*.json(l)` beside it):
each session is a conversation of user turns (`conversation`, default the last, the newest), and a `/`
command, said to the CLI itself, is left out.
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import Collector, ImportResult, iso_to_ms, pick_conversation, read_document
from engine.messages import AiMessage

FORMAT = "gemini-logs"
ENTRY_KEYS = ("sessionId", "messageId", "type", "message")


def _entries(doc: Any) -> list[dict[str, Any]] | None:
    if not isinstance(doc, list) or not doc:
        return None
    if not all(isinstance(e, dict) and all(k in e for k in ENTRY_KEYS) for e in doc):
        return None
    return doc


def detect_gemini_logs(sniff: Any) -> bool:
    return _entries(sniff.document) is not None


def import_gemini_logs(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    entries = read_document(text, out, _entries, "logs.json: a list of {sessionId, messageId, type, message}")
    if entries is None:
        return out.result(FORMAT)
    sessions: dict[str, list[tuple[int, dict[str, Any]]]] = {}
    for number, entry in enumerate(entries, 1):
        sessions.setdefault(str(entry["sessionId"]), []).append((number, entry))
    chosen = pick_conversation(list(sessions.items()), -1 if conversation is None else conversation, path)
    if chosen is None:
        return out.result(FORMAT)
    session_id, logged = chosen
    for number, entry in logged:
        said = entry["message"]
        if entry["type"] != "user" or not isinstance(said, str):
            out.drift(f"log entry type {entry['type']!r}", number)
        elif said.lstrip().startswith("/"):
            out.skip("a command to the CLI (not sent to the model)", number)
        elif said.strip():
            ts = iso_to_ms(entry.get("timestamp"))
            message_id = out.unique_id(f"gl-{session_id[:8]}-{entry['messageId']}")
            out.add(AiMessage(message_id, "user", "user_input", said, number if ts is None else ts))
    return out.result(FORMAT, session={"sessionId": session_id}, conversations=len(sessions))
