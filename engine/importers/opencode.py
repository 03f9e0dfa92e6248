"""OpenCode sessions from its storage folder (opened by the storage root) as linnkit messages.

`opencode_storage.py` walks the folder into one document; this reads it as OpenCode's own
`MessageV2.toModelMessages` sends a session (`packages/opencode/src/session/message-v2.ts`). Each session
is a conversation (`conversation` picks one; default the most recent). User messages: their text parts
(`ignored` ones left out; `synthetic` ones, e.g. a file read for an @-mention, marked generated), files as
placeholders (text files were already read into text), a `compaction` part as "What did we do so far?", a
`subtask` part as "The following tool was executed by the user". Assistant messages, step by step (one
`step-start` … `step-finish` per model call): reasoning as thoughts, text, tool calls, then their results
(completed: the output, or "[Old tool result content cleared]" once compacted; failed: the error;
pending or running: "[Tool execution was interrupted]"); the step's `step-finish` tokens are the call's
usage. A failed assistant message is left out (an aborted one is kept when it produced something), and a
`summary` assistant message is a `history_summary` replacing everything before the compaction request.
Snapshots, patches, agent and retry parts are bookkeeping, counted.
"""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    Names,
    compact_json,
    image_placeholder,
    load_json_document,
    pick_conversation,
    summary_metadata,
)
from engine.importers.folders import FolderFormat, register_folder_format
from engine.importers.opencode_storage import KEY, is_storage_root, storage_document
from engine.importers.registry import Sniff
from engine.messages import AiMessage
from engine.usage import anthropic_usage

FORMAT = "opencode"
COMPACTION_PROMPT = "What did we do so far?"
SUBTASK_PROMPT = "The following tool was executed by the user"
CLEARED = "[Old tool result content cleared]"
INTERRUPTED = "[Tool execution was interrupted]"
BOOKKEEPING = Names({"snapshot", "patch", "agent", "retry", "step-start"})


def detect_opencode(sniff: Sniff) -> bool:
    return isinstance(sniff.document, dict) and isinstance(sniff.document.get(KEY), dict)


