"""What the playground's workers run: one build, or the per-step series for the timeline.

Plain Python (no Textual): a request is a frozen snapshot of the workspace, so a worker thread never
reads state the UI thread is changing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass
from typing import Any

from engine.build import build_context
from engine.errors import EngineError
from engine.fences import FenceError, FenceRegistry
from engine.messages import AiMessage
from engine.observation import ObservationPreviewPort
from engine.policy import ContextPolicy
from engine.replay import PlannedStep, StepBuild, build_step, run_replay
from engine.result import BuildResult
from engine.ticks import StepPoint, TickState, tick_for
from engine.wire import to_anthropic

BUILD_ERRORS = (EngineError, FenceError, ValueError)


@dataclass(frozen=True, slots=True)
class BuildRequest:
    """Everything one build needs; `generation` orders results (a newer one wins)."""

    generation: int
    messages: tuple[AiMessage, ...]
    policy: ContextPolicy
    fences: FenceRegistry | None
    tick: TickState | None
    honour_fence_descriptors: bool = True
    policy_changed: bool = True  # a new policy (or fences): the timeline must be recomputed
    observation_store: ObservationPreviewPort | None = None
    step_number: int | None = None  # a replay step: `messages` holds the summaries earlier steps made
    summaries_complete: bool = True  # False while the series has not yet replayed the steps before it


@dataclass(frozen=True, slots=True)
class BuildOutcome:
    request: BuildRequest
    result: BuildResult | None
    anthropic: dict[str, Any] | None = None
    error: str | None = None  # the engine's message when the policy cannot run

    @property
    def generation(self) -> int:
        return self.request.generation


def run_build(request: BuildRequest) -> BuildOutcome:
    """Build; a policy the engine refuses comes back as `error` (the engine's own message)."""
    options = {
        "fences": request.fences,
        "honour_fence_descriptors": request.honour_fence_descriptors,
        "observation_store": request.observation_store,
    }
    try:
        if request.step_number is None:
            result = build_context(list(request.messages), request.policy, tick=request.tick, **options)
        else:
            result = build_step(
                request.step_number, request.messages, request.policy, request.tick, **options
            )
    except BUILD_ERRORS as error:
        return BuildOutcome(request, None, error=str(error))
    return BuildOutcome(request, result, to_anthropic(result.wire))


@dataclass(frozen=True, slots=True)
class TimelineRequest:
    generation: int
    messages: tuple[AiMessage, ...]
    points: tuple[StepPoint, ...]
    policy: ContextPolicy
    fences: FenceRegistry | None
    max_steps: int
    available_tools: tuple[str, ...]
    honour_fence_descriptors: bool = True
    observation_store: ObservationPreviewPort | None = None


TimelinePoint = tuple[int, int, int, str]  # step, final tokens, total budget, markers (S, C, R, !)
Persisted = tuple[int, AiMessage]  # a summary and the prefix length of the step that made it


def timeline_points(
    request: TimelineRequest,
    stop: Callable[[], bool] = lambda: False,
    lock: AbstractContextManager[Any] | None = None,
) -> Iterator[tuple[TimelinePoint, Persisted | None]]:
    """Replay every step (summaries persisting, as in linnkit's runtime) and yield its numbers and the
    summary it made; ends early once `stop()` is true.

    Each step's build holds `lock` (the one the main build takes), so a build the user is waiting for
    waits at most one step of the timeline.
    """
    plan = (
        PlannedStep(point.message_count, tick_for(point, request.max_steps, request.available_tools))
        for point in request.points
    )
    replayed = run_replay(
        request.messages,
        plan,
        request.policy,
        fences=request.fences,
        honour_fence_descriptors=request.honour_fence_descriptors,
        observation_store=request.observation_store,
        detail=False,  # the series reads tokens, markers and summaries only
    )
    for number, point in enumerate(request.points, start=1):
        with lock or nullcontext():
            if stop():
                return
            step = next(replayed)
        result = step.result
        markers = StepBuild(number, point, step.tick, result).markers
        persisted = (point.message_count, step.persisted) if step.persisted else None
        yield (number, result.tokens.final_tokens, result.tokens.total_budget, markers), persisted
