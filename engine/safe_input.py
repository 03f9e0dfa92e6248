"""Reading untrusted files within bounds: only regular files, bounded size, nesting, numbers and aliases.

Every loader of the engine (sessions, policies, fences) reads through here, so a FIFO, a 10,000-deep
nesting, a 5,000-digit number, `1e400` or a YAML alias bomb becomes one `InputError` line
(`file:line: field: reason`) instead of a hang, a `RecursionError` or a `ValueError` naming nothing.
"""

from __future__ import annotations

import json
import math
import os
import re
import stat
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.errors import EngineError

MAX_DEPTH = 100  # nesting of arrays/objects; real sessions and policies stay under 20
MAX_NUMBER_CHARS = 400  # a JS number has at most 309 integer digits
MAX_FILE_BYTES = 16 * 1024 * 1024  # policy and fence files (sessions are bounded per line instead)
MAX_YAML_NODES = 200_000  # nodes after expanding aliases: a 379-byte alias bomb expands to 10^9
MAX_TRANSCRIPT_BYTES = 2 * 1024**3  # agent transcripts (a long Claude Code one is a few hundred MB)

__all__ = [
    "MAX_DEPTH",
    "MAX_NUMBER_CHARS",
    "MAX_FILE_BYTES",
    "MAX_YAML_NODES",
    "MAX_TRANSCRIPT_BYTES",
    "InputError",
    "LoadProblem",
    "JsonLimitError",
    "YamlDocument",
    "check_depth",
    "decode_json",
    "decode_utf8",
    "decode_utf8_lines",
    "file_kind_problem",
    "load_yaml",
    "make_json_decoder",
    "read_regular_file",
    "read_text_file",
    "shorten",
]


@dataclass(frozen=True, slots=True)
class LoadProblem:
    """One thing wrong with an input file. `line` is 1-based; None for the file as a whole.

    `severity` is "error" (the line or value was not used) or "warning" (used anyway, or ignored with a
    word: an unknown key, a key written twice).
    """

    file: str
    line: int | None
    field: str
    reason: str
    severity: str = "error"

    def __str__(self) -> str:
        where = self.file if self.line is None else f"{self.file}:{self.line}"
        return f"{where}: {self.field}: {self.reason}"


class InputError(EngineError, ValueError):
    """A file that cannot be read as it is; `str()` is one line: `file:line: field: reason`."""

    def __init__(self, file: str, reason: str, *, line: int | None = None, field: str | None = None) -> None:
        self.file, self.reason, self.line, self.field = file, reason, line, field
        where = file if line is None else f"{file}:{line}"
        super().__init__(f"{where}: {field}: {reason}" if field else f"{where}: {reason}")


class JsonLimitError(ValueError):
    """A JSON text over one of the bounds (depth, number size) or with a non-finite number."""


# -- files ----------------------------------------------------------------------------------------

_KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO (named pipe)"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
)


def file_kind_problem(path: Path) -> str | None:
    """Why `path` cannot be read as a file (missing, a FIFO, a directory...), or None. Never opens it."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return f"cannot read: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return f"is {kind}, not a regular file"


def output_kind_problem(path: Path) -> str | None:
    """Why `path` cannot take an output, or None (it does not exist, or is a regular file). An output is
    written whole to a temporary file, then moved over the path: over a device or a FIFO that would put
    a plain file in its place (as root, /dev/null), and writing into one could block."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return None
    except OSError as exc:
        return f"cannot write: {exc.strerror or exc}"
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "is a directory"
    kind = next((name for test, name in _KINDS if test(mode)), "not a regular file")
    return f"is {kind}, not a regular file: an output goes to a new or regular file"


