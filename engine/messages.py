"""linnkit's message model: `AiMessage`, its role/type pairs, and the metadata accessors the pipeline reads.

Field names are linnkit's own (`id`, `role`, `type`, `content`, `timestamp`, `metadata`), so a history
written by a linnkit host loads unchanged. Unknown top-level keys travel in `extra` and are written back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any

from engine.jsvalues import js_trim

ROLE_TYPES: dict[str, tuple[str, ...]] = {
    "system": ("system_prompt", "history_summary", "context_injection"),
    "user": (
        "user_input",
        "context_injection",
        "context_before",
        "context_after",
        "document_fragment",
        "task_request",
        "image",
    ),
    "assistant": ("thought", "final_answer", "tool_code", "tool_calls", "task_completion"),
    "tool": ("tool_output",),
}

# The 15 distinct types, in spec order: the enum behind `mustKeep.alwaysKeepTypes`.
MESSAGE_TYPES: tuple[str, ...] = tuple(dict.fromkeys(t for types in ROLE_TYPES.values() for t in types))

# Legacy types: they cost budget but the wire formatter drops them.
LEGACY_TYPES: frozenset[str] = frozenset({"context_before", "context_after", "document_fragment", "image"})

CORE_FIELDS = ("id", "role", "type", "content", "timestamp", "metadata")
_CORE_KEYS = frozenset(CORE_FIELDS)


@dataclass(frozen=True, slots=True)
class AiMessage:
    """One message of an agent's history. Immutable: stages make changed copies with `with_`."""

    id: str
    role: str
    type: str
    content: str = ""
    timestamp: int | float = 0
    metadata: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    # -- construction -------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> AiMessage:
        """Build from an already-validated dict (see `engine.session` for checked loading)."""
        # positional, and no pass over the keys when there is nothing extra: a session loads 100k of these
        extra = {} if data.keys() <= _CORE_KEYS else {k: v for k, v in data.items() if k not in _CORE_KEYS}
        metadata = data.get("metadata")
        if metadata is None and "metadata" in data:
            extra["metadata"] = None  # an explicit null is kept as written
        content, timestamp = data.get("content") or "", data.get("timestamp", 0)
        return cls(data["id"], data["role"], data["type"], content, timestamp, metadata, extra)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": self.id,
            "role": self.role,
            "type": self.type,
            "content": self.content,
            "timestamp": self.timestamp,
        }
        if self.metadata is not None:
            out["metadata"] = self.metadata
        out.update(self.extra)
        return out

    def with_(self, **changes: Any) -> AiMessage:
        return replace(self, **changes)

    def with_metadata(self, **entries: Any) -> AiMessage:
        return replace(self, metadata={**(self.metadata or {}), **entries})

    # -- metadata accessors ---------------------------------------------------------------------
    def meta(self, key: str, default: Any = None) -> Any:
        return (self.metadata or {}).get(key, default)

    @property
    def tool_calls(self) -> list[dict[str, Any]]:
        """`metadata.tool_calls`: the only calls linnkit groups, compresses and formats (a top-level
        `tool_calls` list is read by its token counter alone, `engine.tokens`)."""
        calls = self.meta("tool_calls")
        return calls if isinstance(calls, list) else []

    @property
    def tool_call_id(self) -> str | None:
        value = self.meta("tool_call_id")
        return value if isinstance(value, str) and value else None

    @property
    def fence_kind(self) -> str | None:
        value = self.meta("fenceKind")
        return value if isinstance(value, str) and value else None

    @property
    def raw_output(self) -> str | None:
        value = self.meta("raw_output")
        return value if isinstance(value, str) else None


def call_name(call: dict[str, Any]) -> str:
    """A call's function name; linnkit names a blank one `unknown_tool`."""
    name = (call.get("function") or {}).get("name")
    return name if isinstance(name, str) and js_trim(name) else "unknown_tool"


def call_arguments(call: dict[str, Any]) -> str:
    """The raw JSON argument string of a call (`''` when absent)."""
    args = (call.get("function") or {}).get("arguments")
    if isinstance(args, str):
        return args
    return "" if args is None else json.dumps(args, ensure_ascii=False, separators=(",", ":"))


def call_id(call: dict[str, Any]) -> str:
    value = call.get("id")
    return value if isinstance(value, str) else ""
