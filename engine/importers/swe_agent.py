"""SWE-agent trajectories (`*.traj`) as linnkit messages.

A trajectory is `{history: [...], trajectory: [...], info: {...}}`; `history` is what the model was sent:
chat messages (`role`, `content`, `tool_calls`) where a tool message answers the calls named in its
`tool_call_ids` list. They are read as OpenAI chat messages; a tool message answering several calls
becomes one `tool_output` per call (the text on the first, a pointer to it on the others). `thought` and
`action` (copies of the assistant's text and command) and the per-step `trajectory` are not imported.
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import Collector, ImportResult, Names, load_json_document
from engine.importers.openai_chat import convert_chat_messages

FORMAT = "swe-agent"
SWE_KEYS = Names({"message_type", "tool_call_ids", "agent", "is_demo"})


def detect_swe_agent(sniff: Any) -> bool:
    doc = sniff.document
    if not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
        return False
    if sniff.name.endswith(".traj") or "trajectory" in doc:
        return True
    return any(isinstance(m, dict) and SWE_KEYS & m.keys() for m in doc["history"][:50])


def import_swe_agent(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    doc, error, line = load_json_document(text)
    if error is not None or not isinstance(doc, dict) or not isinstance(doc.get("history"), list):
        out.problem(line, error or "expected an object with a 'history' list")
        return out.result(FORMAT)
    entries: list[tuple[int | None, str | None, Any]] = []
    for index, message in enumerate(doc["history"]):
        entries.extend((None, f"history[{index}]", m) for m in _chat_messages(message))
    convert_chat_messages(out, entries)
    info = doc.get("info") if isinstance(doc.get("info"), dict) else {}
    session = {k: info[k] for k in ("exit_status", "model_stats") if k in info}
    return out.result(FORMAT, session=session)


def _chat_messages(message: Any) -> list[Any]:
    """The chat message(s) one history entry stands for; SWE-agent's own keys are left out."""
    if not isinstance(message, dict):
        return [message]
    chat = {k: v for k, v in message.items() if k not in SWE_KEYS | {"thought", "action"}}
    ids = message.get("tool_call_ids")
    if message.get("role") != "tool" or not isinstance(ids, list) or not ids:
        return [chat]
    first = {**chat, "tool_call_id": ids[0]}
    pointer = f"[the output of call {ids[0]} answers this call too]"
    return [first] + [{**chat, "tool_call_id": i, "content": pointer} for i in ids[1:]]
