"""A transcript whose format an importer claims, but one of whose values has a type that format never writes
(a `content` that is a number, an id that is a list): the importer stops at it with a TypeError or the like.

What is wrong costs only itself: in a JSON Lines transcript the line the importer stops at is left out as a
problem naming its line, and the rest read again. That line is the one the importer was handed last
(`READING_LINE`: one read checks it, the next stopping further on), else it is found by reading ever
shorter starts of the file (an importer reads its lines in order, so the shortest start it stops on ends
with that line). A transcript that is one JSON document has no line to leave out: it is refused in one line
naming the format.
"""

from __future__ import annotations

import json
from collections.abc import Callable

from engine.importers._common import ImportResult, Problem
from engine.importers._json import READING_LINE

# what an importer raises on a value of a type its format does not have
READ_ERRORS = (KeyError, TypeError, AttributeError, IndexError)
MAX_BAD_LINES = 20  # past this, the file is not this format's (or not worth reading): one error instead

Read = Callable[[str], ImportResult]


def what_stopped(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return f"{type(error).__name__}: {text[:200]}"


def read_around_bad_lines(read: Read, text: str, name: str, fmt: str, error: BaseException) -> ImportResult:
    """`read(text)`, which raised `error`, again without the lines it stops at, each named as a problem;
    a ValueError naming the format when the text is not JSON Lines or holds too many such lines."""
    lines = text.split("\n")
    if not _json_lines(lines):
        document = text.lstrip().startswith(("{", "["))
        what = "the file is one document" if document else "the file is not JSON Lines"
        raise ValueError(refusal(name, fmt, error, f"{what}: nothing was read")) from None
    left_out: list[tuple[int, BaseException]] = []
    stopped_at = READING_LINE.get()
    while len(left_out) < MAX_BAD_LINES:
        culprit = _line_read_last(lines, stopped_at, left_out)
        guessed = culprit is not None
        if culprit is None:
            culprit = _first_failing_line(read, lines)
            if culprit is None:  # stops only on the whole text: no line of its own to leave out
                break
        written, lines[culprit] = lines[culprit], ""  # blank, so every other line keeps its number
        READING_LINE.set(None)
        try:
            result = read("\n".join(lines))
        except READ_ERRORS as again:
            stopped_at = READING_LINE.get()
            if guessed and (stopped_at is None or stopped_at <= culprit + 1):
                lines[culprit], stopped_at = written, None  # it stopped there again: not that line's fault
                continue
            left_out.append((culprit + 1, error))
            error = again
            continue
        left_out.append((culprit + 1, error))
        for line, stopped in left_out:
            reason = f"a value of a type the {fmt} format does not have ({what_stopped(stopped)}); left out"
            result.problems.append(Problem(name, line, reason))
        result.problems.sort(key=lambda problem: problem.line or 0)
        return result
    raise ValueError(refusal(name, fmt, error, "nothing was read")) from None


def _line_read_last(
    lines: list[str], stopped_at: int | None, left_out: list[tuple[int, BaseException]]
) -> int | None:
    """The index of the line the importer was reading when it stopped (an importer stops on the line it
    reads: one read to check it instead of a bisection), or None when that is not known or not past the
    line last left out."""
    if stopped_at is None or not 1 <= stopped_at <= len(lines) or not lines[stopped_at - 1].strip():
        return None
    if left_out and stopped_at <= left_out[-1][0]:
        return None
    return stopped_at - 1


def _first_failing_line(read: Read, lines: list[str]) -> int | None:
    """The index of the line whose start-of-file the importer first stops on (bisection over the starts:
    an empty start reads, the whole text does not)."""
    good, bad = 0, len(lines)
    while bad - good > 1:
        middle = (good + bad) // 2
        if _reads(read, lines[:middle]):
            good = middle
        else:
            bad = middle
    return bad - 1 if lines[bad - 1].strip() else None


def _reads(read: Read, lines: list[str]) -> bool:
    try:
        read("\n".join(lines))
    except READ_ERRORS:
        return False
    return True


def _json_lines(lines: list[str]) -> bool:
    """Two or more lines, the first non-blank one a whole JSON value: JSON Lines, not a document."""
    filled = [line for line in lines if line.strip()]
    if len(filled) < 2:
        return False
    try:
        json.loads(filled[0])
    except ValueError:
        return False
    return True


def refusal(name: str, fmt: str, error: BaseException, what: str) -> str:
    """One line: the file, the format it was read as, where it stopped, and what came of it."""
    stopped = what_stopped(error)
    return f"{name}: read as {fmt}, a value has a type the format does not have ({stopped}); {what}"
