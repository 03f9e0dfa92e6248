"""Transcripts kept as folders: a folder path → the format that reads it, its parts read safely.

Some agents write a conversation as several files: an OpenHands V1 conversation (`base_state.json` and
`events/event-*.json`), a Cline / Roo Code / Kilo Code task (`api_conversation_history.json` beside
`ui_messages.json`), a GitHub Copilot CLI session (`events.jsonl` beside `workspace.yaml`). Each such format
registers a `FolderFormat` here; `import_folder` picks the one that claims the folder (or the one named).

Walking is bounded and never leaves the folder: no symlink is followed out of the root, a symlinked
folder is never entered (so a symlink loop cannot make a walk endless), at most MAX_PARTS files are
listed and none larger than MAX_PART_BYTES is read. A part that cannot be read becomes one line naming it
(`FolderError` when the import cannot go on without it, a problem on the result when it can).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from engine.importers._common import ImportResult, Problem

MAX_PARTS = 20_000  # event files of one conversation; a folder with more is not a transcript we read
MAX_PART_BYTES = 256 * 1024 * 1024


class FolderError(ValueError):
    """A folder that cannot be imported: one line naming the folder or the part and why."""


@dataclass(frozen=True, slots=True)
class FolderFormat:
    """A format whose transcripts are folders: `claims(root)` looks only at names, `read(root, conversation)`
    imports it."""

    name: str
    claims: Callable[[Path], bool]
    read: Callable[[Path, int | None], ImportResult]


_formats: list[FolderFormat] = []


def register_folder_format(fmt: FolderFormat) -> FolderFormat:
    if any(f.name == fmt.name for f in _formats):
        raise ValueError(f"folder format {fmt.name!r} is registered twice")
    _formats.append(fmt)
    return fmt


def folder_formats() -> list[FolderFormat]:
    return list(_formats)


def folder_format(root: Path) -> FolderFormat | None:
    """The format that claims the folder, or None."""
    return next((f for f in _formats if f.claims(root)), None)


def import_folder(root: Path, fmt: str | None = None, conversation: int | None = None) -> ImportResult:
    """Import a transcript folder; raises FolderError (one line) when no format reads it."""
    if fmt is None:
        chosen = folder_format(root)
        if chosen is None:
            names = ", ".join(f.name for f in _formats)
            raise FolderError(f"{root}: not a transcript folder of a format we read (folders: {names})")
    else:
        chosen = next((f for f in _formats if f.name == fmt), None)
        if chosen is None:
            names = ", ".join(f.name for f in _formats)
            raise FolderError(f"{root}: format {fmt!r} does not read folders (folders: {names})")
    return chosen.read(root, conversation)


def has_part(root: Path, relative: str) -> bool:
    """Whether the part is there (a symlink counts: reading it then says why it is not followed)."""
    return os.path.lexists(root / relative)


def read_part(root: Path, relative: str | Path) -> str:
    """A part's text; FolderError naming it when it is missing, not a regular file inside the root, too big
    or not UTF-8."""
    path = root / relative
    problem = part_problem(root, path)
    if problem is not None:
        raise FolderError(f"{path}: {problem}")
    try:
        return path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise FolderError(f"{path}: not UTF-8 text (byte {error.start})") from None
    except OSError as error:
        raise FolderError(f"{path}: cannot be read ({error.strerror or error})") from None


def part_problem(root: Path, path: Path) -> str | None:
    """Why a part cannot be read, or None: missing, a symlink out of the root or in a loop, not a regular
    file, too big."""
    try:
        if path.is_symlink():
            try:
                target = path.resolve(strict=True)
            except RuntimeError:
                return "a symlink loop; not followed"
            except OSError as error:
                return f"a symlink that leads nowhere ({error.strerror or error}); not followed"
            if not target.is_relative_to(root.resolve()):
                return f"a symlink out of the folder (to {target}); not followed"
        if not path.exists():
            return "missing part file"
        if not path.is_file():
            return "not a regular file"
        size = path.stat().st_size
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if size > MAX_PART_BYTES:
        return f"{size:,} bytes, over the {MAX_PART_BYTES:,} a part may have; not read"
    return None


def list_parts(root: Path, folder: Path, accept: Callable[[str], bool]) -> tuple[list[Path], list[Problem]]:
    """The files of one folder inside `root` (not its subfolders) whose names `accept` takes, sorted by
    name, and a problem for each accepted name that cannot be read. Raises FolderError past MAX_PARTS
    entries."""
    parts: list[Path] = []
    problems: list[Problem] = []
    try:
        entries = os.scandir(folder)
    except OSError as error:
        raise FolderError(f"{folder}: cannot be listed ({error.strerror or error})") from None
    with entries:
        for seen, entry in enumerate(entries, 1):
            if seen > MAX_PARTS:
                raise FolderError(f"{folder}: more than {MAX_PARTS:,} entries; not a transcript we read")
            if not accept(entry.name):
                continue
            path = Path(entry.path)
            problem = part_problem(root, path)
            if problem is None:
                parts.append(path)
            else:
                problems.append(Problem(str(path), None, problem))
    return sorted(parts, key=lambda p: p.name), problems
