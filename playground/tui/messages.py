"""Messages the workers post to the main screen (workers never touch widgets)."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from playground.app.building import BuildOutcome, Persisted
from playground.app.views import StepSample


@dataclass
class BuildFinished(Message):
    """A build ended (with a result, or with the engine's refusal)."""

    outcome: BuildOutcome


@dataclass
class TimelineProgress(Message):
    """The per-step numbers computed so far for the policy version `version`, and the summaries those
    steps made (later steps' builds carry them)."""

    version: int
    points: list[StepSample]
    done: bool
    summaries: list[Persisted]
