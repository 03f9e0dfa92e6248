"""What every importer shares: the result record, problem reports, ids, timestamps and JSON reading."""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

from engine.importers._json import (  # noqa: F401 - re-exported: the importers read JSON through here
    iter_json_array,
    iter_jsonl,
    iter_jsonl_file,
    load_json_document,
)
from engine.importers.archives import WHOLE_READ_BYTES, eval_log_document, is_zip
from engine.messages import AiMessage
from engine.safe_input import MAX_TRANSCRIPT_BYTES, InputError, decode_utf8_lines, read_regular_file
from engine.usage import UNRECORDED, RecordedUsage, UsageProblem

TITLE_CHARS = 80
MAX_DATE_MS = 8_640_000_000_000_000  # a JavaScript Date's range: a time beyond it is no time
T = TypeVar("T")


class Names(frozenset):
    """A set of names (record types, roles, kinds) that any JSON value can be looked up in: a list or an
    object where a name belongs (a malformed record) is simply not one of them, where a frozenset raises
    TypeError and the import would end in an internal error."""

    __slots__ = ()

    def __contains__(self, value: object) -> bool:
        try:
            return frozenset.__contains__(self, value)
        except TypeError:  # unhashable: a list or an object
            return False


class NameMap(dict):
    """A dict keyed by names that any JSON value can be looked up in (`in`, `get`), as `Names`."""

    __slots__ = ()

    def __contains__(self, value: object) -> bool:
        try:
            return dict.__contains__(self, value)
        except TypeError:  # unhashable: a list or an object
            return False

    def get(self, value: object, default: Any = None) -> Any:
        return dict.get(self, value, default) if self.__contains__(value) else default


class UnknownFormatError(ValueError):
    """The input matches none of the importable formats."""


class EmptyImportError(ValueError):
    """A non-blank input from which the chosen format read no message (never an empty session)."""


@dataclass(frozen=True, slots=True)
class Problem:
    """A part of the input that could not be imported. `line` is 1-based; None when unknown."""

    path: str
    line: int | None
    reason: str

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.reason}" if self.line else f"{self.path}: {self.reason}"


