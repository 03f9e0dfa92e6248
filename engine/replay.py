"""Replay a recorded session: the context the model would have seen at each LLM call.

Each step builds from the session prefix the call saw, with linnkit's step count as the tick. As in linnkit's
runtime, a summary is made once and then lives in the history: when a step's build makes a summary, the
summary message is persisted right after that step's prefix, and every later step reads it back as an input
message (purification removes what it replaced; a new summary folds it in). A failed step persists nothing.
Created ids are scoped by the summaries a step's history holds (`summary_scope`): a persisted summary never
names a later step's created message (linnkit's ids are random UUIDs), and the steps between two summaries
share their created messages, as they share the rest of their history.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from engine.build import build_context
from engine.lineage import grown
from engine.messages import AiMessage
from engine.preprocess.base import ID_SCOPE
from engine.result import BuildResult
from engine.session import Session
from engine.ticks import StepPoint, TickState, iter_step_points, step_points, tick_for

MARKERS = {"ai_history_summarization": "S", "checkpoint_trim_before": "C"}
StepOptions = Callable[[int, int], Mapping[str, Any]]
_TYPE = attrgetter("type")


@dataclass(frozen=True, slots=True)
class PlannedStep:
    """One build of a replay: the first `upto` recorded messages (plus persisted summaries) and its tick."""

    upto: int
    tick: TickState | None


@dataclass(frozen=True, slots=True)
class ReplayedStep:
    """One step's build, the summary it persisted (if any) and the persisted summaries it was given."""

    upto: int
    tick: TickState | None
    result: BuildResult
    persisted: AiMessage | None
    carried_ids: tuple[str, ...]


def persisted_summary(event: dict[str, Any]) -> AiMessage:
    """The message linnkit's event converter rebuilds from a persisted `history_summary` event."""
    return AiMessage(
        id=event["id"],
        role="system",
        type="history_summary",
        content=event["content"],
        timestamp=event["timestamp"],
        metadata={
            "messageType": "summary",
            "originalMessageCount": event["original_message_count"],
            "compressionRatio": event["compression_ratio"],
            "includedOldSummary": event["included_old_summary"],
            "replacedMessageIds": event["replaced_message_ids"],  # the summary's own list, not a copy
            "summarySeq": event["summary_seq"],
        },
    )


def with_persisted(
    messages: Sequence[AiMessage], upto: int, summaries: Iterable[tuple[int, AiMessage]]
) -> list[AiMessage]:
    """The input list of a step that builds from `messages[:upto]`, given the summaries earlier steps
    persisted as `(their upto, summary)` in creation order: each sits right after its step's prefix.
    Lets a front end rebuild one step from a replay's persisted summaries without replaying again."""
    out: list[AiMessage] = []
    done = 0
    for after, summary in summaries:
        if after >= upto or after < done:  # made at this step or later, or out of order
            continue
        out.extend(messages[done:after])
        out.append(summary)
        done = after
    out.extend(messages[done:upto])
    return out


def summary_scope(summaries: int) -> str:
    """The id scope of a step whose history holds `summaries` summaries (recorded or persisted)."""
    return f"e{summaries}"


def count_summaries(messages: Sequence[AiMessage]) -> int:
    return list(map(_TYPE, messages)).count("history_summary")


def build_step(
    history: Sequence[AiMessage] | Session,
    policy: Any,
    tick: TickState | None,
    *,
    summaries: int | None = None,
    **build_options: Any,
) -> BuildResult:
    """Build a replay step from its input list (see `with_persisted`; a Session holding it is taken as
    checked, as `build_context` takes one), its created ids scoped by the `summaries` its history holds
    (counted when not given)."""
    held = count_summaries(getattr(history, "messages", history)) if summaries is None else summaries
    token = ID_SCOPE.set(summary_scope(held))
    try:
        return build_context(history, policy, tick=tick, **build_options)
    finally:
        ID_SCOPE.reset(token)


