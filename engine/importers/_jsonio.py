"""Reading JSON and JSONL with the line each value starts on, and problems as one line each."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any


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
        line = text[start:end]
        start = end + 1
        if not line.strip():
            continue
        try:
            yield number, json.loads(line), None
        except json.JSONDecodeError as exc:
            yield number, None, f"invalid JSON ({exc.msg} at column {exc.colno})"


def iter_jsonl_file(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """As `iter_jsonl`, reading a file a line at a time: the whole file is never one string."""
    decode = json.JSONDecoder().decode
    with path.open("rb") as file:
        for number, raw in enumerate(file, 1):
            line = raw.removeprefix(b"\xef\xbb\xbf") if number == 1 else raw
            if not line.strip():
                continue
            try:
                yield number, decode(line.decode("utf-8")), None
            except json.JSONDecodeError as exc:
                yield number, None, f"invalid JSON ({exc.msg} at column {exc.colno})"
            except UnicodeDecodeError as exc:
                yield number, None, f"invalid UTF-8 at byte {exc.start}"


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
            value, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            yield exc.lineno, None, f"invalid JSON ({exc.msg} at column {exc.colno})"
            return
        yield line, value, None
        pos = _skip_space(text, pos)
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
        return json.loads(text), None, None
    except json.JSONDecodeError as exc:
        return None, f"invalid JSON ({exc.msg} at column {exc.colno})", exc.lineno
