"""pi (badlogic/pi-mono coding agent) session files as linnkit messages.

Read from pi's own source (`packages/coding-agent/src/core/session-manager.ts`, `messages.ts`,
`packages/ai/src/providers/transform-messages.ts`): JSONL whose first line is the header `{type: "session",
id, cwd, version?}`, then entries. From version 2 each entry has `id`/`parentId` and the file is a tree: the
conversation is the path from the last entry back to the root, as pi rebuilds it (entries of other branches
are counted, not imported). Version 1 files are one list.

Mapping, as pi sends them: `message` entries with role `user` → `user_input` (images as placeholders),
`assistant` → `thinking` blocks as thoughts, text, every `toolCall` in one `tool_calls` message (an
`aborted` or `error` turn is never sent again: left out, its usage an other billed call), `toolResult` →
`tool_output`, and a call left without a result gets pi's synthetic "No result provided" error result before
the next turn; `bashExecution` (a command the user ran with `!`) → a generated `user_input` worded as pi
sends it (`!!` ones, excluded from the context, left out); `custom` / `custom_message` → a generated
`user_input`; `branch_summary` → a generated `user_input` with pi's summary wording; `compaction` → a
`history_summary` replacing what came before its first kept entry. The assistant's `usage` is the call's
usage, in Anthropic's units (pi's `input` excludes `cacheRead` and `cacheWrite` whatever the provider).
Model and thinking-level changes, labels and session info are bookkeeping, counted. No system prompt is
stored.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engine.importers._common import (
    TITLE_CHARS,
    Collector,
    ImportResult,
    Names,
    compact_json,
    image_placeholder,
    iso_to_ms,
    iter_jsonl,
    summary_metadata,
)
from engine.importers._json import READING_LINE
from engine.importers.registry import Sniff
from engine.messages import AiMessage
from engine.session_lines import json_type
from engine.usage import anthropic_usage

FORMAT = "pi"
PI_ROLES = Names({"user", "assistant", "toolResult", "bashExecution", "custom"})
BOOKKEEPING = Names({"model_change", "thinking_level_change", "label", "session_info", "custom"})
COMPACTION_PREFIX = "The conversation history before this point was compacted into the following summary:"
BRANCH_PREFIX = "The following is a summary of a branch that this conversation came back from:\n\n<summary>\n"


def detect_pi(sniff: Sniff) -> bool:
    """A `session` header with `cwd`, and `message` entries whose message has a pi role."""
    objects = list(sniff.objects())
    header = any(o.get("type") == "session" and "cwd" in o and "id" in o for o in objects)
    return header and any(
        o.get("type") == "message"
        and isinstance(o.get("message"), dict)
        and o["message"].get("role") in PI_ROLES
        for o in objects
    )


def import_pi(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    entries: list[tuple[int, dict[str, Any]]] = []
    header: dict[str, Any] = {}
    for number, value, error in iter_jsonl(text):
        if error:
            out.problem(number, error)
        elif not isinstance(value, dict):
            out.problem(number, f"expected a JSON object, found {type(value).__name__}")
        elif value.get("type") == "session":
            header = value
        else:
            entries.append((number, value))
    converter = _Converter(out)
    _bad_links(out, entries)
    path = _live_path(entries)
    on_path = {id(entry) for _, entry in path}
    for number, entry in entries:
        if id(entry) not in on_path:
            converter.off_branch(number, entry)
    for number, entry in path:
        converter.entry(number, entry)
    session = {k: header[k] for k in ("id", "cwd", "version") if k in header}
    model = converter.model or header.get("modelId")
    if isinstance(model, str):
        session["model"] = model
    return out.result(FORMAT, session=session, title=_session_name(entries))


def _session_name(entries: list[tuple[int, dict[str, Any]]]) -> str | None:
    """The name the user gave the session (pi's `getSessionName`: the latest `session_info` naming it)."""
    for _, entry in reversed(entries):
        name = entry.get("name") if entry.get("type") == "session_info" else None
        if isinstance(name, str) and name.strip():
            return name.strip()[:TITLE_CHARS]
    return None


def _bad_links(out: Collector, entries: list[tuple[int, dict[str, Any]]]) -> None:
    """An `id` or `parentId` that cannot name an entry cuts the live branch there: said, not silent."""
    for number, entry in entries:
        for key in ("id", "parentId"):
            value = entry.get(key)
            if value is not None and not isinstance(value, str):
                reason = f"must be an entry id (a string), got {json_type(value)}; the branch is cut here"
                out.problem(number, f"{key}: {reason}")


def _live_path(entries: list[tuple[int, dict[str, Any]]]) -> list[tuple[int, dict[str, Any]]]:
    """The entries pi sends: from the last entry back to the root through `parentId` (version 1 files have
    no ids: all of them)."""
    by_id = {e["id"]: (n, e) for n, e in entries if isinstance(e.get("id"), str)}
    if not entries or not by_id:
        return entries
    path: list[tuple[int, dict[str, Any]]] = []
    current: tuple[int, dict[str, Any]] | None = entries[-1]
    seen: set[str] = set()
    while current is not None and current[1].get("id") not in seen:
        path.append(current)
        seen.add(current[1].get("id"))
        parent = current[1].get("parentId")
        current = by_id.get(parent) if isinstance(parent, str) else None
    path.reverse()
    return path


class _Converter:
    def __init__(self, out: Collector) -> None:
        self.out = out
        self.model: str | None = None
        self.tool_names: dict[str, str] = {}
        self.first_of_entry: dict[str, str] = {}  # entry id -> the id of its first message
        self.summaries = 0
        self.pending: list[tuple[str, str]] = []  # the last answered-to calls (id, name) still waiting
        self.answered: set[str] = set()

    def off_branch(self, number: int, entry: dict[str, Any]) -> None:
        """An entry of an abandoned branch: counted; a call it billed is an other billed call."""
        self.out.skip("another branch", number)
        message = entry.get("message")
        if (
            entry.get("type") == "message"
            and isinstance(message, dict)
            and message.get("role") == "assistant"
        ):
            billed = self._usage_of(number, message)
            if billed is not None:
                self.out.other_call(billed, number, "a call on another branch")

    def entry(self, number: int, entry: dict[str, Any]) -> None:
        READING_LINE.set(number)  # entries are read along the live branch, after every line was parsed
        kind = entry.get("type")
        base = entry["id"] if isinstance(entry.get("id"), str) else f"pi-{number}"
        timestamp = iso_to_ms(entry.get("timestamp")) or number
        start = len(self.out.messages)
        if kind == "message" and isinstance(entry.get("message"), dict):
            self._message(number, entry["message"], base, timestamp)
        elif kind == "compaction":
            self._compaction(number, entry, base, timestamp)
        elif kind == "branch_summary" and isinstance(entry.get("summary"), str):
            text = BRANCH_PREFIX + entry["summary"] + "</summary>"
            self._user(base, text, timestamp, {"generated": "branch_summary"})
        elif kind == "custom_message":
            text, notes = _text(entry.get("content"))
            self._user(base, text, timestamp, {"generated": "custom", **notes})
        elif kind in BOOKKEEPING:
            self.out.skip(kind, number)
            if kind == "model_change" and isinstance(entry.get("modelId"), str):
                self.model = entry["modelId"]
        else:
            self.out.skip(f"unknown entry type {kind!r}", number)
        if len(self.out.messages) > start:
            self.first_of_entry[base] = self.out.messages[start].id

    def _message(self, number: int, message: dict[str, Any], base: str, timestamp: int) -> None:
        role = message.get("role")
        if role == "user":
            text, notes = _text(message.get("content"))
            self._user(base, text, timestamp, notes)
        elif role == "assistant":
            self._assistant(number, message, base, timestamp)
        elif role == "toolResult":
            text, notes = _text(message.get("content"))
            call_id = str(message.get("toolCallId") or "")
            self.answered.add(call_id)
            meta = {"tool_call_id": call_id, "raw_output": text, **notes}
            name = message.get("toolName") or self.tool_names.get(call_id)
            if name:
                meta["tool_name"] = name
            if message.get("isError"):
                meta["is_error"] = True
            self.out.add(AiMessage(self.out.unique_id(base), "tool", "tool_output", text, timestamp, meta))
        elif role == "bashExecution":
            if message.get("excludeFromContext"):
                self.out.skip("bashExecution excluded from context", number)
            else:
                self._user(base, _bash_text(message), timestamp, {"generated": "bashExecution"})
        elif role == "custom":
            text, notes = _text(message.get("content"))
            self._user(base, text, timestamp, {"generated": "custom", **notes})
        else:
            self.out.skip(f"unknown message role {role!r}", number)

    def _assistant(self, number: int, message: dict[str, Any], base: str, timestamp: int) -> None:
        self._no_results(timestamp)
        if message.get("stopReason") in ("error", "aborted"):  # pi never sends these turns again
            self.out.skip(f"assistant turn {message['stopReason']}", number)
            billed = self._usage_of(number, message)
            if billed is not None:
                self.out.other_call(billed, number, f"an {message['stopReason']} turn pi does not send again")
            return
        start = len(self.out.messages)
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        for block in message.get("content") or []:
            kind = block.get("type") if isinstance(block, dict) else None
            if kind == "text" and str(block.get("text") or "").strip():
                texts.append(block["text"])
            elif kind == "thinking":
                meta = {
                    "reasoning_details": [{"type": "reasoning.text", "signature": block["thinkingSignature"]}]
                }
                meta = meta if block.get("thinkingSignature") else {}
                thought = str(block.get("thinking") or "")
                self.out.add(
                    AiMessage(
                        self.out.unique_id(base), "assistant", "thought", thought, timestamp, meta or None
                    )
                )
            elif kind == "toolCall":
                call = _call(block)
                calls.append(call)
                self.tool_names[call["id"]] = call["function"]["name"]
        model = message.get("model") if isinstance(message.get("model"), str) else None
        source = {k: message[k] for k in ("provider", "model", "stopReason") if k in message}
        text = "\n\n".join(texts)
        if calls:
            meta = {"tool_calls": calls, "source": source}
            self.out.add(
                AiMessage(self.out.unique_id(base), "assistant", "tool_calls", text, timestamp, meta)
            )
        elif text:
            self.out.add(
                AiMessage(
                    self.out.unique_id(base), "assistant", "final_answer", text, timestamp, {"source": source}
                )
            )
        elif len(self.out.messages) == start:
            self.out.skip("assistant with no content", number)
        self.pending, self.answered = [(c["id"], c["function"]["name"]) for c in calls], set()
        if model:
            self.model = model
        parsed = self._usage_of(number, message)
        if parsed is not None:
            self.out.attach_usage(
                start, len(self.out.messages), parsed, number, "a call that produced no message"
            )

    def _usage_of(self, number: int, message: dict[str, Any]) -> Any:
        """The call's usage in Anthropic's units (pi's `input` excludes the cache), None when absent or
        all zero (a call aborted before the provider counted anything)."""
        usage = message.get("usage")
        if not isinstance(usage, dict):
            return None
        counts = {
            "input_tokens": usage.get("input"),
            "output_tokens": usage.get("output"),
            "cache_read_input_tokens": usage.get("cacheRead"),
            "cache_creation_input_tokens": usage.get("cacheWrite"),
        }
        if not any(counts.values()):
            return None
        model = message.get("model") if isinstance(message.get("model"), str) else None
        parsed = self.out.usage(number, anthropic_usage(counts, model))
        return None if parsed is None else replace(parsed, raw=dict(usage))

    def _compaction(self, number: int, entry: dict[str, Any], base: str, timestamp: int) -> None:
        summary = entry.get("summary") if isinstance(entry.get("summary"), str) else ""
        kept = entry.get("firstKeptEntryId")
        index = entry.get("firstKeptEntryIndex")
        if not kept and type(index) is int:  # version 1: an index among the entries (no ids), header first
            kept = f"pi-{index + 1}"  # its line, as an entry without an id is named
        first_kept = self.first_of_entry.get(kept or "")
        replaced: list[AiMessage] = []
        for message in self.out.messages:
            if message.id == first_kept:
                break
            if message.type != "system_prompt":
                replaced.append(message)
        self.summaries += 1
        text = f"{COMPACTION_PREFIX}\n\n<summary>\n{summary}\n</summary>"
        meta = summary_metadata(text, replaced, self.summaries)
        meta["source"] = {"tokensBefore": entry.get("tokensBefore")}
        self.out.add(AiMessage(self.out.unique_id(base), "system", "history_summary", text, timestamp, meta))

    def _no_results(self, timestamp: int) -> None:
        """pi answers a call left without a result, before the next turn, with "No result provided"."""
        for call_id, name in self.pending:
            if call_id not in self.answered:
                text = "No result provided"
                meta = {"tool_call_id": call_id, "raw_output": text, "tool_name": name, "is_error": True}
                meta["generated"] = "no_result"
                message_id = self.out.unique_id(f"{call_id}-no-result")
                self.out.add(AiMessage(message_id, "tool", "tool_output", text, timestamp, meta))
        self.pending, self.answered = [], set()

    def _user(self, base: str, text: str, timestamp: int, meta: dict[str, Any]) -> None:
        self._no_results(timestamp)
        self.out.add(AiMessage(self.out.unique_id(base), "user", "user_input", text, timestamp, meta or None))


def _text(content: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(content, str):
        return content, {}
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for block in content if isinstance(content, list) else []:
        kind = block.get("type") if isinstance(block, dict) else None
        if kind == "text":
            texts.append(str(block.get("text") or ""))
        elif kind == "image":
            data = block.get("data")
            images.append(
                {
                    "media_type": block.get("mimeType"),
                    "base64Chars": len(data) if isinstance(data, str) else 0,
                }
            )
            texts.append(image_placeholder(images[-1]))
    return "\n\n".join(t for t in texts if t), ({"images": images} if images else {})


def _bash_text(message: dict[str, Any]) -> str:
    """The text pi sends for a command the user ran (`bashExecutionToText`)."""
    text = f"Ran `{message.get('command')}`\n"
    output = message.get("output")
    text += f"```\n{output}\n```" if output else "(no output)"
    if message.get("cancelled"):
        text += "\n\n(command cancelled)"
    elif message.get("exitCode") not in (None, 0):
        text += f"\n\nCommand exited with code {message.get('exitCode')}"
    if message.get("truncated") and message.get("fullOutputPath"):
        text += f"\n\n[Output truncated. Full output: {message.get('fullOutputPath')}]"
    return text


def _call(block: dict[str, Any]) -> dict[str, Any]:
    arguments = block.get("arguments")
    text = arguments if isinstance(arguments, str) else compact_json({} if arguments is None else arguments)
    return {
        "id": str(block.get("id") or ""),
        "type": "function",
        "function": {"name": str(block.get("name") or ""), "arguments": text},
    }
