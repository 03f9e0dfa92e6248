"""The per-message state every provider reads and updates (spec §5, step 3)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from engine.messages import AiMessage

SKIP = "skip"
KEEP_CORE = "keep_core"
KEEP_WM = "keep_working_memory"

CORE_CONTEXT = "CORE_CONTEXT"
WORKING_MEMORY = "WORKING_MEMORY"
CHECKPOINT = "CHECKPOINT"
CHECKPOINT_PURGED = "CHECKPOINT_PURGED"
SUMMARIZATION = "SUMMARIZATION"


@dataclass(slots=True)
class State:
    message: AiMessage
    index: int  # originalIndex: position in the preprocessed list, -1 for a new summary
    origins: tuple[int, ...]  # session message indices this state carries
    tokens: int
    action: str = SKIP
    phase: str | None = None
    strategy: str | None = None
    processed: AiMessage | None = None  # the message with processed (truncated) content
    replacement_source_ids: list[str] | None = None
    truncation: dict[str, Any] | None = None
    kept: bool = False  # action starts with keep_; a plain field because every provider reads it often

    @property
    def current(self) -> AiMessage:
        """The message as it will be sent: processed content when non-empty, else the original."""
        if self.processed is not None and self.processed.content:
            return self.processed
        return self.message

    def keep(self, action: str, phase: str, strategy: str) -> None:
        self.action, self.phase, self.strategy, self.kept = action, phase, strategy, True

    def drop(self, phase: str, strategy: str) -> None:
        self.action, self.phase, self.strategy, self.kept = SKIP, phase, strategy, False


@dataclass(slots=True)
class ProviderReport:
    """What one provider did, for the trace's provider event."""

    name: str
    skipped: bool = False
    tokens_used: int = 0
    strategies: list[str] = field(default_factory=list)


class States(list[State]):
    """The states of one build, with the token list they were made from. `engine.stage_cache` hands the same
    list object to every build of the same preprocessed messages, so what a provider derives from the states
    as they start (working memory's candidate floors) can be kept by its identity."""

    __slots__ = ("initial_tokens", "grown_from")

    def __init__(
        self, states: list[State], initial_tokens: list[int], grown_from: tuple[list[int], int] | None = None
    ) -> None:
        super().__init__(states)
        self.initial_tokens = initial_tokens
        # the token list whose first k counts `initial_tokens` took over for the same entries, and k
        self.grown_from = grown_from


def kept_tokens(states: list[State]) -> int:
    return sum(s.tokens for s in states if s.kept)


def kept_count(states: list[State]) -> int:
    return sum(1 for s in states if s.kept)
