"""What every preprocessor works on: the message list plus, per message, the session indices it carries."""

from __future__ import annotations

import json
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

from engine.messages import AiMessage
from engine.result import Event


@dataclass(frozen=True, slots=True)
class Entry:
    """A message in the working list and the session message indices whose content it carries."""

    message: AiMessage
    origins: tuple[int, ...]


@dataclass(frozen=True, slots=True)
class Removal:
    """Session messages a preprocessor took out of the list, and what (if anything) now carries them."""

    origins: tuple[int, ...]
    strategy: str
    replaced_by: str | None = None
    note: str = ""


@dataclass(slots=True)
class StageOutput:
    entries: list[Entry]
    strategy: str | None = None
    removals: list[Removal] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)

    @classmethod
    def unchanged(cls, entries: list[Entry]) -> StageOutput:
        return cls(entries=entries)


def messages_of(entries: list[Entry]) -> list[AiMessage]:
    return [e.message for e in entries]


def merged_origins(entries: list[Entry], indices: list[int]) -> tuple[int, ...]:
    return tuple(sorted({o for i in indices for o in entries[i].origins}))


# Set by a replay around each step's build, so ids created in different steps never repeat (linnkit's are
# random UUIDs; a persisted summary listing `compressed:x` must not match a later step's recompressed copy).
ID_SCOPE: ContextVar[str] = ContextVar("ID_SCOPE", default="")


def new_id(prefix: str, anchor_id: str) -> str:
    """Created messages get ids derived from their source, so rebuilds keep them stable."""
    scope = ID_SCOPE.get()
    return f"{prefix}:{scope}:{anchor_id}" if scope else f"{prefix}:{anchor_id}"


def parse_args(raw: str) -> Any:
    """Parsed call arguments, or None when they are not valid JSON."""
    try:
        return json.loads(raw) if raw else {}
    except ValueError:
        return None
