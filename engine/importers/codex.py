"""OpenAI Codex CLI rollouts (`~/.codex/sessions/…/rollout-*.jsonl`) as linnkit messages.

Each line is `{timestamp, type, payload}`. `session_meta` gives the session id and the instructions (the
system prompt, `instructions` or `base_instructions.text`); `turn_context` the model; `response_item` lines
are Responses API items, converted as `engine.importers.responses` describes; `compacted` is a compaction:
a `history_summary` replacing everything before it except the user messages its `replacement_history`
keeps. `event_msg` lines are the UI's echoes of the same items: counted, not imported — except
`token_count`, whose `info.last_token_usage` is what the provider counted for one model call (OpenAI units:
the input includes the cached part). It becomes that call's `metadata.usage`, with the model of the latest
`turn_context`; a `token_count` without `info`, or repeating the previous one's running total (Codex
re-emits it when only the rate limits changed), is no new call. A rollout that writes `token_usage_record`
lines (0.147+: one per response, its `usage`) has its calls' usage from them, its `token_count`s then
counted as echoes.

Two older layouts read the same way: rollouts of 2025 before the envelope (a first line
`{id, timestamp, instructions, git}` as the session's meta, then bare Responses items and `{"record_type":
"state"}` markers, which are bookkeeping), and the TypeScript CLI's `rollout-*.json` (`{session: {timestamp,
id, instructions}, items: [...]}`). Neither holds usage.
"""

from __future__ import annotations

import re
from typing import Any

from engine.importers._common import Collector, ImportResult, Names, iso_to_ms, iter_jsonl, load_json_document
from engine.importers.responses import BOOKKEEPING_ITEMS, ITEM_TYPES, ItemConverter, flatten_content
from engine.session_lines import json_type
from engine.usage import openai_usage

FORMAT = "codex"
IDE_REQUEST = "## My request for Codex:"
TITLE_CHARS = 80
LINE_TYPES = Names(
    {"session_meta", "turn_context", "response_item", "event_msg", "compacted", "token_usage_record"}
)
# a line of that type (inside a message's text the quotes would be escaped)
USAGE_RECORD = re.compile(r'"type"\s*:\s*"token_usage_record"')


def detect_codex(sniff: Any) -> bool:
    objects = list(sniff.objects())
    if any(o.get("type") in LINE_TYPES and isinstance(o.get("payload"), dict) for o in objects):
        return True
    if _typescript_rollout(sniff.document) is not None:
        return True
    older = any(_bare_meta(o) or _state_marker(o) for o in objects)
    return older and any(o.get("type") in ITEM_TYPES for o in objects)


def _bare_meta(item: Any) -> bool:
    """The first line of a rollout written before the envelope (Codex, 2025)."""
    return (
        isinstance(item, dict)
        and "type" not in item
        and isinstance(item.get("id"), str)
        and isinstance(item.get("timestamp"), str)
        and ("instructions" in item or "git" in item)
    )


def _state_marker(item: Any) -> bool:
    return isinstance(item, dict) and item.get("record_type") == "state"


def _typescript_rollout(doc: Any) -> list[tuple[int, Any]] | None:
    """The lines (as enveloped rollout lines, numbered from 1) of the TypeScript CLI's `{session, items}`."""
    if not isinstance(doc, dict) or not isinstance(doc.get("session"), dict):
        return None
    items = doc.get("items")
    if not isinstance(items, list) or not all(
        isinstance(i, dict) and i.get("type") in ITEM_TYPES for i in items
    ):
        return None
    session = doc["session"]
    meta = {"type": "session_meta", "timestamp": session.get("timestamp"), "payload": session}
    return [(1, meta)] + [(n, {"type": "response_item", "payload": item}) for n, item in enumerate(items, 2)]


def _enveloped(entry: dict[str, Any]) -> dict[str, Any] | None:
    """A line in the `{timestamp, type, payload}` envelope: as it is, or an older line put in one."""
    if isinstance(entry.get("payload"), dict):
        return entry
    if _bare_meta(entry):
        return {"type": "session_meta", "timestamp": entry["timestamp"], "payload": entry}
    if entry.get("type") in ITEM_TYPES or entry.get("type") in BOOKKEEPING_ITEMS:
        return {"type": "response_item", "timestamp": entry.get("timestamp"), "payload": entry}
    return None


