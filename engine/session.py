"""Session files: JSONL, an optional header line, then one `AiMessage` a line.

```
{"kind": "linn-session", "version": 1, "title": "...", "modelId": "...", "contextPolicy": {...}}
{"id": "m1", "role": "system", "type": "system_prompt", "content": "...", "timestamp": 0}
...
```

Loading never crashes on bad input and is never silent about it: each bad line becomes a `LoadProblem`
(`file:line: field: reason`). An `error` skips the line, a `warning` loads it anyway (duplicate ids, for
one, are legitimate in linnkit histories and the engine must see them). The good lines still load;
`strict=True` raises `SessionLoadError` on the first error instead. A missing, unreadable or directory path
raises `SessionLoadError`, since there is no session to return.

Saving is atomic (a temporary file in the same directory, then `os.replace`) and refuses to overwrite
the session's own source file or any existing file unless `overwrite=True`. A loaded line and its saved
line are the same JSON: no field is lost, renamed or re-typed.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from engine.messages import AiMessage
from engine.safe_input import (
    JsonLimitError,
    LoadProblem,
    decode_json,
    file_kind_problem,
    output_kind_problem,
    where_json_failed,
)
from engine.session_lines import (
    DECODER,
    SESSION_VERSION,
    check_header,
    header_key_warnings,
    json_type,
    message_errors,
    message_of,
    message_warnings,
    plain_object,
    plainly_valid,
    raw_lines,
    repeated_keys,
    share_names,
)

__all__ = [
    "DEFAULT_MAX_LINE_BYTES",
    "HEADER_KIND",
    "REPEATED",
    "SESSION_VERSION",
    "LoadProblem",
    "Session",
    "SessionHeader",
    "SessionLoadError",
    "SessionReader",
    "SessionSaveError",
    "load_session",
    "parse_session_text",
    "dump_session_text",
    "save_session",
]

HEADER_KIND = "linn-session"
REPEATED = "written twice; the last value is used"
DEFAULT_MAX_LINE_BYTES = 20 * 1024 * 1024
ERROR = "error"  # the line was skipped
WARNING = "warning"  # the line was loaded
_HEADER_KEYS = ("kind", "version", "title", "lesson", "modelId", "maxSteps", "contextPolicy", "fences")


class SessionLoadError(Exception):
    """A session could not be loaded (or, with `strict=True`, had a bad line)."""

    def __init__(self, problem: LoadProblem) -> None:
        super().__init__(str(problem))
        self.problem = problem


class SessionSaveError(Exception):
    """A session was not saved; the target is untouched."""


@dataclass(frozen=True, slots=True)
class SessionHeader:
    """The header line as written: `kind`, `version` and every other key, known or not, in order."""

    data: dict[str, Any]
    # keys written twice in the line (dotted paths; JSON keeps the last value): `contextPolicy.` ones are the
    # policy layer's warnings, said with it (`playground.app.inputs`), the others the header's
    repeated: tuple[str, ...] = ()

    @classmethod
    def create(cls, **fields: Any) -> SessionHeader:
        """A new header; keys as in the file (`title`, `lesson`, `modelId`, `maxSteps`, ...)."""
        return cls.from_dict({k: v for k, v in fields.items() if v is not None})

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> SessionHeader:
        return cls({"kind": HEADER_KIND, "version": SESSION_VERSION, **data})

    def to_dict(self) -> dict[str, Any]:
        return dict(self.data)

    def _typed(self, key: str, kind: type | tuple[type, ...]) -> Any:
        value = self.data.get(key)
        return value if isinstance(value, kind) and not isinstance(value, bool) else None

    @property
    def version(self) -> int | None:
        return self._typed("version", int)

    @property
    def title(self) -> str | None:
        return self._typed("title", str)

    @property
    def lesson(self) -> str | None:
        return self._typed("lesson", str)

    @property
    def model_id(self) -> str | None:
        return self._typed("modelId", str)

    @property
    def max_steps(self) -> int | None:
        steps = self._typed("maxSteps", int)
        return steps if steps is not None and steps >= 1 else None

    @property
    def context_policy(self) -> dict[str, Any] | None:
        return self._typed("contextPolicy", dict)

    @property
    def fences(self) -> list[Any] | None:
        return self._typed("fences", list)

    @property
    def extra(self) -> dict[str, Any]:
        """Header keys this module does not know, kept for the round trip."""
        return {k: v for k, v in self.data.items() if k not in _HEADER_KEYS}


@dataclass(slots=True)
class Session:
    """A loaded session: header, messages, and what was wrong with the file."""

    path: Path | None
    header: SessionHeader | None
    messages: list[AiMessage]
    problems: list[LoadProblem] = field(default_factory=list)
    message_lines: list[int] = field(default_factory=list)  # file line of each message

    @property
    def errors(self) -> list[LoadProblem]:
        return [p for p in self.problems if p.severity == ERROR]

    @property
    def warnings(self) -> list[LoadProblem]:
        return [p for p in self.problems if p.severity == WARNING]

    @property
    def skipped_lines(self) -> list[int]:
        """File lines that did not load (a problem about the whole file, like "is empty", is not one)."""
        return sorted({p.line for p in self.problems if p.severity == ERROR and p.line is not None})


# -- parsing --------------------------------------------------------------------------------------


class _Parser:
    """Turns decoded lines into a Session, collecting problems."""

    def __init__(self, source: str, strict: bool) -> None:
        self.source = source
        self.strict = strict
        self.header: SessionHeader | None = None
        self.messages: list[AiMessage] = []
        self.lines: list[int] = []
        self.problems: list[LoadProblem] = []
        self.first_line_of: dict[str, int] = {}
        self.seen_content = False

    def problem(self, line: int | None, field_name: str, reason: str, severity: str = ERROR) -> None:
        found = LoadProblem(self.source, line, field_name, reason, severity)
        if self.strict and severity == ERROR:
            raise SessionLoadError(found)
        self.problems.append(found)

    def feed(self, line: int, text: str) -> None:
        if not text or text.isspace():  # blank (as `not text.strip()`, without copying the line)
            return
        first = not self.seen_content
        self.seen_content = True
        data = plain_object(text)
        if data is None:
            data = self._decoded(line, text)
            if data is None:
                return
        if data.get("kind") == HEADER_KIND and "role" not in data:
            self._header(line, data, first, text)
        else:
            self._message(line, data)

    def _decoded(self, line: int, text: str) -> dict[str, Any] | None:
        """The line's object read by `decode_json`, or None with its problem named."""
        try:
            data = decode_json(text, DECODER)
        except JsonLimitError as exc:
            self.problem(line, "json", str(exc))
            return None
        except ValueError as exc:
            detail = where_json_failed(exc) if isinstance(exc, json.JSONDecodeError) else str(exc)
            self.problem(line, "json", f"not valid JSON: {detail}")
            return None
        if not isinstance(data, dict):
            self.problem(line, "line", f"expected a JSON object, got {json_type(data)}")
            return None
        return data

    def _header(self, line: int, data: dict[str, Any], first: bool, text: str) -> None:
        if not first:
            self.problem(line, "kind", "a linn-session header is allowed only on the first line; skipped")
            return
        self.header = SessionHeader(data, tuple(repeated_keys(text)))
        for field_name, reason in [*check_header(data), *header_key_warnings(data)]:
            self.problem(line, field_name, reason, WARNING)
        for field_name in self.header.repeated:
            if not field_name.startswith("contextPolicy."):
                self.problem(line, field_name, REPEATED, WARNING)

    def _message(self, line: int, data: dict[str, Any]) -> None:
        plain = plainly_valid(data)
        if not plain:
            errors = message_errors(data)
            for field_name, reason in errors:
                self.problem(line, field_name, reason)
            if errors:
                return
            for field_name, reason in message_warnings(data):
                self.problem(line, field_name, reason, WARNING)
        message_id = data["id"]
        first = self.first_line_of.setdefault(message_id, line)
        if first != line:
            shown = json.dumps(message_id[:80])  # escapes control characters
            self.problem(line, "id", f"duplicate id {shown} (first on line {first}); kept", WARNING)
        if plain:
            share_names(data)
        self.messages.append(AiMessage.from_dict(data) if plain else message_of(data))
        self.lines.append(line)

    def finish(self, path: Path | None) -> Session:
        if not self.seen_content and not self.problems:
            self.problem(None, "file", "is empty: no header and no messages")
        return Session(path, self.header, self.messages, self.problems, self.lines)


