"""Tool observation governance (`toolOutput.observationGovernance`, seed §7.1): execution-time previews.

A tool observation over `maxChars` characters (UTF-16 units) or `maxLines` lines is stored whole in an
`ObservationPreviewPort` and replaced by a preview that names the blob. The preview follows the port
in linnkit's tools guide (§6): the first `floor(0.7 × maxChars)` characters, a blank line and
`...（内容已截断，完整内容已写入 blob_id=<id>）...`. That example only cuts characters, so an observation
over `maxLines` but short in characters would come back whole; the port also keeps at most
`floor(0.7 × maxLines)` lines. Blob ids are the first 16 hex digits of the text's SHA-256.

On a message (`govern_message`), as linnkit's ToolNode and event converter do: `content` and
`metadata.observation` become the preview, `metadata.raw_output` keeps the full ungoverned result,
`metadata.observationTruncation` records `{originalChars, previewChars, originalLines, previewLines}`,
and `metadata.tool_output_store = {blob_id}` carries the pointer linnkit 0.21 writes into the result's
`data` (an AiMessage has no `data`).
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import tempfile
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import EngineError
from engine.jsvalues import utf16_len
from engine.messages import AiMessage

DEFAULT_ENABLED = True
DEFAULT_MAX_CHARS = 20_000
DEFAULT_MAX_LINES = 1_200
PREVIEW_RATIO = 0.7
BLOB_ID_PATTERN = re.compile(r"^[0-9a-f]{16}$")


class ObservationStoreError(EngineError):
    """A store refused a blob: a different text already holds that id."""


def blob_id_for(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class ObservationPreviewPort(ABC):
    """Where full observations go. Content-addressed: the same text always gets the same id."""

    @abstractmethod
    def put(self, text: str) -> str:
        """Store `text`, return its blob id. Never replaces a different text already stored."""

    @abstractmethod
    def get(self, blob_id: str) -> str:
        """The stored text; `KeyError` when there is none."""


class InMemoryObservationStore(ObservationPreviewPort):
    def __init__(self) -> None:
        self._blobs: dict[str, str] = {}

    def put(self, text: str) -> str:
        blob_id = blob_id_for(text)
        if self._blobs.setdefault(blob_id, text) != text:
            raise ObservationStoreError(f"blob {blob_id} already holds a different text")
        return blob_id

    def get(self, blob_id: str) -> str:
        return self._blobs[blob_id]

    def __len__(self) -> int:
        return len(self._blobs)


class FileObservationStore(ObservationPreviewPort):
    """One UTF-8 file `<blob_id>.txt` per blob in `folder`, written atomically and never overwritten."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)

    def path(self, blob_id: str) -> Path:
        if not BLOB_ID_PATTERN.match(blob_id):
            raise ValueError(f"not a blob id: {blob_id!r}")
        return self.folder / f"{blob_id}.txt"

    def put(self, text: str) -> str:
        blob_id = blob_id_for(text)
        target, data = self.path(blob_id), text.encode("utf-8", "surrogatepass")
        if target.exists():
            self._check_same(target, data, blob_id)
            return blob_id
        self.folder.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=self.folder, prefix=f".{blob_id}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
                handle.flush()
                os.fsync(handle.fileno())
            try:
                os.link(temp, target)  # a complete file appears at once, and never over an existing one
            except FileExistsError:
                self._check_same(target, data, blob_id)
        finally:
            os.unlink(temp)
        return blob_id

    def get(self, blob_id: str) -> str:
        try:
            return self.path(blob_id).read_bytes().decode("utf-8", "surrogatepass")
        except FileNotFoundError:
            raise KeyError(blob_id) from None

    @staticmethod
    def _check_same(target: Path, data: bytes, blob_id: str) -> None:
        if target.read_bytes() != data:
            raise ObservationStoreError(f"blob {blob_id} already holds a different text ({target})")


@dataclass(frozen=True, slots=True)
class GovernedObservation:
    text: str  # what the model sees: the observation itself, or its preview
    truncated: bool = False
    blob_id: str | None = None
    truncation: dict[str, int] | None = None  # the `observationTruncation` metadata


def line_count(text: str) -> int:
    """Lines as linnkit's preview port counts them: `text.split('\\n').length`."""
    return text.count("\n") + 1


def govern_observation(
    text: str,
    *,
    enabled: bool = DEFAULT_ENABLED,
    max_chars: int = DEFAULT_MAX_CHARS,
    max_lines: int = DEFAULT_MAX_LINES,
    store: ObservationPreviewPort,
) -> GovernedObservation:
    """Keep `text` when within both limits (or governance is off); else store it and return a preview."""
    if max_chars <= 0 or max_lines <= 0:
        raise ValueError(f"maxChars and maxLines must be > 0 (got {max_chars}, {max_lines})")
    if not enabled or (utf16_len(text) <= max_chars and line_count(text) <= max_lines):
        return GovernedObservation(text)
    blob_id = store.put(text)
    head = _head(text, math.floor(max_chars * PREVIEW_RATIO), math.floor(max_lines * PREVIEW_RATIO))
    preview = f"{head}\n\n...（内容已截断，完整内容已写入 blob_id={blob_id}）..."
    truncation = {
        "originalChars": utf16_len(text),
        "previewChars": utf16_len(preview),
        "originalLines": line_count(text),
        "previewLines": line_count(preview),
    }
    return GovernedObservation(preview, True, blob_id, truncation)


def govern_message(message: AiMessage, policy_group: Any, store: ObservationPreviewPort) -> AiMessage:
    """Govern a `tool_output`'s content. Other messages, and outputs already governed, come back as is.

    `policy_group` is the `toolOutput` group, its `observationGovernance`, either as a model or as a
    camelCase dict, or None for the defaults.
    """
    if message.type != "tool_output" or message.meta("observationTruncation") is not None:
        return message
    enabled, max_chars, max_lines = governance_settings(policy_group)
    governed = govern_observation(
        message.content, enabled=enabled, max_chars=max_chars, max_lines=max_lines, store=store
    )
    if not governed.truncated:
        return message
    raw_output = message.raw_output if message.raw_output is not None else message.content
    return message.with_(
        content=governed.text,
        metadata={
            **(message.metadata or {}),
            "raw_output": raw_output,
            "observation": governed.text,
            "observationTruncation": governed.truncation,
            "tool_output_store": {"blob_id": governed.blob_id},
        },
    )


def governance_settings(policy_group: Any) -> tuple[bool, int, int]:
    """`(enabled, maxChars, maxLines)` from the `toolOutput` group or its `observationGovernance`."""
    inner = _field(policy_group, "observation_governance", "observationGovernance", policy_group)
    return (
        bool(_field(inner, "enabled", "enabled", DEFAULT_ENABLED)),
        int(_field(inner, "max_chars", "maxChars", DEFAULT_MAX_CHARS)),
        int(_field(inner, "max_lines", "maxLines", DEFAULT_MAX_LINES)),
    )


def _field(obj: Any, attr: str, key: str, default: Any) -> Any:
    if obj is None:
        return default
    value = obj.get(key) if isinstance(obj, Mapping) else getattr(obj, attr, None)
    return default if value is None else value


def _head(text: str, max_units: int, max_lines: int) -> str:
    """At most `max_lines` lines, then at most `max_units` UTF-16 units (never half a surrogate pair)."""
    lines = text.split("\n")
    if len(lines) > max_lines:
        text = "\n".join(lines[:max_lines])
    if text.isascii():
        return text[:max_units]
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > max_units:
            return text[:index]
    return text
