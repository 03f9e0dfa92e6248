"""Transcript JSON within `engine.safe_input`'s bounds: JSONL lines, array elements and whole documents,
each unreadable part a (line, reason) instead of an exception (a 10,000-deep nesting, a 5,000-digit number).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from engine.safe_input import (
    MAX_DEPTH,
    JsonLimitError,
    check_depth,
    decode_json,
    where_json_failed,
)

# the line an importer reading JSON Lines was last handed: where it stopped, when it stops on a value
READING_LINE: ContextVar[int | None] = ContextVar("reading_line", default=None)


def iter_jsonl(text: str) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, value, error) for each non-blank line; value is None when error is set.

    Lines end at "\n" only: JSON strings may hold a raw U+2028 or form feed, which `splitlines` would cut.
    Lines are cut one at a time (a 100 MB transcript is not copied into a list of lines first).
    """
    start, number, size = 0, 0, len(text)
    while start <= size:
        end = text.find("\n", start)
        end = size if end < 0 else end
        number += 1
        line = text[start:end].removeprefix("\ufeff")  # a BOM left inside by joining UTF-8 files
        start = end + 1
        if line.strip():
            READING_LINE.set(number)
            yield (number, *_line_value(line))


def iter_jsonl_file(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """As `iter_jsonl`, reading a file a line at a time: the whole file is never one string."""
    with path.open("rb") as file:
        for number, raw in enumerate(file, 1):
            line = raw.removeprefix(b"\xef\xbb\xbf")  # on any line: files joined end to end keep theirs
            if not line.strip():
                continue
            try:
                text = line.decode("utf-8")
            except UnicodeDecodeError as exc:
                yield number, None, f"invalid UTF-8 at byte {exc.start}"
                continue
            READING_LINE.set(number)
            yield (number, *_line_value(text))


def _line_value(line: str) -> tuple[Any, str | None]:
    try:
        return json_loads(line), None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({where_json_failed(exc)})"
    except JsonLimitError as exc:
        return None, f"json: {exc}"


def iter_json_array(text: str, start: int | None = None) -> Iterator[tuple[int, Any, str | None]]:
    """(line number, value, error) for each element of the JSON array at `start` (default: the first).

    Elements are decoded one by one so each keeps the line it starts on. A syntax error ends the walk:
    its line is reported, and nothing after it can be trusted.
    """
    decoder = json.JSONDecoder()
    pos = (text.index("[") if start is None else start) + 1
    line, counted = 1, 0
    while True:
        pos = _skip_space(text, pos)
        if pos < len(text) and text[pos] == "]":
            return
        line += text.count("\n", counted, pos)
        counted = pos
        try:
            value, end = _raw_decode(decoder, text, pos)
        except json.JSONDecodeError as exc:
            yield exc.lineno, None, f"invalid JSON ({where_json_failed(exc)})"
            return
        except JsonLimitError as exc:  # Python gave up inside the element: where it ends is unknown
            yield line, None, f"json: {exc}"
            return
        deep = _depth_error(text, pos, end, value)
        yield (line, None, deep) if deep else (line, value, None)  # too deep but whole: the walk goes on
        pos = _skip_space(text, end)
        if pos < len(text) and text[pos] == ",":
            pos += 1
        elif pos >= len(text) or text[pos] != "]":
            bad_line = line + text.count("\n", counted, pos)
            yield bad_line, None, "invalid JSON (expected ',' or ']' between array elements)"
            return


def _skip_space(text: str, pos: int) -> int:
    while pos < len(text) and text[pos] in " \t\r\n":
        pos += 1
    return pos


def load_json_document(text: str) -> tuple[Any, str | None, int | None]:
    """(value, error, error line) for a whole-document JSON input."""
    try:
        return json_loads(text), None, None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({where_json_failed(exc)})", exc.lineno
    except JsonLimitError as exc:
        return None, f"json: {exc}", None


_PLAIN = json.JSONDecoder()  # transcripts may hold NaN (Python agents write it); only the bounds are added


def json_loads(text: str) -> Any:
    """`json.loads` within `engine.safe_input`'s bounds: a 10,000-deep nesting or a 5,000-digit integer
    raises JsonLimitError (a ValueError) instead of RecursionError or Python's message naming nothing."""
    return decode_json(text, _PLAIN)


def _depth_error(text: str, start: int, end: int, value: Any) -> str | None:
    """The problem of an element of `text[start:end]` nested over the bound, else None."""
    if text.count("[", start, end) + text.count("{", start, end) <= MAX_DEPTH:
        return None
    try:
        check_depth(value)
    except JsonLimitError as exc:
        return f"json: {exc}"
    return None


def _raw_decode(decoder: json.JSONDecoder, text: str, pos: int) -> tuple[Any, int]:
    """`decoder.raw_decode`, a RecursionError or Python's digit limit raised as JsonLimitError."""
    try:
        value, end = decoder.raw_decode(text, pos)
    except RecursionError:
        raise JsonLimitError(f"nested deeper than {MAX_DEPTH} levels") from None
    except ValueError as exc:
        if isinstance(exc, json.JSONDecodeError) or not str(exc).startswith("Exceeds the limit"):
            raise
        raise JsonLimitError(f"number too large: more than {sys.get_int_max_str_digits()} digits") from None
    return value, end
