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
class ProvidersChecked(Message):
    """The provider check of a build already shown (`BuildFinished` came first, unchecked: the wire is on
    screen before the check is made)."""

    outcome: BuildOutcome


@dataclass
class TimelineProgress(Message):
    """The per-step numbers of the steps from `start` (0-based) on, computed for the policy version `version`
    since the last message, and the summaries those steps made (later steps' builds carry them). A
    message carries only what is new: on a 32,000-step session, messages that each carried every step so far
    queued up by the gigabyte faster than the screen could take them."""

    version: int
    start: int
    points: list[StepSample]
    done: bool
    summaries: list[Persisted]
