"""The reminder context: the tick state one reminder evaluation reads (spec §5.7, linnkit `executorLocal`)."""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.jsvalues import js_trim

DEFAULT_MAX_STEPS = 80
DEFAULT_CHECKPOINT_TOOL_NAME = "context_checkpoint"


def derive_phase(step_count: int, max_steps: int, final_step_policy: str | None = None) -> str:
    """The executor's phase at a step: `force_tools` on the penultimate step under that policy,
    `force_final_answer` from the last step on otherwise, else `running`."""
    if final_step_policy == "force_tools":
        return "force_tools" if step_count == max_steps - 1 else "running"
    return "force_final_answer" if step_count >= max_steps else "running"


def display_step(node_steps: int) -> int:
    """linnkit's `toDisplayStep`: node steps (LLM + tool = 2) shown as agent steps, `ceil(n / 2)`."""
    return math.ceil(node_steps / 2)


@dataclass(frozen=True, slots=True)
class ReminderContext:
    """What the triggers and templates see. `remaining_steps` and `phase` are derived when left `None`.

    `step_count` is linnkit's node step (each graph node run counts one: the user node, every LLM call,
    every tool batch); `streak` is the number of `tool_calls` messages after the last `user_input`.
    `last_steps_hint_threshold` is the executor-level fallback, used only when the policy sets none.
    """

    step_count: int
    max_steps: int = DEFAULT_MAX_STEPS
    remaining_steps: int | None = None
    phase: str | None = None
    final_step_policy: str | None = None
    final_step_forced_tools: tuple[str, ...] = ()
    last_steps_hint_threshold: int | None = None
    context_checkpoint_tool_name: str | None = None
    available_tools: tuple[str, ...] = ()
    streak: int = 0

    def __post_init__(self) -> None:
        if self.remaining_steps is None:
            object.__setattr__(self, "remaining_steps", self.max_steps - self.step_count)
        if self.phase is None:
            phase = derive_phase(self.step_count, self.max_steps, self.final_step_policy)
            object.__setattr__(self, "phase", phase)

    @property
    def checkpoint_tool_name(self) -> str:
        """The configured checkpoint tool name, or linnkit's default when blank."""
        name = js_trim(self.context_checkpoint_tool_name or "")
        return name or DEFAULT_CHECKPOINT_TOOL_NAME
