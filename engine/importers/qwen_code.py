"""Qwen Code sessions (`~/.qwen/projects/<project>/chats/<sessionId>.jsonl`) as linnkit messages.

One `ChatRecord` a line (packages/core/src/services/chatRecordingService.ts): `{uuid, parentUuid, sessionId,
timestamp, type: user | assistant | tool_result | system, subtype?, cwd, version, message?, usageMetadata?,
model?, toolCallResult?, systemPayload?, isSidechain?}`. `message` is the Gemini `Content` sent to or
received from the model (`{role, parts}`), so:
- a `user` record → `user_input` (text parts; inline images as placeholders);
- an `assistant` record → its `thought: true` parts as `thought`s, then `tool_calls` (its `functionCall`
  parts, with the text) or `final_answer`; its `usageMetadata` (promptTokenCount includes the cached part)
  is the call's `metadata.usage`;
- a `tool_result` record → one `tool_output` per `functionResponse` part (`response.output`, else
  `response.error`);
- a `system` record of subtype `chat_compression` → a `history_summary` (the first content of
  `systemPayload.compressedHistory`), replacing the earlier messages whose text the compressed history does
  not keep; other system records (slash and @ commands, telemetry, titles, snapshots, ...) are the CLI's
  own: counted by subtype.
Sub-agent records (`isSidechain`) are left out of the main conversation; their calls count as other billed
calls. Records are read in file order (a rewind's abandoned branch is not pruned).
"""

from __future__ import annotations

from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    Names,
    compact_json,
    image_placeholder,
    iso_to_ms,
    iter_jsonl,
    summary_metadata,
)
from engine.messages import AiMessage
from engine.usage import gemini_usage

FORMAT = "qwen-code"
RECORD_TYPES = Names({"user", "assistant", "tool_result", "system"})
SESSION_KEYS = ("sessionId", "cwd", "version", "gitBranch")


def _is_record(item: Any) -> bool:
    """A ChatRecord: `uuid`, `sessionId`, a record type, and a Gemini `Content` (`parts`) or a system
    subtype (a Claude Code line's message has `content`, never `parts`)."""
    if not isinstance(item, dict) or item.get("type") not in RECORD_TYPES or "uuid" not in item:
        return False
    message = item.get("message")
    if isinstance(message, dict):
        return isinstance(message.get("parts"), list)
    return item["type"] == "system" and "systemPayload" in item


def detect_qwen_code(sniff: Any) -> bool:
    return sniff.document is None and any(_is_record(i) and "message" in i for i in sniff.items)


