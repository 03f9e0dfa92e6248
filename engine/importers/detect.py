"""Which format a file or text is in: a linn session, or the name of the importer that recognises it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from engine.importers._common import Names, read_transcript
from engine.importers.registry import SAMPLE_ITEMS, Sniff, detect, unrecognised
from engine.messages import ROLE_TYPES

CHAT_ROLES = Names({"system", "developer", "user", "assistant", "tool", "function"})
CLAUDE_ONLY_TYPES = Names({"summary", "progress", "file-history-snapshot", "queue-operation"})
ANTHROPIC_BLOCKS = Names({"tool_use", "tool_result", "thinking", "redacted_thinking"})
OPENAI_ROLES = Names({"system", "developer", "tool", "function"})
OPENAI_PARTS = Names({"image_url", "input_audio", "input_text", "input_image", "refusal", "file"})
CHAT_BODY_KEYS = ("content", "tool_calls", "function_call")
MAX_PATH_CHARS = 4096
LINN_SESSION_KIND = "linn-session"  # the header line of an engine.session file


def read_source(path_or_text: str | Path) -> tuple[str, str]:
    """(text, name): a Path, or a string naming an existing file, is read; any other string is the text."""
    if isinstance(path_or_text, Path):
        return read_transcript(path_or_text)[0], str(path_or_text)
    looks_like_path = (
        len(path_or_text) < MAX_PATH_CHARS
        and "\n" not in path_or_text
        and not path_or_text.lstrip().startswith(("{", "["))
    )
    if looks_like_path and Path(path_or_text).is_file():
        return read_transcript(Path(path_or_text))[0], path_or_text
    return path_or_text, "<text>"


def detect_format(path_or_text: str | Path) -> str:
    """The format of a file (path) or of the text itself; raises UnknownFormatError when none fits."""
    text, name = read_source(path_or_text)
    fmt = detect_text(text, name)
    if fmt is None:
        raise unrecognised(name)
    return fmt


def detect_text(text: str, name: str = "<text>") -> str | None:
    """'linn-session', the name of the importer that recognises the text, or None."""
    return detect_sniff(Sniff.of(text, name))


def detect_sniff(sniff: Sniff) -> str | None:
    """As `detect_text`, for text already sniffed."""
    if is_linn_session(sniff):
        return LINN_SESSION_KIND
    importer = detect(sniff)
    return importer.name if importer else None


def is_linn_session(sniff: Sniff) -> bool:
    if any(s.get("kind") == LINN_SESSION_KIND for s in sniff.objects()):
        return True
    return any(_is_linn_message(m) for m in _messages(list(sniff.items)))


def detect_claude_code(sniff: Sniff) -> bool:
    doc = sniff.document
    if isinstance(doc, dict) and isinstance(doc.get("loglines"), list):  # a web session's log
        return any(_is_claude_line(s) for s in doc["loglines"][:SAMPLE_ITEMS])
    return any(_is_claude_line(s) for s in sniff.items)


def detect_anthropic(sniff: Sniff) -> bool:
    messages = list(_messages(list(sniff.items)))
    requests = any(_is_anthropic_request(s) for s in sniff.items)
    anthropic = requests or any(_has_anthropic_blocks(m) for m in messages)
    return anthropic and not any(_is_openai_message(m) for m in messages)


def detect_openai(sniff: Sniff) -> bool:
    """Chat messages: a chat role AND the message's own text or calls (a `role` beside a nested `message`,
    as Cursor and OpenCode write, is not a chat message)."""
    return any(_is_chat_message(m) for m in _messages(list(sniff.items)))


def _is_chat_message(message: dict[str, Any]) -> bool:
    if _is_linn_message(message):  # a linn session's own messages: not a transcript to import
        return False
    return message.get("role") in CHAT_ROLES and any(key in message for key in CHAT_BODY_KEYS)


def _messages(samples: list[Any]) -> Iterator[dict[str, Any]]:
    for sample in samples:
        if isinstance(sample, list):  # a message list inside the document's array (AutoCodeRover)
            yield from (m for m in sample[:SAMPLE_ITEMS] if isinstance(m, dict) and "role" in m)
        if not isinstance(sample, dict):
            continue
        inner = sample.get("messages", sample.get("chosen_messages"))
        if isinstance(inner, list):
            yield from (m for m in inner[:SAMPLE_ITEMS] if isinstance(m, dict))
        elif isinstance(sample.get("choices"), list):
            yield from (c["message"] for c in sample["choices"] if isinstance(c, dict) and "message" in c)
        elif "role" in sample:
            yield sample


def _is_claude_line(sample: Any) -> bool:
    if not isinstance(sample, dict):
        return False
    kind, message = sample.get("type"), sample.get("message")
    if "session_id" in sample and "sessionId" not in sample:  # `--output-format stream-json` lines
        return False
    # an Anthropic message inside: Qwen Code's lines look alike but hold Gemini `parts`
    return kind in CLAUDE_ONLY_TYPES or (
        kind in ("user", "assistant") and isinstance(message, dict) and "content" in message
    )


def _is_linn_message(message: dict[str, Any]) -> bool:
    role = message.get("role")
    return "id" in message and isinstance(role, str) and message.get("type") in ROLE_TYPES.get(role, ())


def _is_anthropic_request(sample: Any) -> bool:
    return isinstance(sample, dict) and isinstance(sample.get("messages"), list) and "system" in sample


def _has_anthropic_blocks(message: dict[str, Any]) -> bool:
    content = message.get("content")
    if message.get("type") == "message":
        return True
    if not isinstance(content, list):
        return False
    return any(isinstance(b, dict) and (b.get("type") in ANTHROPIC_BLOCKS or "source" in b) for b in content)


def _is_openai_message(message: dict[str, Any]) -> bool:
    if message.get("role") in OPENAI_ROLES or "tool_calls" in message:
        return True
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(p, dict) and p.get("type") in OPENAI_PARTS for p in content
    )