def _too_long(parser: _Parser, line: int, size: int, limit: int) -> None:
    parser.problem(line, "line", f"too long: {size} bytes (limit {limit}); skipped without parsing")


def parse_session_text(
    text: str,
    source_name: str = "<text>",
    *,
    strict: bool = False,
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
) -> Session:
    """A Session from JSONL text (lines split on "\\n" only: JSON strings may hold U+2028)."""
    parser = _Parser(source_name, strict)
    for number, line in enumerate(text.removeprefix("\ufeff").split("\n"), start=1):
        size = len(line) if line.isascii() else len(line.encode("utf-8", "surrogatepass"))
        if size > max_line_bytes:
            _too_long(parser, number, size, max_line_bytes)
        else:
            parser.feed(number, line.removesuffix("\r"))
    return parser.finish(None)


def _open_problem(path: Path) -> LoadProblem | None:
    problem = file_kind_problem(path)  # never opens: a FIFO would block
    return None if problem is None else LoadProblem(str(path), None, "file", problem)


def load_session(
    path: str | os.PathLike[str], *, strict: bool = False, max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
) -> Session:
    """Load a session file; see the module docstring for what happens to bad input."""
    reader = SessionReader(path, strict=strict, max_line_bytes=max_line_bytes)
    reader.read_all()
    return reader.session