def import_opencode(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    document, error, line = load_json_document(text)
    if error is not None:
        out.problem(line, error)
        return out.result(FORMAT)
    for note in document.get("notes") or []:
        out.problem(None, str(note))
    sessions = [s for s in document[KEY].get("sessions") or [] if isinstance(s, dict)]
    chosen = pick_conversation(sessions, -1 if conversation is None else conversation, path)
    session: dict[str, Any] = {}
    title = None
    if chosen is not None:
        info = chosen.get("info") or {}
        title = info.get("title") if isinstance(info.get("title"), str) else None
        session = {k: info[k] for k in ("id", "projectID", "parentID", "directory") if k in info}
        converter = _Converter(out)
        for index, message in enumerate(chosen.get("messages") or []):
            converter.message(index, message)
        if converter.model:
            session["model"] = converter.model
    return out.result(FORMAT, session=session, conversations=len(sessions), title=title)


class _Converter:
    def __init__(self, out: Collector) -> None:
        self.out = out
        self.model: str | None = None
        self.compaction_at: int | None = None  # where the last compaction request starts
        self.summaries = 0

    def message(self, index: int, message: dict[str, Any]) -> None:
        info = message.get("info") if isinstance(message.get("info"), dict) else {}
        parts = [p for p in message.get("parts") or [] if isinstance(p, dict)]
        base = info.get("id") if isinstance(info.get("id"), str) else f"oc-{index}"
        time = info.get("time") if isinstance(info.get("time"), dict) else {}
        created = time.get("created") if isinstance(time.get("created"), int | float) else index
        if not parts:
            self.out.skip("message with no parts (by message index)", index)
        elif info.get("role") == "user":
            self._user(base, parts, created)
        elif info.get("role") == "assistant":
            self._assistant(index, base, info, parts, created)
        else:
            self.out.problem(None, f"message {base}: unknown role {info.get('role')!r}")

    def _user(self, base: str, parts: list[dict[str, Any]], created: Any) -> None:
        texts: list[str] = []
        meta: dict[str, Any] = {}
        for part in parts:
            kind = part.get("type")
            if kind == "text" and not part.get("ignored"):
                texts.append(str(part.get("text") or ""))
                if part.get("synthetic"):
                    meta["generated"] = "synthetic"
            elif kind == "file" and part.get("mime") not in ("text/plain", "application/x-directory"):
                note = {"url": f"{part.get('mime')}: {part.get('filename') or 'file'}"}
                meta.setdefault("images", []).append(note)
                texts.append(image_placeholder(note))
            elif kind == "compaction":
                self.compaction_at = len(self.out.messages)
                texts.append(COMPACTION_PROMPT)
                meta["generated"] = "compaction"
            elif kind == "subtask":
                texts.append(SUBTASK_PROMPT)
                meta["generated"] = "subtask"
        if texts:
            self._add(base, "user", "user_input", "\n\n".join(t for t in texts if t), created, meta)

    def _assistant(
        self, index: int, base: str, info: dict[str, Any], parts: list[dict[str, Any]], created: Any
    ) -> None:
        error = info.get("error") if isinstance(info.get("error"), dict) else None
        produced = any(p.get("type") not in ("step-start", "reasoning") for p in parts)
        if error is not None and not (error.get("name") == "MessageAbortedError" and produced):
            self.out.skip(f"assistant message with error {error.get('name')} (by message index)", index)
            return
        if isinstance(info.get("modelID"), str):
            self.model = info["modelID"]
        if info.get("summary"):
            self._summary(base, parts, created)
            return
        step: list[dict[str, Any]] = []
        for part in parts:
            if part.get("type") == "step-finish":
                self._step(index, base, step, created, part)
                step = []
            elif part.get("type") in BOOKKEEPING:
                if part.get("type") != "step-start":
                    self.out.skip(f"part:{part.get('type')} (by message index)", index)
            else:
                step.append(part)
        if step:
            self._step(index, base, step, created, {"tokens": info.get("tokens")})

    def _step(
        self, index: int, base: str, parts: list[dict[str, Any]], created: Any, finish: dict[str, Any]
    ) -> None:
        start = len(self.out.messages)
        texts: list[str] = []
        calls: list[dict[str, Any]] = []
        results: list[tuple[str, str, str, bool]] = []
        for part in parts:
            kind = part.get("type")
            if kind == "reasoning":
                self._add(base, "assistant", "thought", str(part.get("text") or ""), created, {})
            elif kind == "text":
                texts.append(str(part.get("text") or ""))
            elif kind == "tool":
                call, result = _tool(part)
                calls.append(call)
                results.append(result)
            else:
                self.out.skip(f"part:{kind} (by message index)", index)
        text = "\n\n".join(t for t in texts if t)
        if calls:
            self._add(base, "assistant", "tool_calls", text, created, {"tool_calls": calls})
        elif text:
            self._add(base, "assistant", "final_answer", text, created, {})
        end = len(self.out.messages)
        for call_id, name, output, failed in results:
            meta = {"tool_call_id": call_id, "raw_output": output, "tool_name": name}
            self._add(
                base,
                "tool",
                "tool_output",
                output,
                created,
                {**meta, **({"is_error": True} if failed else {})},
            )
        parsed = self._usage(finish.get("tokens"))
        if parsed is not None and end > start:
            self.out.attach_usage(start, end, parsed, None, "a step with no message")

    def _usage(self, tokens: Any) -> Any:
        """A step's tokens in Anthropic's units (OpenCode's `input` excludes the cache read and write)."""
        if not isinstance(tokens, dict) or not any(tokens.get(k) for k in ("input", "output")):
            return None
        cache = tokens.get("cache") if isinstance(tokens.get("cache"), dict) else {}
        counts = {
            "input_tokens": tokens.get("input"),
            "output_tokens": tokens.get("output"),
            "cache_read_input_tokens": cache.get("read"),
            "cache_creation_input_tokens": cache.get("write"),
        }
        parsed = self.out.usage(None, anthropic_usage(counts, self.model))
        return None if parsed is None else replace(parsed, raw=dict(tokens))

    def _summary(self, base: str, parts: list[dict[str, Any]], created: Any) -> None:
        text = "\n\n".join(str(p.get("text") or "") for p in parts if p.get("type") == "text")
        cut = self.compaction_at if self.compaction_at is not None else len(self.out.messages)
        replaced = [m for m in self.out.messages[:cut] if m.type != "system_prompt"]
        self.summaries += 1
        meta = summary_metadata(text, replaced, self.summaries)
        self._add(base, "system", "history_summary", text, created, meta)
        for part in parts:  # the summarizing call was billed; no assistant message carries it
            billed = self._usage(part.get("tokens")) if part.get("type") == "step-finish" else None
            if billed is not None:
                self.out.other_call(billed, None, "the compaction's summarizing call")

    def _add(self, base: str, role: str, kind: str, text: str, created: Any, meta: dict[str, Any]) -> None:
        self.out.add(AiMessage(self.out.unique_id(base), role, kind, text, created, meta or None))


def _tool(part: dict[str, Any]) -> tuple[dict[str, Any], tuple[str, str, str, bool]]:
    state = part.get("state") if isinstance(part.get("state"), dict) else {}
    call_id, name = str(part.get("callID") or ""), str(part.get("tool") or "")
    arguments = state.get("input")
    call = {
        "id": call_id,
        "type": "function",
        "function": {"name": name, "arguments": compact_json(arguments if arguments is not None else {})},
    }
    status = state.get("status")
    if status == "completed":
        compacted = isinstance(state.get("time"), dict) and state["time"].get("compacted")
        output = CLEARED if compacted else str(state.get("output") or "")
        return call, (call_id, name, output, False)
    if status == "error":
        metadata = state.get("metadata") if isinstance(state.get("metadata"), dict) else {}
        if metadata.get("interrupted") is True and isinstance(metadata.get("output"), str):
            return call, (call_id, name, metadata["output"], False)
        return call, (call_id, name, str(state.get("error") or ""), True)
    return call, (call_id, name, INTERRUPTED, True)


def import_opencode_folder(root: Path, conversation: int | None = None) -> ImportResult:
    """An OpenCode storage root (`session/`, `message/`, `part/`): its files gathered safely, then read."""
    document = json.dumps(storage_document(root), ensure_ascii=False)
    return import_opencode(document, str(root), conversation)


register_folder_format(FolderFormat("opencode", is_storage_root, import_opencode_folder))
