"""What the front ends' workers run: one build, or the per-step series for the timeline.

Plain Python (no UI): a request is a frozen snapshot of the workspace, so a worker thread never reads
state the UI thread is changing. Every build of a workspace gets the same frozen `BuildOptions`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, replace
from typing import Any

from engine.build import build_context
from engine.errors import EngineError
from engine.fences import FenceError, FenceRegistry
from engine.lanes import memory_lane
from engine.messages import AiMessage
from engine.observation import ObservationPreviewPort
from engine.policy import ContextPolicy
from engine.replay import PlannedStep, StepBuild, build_step, run_replay, with_persisted
from engine.result import BuildResult
from engine.session import Session
from engine.summarizer import SummarizerPort
from engine.ticks import StepPoint, TickState, step_points, tick_for
from engine.tokens import TokenizerPort
from engine.wire import to_anthropic
from playground.app.views import StepSample

BUILD_ERRORS = (EngineError, FenceError, ValueError)


@dataclass(frozen=True, slots=True)
class BuildOptions:
    """What `build_context` needs besides messages, policy and tick; one value per workspace state."""

    fences: FenceRegistry | None = None
    honour_fence_descriptors: bool = True
    observation_store: ObservationPreviewPort | None = None
    copy: str = "zh"
    model_id: str | None = None
    now: int | None = None  # a fixed clock (tests, reproducible notebooks)
    tokenizer: TokenizerPort | None = None
    summarizer: SummarizerPort | None = None

    def kwargs(self) -> dict[str, Any]:
        """The keyword arguments of `build_context` (a copy of the fences: builds never share one)."""
        return {
            "fences": self.fences.copy() if self.fences is not None else None,
            "honour_fence_descriptors": self.honour_fence_descriptors,
            "observation_store": self.observation_store,
            "copy": self.copy,
            "model_id": self.model_id,
            "now": self.now,
            "tokenizer": self.tokenizer,
            "summarizer": self.summarizer,
        }


@dataclass(frozen=True, slots=True)
class BuildRequest:
    """Everything one build needs; `generation` orders results (a newer one wins)."""

    generation: int
    messages: tuple[AiMessage, ...]
    policy: ContextPolicy
    options: BuildOptions
    tick: TickState | None
    policy_changed: bool = True  # a new policy (or fences): the timeline must be recomputed
    step_number: int | None = None  # a replay step: `messages` holds the summaries earlier steps made
    summaries_complete: bool = True  # False while the series has not yet replayed the steps before it
    summaries: int | None = None  # a step's summaries (recorded and persisted), when its maker knows them


@dataclass(frozen=True, slots=True)
class BuildOutcome:
    request: BuildRequest
    result: BuildResult | None
    anthropic: dict[str, Any] | None = None
    error: str | None = None  # the engine's message when the policy cannot run
    problems: tuple[str, ...] = ()  # why OpenAI or Anthropic would reject the wire
    checked: bool = False  # `anthropic` and `problems` are made (`checked`)
    dropped: int | None = None  # how many messages the build did not keep (None: not counted yet)

    @property
    def generation(self) -> int:
        return self.request.generation


def run_build(request: BuildRequest, *, check: bool = True, count: bool = True) -> BuildOutcome:
    """Build; a policy the engine refuses comes back as `error` (the engine's own message). Without `check`,
    the provider check is left to `checked` (the TUI shows the build first, then the check); without
    `count`, the count of dropped messages too."""
    options = request.options.kwargs()
    try:
        if request.step_number is None:
            loaded = Session(None, None, list(request.messages))  # a loaded session's: checked when read
            result = build_context(loaded, request.policy, tick=request.tick, **options)
        else:
            loaded = Session(None, None, list(request.messages))  # checked when read, as above
            result = build_step(loaded, request.policy, request.tick, summaries=request.summaries, **options)
    except BUILD_ERRORS as error:
        return BuildOutcome(request, None, error=str(error))
    # The count of dropped messages is made here (in the worker) rather than on the UI thread. The cards are
    # made as a view reads them (a list on screen reads a few dozen), the decisions when a view asks for
    # them (the dropped rows, the trace).
    outcome = BuildOutcome(request, result, dropped=result.dropped_count() if count else None)
    return checked(outcome) if check else outcome


def checked(outcome: BuildOutcome) -> BuildOutcome:
    """`outcome` with its wire's Anthropic projection, the reasons a provider would reject the wire (about a
    sixth of a rebuild's time on 64,000 messages) and the count of dropped messages."""
    if outcome.result is None:
        return outcome
    anthropic = to_anthropic(outcome.result.wire)
    problems = tuple(str(p) for p in outcome.result.check_providers(anthropic))
    dropped = outcome.result.dropped_count() if outcome.dropped is None else outcome.dropped
    return replace(outcome, anthropic=anthropic, problems=problems, checked=True, dropped=dropped)


@dataclass(frozen=True, slots=True)
class TimelineRequest:
    generation: int
    messages: tuple[AiMessage, ...]
    points: tuple[StepPoint, ...]
    policy: ContextPolicy
    options: BuildOptions
    max_steps: int
    available_tools: tuple[str, ...]
    known: tuple[StepSample, ...] = ()  # the first steps, as an earlier series built them: resumed after
    known_summaries: tuple[Persisted, ...] = ()  # the summaries those steps persisted


# The series' builds keep their stage outputs in their own lane: they never push out what the user's next
# rebuild reuses (`engine.lanes`).
SERIES_LANE = "series"
Persisted = tuple[int, AiMessage]  # a summary and the prefix length of the step that made it
# a request without its messages, samples and steps; the number of its samples, of its steps, its last step
SeriesPayload = tuple["TimelineRequest", int, int, StepPoint | None]


def series_steps(
    request: TimelineRequest,
    stop: Callable[[], bool] = lambda: False,
    lock: AbstractContextManager[Any] | None = None,
    pause: Callable[[], None] = lambda: None,
    resume_after: int | None = None,
) -> Iterator[tuple[StepSample, Persisted | None]]:
    """The step series: replay every step (summaries persisting, as in linnkit's runtime) and yield its
    sample and the summary it made; ends early once `stop()` is true. The one place the series is computed.
    It resumes after `request.known` (the steps an edit could not change: `playground.app.series_memory`),
    yielding only the steps after them.

    Each step's build holds `lock` (the one the main build takes), so a build the user is waiting for
    waits at most one step of the series. `pause()` is called before each step, outside the lock: the
    TUI's series waits there while the user waits for the screen. `resume_after`: the number of known
    steps, for a request sent without them (`series_job`).
    """
    done = len(request.known) if resume_after is None else resume_after
    carried = request.known_summaries
    # the recorded messages with the known summaries where their steps put them: step `done + 1` on reads
    # its prefix from this list, `len(carried)` further on
    messages = with_persisted(request.messages, len(request.messages) + 1, carried)
    tools, max_steps = request.available_tools, request.max_steps
    plan = (
        PlannedStep(point.message_count + len(carried), tick_for(point, max_steps, tools))
        for point in request.points[done:]
    )
    replayed = run_replay(
        messages, plan, request.policy, first=done + 1, **request.options.kwargs(),
        detail=False,  # the series reads tokens, markers and summaries only
    )  # fmt: skip
    for number, point in enumerate(request.points[done:], start=done + 1):
        pause()
        with lock or nullcontext(), memory_lane(SERIES_LANE):
            if stop():
                return
            step = next(replayed)
        result = step.result
        markers = StepBuild(number, point, step.tick, result).markers
        persisted = (point.message_count, step.persisted) if step.persisted else None
        yield StepSample.of(number, result, markers), persisted


def series_job(
    payload: SeriesPayload, messages: Sequence[AiMessage]
) -> Iterator[tuple[StepSample, Persisted | None]]:
    """`series_steps` as a child process's job (`playground.app.forked`). The request came without its
    messages (the child has them), its known samples (only their number counts) and its steps, which the
    child finds again from the messages: sending 32,000 samples or steps took 30-70 ms of the UI's GIL."""
    request, known, count, last = payload
    points = tuple(step_points(messages, request.policy.checkpoint.trigger_tool_name))
    if len(points) != count or (points[-1] if points else None) != last:
        raise ValueError(f"the child found {len(points)} steps in the session where the request has {count}")
    return series_steps(replace(request, messages=tuple(messages), points=points), resume_after=known)


def for_series_job(request: TimelineRequest) -> SeriesPayload:
    """The payload of `series_job` for `request`."""
    last = request.points[-1] if request.points else None
    return replace(request, messages=(), known=(), points=()), len(request.known), len(request.points), last