class SessionReader:
    """A session file read a line at a time, as the caller asks: a replay builds its first steps while the
    rest still loads. `session` is the session so far (its header once the first line is read; its message
    and problem lists grow as lines are read, and are the final ones at the end). Opening raises
    `SessionLoadError` as `load_session` does, and so does a read that fails."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        strict: bool = False,
        max_line_bytes: int = DEFAULT_MAX_LINE_BYTES,
    ) -> None:
        self.path = Path(path)
        opening = _open_problem(self.path)
        if opening is not None:
            raise SessionLoadError(opening)
        self._parser = _Parser(str(self.path), strict)
        self._limit = max_line_bytes
        self._handle = self._open()
        self._lines = raw_lines(self._handle, max_line_bytes)
        self.done = False

    @property
    def session(self) -> Session:
        parser = self._parser
        return Session(self.path, parser.header, parser.messages, parser.problems, parser.lines)

    def read_line(self) -> bool:
        """Read the next line (named in `session.problems` if bad); False once the file is read."""
        if self.done:
            return False
        try:
            line = next(self._lines, None)
            if line is not None:
                self._feed(*line)
                return True
        except OSError as exc:
            self.close()
            raise self._unreadable(exc) from exc
        except BaseException:  # strict mode's first error, or Ctrl-C
            self.close()
            raise
        self.close()
        self._parser.finish(self.path)  # an empty file is a problem of the whole file
        return False

    def read_all(self) -> None:
        """Read the rest of the file."""
        if self.done:
            return
        try:
            for line in self._lines:
                self._feed(*line)
        except OSError as exc:
            raise self._unreadable(exc) from exc
        finally:
            self.close()
        self._parser.finish(self.path)

    def messages(self) -> Iterator[AiMessage]:
        """Every message in order, those read already first, then reading on as they are asked for: each is in
        `session.messages` before it is handed out."""
        loaded = self._parser.messages
        index = 0
        while True:
            while index < len(loaded):
                index += 1
                yield loaded[index - 1]
            if not self.read_line():
                return

    def _open(self) -> BinaryIO:
        try:
            return open(os.open(self.path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)), "rb")
        except OSError as exc:
            raise self._unreadable(exc) from exc

    def close(self) -> None:
        """Stop reading: the file is closed and `session` stays as read so far."""
        self.done = True
        self._handle.close()

    def _unreadable(self, exc: OSError) -> SessionLoadError:
        return SessionLoadError(LoadProblem(str(self.path), None, "file", f"cannot read: {exc.strerror}"))

    def _feed(self, number: int, offset: int, body: bytes | None, size: int) -> None:
        parser = self._parser
        if body is None:
            _too_long(parser, number, size, self._limit)
            return
        if number == 1:
            body = body.removeprefix(b"\xef\xbb\xbf")
        try:
            text = body.decode("utf-8")
        except UnicodeDecodeError as exc:
            where = f"byte {exc.start} of the line (file offset {offset + exc.start})"
            parser.problem(number, "encoding", f"invalid UTF-8 at {where}")
            return
        parser.feed(number, text.removesuffix("\r"))


# -- saving ---------------------------------------------------------------------------------------


def _json_line(value: dict[str, Any]) -> str:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate cannot be UTF-8: keep it as a \\u escape, which round-trips
        text = json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text + "\n"


def dump_session_text(
    messages: Sequence[AiMessage], header: SessionHeader | Mapping[str, Any] | None = None
) -> str:
    """The JSONL text of a session: the header line (if any), then one line per message."""
    if header is not None and not isinstance(header, SessionHeader):
        header = SessionHeader.from_dict(header)
    lines = [] if header is None else [_json_line(header.to_dict())]
    for message in messages:
        try:
            lines.append(_json_line(message.to_dict()))
        except (TypeError, ValueError) as exc:
            raise SessionSaveError(f"message {message.id!r} cannot be written as JSON: {exc}") from None
    return "".join(lines)


def _same_file(a: Path, b: Path) -> bool:
    if a.exists() and b.exists():
        return os.path.samefile(a, b)
    return a.resolve() == b.resolve()


def save_session(
    session_or_messages: Session | Sequence[AiMessage],
    path: str | os.PathLike[str],
    *,
    header: SessionHeader | Mapping[str, Any] | None = None,
    source_path: str | os.PathLike[str] | None = None,
    overwrite: bool = False,
) -> Path:
    """Write a session atomically and return the path written.

    A `Session` brings its own header and source path unless they are given. Without `overwrite=True`
    this refuses the session's source file and any existing file.
    """
    messages: Sequence[AiMessage] = session_or_messages
    if isinstance(session_or_messages, Session):
        messages = session_or_messages.messages
        header = header if header is not None else session_or_messages.header
        source_path = source_path if source_path is not None else session_or_messages.path
    target = Path(path)
    if target.is_symlink():
        target = target.resolve()
    problem = output_kind_problem(target)
    if problem is not None:
        raise SessionSaveError(f"{target}: {problem}")
    if not overwrite:
        if source_path is not None and _same_file(target, Path(source_path)):
            raise SessionSaveError(
                f"{target}: refusing to overwrite the session's source file; pass overwrite=True"
            )
        if target.exists():
            raise SessionSaveError(f"{target}: already exists; pass overwrite=True to replace it")
    content = dump_session_text(messages, header).encode("utf-8")
    _write_atomically(target, content)
    return target


def _write_atomically(target: Path, content: bytes) -> None:
    temp = target.with_name(f".{target.name}.{secrets.token_hex(4)}.tmp")
    try:
        # os.open applies the umask to 0o666, so a new file gets the usual permissions.
        fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        with os.fdopen(fd, "wb") as handle:
            handle.write(content)
            handle.flush()
            os.fsync(handle.fileno())
        if target.exists():
            os.chmod(temp, target.stat().st_mode & 0o7777)
        os.replace(temp, target)
    except OSError as exc:
        temp.unlink(missing_ok=True)
        raise SessionSaveError(f"{target}: cannot write: {exc.strerror or exc}") from exc