def import_codex(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    """Read a Codex CLI rollout; malformed lines are reported in `problems` and skipped."""
    out = Collector(path)
    reader = _Rollout(out, usage_records=USAGE_RECORD.search(text) is not None)
    document = _typescript_rollout(load_json_document(text)[0]) if text.lstrip().startswith("{") else None
    lines = ((n, e, None) for n, e in document) if document is not None else iter_jsonl(text)
    for number, entry, error in lines:
        line = _enveloped(entry) if isinstance(entry, dict) else None
        if error:
            out.problem(number, error)
        elif _state_marker(entry):
            out.skip("state record (Codex's bookkeeping)", number)
        elif line is None:
            out.problem(number, "expected {timestamp, type, payload} with an object payload")
        else:
            reader.line(number, line)
    reader.converter.flush()
    reader.converter.finish_usage()
    typed = (m for m in out.messages if m.type == "user_input" and not m.meta("generated"))
    requests = (_request(m.content) for m in typed)
    title = next((r.splitlines()[0][:TITLE_CHARS] for r in requests if r), None)
    return out.result(FORMAT, session=reader.session, title=title)


def _request(text: str) -> str:
    """What the person typed in a user message, without the context Codex and its IDE extension inject."""
    if IDE_REQUEST in text:
        return text.split(IDE_REQUEST, 1)[1].strip()
    return "" if text.lstrip().startswith(("<", "# AGENTS.md", "# Context from my IDE")) else text.strip()


ENCRYPTED_COMPACTION = ("compaction", "compaction_summary")  # a replacement history's last item, when remote
# how Codex opens the summary of a local compaction (codex-rs `compact.rs` SUMMARY_PREFIX)
SUMMARY_PREFIX = "Another language model started to solve this problem and produced a summary"
UNSEEN_SUMMARY = "[compaction: no summary in the transcript]"


class _Rollout:
    def __init__(self, out: Collector, *, usage_records: bool = False) -> None:
        self.out = out
        self.usage_records = usage_records  # usage comes from token_usage_record lines
        self.converter = ItemConverter(out, "cx")
        self.session: dict[str, Any] = {}
        self.model: str | None = None
        self.last_total: Any = None
        self.instructions: str | None = None  # the last session_meta's, taken as the system prompt

    def line(self, number: int, entry: dict[str, Any]) -> None:
        kind, payload = entry.get("type"), entry["payload"]
        ts = iso_to_ms(entry.get("timestamp"))
        ts = number if ts is None else ts
        if kind == "response_item":
            self.converter.item(payload, number, ts)
        elif kind == "session_meta":
            self._meta(payload, number, ts)
        elif kind == "turn_context":
            if isinstance(payload.get("model"), str):
                self.session.setdefault("model", payload["model"])
                self.model = payload["model"]
        elif kind == "token_usage_record":
            self._usage(payload.get("usage"), number)
        elif kind == "event_msg" and payload.get("type") == "token_count" and not self.usage_records:
            self._token_count(payload, number)
        elif kind == "compacted":
            self._compacted(payload, number, ts)
        elif kind == "event_msg":
            self.out.skip(f"event_msg {payload.get('type')} (a UI echo)", number)
        else:  # a line type of a newer Codex: named in the report, left out
            self.out.drift(f"line type {kind!r}", number)

    def _meta(self, payload: dict[str, Any], number: int, ts: int) -> None:
        wrong = _wrong_instructions(payload)
        if wrong is not None:  # read as none, the system prompt was gone without a word
            self.out.problem(number, f"{wrong}; left out")
            return
        for key in ("id", "cwd", "cli_version", "originator"):
            if isinstance(payload.get(key), str):
                self.session[key] = payload[key]
        base = payload.get("base_instructions")
        instructions = payload.get("instructions") or (base.get("text") if isinstance(base, dict) else base)
        if not isinstance(instructions, str) or not instructions.strip():
            return
        if instructions == self.instructions:  # Codex Desktop writes session_meta again at every turn
            self.out.skip("session_meta repeating the session's instructions (not sent again)", number)
            return
        self.instructions = instructions
        self.converter.system(instructions, number, ts, {"field": "session_meta.instructions"})

    def _token_count(self, payload: dict[str, Any], number: int) -> None:
        info = payload.get("info")
        if not isinstance(info, dict) or "last_token_usage" not in info:
            self.out.skip("event_msg token_count without usage (a UI echo)", number)
            return
        total = info.get("total_token_usage")
        if total is not None and total == self.last_total:
            self.out.skip("event_msg token_count repeating the last one", number)
            return
        self.last_total = total
        self._usage(info["last_token_usage"], number)

    def _usage(self, raw: Any, number: int) -> None:
        usage = self.out.usage(number, openai_usage(raw, self.model))
        if usage is not None:
            self.converter.usage(number, usage)

    def _compacted(self, payload: dict[str, Any], number: int, ts: int) -> None:
        history = payload.get("replacement_history")
        history = history if isinstance(history, list) else []
        user_texts = [
            flatten_content(item.get("content"))[0]
            for item in history
            if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user"
        ]
        summary = payload.get("message") if isinstance(payload.get("message"), str) else ""
        sealed = history[-1] if history and isinstance(history[-1], dict) else {}
        if not summary and sealed.get("type") in ENCRYPTED_COMPACTION:
            # a remote compaction (OpenAI models): the summary is the provider's encrypted item, and every
            # user message the history lists is retained
            encrypted = sealed.get("encrypted_content")
            size = len(encrypted) if isinstance(encrypted, str) else 0
            summary = f"[encrypted compaction summary: {size} characters the transcript cannot show]"
        elif not summary and user_texts and user_texts[-1].lstrip().startswith(SUMMARY_PREFIX):
            summary = user_texts.pop()  # a local compaction: Codex puts the summary last, as a user message
        elif not summary:
            # 0.140-0.142 windows: the history ends on the user's own last prompt (echoed earlier, no
            # prefix) and no summary item; every listed user message is retained
            summary = UNSEEN_SUMMARY
        source = {"line": number, "type": "compacted", "replacementHistoryItems": len(history)}
        self.converter.compaction(summary, set(user_texts), number, ts, source)


def _wrong_instructions(payload: dict[str, Any]) -> str | None:
    """A session_meta's instructions of a type Codex never writes (`instructions` text, `base_instructions`
    text or `{text}`), or None."""
    instructions = payload.get("instructions")
    if instructions is not None and not isinstance(instructions, str):
        return f"payload.instructions: must be text, got {json_type(instructions)}"
    base = payload.get("base_instructions")
    if base is not None and not isinstance(base, str | dict):
        return f"payload.base_instructions: must be text or an object with its text, got {json_type(base)}"
    text = base.get("text") if isinstance(base, dict) else None
    if text is not None and not isinstance(text, str):
        return f"payload.base_instructions.text: must be text, got {json_type(text)}"
    return None