def import_qwen_code(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    reader = ContentReader(Collector(path))
    for number, item, error in iter_jsonl(text):
        if error:
            reader.out.problem(number, error)
        elif not isinstance(item, dict) or not isinstance(item.get("type"), str):
            reader.out.problem(number, "expected a record object with a 'type'")
        else:
            reader.record(number, item)
    return reader.out.result(FORMAT, session=reader.session)


class ContentReader:
    """Reads Qwen Code's records one at a time; the Gemini CLI checkpoint reader feeds it records it makes."""

    def __init__(self, out: Collector) -> None:
        self.out = out
        self.session: dict[str, Any] = {}
        self.names: dict[str, str] = {}
        self.summaries = -1

    def record(self, number: int, item: dict[str, Any]) -> None:
        kind = item["type"]
        for key in SESSION_KEYS:
            if isinstance(item.get(key), str):
                self.session.setdefault(key, item[key])
        message = item.get("message") if isinstance(item.get("message"), dict) else None
        parts = [p for p in (message or {}).get("parts") or [] if isinstance(p, dict)]
        if item.get("isSidechain"):
            self.out.skip("sub-agent record (isSidechain)", number)
            self._usage(number, item, -1)
        elif kind == "system":
            if item.get("subtype") == "chat_compression":
                self._compression(number, item)
            else:
                self.out.skip(f"system:{item.get('subtype') or '?'}", number)
        elif message is None:
            self.out.skip(f"{kind} record without a message", number)
        elif kind == "user":
            text, notes = _text(parts)
            if text.strip() or notes:
                self._add(number, item, "user", "user_input", text, notes or None)
            else:
                self.out.skip("empty", number)
        elif kind == "assistant":
            self._assistant(number, item, parts)
        elif kind == "tool_result":
            self._results(number, item, parts)
        else:
            self.out.skip(kind, number)

    def _assistant(self, number: int, item: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        start = len(self.out.messages)
        for part in parts:
            if part.get("thought") is True and isinstance(part.get("text"), str) and part["text"].strip():
                self._add(number, item, "assistant", "thought", part["text"], suffix="-thought")
        text, _ = _text([p for p in parts if p.get("thought") is not True])
        calls = [_call(p["functionCall"], f"{item['uuid']}-call-{n}") for n, p in enumerate(parts)
                 if isinstance(p.get("functionCall"), dict)]  # fmt: skip
        meta: dict[str, Any] = {"model": item["model"]} if isinstance(item.get("model"), str) else {}
        if isinstance(item.get("model"), str):
            self.session.setdefault("model", item["model"])
        if calls:
            self.names.update({c["id"]: c["function"]["name"] for c in calls})
            self._add(number, item, "assistant", "tool_calls", text, {**meta, "tool_calls": calls})
        elif text.strip():
            self._add(number, item, "assistant", "final_answer", text, meta or None)
        elif len(self.out.messages) == start:
            self.out.skip("empty reply", number)
        self._usage(number, item, start)

    def _results(self, number: int, item: dict[str, Any], parts: list[dict[str, Any]]) -> None:
        responses = [p["functionResponse"] for p in parts if isinstance(p.get("functionResponse"), dict)]
        if not responses:
            self.out.skip("tool_result without a functionResponse", number)
        for n, response in enumerate(responses):
            call_id = str(response.get("id") or "")
            body = response.get("response")
            value = body.get("output", body.get("error", body)) if isinstance(body, dict) else body
            text = value if isinstance(value, str) else compact_json(value)
            name = str(response.get("name") or self.names.get(call_id, ""))
            meta = {"tool_call_id": call_id, "raw_output": text, "tool_name": name}
            if isinstance(body, dict) and "error" in body and "output" not in body:
                meta["is_error"] = True
            self._add(number, item, "tool", "tool_output", text, meta, suffix=f"-out-{n}" if n else "-out")

    def _compression(self, number: int, item: dict[str, Any]) -> None:
        payload = item.get("systemPayload") if isinstance(item.get("systemPayload"), dict) else {}
        history = [c for c in payload.get("compressedHistory") or [] if isinstance(c, dict)]
        summary, _ = (
            _text([p for p in (history[0].get("parts") or []) if isinstance(p, dict)])
            if history
            else ("", {})
        )
        if not summary:
            self.out.skip("chat_compression without a summary", number)
            return
        kept = {_text([p for p in c.get("parts") or [] if isinstance(p, dict)])[0] for c in history[1:]}
        replaced = [
            m
            for m in self.out.messages
            if m.type != "system_prompt" and (m.content not in kept or not m.content)
        ]
        self.summaries += 1
        meta = summary_metadata(summary, replaced, self.summaries)
        meta["source"] = {"line": number, "info": payload.get("info")}
        self._add(number, item, "system", "history_summary", summary, meta)

    def _usage(self, number: int, item: dict[str, Any], start: int) -> None:
        raw = item.get("usageMetadata")
        if not isinstance(raw, dict):
            return
        tokens = {
            "input": raw.get("promptTokenCount"),
            "output": raw.get("candidatesTokenCount"),
            "cached": raw.get("cachedContentTokenCount"),
            "thoughts": raw.get("thoughtsTokenCount"),
            "tool": raw.get("toolUsePromptTokenCount"),
            "total": raw.get("totalTokenCount"),
        }
        model = item.get("model") if isinstance(item.get("model"), str) else None
        parsed = gemini_usage({k: v for k, v in tokens.items() if v is not None}, model, item.get("uuid"))
        usage = self.out.usage(number, parsed)
        if usage is None:
            return
        if start < 0:
            self.out.other_call(usage, number, "a sub-agent's call")
        else:
            self.out.attach_usage(start, len(self.out.messages), usage, number, "a reply with no message")

    def _add(
        self,
        number: int,
        item: dict[str, Any],
        role: str,
        kind: str,
        text: str,
        meta: dict[str, Any] | None = None,
        suffix: str = "",
    ) -> None:
        ts = iso_to_ms(item.get("timestamp"))
        message_id = self.out.unique_id(str(item.get("uuid") or f"qwen-{number}") + suffix)
        self.out.add(AiMessage(message_id, role, kind, text, number if ts is None else ts, meta))


def _text(parts: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part.get("text"), str) and part["text"]:
            texts.append(part["text"])
        elif isinstance(part.get("inlineData"), dict):
            data = part["inlineData"].get("data")
            note = {"media_type": part["inlineData"].get("mimeType"), "base64Chars": len(data or "")}
            images.append(note)
            texts.append(image_placeholder(note))
    return "\n\n".join(texts), ({"images": images} if images else {})


def _call(call: dict[str, Any], fallback: str) -> dict[str, Any]:
    args = call.get("args")
    return {
        "id": str(call.get("id") or fallback),
        "type": "function",
        "function": {
            "name": str(call.get("name") or ""),
            "arguments": args if isinstance(args, str) else compact_json(args if args is not None else {}),
        },
    }
