"""Zip archives as the transcript they hold, read through `zipfile`: `_common.read_transcript` reads a zip
as the JSON document the archive stands for. The only zip read today is Inspect AI's `.eval`
(`header.json`, `samples/<id>_epoch_<n>.json`, and `_journal/start.json` when the log was not finished): it
becomes one eval log document (the header with its `samples` list), as Inspect writes `.json` logs.
Nothing is extracted to disk. Bounded: at most MAX_MEMBERS members, each read member at most
MAX_MEMBER_BYTES once inflated (read with that bound, whatever the member's header claims), all of them at
most MAX_TOTAL_BYTES. A truncated or damaged archive, a member over a bound, a member that is not UTF-8
JSON: one `InputError` line naming the file and the member.
"""

from __future__ import annotations

import json
import re
import zipfile
import zlib
from pathlib import Path
from typing import Any

from engine.safe_input import InputError, decode_utf8

ZIP_MAGIC = b"PK\x03\x04"
EMPTY_ZIP_MAGIC = b"PK\x05\x06"
MAX_MEMBERS = 10_000
MAX_MEMBER_BYTES = 64 * 1024 * 1024
MAX_TOTAL_BYTES = 512 * 1024 * 1024
# a transcript is read whole (JSON documents cannot be read in pieces): a larger one is refused, not read
WHOLE_READ_BYTES = 160 * 1024 * 1024
SAMPLE_MEMBER = re.compile(r"^samples/(.+)_epoch_(\d+)\.json$")
MEMBER_ERRORS = (zipfile.BadZipFile, EOFError, zlib.error, OSError, NotImplementedError, RuntimeError)


def is_zip(path: Path) -> bool:
    """Whether a regular file starts as a zip archive does (an empty archive included)."""
    try:
        with path.open("rb") as handle:
            return handle.read(4) in (ZIP_MAGIC, EMPTY_ZIP_MAGIC)
    except OSError:
        return False


def eval_log_document(path: Path) -> dict[str, Any]:
    """An Inspect AI `.eval` archive as the eval log document its `.json` form would be."""
    name = str(path)
    try:
        archive = zipfile.ZipFile(path)
    except (zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InputError(name, f"not a readable zip archive, truncated or damaged ({exc})") from None
    with archive:
        members = archive.infolist()
        if len(members) > MAX_MEMBERS:
            raise InputError(name, f"{len(members):,} members in the archive (limit {MAX_MEMBERS:,})")
        names = {m.filename: m for m in members}
        samples = sorted((m for m in members if SAMPLE_MEMBER.match(m.filename)), key=_sample_order)
        head = names.get("header.json") or names.get("_journal/start.json")
        if head is None:
            raise InputError(
                name,
                "a zip archive, but not an Inspect AI .eval log (no header.json, no _journal/start.json)",
            )
        budget = [MAX_TOTAL_BYTES]
        document = _member_json(archive, head, name, budget)
        if not isinstance(document, dict):
            raise InputError(name, "expected a JSON object", field=f"member {head.filename}")
        document = dict(document)
        document["samples"] = [_member_json(archive, m, name, budget) for m in samples]
    return document


def _sample_order(member: zipfile.ZipInfo) -> tuple[int, int, str, int]:
    """Samples by id (numbers as numbers), then epoch: the order Inspect lists them in."""
    match = SAMPLE_MEMBER.match(member.filename)
    sample, epoch = (match.group(1), int(match.group(2))) if match else (member.filename, 0)
    return (0, int(sample), "", epoch) if sample.isdigit() else (1, 0, sample, epoch)


def _member_json(archive: zipfile.ZipFile, member: zipfile.ZipInfo, name: str, budget: list[int]) -> Any:
    where = f"member {member.filename}"
    limit = min(MAX_MEMBER_BYTES, budget[0])
    if member.file_size > limit:
        raise InputError(name, f"{member.file_size:,} bytes once inflated (limit {limit:,})", field=where)
    try:
        with archive.open(member) as handle:
            data = handle.read(limit + 1)  # the header's size may lie: read no more than the bound
    except MEMBER_ERRORS as exc:
        raise InputError(name, f"cannot be read, truncated or damaged ({exc})", field=where) from None
    if len(data) > limit:
        raise InputError(name, f"more than {limit:,} bytes once inflated", field=where)
    budget[0] -= len(data)
    try:
        return json.loads(decode_utf8(data, f"{name} {where}"))
    except json.JSONDecodeError as exc:
        raise InputError(name, f"invalid JSON ({exc.msg} at line {exc.lineno})", field=where) from None
    except RecursionError:
        raise InputError(name, "JSON nested too deeply", field=where) from None
