"""An OpenCode storage folder read into one JSON document, safely.

OpenCode (before it moved to SQLite) kept a session as files under its storage root:
`session/<projectID>/<sessionID>.json` (the session), `message/<sessionID>/<messageID>.json` (each message's
info) and `part/<messageID>/<partID>.json` (its parts). `storage_document(root)` gathers them into
`{"opencodeStorage": {"root", "sessions": [{"info", "messages": [{"info", "parts"}]}]}, "notes"}` for
`opencode.py` to read. The walk stays inside the root: symbolic links are not followed (each is named in
a note), at most MAX_FILES files of at most MAX_FILE_BYTES each and MAX_TOTAL_BYTES in all are read; a
file that is not JSON, or a message whose part folder is missing, is a note naming the file.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from engine.safe_input import InputError

MAX_FILES = 50_000
MAX_FILE_BYTES = 16 * 1024 * 1024
MAX_TOTAL_BYTES = 512 * 1024 * 1024
FOLDERS = ("session", "message", "part")
KEY = "opencodeStorage"


def is_storage_root(path: Path) -> bool:
    return path.is_dir() and all((path / name).is_dir() for name in FOLDERS)


def storage_document(root: Path) -> dict[str, Any]:
    """The sessions under an OpenCode storage root, with their messages and parts in id order."""
    if not is_storage_root(root):
        raise InputError(
            str(root), "a folder, but not an OpenCode storage root (no session/, message/, part/)"
        )
    walk = _Walk(root)
    sessions = []
    for session_file in walk.json_files(root / "session", depth=2):
        info = walk.load(session_file)
        if not isinstance(info, dict) or not isinstance(info.get("id"), str):
            continue
        messages = []
        for message_file in walk.json_files(root / "message" / info["id"], depth=1):
            message = walk.load(message_file)
            if not isinstance(message, dict) or not isinstance(message.get("id"), str):
                continue
            part_folder = root / "part" / message["id"]
            if not part_folder.is_dir():
                walk.note(part_folder, "missing: the message's parts are not there")
            parts = (
                [walk.load(p) for p in walk.json_files(part_folder, depth=1)] if part_folder.is_dir() else []
            )
            messages.append({"info": message, "parts": [p for p in parts if isinstance(p, dict)]})
        sessions.append({"info": info, "messages": messages})
    sessions.sort(key=lambda s: (_created(s["info"]), s["info"]["id"]))
    return {KEY: {"root": str(root), "sessions": sessions}, "notes": walk.notes}


def _created(info: dict[str, Any]) -> float:
    time = info.get("time")
    created = time.get("created") if isinstance(time, dict) else None
    return created if isinstance(created, int | float) else 0


class _Walk:
    def __init__(self, root: Path) -> None:
        self.root = root
        self.files = 0
        self.bytes = 0
        self.notes: list[str] = []

    def note(self, path: Path, reason: str) -> None:
        self.notes.append(f"{path.relative_to(self.root)}: {reason}")

    def json_files(self, folder: Path, depth: int) -> list[Path]:
        """The `.json` files of a folder (and its subfolders, `depth` levels), by name; links skipped."""
        if not folder.is_dir() or folder.is_symlink():
            return []
        found: list[Path] = []
        try:
            entries = sorted(os.scandir(folder), key=lambda e: e.name)
        except OSError as exc:
            self.note(folder, f"cannot be listed ({exc.strerror or exc})")
            return []
        for entry in entries:
            path = Path(entry.path)
            if entry.is_symlink():
                self.note(path, "a symbolic link, not followed")
            elif entry.is_dir(follow_symlinks=False) and depth > 1:
                found.extend(self.json_files(path, depth - 1))
            elif entry.is_file(follow_symlinks=False) and entry.name.endswith(".json"):
                found.append(path)
        return found

    def load(self, path: Path) -> Any:
        self.files += 1
        if self.files > MAX_FILES:
            raise InputError(str(self.root), f"more than {MAX_FILES:,} files in the storage folder")
        size = path.stat().st_size
        if size > MAX_FILE_BYTES:
            self.note(path, f"{size:,} bytes (limit {MAX_FILE_BYTES:,}); not read")
            return None
        self.bytes += size
        if self.bytes > MAX_TOTAL_BYTES:
            raise InputError(str(self.root), f"more than {MAX_TOTAL_BYTES:,} bytes in the storage folder")
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except (ValueError, OSError, RecursionError) as exc:
            self.note(path, f"not readable JSON ({str(exc).splitlines()[0][:120]})")
            return None
