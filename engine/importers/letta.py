"""Letta agent files (`.af`) as linnkit messages.

An agent file is JSON — sometimes a JSON string holding the JSON — with `agents[]` (newer) or one agent at
the top (older), each with its `system` prompt and `messages` in Letta's schema (`role`, `content` parts or
`text`, OpenAI-shaped `tool_calls`, `tool_call_id`). Each agent of a multi-agent file is a conversation
(`conversation` picks one, default the first); its messages are read as OpenAI chat messages; a user
message Letta wrapped as JSON (`{"type": "user_message", "message": …}`) is unwrapped to what the user
wrote. The agent's memory blocks and tools stay in the file (they are in the system message).

Calls held for a human's approval (newer Letta: `approval` messages, `tool_returns`) read as calls and their
results (`_chats`). An older file (no `in_context_message_ids`, Letta 0.6) holds its messages as stored, in no
set order: they are read by `created_at` when every one has it. Letta rewrites the system message when memory
changes, and such a file keeps every version: the latest is the system prompt, the earlier ones are left out
(a newer file's array is already in order, and its timestamps may disagree by a second: it is read as it is).
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import Collector, ImportResult, Names, load_json_document, pick_conversation
from engine.importers._json import json_loads
from engine.importers.openai_chat import convert_chat_messages

FORMAT = "letta"
AGENT_KEYS = Names({"llm_config", "agent_type", "memory_blocks", "core_memory", "in_context_message_ids"})


def _unwrap(value: Any) -> Any:
    """The document inside a JSON string, when the file is one."""
    if isinstance(value, str):
        try:
            return json_loads(value)
        except ValueError:
            return value
    return value


def _agents(value: Any) -> list[dict[str, Any]]:
    """The file's agents that hold a conversation (one for an older single-agent file)."""
    doc = _unwrap(value)
    found = doc["agents"] if isinstance(doc, dict) and isinstance(doc.get("agents"), list) else [doc]
    return [
        a
        for a in found
        if isinstance(a, dict) and isinstance(a.get("messages"), list) and AGENT_KEYS & a.keys()
    ]


def detect_letta(sniff: Any) -> bool:
    return bool(_agents(sniff.document))


def import_letta(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    value, error, line = load_json_document(text)
    agents = _agents(value) if error is None else []
    agent = pick_conversation(agents, conversation or 0, path)
    if agent is None:
        out.problem(line, error or "expected a Letta agent file (an agent with 'messages')")
        return out.result(FORMAT)
    entries = [(None, f"messages[{i}]", chat) for i, m in _in_order(agent, out) for chat in _chats(m, i, out)]
    if not any(isinstance(m, dict) and m.get("role") == "system" for m in agent["messages"]):
        if isinstance(agent.get("system"), str) and agent["system"]:
            entries.insert(0, (None, "system", {"role": "system", "content": agent["system"]}))
    convert_chat_messages(out, entries)
    session: dict[str, Any] = {"agent": agent.get("name")} if isinstance(agent.get("name"), str) else {}
    model = (
        (agent.get("llm_config") or {}).get("model") if isinstance(agent.get("llm_config"), dict) else None
    )
    if isinstance(model, str):
        session["model"] = model
    return out.result(FORMAT, session=session, conversations=len(agents))


def _in_order(agent: dict[str, Any], out: Collector) -> list[tuple[int, Any]]:
    """The agent's messages with their indices, in the order the model met them (see the module's note)."""
    numbered = list(enumerate(agent["messages"]))
    if "in_context_message_ids" in agent:
        return numbered
    stamps = [m.get("created_at") if isinstance(m, dict) else None for _, m in numbered]
    if all(isinstance(t, str) for t in stamps):
        numbered = [n for _, n in sorted(zip(stamps, numbered, strict=True), key=lambda pair: pair[0])]
    systems = [i for i, m in numbered if isinstance(m, dict) and m.get("role") == "system"]
    for index in systems[:-1]:
        out.skip("an earlier version of the system message (Letta rewrites it as memory changes)", index + 1)
    latest = [(i, m) for i, m in numbered if i == systems[-1]] if systems else []
    return latest + [(i, m) for i, m in numbered if i not in systems]


def _chats(message: Any, index: int, out: Collector) -> list[Any]:
    """The chat messages a Letta message stands for. With human approval (newer Letta), the model's calls
    come in an `approval` message and the answers in a `tool` message's `tool_returns` (one each); an
    `approval` message of `approvals` is the user's decision, whose results those returns carry."""
    if not isinstance(message, dict):
        return [message]
    role = message.get("role")
    if role == "approval" and not message.get("tool_calls"):
        out.skip("approval decision (the tool returns after it carry its results)", index + 1)
        return []
    returns = message.get("tool_returns")
    answering = isinstance(returns, list) and returns and all(
        isinstance(r, dict) and r.get("tool_call_id") for r in returns
    )  # Letta 0.6 writes `tool_returns` of a status and stdout only: the message itself is the result
    if role == "tool" and answering:
        return [
            {"role": "tool", "tool_call_id": r.get("tool_call_id"), "content": r.get("func_response")}
            for r in returns
            if isinstance(r, dict)
        ]
    chat = _chat(message)
    if role == "approval":
        chat["role"] = "assistant"  # the model's calls, held for the user's approval
    return [chat]


def _chat(message: Any) -> Any:
    if not isinstance(message, dict):
        return message
    content = message.get("content") if message.get("content") is not None else message.get("text")
    role = message.get("role")
    chat: dict[str, Any] = {"role": role, "content": _user_text(content) if role == "user" else content}
    automated = _automated(content) if role == "user" else None
    if automated is not None:
        chat["generated"] = automated
    for key in ("id", "tool_call_id"):
        if isinstance(message.get(key), str):
            chat[key] = message[key]
    if isinstance(message.get("tool_calls"), list) and message["tool_calls"]:
        chat["tool_calls"] = message["tool_calls"]
    if isinstance(message.get("created_at"), str):
        chat["timestamp"] = message["created_at"]
    return chat


AUTOMATED = ("login", "heartbeat", "system_alert")  # what MemGPT sends as the user's turn by itself


def _automated(content: Any) -> str | None:
    """The kind of an automated user turn (`{"type": "heartbeat", ...}` as the model reads it), else None."""
    text = content if isinstance(content, str) else None
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict):
        text = content[0].get("text")
    inner = _unwrap(text) if isinstance(text, str) else None
    kind = inner.get("type") if isinstance(inner, dict) else None
    return kind if kind in AUTOMATED else None


def _user_text(content: Any) -> Any:
    """Letta wraps user and heartbeat messages as JSON text; show what they say."""
    texts = [content] if isinstance(content, str) else None
    if isinstance(content, list):
        texts = [p.get("text") for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)]
    if texts is None or len(texts) != 1:
        return content
    inner = _unwrap(texts[0])
    if isinstance(inner, dict) and isinstance(inner.get("message"), str) and "type" in inner:
        return inner["message"]
    return texts[0]