def read_regular_file(path: str | os.PathLike[str], *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most `max_bytes`; anything else raises InputError.

    The kind is checked before opening, and again on the open descriptor (opened non-blocking, so a
    FIFO swapped in between cannot block us).
    """
    path = Path(path)
    problem = file_kind_problem(path)
    if problem is not None:
        raise InputError(str(path), problem)
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except OSError as exc:
        raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise InputError(str(path), "is not a regular file")
        if info.st_size > max_bytes:
            raise InputError(str(path), f"too large: {info.st_size} bytes (limit {max_bytes})")
        try:
            # the size it has, not the limit: read(n) allocates n bytes before it reads (2 GB for a line)
            data = handle.read(info.st_size + 1)
            if len(data) > info.st_size:  # it grew while being read
                data += handle.read(max_bytes + 1 - len(data))
        except OSError as exc:
            raise InputError(str(path), f"cannot read: {exc.strerror or exc}") from None
    if len(data) > max_bytes:
        raise InputError(str(path), f"too large: more than {max_bytes} bytes")
    return data


# what a file that is not UTF-8 text most often is, by its first bytes: said instead of "invalid UTF-8"
_OTHER_KINDS = (
    ((b"\xff\xfe", b"\xfe\xff"), "UTF-16 text (its byte order mark says so); save it as UTF-8"),
    ((b"\x1f\x8b",), "gzip-compressed; unpack it first (gunzip)"),
)


def _other_kind(data: bytes, source: str) -> None:
    for marks, what in _OTHER_KINDS:
        if data.startswith(marks):
            raise InputError(source, f"is {what}", field="encoding")


def decode_utf8(data: bytes, source: str) -> str:
    """Text of UTF-8 bytes (a leading BOM dropped); invalid bytes are reported with their line."""
    _other_kind(data, source)
    try:
        return data.removeprefix(b"\xef\xbb\xbf").decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise InputError(
            source, f"invalid UTF-8 at byte {column} of the line", line=line, field="encoding"
        ) from None


def decode_utf8_lines(data: bytes, source: str = "<text>") -> tuple[str, list[tuple[int, str]]]:
    """Text of UTF-8 bytes (a leading BOM dropped), each invalid byte read as U+FFFD, with (line, reason)
    for each line that held one: a transcript keeps its other lines, and the line says where it was bad.
    UTF-16 or gzip bytes raise InputError: no line of them would read."""
    _other_kind(data, source)
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8"), []
    except UnicodeDecodeError:
        pass
    lines, bad = data.split(b"\n"), []
    for number, line in enumerate(lines, start=1):
        try:
            line.decode("utf-8")
        except UnicodeDecodeError as exc:
            bad.append((number, f"invalid UTF-8 at byte {exc.start + 1} of the line; read as U+FFFD"))
    return data.decode("utf-8", errors="replace"), bad


def read_text_file(path: str | os.PathLike[str], *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of a regular file (see `read_regular_file`); anything else raises InputError."""
    return decode_utf8(read_regular_file(path, max_bytes=max_bytes), str(path))


# -- JSON -----------------------------------------------------------------------------------------


def _parse_int(text: str) -> int | float:
    if len(text) > MAX_NUMBER_CHARS:
        raise JsonLimitError(f"number too large: {len(text)} digits (limit {MAX_NUMBER_CHARS})")
    value = int(text)
    if abs(value) > 2**1023 * 2:  # beyond a JS number (Number.MAX_VALUE ≈ 1.8e308)
        raise JsonLimitError(f"number out of range: {len(text)} digits is beyond a JS number")
    return value


def _parse_float(text: str) -> float:
    if len(text) > MAX_NUMBER_CHARS:
        raise JsonLimitError(f"number too long: {len(text)} characters (limit {MAX_NUMBER_CHARS})")
    value = float(text)
    if not math.isfinite(value):
        raise JsonLimitError(f"number out of range: {text} is beyond a JS number")
    return value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def make_json_decoder(*, check_numbers: bool = True) -> json.JSONDecoder:
    """A decoder that refuses NaN/Infinity; with `check_numbers` also numbers beyond a JS number and
    over-long digit strings. Without it (session lines, where speed counts: the hooks cost a Python call
    per number) an integer over Python's 4,300-digit limit is still refused by `decode_json`, and the
    session loader checks the one number it reads, the timestamp."""
    if not check_numbers:
        return json.JSONDecoder(parse_constant=_reject_constant)
    return json.JSONDecoder(parse_constant=_reject_constant, parse_int=_parse_int, parse_float=_parse_float)


_DECODER = make_json_decoder()


def check_depth(value: Any, limit: int = MAX_DEPTH) -> None:
    """Raise JsonLimitError when arrays/objects nest deeper than `limit` (walked without recursion)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    seen: set[int] = set()
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            children: Any = item.values()
        elif isinstance(item, list):
            children = item
        else:
            continue
        if depth > limit:
            raise JsonLimitError(f"nested deeper than {limit} levels")
        if id(item) in seen:  # shared (YAML aliases): its depth below was already checked
            continue
        seen.add(id(item))
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict | list))


def where_json_failed(exc: json.JSONDecodeError) -> str:
    """Python's reason and column, as one phrase: "Expecting value at column 1", "Unterminated string
    starting at column 9" (its reason may end with "at" already)."""
    return f"{exc.msg.removesuffix(' at')} at column {exc.colno}"


def decode_json(text: str, decoder: json.JSONDecoder = _DECODER) -> Any:
    """`decoder.decode(text)` within the bounds; errors are ValueError (JSONDecodeError or JsonLimitError)."""
    # a deep text is caught here before the C scanner recurses; the count is cheap next to decoding
    suspicious = text.count("[") + text.count("{") > MAX_DEPTH
    try:
        value = decoder.decode(text)
    except RecursionError:
        raise JsonLimitError(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        if str(exc).startswith("Exceeds the limit"):  # Python's own digit limit on int()
            limit = sys.get_int_max_str_digits()
            raise JsonLimitError(f"number too large: more than {limit} digits") from None
        raise
    if suspicious:
        check_depth(value)
    return value


# -- YAML -----------------------------------------------------------------------------------------


@dataclass(slots=True)
class YamlDocument:
    """A loaded YAML document, with the line of each mapping key and list item, and the keys written
    twice."""

    data: Any
    key_lines: dict[tuple[Any, ...], int] = field(default_factory=dict)
    duplicates: list[tuple[tuple[Any, ...], int, int]] = field(default_factory=list)  # path, line, first

    def line_of(self, path: tuple[Any, ...]) -> int | None:
        """The line of the deepest key of `path` that the document has."""
        for end in range(len(path), 0, -1):
            line = self.key_lines.get(tuple(path[:end]))
            if line is not None:
                return line
        return None


class _BoundedLoader(yaml.SafeLoader):
    """SafeLoader that bounds nesting and the size of the document after alias expansion."""

    def __init__(self, text: str) -> None:
        super().__init__(text)
        self.depth = 0
        self.sizes: dict[int, int] = {}
        self.aliased = False  # an alias was read: a document over the bound is then an alias bomb

    def compose_node(self, parent: Any, index: Any) -> Any:
        if self.check_event(yaml.AliasEvent):
            self.aliased = True
        self.depth += 1
        if self.depth > MAX_DEPTH:
            mark = self.peek_event().start_mark
            raise _YamlLimit(f"nested deeper than {MAX_DEPTH} levels", mark.line + 1)
        try:
            node = super().compose_node(parent, index)
        finally:
            self.depth -= 1
        size = self.sizes.get(id(node))
        if size is None:
            size = 1 + sum(self.sizes.get(id(child), 1) for child in _children(node))
            self.sizes[id(node)] = size
        if size > MAX_YAML_NODES:
            reason = (
                f"aliases expand to more than {MAX_YAML_NODES} values (an alias bomb?)"
                if self.aliased
                else f"more than {MAX_YAML_NODES:,} values (the limit of a YAML input)"
            )
            raise _YamlLimit(reason, node.start_mark.line + 1)
        return node

    def construct_yaml_int(self, node: Any) -> Any:
        """An integer as YAML 1.2 reads it: `020000` is 20000 (not octal), `0o17` and `0x1f` by their
        prefix; the digits may be grouped with `_`."""
        text = str(node.value).replace("_", "")
        if len(text) > MAX_NUMBER_CHARS:
            raise _YamlLimit(
                f"number too large: {len(text)} digits (limit {MAX_NUMBER_CHARS})", node.start_mark.line + 1
            )
        sign, digits = (-1, text[1:]) if text.startswith("-") else (1, text.removeprefix("+"))
        try:
            if digits[:2] in ("0x", "0o"):
                return sign * int(digits[2:], 16 if digits[1] == "x" else 8)
            return sign * int(digits)
        except ValueError:  # `!!int x`: the tag forced what is not an integer
            raise _not_a(node, "an integer") from None

    def construct_yaml_bool(self, node: Any) -> Any:
        try:
            return super().construct_yaml_bool(node)
        except KeyError:  # `!!bool maybe`
            raise _not_a(node, "true or false") from None

    def construct_yaml_float(self, node: Any) -> Any:
        length = len(str(node.value))
        if length > MAX_NUMBER_CHARS:  # the bound an integer has (`0.777…` of 5,000 digits)
            reason = f"number too long: {length} characters (limit {MAX_NUMBER_CHARS})"
            raise _YamlLimit(reason, node.start_mark.line + 1)
        try:
            value = super().construct_yaml_float(node)
        except (ValueError, IndexError):  # `!!float x`, `!!float ""`
            raise _not_a(node, "a number") from None
        if not math.isfinite(value):
            raise _YamlLimit(
                f"number out of range: {shorten(node.value)} is not a finite number", node.start_mark.line + 1
            )
        return value

    def construct_as_written(self, node: Any) -> str:
        """A date or a binary value as the text it was written as: what JSON would have (no Python object
        reaches a message: `datetime.date(2001, 12, 14) is not an integer` said nothing to a user)."""
        return str(node.value)


# Numbers as YAML 1.2 (and JSON, and a TypeScript host's YAML reader) read them, not YAML 1.1's: no base-60
# (`1:23:20`, text here), no leading-zero octal, and `5e-1` is a float
_INT, _FLOAT = "tag:yaml.org,2002:int", "tag:yaml.org,2002:float"
_BoundedLoader.yaml_implicit_resolvers = {
    first: [(tag, pattern) for tag, pattern in resolvers if tag not in (_INT, _FLOAT)]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}
_BoundedLoader.add_implicit_resolver(
    _INT,
    re.compile(r"^(?:[-+]?[0-9][0-9_]*|0o[0-7][0-7_]*|0x[0-9a-fA-F][0-9a-fA-F_]*)$"),
    list("-+0123456789"),
)
_BoundedLoader.add_implicit_resolver(
    _FLOAT,
    re.compile(
        r"^(?:[-+]?(?:\.[0-9][0-9_]*|[0-9][0-9_]*(?:\.[0-9_]*)?)(?:[eE][-+]?[0-9]+)?"
        r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
    ),
    list("-+.0123456789"),
)
_BoundedLoader.add_constructor(_INT, _BoundedLoader.construct_yaml_int)
_BoundedLoader.add_constructor("tag:yaml.org,2002:bool", _BoundedLoader.construct_yaml_bool)
_BoundedLoader.add_constructor("tag:yaml.org,2002:float", _BoundedLoader.construct_yaml_float)
_BoundedLoader.add_constructor("tag:yaml.org,2002:timestamp", _BoundedLoader.construct_as_written)
_BoundedLoader.add_constructor("tag:yaml.org,2002:binary", _BoundedLoader.construct_as_written)


class _YamlLimit(Exception):
    def __init__(self, reason: str, line: int) -> None:
        super().__init__(reason)
        self.reason, self.line = reason, line


def _not_a(node: Any, kind: str) -> _YamlLimit:
    """A scalar whose tag (`!!int`, `!!bool`, `!!float`) says it is what its text is not."""
    return _YamlLimit(
        f"bad YAML: !!{node.tag.rsplit(':', 1)[-1]} {shorten(node.value)} is not {kind}",
        node.start_mark.line + 1,
    )


def _children(node: Any) -> Iterator[Any]:
    if isinstance(node, yaml.SequenceNode):
        yield from node.value
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield key
            yield value


def _key_lines(root: Any, document: YamlDocument) -> None:
    """Record each scalar key's line by path, and keys written twice in one mapping (no recursion)."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(root, ())]
    seen: set[int] = set()
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, yaml.SequenceNode):
            for i, child in enumerate(node.value):
                document.key_lines.setdefault((*path, i), child.start_mark.line + 1)
                stack.append((child, (*path, i)))
        elif isinstance(node, yaml.MappingNode):
            first: dict[str, int] = {}
            for key, value in node.value:
                if not isinstance(key, yaml.ScalarNode):
                    continue
                line = key.start_mark.line + 1
                if key.value in first:
                    document.duplicates.append(((*path, key.value), line, first[key.value]))
                else:
                    first[key.value] = line
                    document.key_lines[(*path, key.value)] = line
                stack.append((value, (*path, key.value)))


def load_yaml(text: str, source: str) -> YamlDocument:
    """`yaml.safe_load` within the bounds; problems raise InputError with the line."""
    loader = None
    try:
        loader = _BoundedLoader(text)  # the reader already refuses control characters here
        node = loader.get_single_node()
        document = YamlDocument(None)
        if node is not None:
            _key_lines(node, document)
            document.data = loader.construct_document(node)
        return document
    except _YamlLimit as exc:
        raise InputError(source, exc.reason, line=exc.line) from None
    except RecursionError:
        raise InputError(source, f"nested deeper than {MAX_DEPTH} levels") from None
    except yaml.constructor.ConstructorError as err:
        line = err.problem_mark.line + 1 if err.problem_mark else None
        if err.problem == "found unhashable key":  # `? [a, b]` or `[a]: 1`: no tag involved
            reason = "bad YAML: a key is a list or a mapping; a key must be plain"
            raise InputError(source, reason, line=line) from None
        problem = f"{err.problem}; only plain YAML (mappings, lists, strings, numbers, booleans) is allowed"
        raise InputError(source, f"unsafe or unknown YAML tag: {problem}", line=line) from None
    except yaml.MarkedYAMLError as err:
        line = err.problem_mark.line + 1 if err.problem_mark else None
        problem = " ".join(part for part in (err.context, err.problem) if part)
        raise InputError(source, f"bad YAML: {problem}", line=line) from None
    except yaml.reader.ReaderError as err:
        line = text.count("\n", 0, err.position) + 1
        raise InputError(source, f"bad YAML: character {err.character!r} is not allowed", line=line) from None
    except yaml.YAMLError as err:
        raise InputError(source, "bad YAML: " + " ".join(str(err).split())[:200]) from None
    except ValueError as err:  # int() of a number over Python's digit limit, in a tagged scalar
        raise InputError(source, f"bad number: {shorten(str(err), 120)}") from None
    finally:
        if loader is not None:
            loader.dispose()


# -- messages -------------------------------------------------------------------------------------


def shorten(value: Any, limit: int = 60) -> str:
    """A repr of `value` (true, false and null spelled as in JSON and YAML) of at most `limit` characters,
    built without the full repr (no alias blow-up)."""
    parts: list[str] = []
    budget = [limit + 1]

    def emit(text: str) -> bool:
        parts.append(text[: budget[0]])
        budget[0] -= len(text)
        return budget[0] > 0

    _emit_repr(value, emit, 0)
    text = "".join(parts)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_NO_KEY = object()


def _emit_repr(value: Any, emit: Callable[[str], bool], depth: int) -> bool:
    if isinstance(value, str):
        return emit(repr(value[:200]) if len(value) > 200 else repr(value))
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 10**40:
        return emit(f"<{len(str(abs(value))) if abs(value) < 10**4000 else 'many'}-digit number>")
    if value is None or isinstance(value, bool):  # spelled as the YAML or JSON the user wrote
        return emit("null" if value is None else str(value).lower())
    if not isinstance(value, dict | list | tuple):
        return emit(repr(value))
    if depth > 20:
        return emit("…")
    opening, closing = (
        ("{", "}") if isinstance(value, dict) else (("[", "]") if isinstance(value, list) else ("(", ")"))
    )
    if not emit(opening):
        return False
    items = value.items() if isinstance(value, dict) else ((_NO_KEY, v) for v in value)
    for position, (key, item) in enumerate(items):
        if position and not emit(", "):
            return False
        if key is not _NO_KEY and not (_emit_repr(key, emit, depth + 1) and emit(": ")):
            return False
        if not _emit_repr(item, emit, depth + 1):
            return False
    return emit(closing)
