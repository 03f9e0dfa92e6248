"""Replay a recorded session: the context the model would have seen at each LLM call (issue 5).

Each step builds from the session prefix the call saw, with linnkit's step count as the tick, so the
timeline shows where summarization first fires, where a checkpoint prunes and when reminders appear.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from engine.build import build_context
from engine.messages import AiMessage
from engine.result import BuildResult
from engine.ticks import StepPoint, TickState, step_points, tick_at

MARKERS = {"ai_history_summarization": "S", "checkpoint_trim_before": "C"}


@dataclass(frozen=True, slots=True)
class StepBuild:
    number: int  # 1-based position in the step list
    point: StepPoint
    tick: TickState
    result: BuildResult

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
        }


def build_at_step(
    messages: Sequence[AiMessage],
    step: int,
    policy: Any = None,
    *,
    max_steps: int = 80,
    available_tools: Iterable[str] = (),
    **build_options: Any,
) -> tuple[StepPoint, TickState, BuildResult]:
    """Build at the 1-based step `step` of the session (`-1` for the last)."""
    points = step_points(messages)
    if not points:
        raise IndexError("the session has no LLM call to step to")
    index = step - 1 if step > 0 else step
    if not -len(points) <= index < len(points):
        raise IndexError(f"step {step} is outside 1..{len(points)}")
    point = points[index]
    prefix, tick = tick_at(messages, point, max_steps, available_tools)
    return point, tick, build_context(prefix, policy, tick=tick, **build_options)


def replay_session(
    messages: Sequence[AiMessage],
    policy: Any = None,
    *,
    max_steps: int = 80,
    available_tools: Iterable[str] = (),
    **build_options: Any,
) -> list[StepBuild]:
    tools = tuple(available_tools)
    steps = []
    for number, point in enumerate(step_points(messages), start=1):
        prefix, tick = tick_at(messages, point, max_steps, tools)
        steps.append(
            StepBuild(number, point, tick, build_context(prefix, policy, tick=tick, **build_options))
        )
    return steps