@dataclass(slots=True)
class ImportResult:
    """Messages read from a foreign format, with an account of everything left out."""

    messages: list[AiMessage]
    format: str
    skipped_lines: dict[str, list[int]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    title: str | None = None
    unpaired: list[str] = field(default_factory=list)
    session: dict[str, Any] = field(default_factory=dict)
    conversations: int = 1
    # billed model calls that no imported message carries (another branch, a sub-agent): `metadata.usage`
    # entries plus `why` and `line` (and `file` when not this one); they count in the recorded cost
    other_calls: list[dict[str, Any]] = field(default_factory=list)
    runner_up: str | None = None  # the next format that claims the input, when detection chose this one
    # line/item types the importer does not know (format drift): label → how it was carried (a message
    # type, or None when left out) and its line numbers
    unknown: dict[str, tuple[str | None, list[int]]] = field(default_factory=dict)

    @property
    def skipped(self) -> dict[str, int]:
        """How many lines (or blocks inside a used line) were left out, by reason."""
        return {reason: len(lines) for reason, lines in self.skipped_lines.items()}

    def counts(self) -> dict[str, int]:
        return dict(Counter(m.type for m in self.messages))

    def came_in(self) -> dict[str, int]:
        """What was imported, in a reader's words: turns, calls and results, thoughts, summaries, images."""
        by_type = self.counts()
        return {
            "systemPrompts": by_type.get("system_prompt", 0),
            "userTurns": by_type.get("user_input", 0),
            "assistantTurns": by_type.get("tool_calls", 0) + by_type.get("final_answer", 0),
            "toolCalls": sum(len(m.tool_calls) for m in self.messages if m.type == "tool_calls"),
            "toolResults": by_type.get("tool_output", 0),
            "thoughts": by_type.get("thought", 0),
            "summaries": by_type.get("history_summary", 0),
            "images": sum(len(m.meta("images") or ()) for m in self.messages),
            "callsWithUsage": sum(1 for m in self.messages if m.metadata and "usage" in m.metadata),
            "otherBilledCalls": len(self.other_calls),
        }

    def report(self, first_lines: int = 5) -> dict[str, Any]:
        """The import report: what came in, what did not and why (with its first line numbers)."""
        return {
            "format": self.format,
            "runnerUp": self.runner_up,
            "title": self.title,
            "messages": len(self.messages),
            "conversations": self.conversations,
            "cameIn": self.came_in(),
            "leftOut": [
                {"reason": reason, "count": len(lines), "firstLines": lines[:first_lines]}
                for reason, lines in sorted(self.skipped_lines.items())
            ],
            "problems": [str(p) for p in self.problems],
            "unpaired": list(self.unpaired),
            "unknownTypes": [
                {"type": label, "count": len(lines), "firstLines": lines[:first_lines], "carriedAs": carried}
                for label, (carried, lines) in self.unknown.items()
            ],
        }

    def header(self, source: str, chosen: int | None = None) -> dict[str, Any]:
        """The session header an import writes: title, model, where it came from (which conversation, when
        the file holds several) and the billed calls no message carries (`recordedCalls`)."""
        origin: dict[str, Any] = {"file": source, "format": self.format}
        if self.conversations > 1:
            origin.update(conversations=self.conversations, conversation=chosen)
        model = self.session.get("model")
        fields = {
            "kind": "linn-session",
            "version": 1,
            "title": self.title or Path(source).stem,
            "modelId": model if isinstance(model, str) else None,
            "importedFrom": origin,
            "recordedCalls": self.other_calls or None,
            # an agent that writes no tool results (Cursor): its calls without one are no problem of the file
            "toolResultsRecorded": False if self.session.get("toolResultsRecorded") is False else None,
        }
        return {k: v for k, v in fields.items() if v is not None}

    def describe(self) -> str:
        """One paragraph for a command line: format, counts, skips, problems."""
        counts = ", ".join(f"{n} {t}" for t, n in sorted(self.counts().items()))
        parts = [f"format {self.format}: {len(self.messages)} messages ({counts or 'none'})"]
        if self.conversations != 1:
            parts.append(f"{self.conversations} conversations in the file")
        if self.skipped_lines:
            parts.append("skipped " + ", ".join(f"{r} {n}" for r, n in sorted(self.skipped.items())))
        if self.unpaired:
            parts.append(f"{len(self.unpaired)} unpaired tool ids")
        if self.problems:
            parts.append(f"{len(self.problems)} problems")
        return "; ".join(parts)


class Collector:
    """Accumulates messages, skips and problems while one input is read; ids stay unique."""

    def __init__(self, path: str) -> None:
        self.path = path
        self.messages: list[AiMessage] = []
        self.skipped_lines: dict[str, list[int]] = {}
        self.problems: list[Problem] = []
        self.other_calls: list[dict[str, Any]] = []
        self.unknown: dict[str, tuple[str | None, list[int]]] = {}
        self._ids: set[str] = set()

    def unique_id(self, candidate: str) -> str:
        """`candidate`, or `candidate#n` with the smallest n not yet taken."""
        new_id, n = candidate, 0
        while new_id in self._ids:
            n += 1
            new_id = f"{candidate}#{n}"
        self._ids.add(new_id)
        return new_id

    def skip(self, reason: str, line: int) -> None:
        self.skipped_lines.setdefault(reason, []).append(line)

    def drift(self, label: str, line: int, carried_as: str | None = None) -> None:
        """A line or item type this importer does not know (`label`, e.g. `line type 'x'`): carried as a
        message of type `carried_as` (the caller adds it), or, when None, left out as bookkeeping."""
        carried, lines = self.unknown.setdefault(label, (carried_as, []))
        lines.append(line)
        if carried_as is None:
            self.skip(f"unknown {label}", line)

    def problem(self, line: int | None, reason: str) -> None:
        self.problems.append(Problem(self.path, line, reason))

    def add(self, message: AiMessage) -> None:
        self.messages.append(message)

    def usage(self, line: int | None, parsed: RecordedUsage | UsageProblem) -> RecordedUsage | None:
        """A call's parsed usage, or None after naming its problem (the call then counts as unrecorded)."""
        if isinstance(parsed, UsageProblem):
            self.usage_problem(line, parsed)
            return None
        return parsed

    def usage_problem(self, line: int | None, problem: UsageProblem, where: str = "") -> None:
        """A call's usage that cannot be used: a problem, or for a placeholder (zeros) a line left out."""
        if problem.placeholder and line is not None:
            self.skip(f"usage of 0 prompt tokens (a placeholder): {UNRECORDED}", line)
        else:
            self.problem(line, f"{where}{problem}")

    def attach_usage(self, start: int, end: int, usage: RecordedUsage, line: int | None, why: str) -> None:
        """A call's usage onto the last assistant message among `messages[start:end]` (the call's); an other
        call, for `why`, when it produced none."""
        own = [i for i in range(start, end) if self.messages[i].role == "assistant"]
        if own:
            self.messages[own[-1]] = with_usage(self.messages[own[-1]], usage)
        else:
            self.other_call(usage, line, why)

    def other_call(self, usage: RecordedUsage, line: int | None, why: str, file: str | None = None) -> None:
        entry = {**usage.to_json(), "line": line, "why": why}
        self.other_calls.append({**entry, "file": file} if file else entry)

    def result(self, fmt: str, **fields: Any) -> ImportResult:
        return ImportResult(
            messages=self.messages,
            format=fmt,
            skipped_lines=self.skipped_lines,
            problems=self.problems,
            unpaired=find_unpaired(self.messages),
            title=fields.pop("title", None) or first_user_title(self.messages),
            other_calls=self.other_calls,
            unknown=self.unknown,
            **fields,
        )


def with_usage(message: AiMessage, usage: RecordedUsage) -> AiMessage:
    """The message that ends a model call, carrying that call's recorded usage (`metadata.usage`)."""
    return message.with_(metadata={**(message.metadata or {}), "usage": usage.to_json()})


def summary_metadata(summary: str, replaced: list[AiMessage], seq: int) -> dict[str, Any]:
    """A compaction's `history_summary` metadata, as linnkit's summarization provider writes it."""
    chars = sum(len(m.content) for m in replaced)
    return {
        "messageType": "summary",
        "originalMessageCount": len(replaced),
        "compressionRatio": round(len(summary) / chars, 4) if chars else 0,
        "includedOldSummary": any(m.type == "history_summary" for m in replaced),
        "replacedMessageIds": [m.id for m in replaced],
        "summarySeq": seq,
    }


def leading_reasoning(text: str, tag: str = "think") -> tuple[str, str] | None:
    """`(reasoning, answer)` of a reply that opens with a `<tag>…</tag>` block, the convention of reasoning
    models served as plain text (DeepSeek-R1, Qwen3, Hermes: `<think>`); None when it does not open so."""
    stripped = text.lstrip()
    opening, closing = f"<{tag}>", f"</{tag}>"
    end = stripped.find(closing) if stripped.startswith(opening) else -1
    if end < 0:
        return None
    return stripped[len(opening) : end].strip(), stripped[end + len(closing) :].strip()


def iso_to_ms(value: Any) -> int | None:
    """An ISO-8601 string (or epoch seconds/ms number) as epoch milliseconds; None if unreadable."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int | float):
        if not math.isfinite(value):  # NaN, or a 1e400 or Infinity the JSON reader let through
            return None
        millis = int(value * 1000) if value < 1e11 else int(value)
    elif not isinstance(value, str) or not value:
        return None
    else:
        try:
            millis = int(datetime.fromisoformat(value).timestamp() * 1000)
        except (ValueError, OverflowError, OSError):
            return None
    return millis if abs(millis) <= MAX_DATE_MS else None


def first_user_title(messages: list[AiMessage]) -> str | None:
    """The first line of the first user input the user wrote (not an agent's `generated` one), cut to
    TITLE_CHARS."""
    for m in messages:
        if m.type == "user_input" and m.content.strip() and not m.meta("generated"):
            first = m.content.strip().splitlines()[0]
            return first if len(first) <= TITLE_CHARS else first[: TITLE_CHARS - 1] + "…"
    return None


def find_unpaired(messages: list[AiMessage]) -> list[str]:
    """Call ids with no tool_output, then output call ids (or message ids) with no earlier call."""
    declared: list[str] = []
    declared_set: set[str] = set()
    answered: set[str] = set()
    orphans: list[str] = []
    for m in messages:
        if m.type == "tool_calls":
            for call in m.tool_calls:
                cid = call.get("id")
                if isinstance(cid, str) and cid not in declared_set:
                    declared.append(cid)
                    declared_set.add(cid)
        elif m.type == "tool_output":
            cid = m.tool_call_id
            if cid in declared_set:
                answered.add(cid)
            else:
                orphans.append(cid or m.id)
    return [cid for cid in declared if cid not in answered] + orphans


# the message lists one item may hold: a request's, or a preference pair (LLaMA-Factory's v1 DPO data; an
# UltraFeedback item, whose `messages` are its `chosen` ones and whose `rejected` list is the other answer)
CONVERSATION_KEYS = ("messages", "chosen_messages", "rejected_messages", "rejected")
PREFERENCE = {
    "chosen_messages": {"preference": "chosen"},
    "rejected_messages": {"preference": "rejected"},
    "rejected": {"preference": "rejected"},
}


def _messages_list(value: list[Any]) -> bool:
    return bool(value) and all(isinstance(m, dict) and "role" in m for m in value)


def read_transcript(path: Path) -> tuple[str, list[Problem]]:
    """The text of a transcript file and a problem per line holding invalid UTF-8 (read as U+FFFD, so the
    line's message still comes in); a zip archive (an Inspect AI `.eval` log) as the JSON document it stands
    for (`archives`). Only a regular file is opened: a FIFO or a device raises InputError before it could
    block; one over WHOLE_READ_BYTES is refused (a large transcript a format can stream never gets here)."""
    if path.is_file() and is_zip(path):
        return json.dumps(eval_log_document(path), ensure_ascii=False), []
    size = path.stat().st_size if path.is_file() else 0
    if size > WHOLE_READ_BYTES:
        limit = WHOLE_READ_BYTES // 2**20
        raise InputError(str(path), f"{size:,} bytes; transcripts over {limit} MB are refused, not read")
    text, bad = decode_utf8_lines(read_regular_file(path, max_bytes=MAX_TRANSCRIPT_BYTES), str(path))
    if "\r" in text:  # line ends as `Path.read_text` gives them
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text, [Problem(str(path), line, f"encoding: {reason}") for line, reason in bad]


UNMAPPED_KEEP_CHARS = 1000
MESSAGES_KEY = re.compile(r'"messages"\s*:\s*\[')


def unmapped_note(value: Any) -> Any:
    """A value the message model has no place for: kept whole when small, else its type and size."""
    size = len(json.dumps(value, ensure_ascii=False, default=str))
    if size <= UNMAPPED_KEEP_CHARS:
        return value
    kind = value.get("type") if isinstance(value, dict) else type(value).__name__
    return {"type": kind, "omittedChars": size}


def image_note(source: Any) -> dict[str, Any]:
    """What an image was, without its bytes: its URL, or its media type and base64 length."""
    if not isinstance(source, dict):
        return {"type": "unknown"}
    if isinstance(source.get("path"), str):  # a file or URL the image was stored at (ATIF-v1.6)
        return {"path": source["path"], "media_type": source.get("media_type")}
    url = source.get("url")
    if isinstance(url, str) and url.startswith("data:"):
        head, _, data = url.partition(",")
        return {"media_type": head[5:].split(";")[0], "base64Chars": len(data)}
    if isinstance(url, str):
        return {"url": url}
    data = source.get("data")
    return {"media_type": source.get("media_type"), "base64Chars": len(data) if isinstance(data, str) else 0}


def image_placeholder(note: dict[str, Any]) -> str:
    """The text an image stands for: its kind and size (base64 length → bytes), never an empty string."""
    if "url" in note or "path" in note:
        return f"[image: {note.get('url') or note['path']}]"
    size = int(note.get("base64Chars") or 0) * 3 // 4
    return f"[image: {note.get('media_type') or 'unknown type'}, {size:,} bytes]"


def compact_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


@dataclass(slots=True)
class Conversation:
    """One request's message list (plus responses that followed it), as found in the input."""

    line: int | None
    header: dict[str, Any]
    entries: list[tuple[int | None, str | None, Any]] = field(default_factory=list)


def read_items(text: str, out: Collector) -> list[tuple[int | None, Any]]:
    """The top-level items of a JSON document, a JSON array or JSONL; unreadable ones become problems."""
    stripped = text.lstrip()
    if stripped.startswith("["):
        lines = iter_json_array(text)
    else:
        value, error, _ = load_json_document(text)
        if error is None:
            return [(None, value)]
        lines = iter_jsonl(text)
    items: list[tuple[int | None, Any]] = []
    for number, value, err in lines:
        if err:
            out.problem(number, err)
        else:
            items.append((number, value))
    return items


def group_conversations(
    items: list[tuple[int | None, Any]], out: Collector, response_message: Any
) -> list[Conversation]:
    """Requests (`{messages: [...]}`) open conversations; loose messages and responses join the latest. A
    request logged with its `response` (a provider response) ends with the response's message. A list of
    messages among the items is a conversation of its own.

    `response_message(item)` returns the message a provider response carries, or None.
    """
    conversations: list[Conversation] = []
    for line, item in items:
        if isinstance(item, list) and _messages_list(item):
            conversation = Conversation(line, {})  # a list of messages on its own (AutoCodeRover's `[[...]]`)
            conversation.entries = [(line, f"[{i}]", m) for i, m in enumerate(item)]
            conversations.append(conversation)
            continue
        if not isinstance(item, dict):
            out.problem(line, f"expected a JSON object, found {type(item).__name__}")
            continue
        lists = [key for key in CONVERSATION_KEYS if isinstance(item.get(key), list)]
        if "rejected" in lists and ("messages" not in lists or not _messages_list(item["rejected"])):
            lists.remove("rejected")  # a `rejected` list is a conversation only beside `messages`
        if lists:  # a request, or a preference pair: the chosen, then the rejected conversation
            header = {k: v for k, v in item.items() if k not in CONVERSATION_KEYS}
            reply = response_message(item["response"]) if isinstance(item.get("response"), dict) else None
            if reply is not None:
                del header["response"]
            for key in lists:
                conv = Conversation(line, {**header, **PREFERENCE.get(key, {})})
                conv.entries = [(line, f"{key}[{i}]", m) for i, m in enumerate(item[key])]
                if reply is not None:  # a logged call: the request and the provider's response (litellm)
                    conv.entries.append((line, "response", reply))
                conversations.append(conv)
            continue
        message = response_message(item) or (item if "role" in item else None)
        if message is None:
            out.problem(line, "neither a message (no 'role') nor a request (no 'messages' list)")
            continue
        if not conversations:
            conversations.append(Conversation(line, {}))
        conversations[-1].entries.append((line, None, message))
    return conversations


def read_document(text: str, out: Collector, pick: Callable[[Any], T | None], expected: str) -> T | None:
    """`pick` of the text's one JSON document, or None after naming the problem: where the JSON breaks, or
    what was `expected` when `pick` finds nothing in it."""
    doc, error, line = load_json_document(text)
    picked = pick(doc) if error is None else None
    if picked is None:
        out.problem(line, error or f"expected {expected}")
    return picked


def pick_conversation(conversations: Sequence[T], index: int, path: str) -> T | None:
    if not conversations:
        return None
    if not -len(conversations) <= index < len(conversations):
        raise ValueError(
            f"conversation {index} is out of range: {path} holds {len(conversations)} conversation(s)"
        )
    return conversations[index]


def locate_lines(text: str, conversation: Conversation) -> None:
    """Give the messages of a whole-document request the lines they start on, when they can be found.

    Only a `"messages": [` whose elements decode to exactly the request's messages is trusted.
    """
    if conversation.line is not None:
        return
    match = MESSAGES_KEY.search(text)
    if match is None:
        return
    found = [(line, value) for line, value, error in iter_json_array(text, match.end() - 1) if error is None]
    if [value for _, value in found] == [message for _, _, message in conversation.entries]:
        conversation.entries = [
            (line, label, m) for (line, _), (_, label, m) in zip(found, conversation.entries, strict=True)
        ]


def import_conversations(
    text: str,
    path: str,
    conversation: int,
    *,
    fmt: str,
    response_message: Callable[[dict[str, Any]], dict[str, Any] | None],
    convert: Callable[[Collector, Conversation], None],
    header_keys: tuple[str, ...],
) -> ImportResult:
    """The frame both API-payload importers share: read items, group them into conversations, convert the
    chosen one, and keep a few header fields of its request."""
    out = Collector(path)
    conversations = group_conversations(read_items(text, out), out, response_message)
    chosen = pick_conversation(conversations, conversation, path)
    session: dict[str, Any] = {}
    if chosen is not None:
        locate_lines(text, chosen)
        convert(out, chosen)
        session = {k: chosen.header[k] for k in header_keys if k in chosen.header}
        if chosen.line is not None:
            session["line"] = chosen.line
    return out.result(fmt, session=session, conversations=len(conversations))