def run_replay(
    messages: Sequence[AiMessage],
    plan: Iterable[PlannedStep],
    policy: Any = None,
    *,
    step_options: StepOptions | None = None,
    first: int = 1,
    **build_options: Any,
) -> Iterator[ReplayedStep]:
    """Build every planned step in order, carrying the summaries earlier steps made (a generator: one step
    is held at a time). `plan` must have strictly increasing `upto`. `step_options(number, upto)` adds build
    options for one step (a host's calibration samples, which grow as calls are made). `first` is the number
    of the first planned step: a replay resumed at step `first`, its `messages` holding the summaries the
    steps before it persisted (`with_persisted`)."""
    # each step's list is the last one's and more, in its line (`engine.lineage`): the build takes it as
    # it is, and its stages tell that it starts with the last step's without comparing them
    history: list[AiMessage] = []
    carried: list[str] = []
    done = summaries = 0
    for number, step in enumerate(plan, start=first):
        if not done <= step.upto <= len(messages) or (number > first and step.upto == done):
            bound = len(messages)
            raise ValueError(f"replay step {number}: upto {step.upto} must increase within 1..{bound}")
        new = messages[done : step.upto]
        history, summaries = grown(history, new), summaries + count_summaries(new)
        done = step.upto
        extra = step_options(number, step.upto) if step_options is not None else {}
        result = build_step(history, policy, step.tick, summaries=summaries, **build_options, **extra)
        persisted = None
        if result.error is None and result.summary_events:
            persisted = persisted_summary(result.summary_events[-1])
        yield ReplayedStep(step.upto, step.tick, result, persisted, tuple(carried))
        if persisted is not None:
            history, summaries = grown(history, [persisted]), summaries + 1
            carried.append(persisted.id)


@dataclass(frozen=True, slots=True)
class StepBuild:
    number: int  # 1-based position in the step list
    point: StepPoint
    tick: TickState
    result: BuildResult
    persisted: AiMessage | None = None  # the summary this step made, carried into later steps
    carried_ids: tuple[str, ...] = ()  # summaries made by earlier steps that this step was given

    @property
    def markers(self) -> str:
        marks = [m for strategy, m in MARKERS.items() if strategy in self.result.strategies_applied]
        if self.result.reminder.hit_rule_ids:
            marks.append("R")
        if self.result.error is not None:
            marks.append("!")
        return "".join(marks)

    def summary(self) -> dict[str, Any]:
        result = self.result
        return {
            "step": self.number,
            "messages": self.point.message_count,
            "nodeStep": self.tick.step_count,
            "finalTokens": result.tokens.final_tokens,
            "totalBudget": result.tokens.total_budget,
            "kept": len(result.messages),
            "events": [e.kind for e in result.events],
            "reminders": list(result.reminder.hit_rule_ids),
            "error": result.error.code if result.error else None,
            "markers": self.markers,
            "summaryMade": self.persisted.id if self.persisted else None,
            "summariesCarried": len(self.carried_ids),  # which: the earlier steps' summaryMade
        }


def iter_session_steps(
    messages: Sequence[AiMessage],
    policy: Any = None,
    *,
    max_steps: int = 80,
    available_tools: Iterable[str] = (),
    checkpoint_tool_name: str | None = None,
    step_options: StepOptions | None = None,
    points: Iterable[StepPoint] | None = None,
    **build_options: Any,
) -> Iterator[StepBuild]:
    """Replay every LLM call of a recorded session, summaries persisting (one step held at a time).

    The steps are found as the replay goes (`iter_step_points`), so the first is built without a pass
    over the whole session. `points` are the session's step points when `messages` is still loading: a list
    the loader fills, each point coming once the messages it needs are in it."""
    tools = tuple(available_tools)
    names = {} if checkpoint_tool_name is None else {"checkpoint_tool_name": checkpoint_tool_name}
    found = iter_step_points(messages, **names) if points is None else iter(points)
    current: list[StepPoint] = []  # the point of the step being built

    def plan() -> Iterator[PlannedStep]:
        for point in found:
            current[:] = [point]
            yield PlannedStep(point.message_count, tick_for(point, max_steps, tools))

    replayed = run_replay(messages, plan(), policy, step_options=step_options, **build_options)
    for number, step in enumerate(replayed, start=1):
        yield StepBuild(number, current[0], step.tick, step.result, step.persisted, step.carried_ids)


def replay_session(messages: Sequence[AiMessage], policy: Any = None, **options: Any) -> list[StepBuild]:
    return list(iter_session_steps(messages, policy, **options))


def build_at_step(
    messages: Sequence[AiMessage], step: int, policy: Any = None, **options: Any
) -> tuple[StepPoint, TickState, BuildResult]:
    """Build at the 1-based step `step` of the session (`-1` for the last), with the summaries the steps
    before it persisted."""
    count = len(step_points(messages, **_names(options)))
    if count == 0:
        raise IndexError("the session has no LLM call to step to")
    index = step - 1 if step > 0 else count + step
    if step == 0 or not 0 <= index < count:
        raise IndexError(f"step {step} is outside 1..{count}")
    for built in iter_session_steps(messages, policy, **options):
        if built.number == index + 1:
            return built.point, built.tick, built.result
    raise AssertionError("unreachable: the step list was counted above")


def _names(options: dict[str, Any]) -> dict[str, str]:
    name = options.get("checkpoint_tool_name")
    return {} if name is None else {"checkpoint_tool_name": name}
