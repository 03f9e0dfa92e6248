"""Gemini CLI checkpoints (`/chat save TAG`: `~/.gemini/tmp/<project>/checkpoint-TAG.json`) as messages.

A checkpoint is the chat's history as the CLI sends it to the model (packages/core/src/core/logger.ts):
`{history: Content[], authType?}`, or a bare `Content[]` (older files). A `Content` is `{role: user | model,
parts}`, read as Qwen Code reads its records (`engine.importers.qwen_code`, a Gemini CLI fork): a `model`
turn's `thought: true` parts are thoughts, its `functionCall` parts calls, else its text an answer; a `user`
turn's `functionResponse` parts answer those calls, and its other parts are user input (the first turn is
the CLI's own context setup, sent as the user's). A call saved without an id (older Gemini) is numbered,
and a response without one answers the earliest unanswered call of its name, as Gemini pairs them. A
checkpoint keeps no times, ids, model or usage.
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import Collector, ImportResult, read_document
from engine.importers.qwen_code import ContentReader

FORMAT = "gemini-checkpoint"
ROLES = ("user", "model")


def _history(doc: Any) -> list[Any] | None:
    """The file's `Content` list, when it is one (directly or as `history`)."""
    items = doc.get("history") if isinstance(doc, dict) else doc
    if not isinstance(items, list):
        return None
    contents = [c for c in items if isinstance(c, dict)]
    if not contents or not all(c.get("role") in ROLES and isinstance(c.get("parts"), list) for c in contents):
        return None
    return items


def detect_gemini_checkpoint(sniff: Any) -> bool:
    """`{history: [...]}`, or a bare list with a `model` turn (a list of user turns alone is anyone's)."""
    items = _history(sniff.document)
    if items is None:
        return False
    return isinstance(sniff.document, dict) or any(
        isinstance(c, dict) and c.get("role") == "model" for c in items
    )


def import_gemini_checkpoint(
    text: str, path: str = "<text>", conversation: int | None = None
) -> ImportResult:
    out = Collector(path)
    items = read_document(
        text, out, _history, "a Gemini chat history: [{role, parts}, ...] or {history: [...]}"
    )
    if items is None:
        return out.result(FORMAT)
    reader = ContentReader(out)
    pending: dict[str, list[str]] = {}  # a tool's name -> its calls not yet answered, oldest first
    for index, content in enumerate(items):
        number = index + 1
        if not isinstance(content, dict):
            found = type(content).__name__
            out.problem(number, f"history[{index}]: expected a Content object, found {found}")
            continue
        parts = [_with_id(p, f"gc-{number}-call-{n}", pending) for n, p in enumerate(content["parts"])]
        parts = [p for p in parts if isinstance(p, dict)]
        if content["role"] == "model":
            reader.record(number, _record(number, "assistant", "model", parts))
            continue
        responses = [p for p in parts if isinstance(p.get("functionResponse"), dict)]
        said = [p for p in parts if not isinstance(p.get("functionResponse"), dict)]
        if said or not responses:
            reader.record(number, _record(number, "user", "user", said))
        if responses:
            reader.record(number, _record(number, "tool_result", "user", responses))
    return out.result(FORMAT, session=reader.session)


def _record(number: int, kind: str, role: str, parts: list[dict[str, Any]]) -> dict[str, Any]:
    suffix = "-results" if kind == "tool_result" else ""
    return {"type": kind, "uuid": f"gc-{number}{suffix}", "message": {"role": role, "parts": parts}}


def _with_id(part: Any, fallback: str, pending: dict[str, list[str]]) -> Any:
    """`part`, its call or response given the id Gemini pairs it by when it was saved without one."""
    if not isinstance(part, dict):
        return part
    call, response = part.get("functionCall"), part.get("functionResponse")
    if isinstance(call, dict):
        call_id = call.get("id") if isinstance(call.get("id"), str) and call["id"] else fallback
        pending.setdefault(str(call.get("name") or ""), []).append(call_id)
        return {**part, "functionCall": {**call, "id": call_id}}
    if isinstance(response, dict):
        waiting = pending.get(str(response.get("name") or ""), [])
        given = response.get("id") if isinstance(response.get("id"), str) and response["id"] else None
        call_id = given or (waiting[0] if waiting else "")
        if call_id in waiting:
            waiting.remove(call_id)
        return {**part, "functionResponse": {**response, "id": call_id}}
    return part
