"""Tick state: the executor's step counters for one build, and finding them in a recorded session.

**How linnkit counts `stepCount`** (0.21 engine): every run starts by priming the `user` node, and every
node run adds one: the user node is step 1, each LLM call is one step, and each tool call is one step of its
own (parallel calls of one batch count one each). So with one call per batch the k-th LLM call of a run sees
`stepCount = 2k`, and the templates show `ceil(2k/2) = k`. The tool node of the checkpoint tool restarts the
count at 0 (at most `maxCheckpoints` = 10 times a run), so the next LLM call sees step 1, then 3, 5, ...

**Step points of a recorded session.** One LLM call writes one block of consecutive assistant messages
(thoughts, text, the calls or the answer). `step_points` returns one `StepPoint` per block, whose
`message_count` is the prefix the model saw (everything before the block), plus one pending point at the
end when the session waits for the model (its last run has not ended with an answer and its last message
is not the model's). A block that holds a `final_answer` or `task_completion` ends the run.

A replay (building the context at every step point) belongs next to these functions: it takes the
prefix and `TickState` from `tick_at` and calls the build with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from engine.messages import AiMessage, call_name
from engine.reminders import DEFAULT_CHECKPOINT_TOOL_NAME, DEFAULT_MAX_STEPS, ReminderContext, derive_phase

ACTION_TYPES = frozenset({"tool_calls", "final_answer", "task_completion", "tool_code"})
RUN_ENDING_TYPES = frozenset({"final_answer", "task_completion"})
TOOL_ACTION_TYPES = frozenset({"tool_calls", "tool_code"})
MAX_CHECKPOINT_RESETS = 10

MessageLike = AiMessage | Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class TickState:
    """The executor state a build's reminder stage reads. `step_count` is a node step (see module doc)."""

    step_count: int
    max_steps: int = DEFAULT_MAX_STEPS
    available_tools: tuple[str, ...] = ()
    final_step_policy: str | None = None
    final_step_forced_tools: tuple[str, ...] = ()
    checkpoint_tool_registered: bool = False  # adds the checkpoint tool to the available tools

    @property
    def remaining_steps(self) -> int:
        return self.max_steps - self.step_count

    @property
    def phase(self) -> str:
        return derive_phase(self.step_count, self.max_steps, self.final_step_policy)

    @classmethod
    def from_case(cls, tick: Mapping[str, Any]) -> TickState:
        """From a conformance case's `tick` object (`stepCount`, `maxSteps`, `availableTools`, ...)."""
        return cls(
            step_count=tick["stepCount"],
            max_steps=tick.get("maxSteps", DEFAULT_MAX_STEPS),
            available_tools=tuple(tick.get("availableTools") or ()),
            final_step_policy=tick.get("finalStepPolicy"),
            final_step_forced_tools=tuple(tick.get("finalStepForcedTools") or ()),
        )

    def tools(self, checkpoint_tool_name: str = DEFAULT_CHECKPOINT_TOOL_NAME) -> tuple[str, ...]:
        if self.checkpoint_tool_registered and checkpoint_tool_name not in self.available_tools:
            return (*self.available_tools, checkpoint_tool_name)
        return self.available_tools

    def reminder_context(
        self,
        messages: Sequence[MessageLike],
        *,
        checkpoint_tool_name: str = DEFAULT_CHECKPOINT_TOOL_NAME,
        last_steps_hint_threshold: int | None = None,
    ) -> ReminderContext:
        """The reminder context for a build over `messages` (the input list, before preprocessing)."""
        return ReminderContext(
            step_count=self.step_count,
            max_steps=self.max_steps,
            final_step_policy=self.final_step_policy,
            final_step_forced_tools=self.final_step_forced_tools,
            last_steps_hint_threshold=last_steps_hint_threshold,
            context_checkpoint_tool_name=checkpoint_tool_name,
            available_tools=self.tools(checkpoint_tool_name),
            streak=count_tool_call_streak(messages),
        )


def count_tool_call_streak(messages: Sequence[MessageLike]) -> int:
    """The number of `tool_calls` messages after the last `user_input` (all of them if there is none)."""
    streak = 0
    for message in reversed(messages):  # from the end: a replay step reads only its latest turn
        kind = _type(message)
        if kind == "user_input":
            break
        streak += kind == "tool_calls"
    return streak


@dataclass(frozen=True, slots=True)
class StepPoint:
    """One LLM call of a recorded session, with the prefix it saw and the step linnkit would count."""

    message_count: int  # build from messages[:message_count]
    run_index: int  # user_inputs before the call (0: no user_input yet)
    step_in_run: int  # 1 for the run's first LLM call, 2 for the next, ...
    node_step: int  # linnkit's stepCount for this call (the reminder's step)
    action_id: str | None  # id of the action the call produced; None for the call the session awaits


def _recorded(message: MessageLike) -> bool:
    """The message ends a model call whose usage was recorded (`engine.usage`: the importer put it there)."""
    metadata = message.get("metadata") if isinstance(message, dict) else message.metadata
    return isinstance(metadata, dict) and "usage" in metadata


def step_points(
    messages: Sequence[MessageLike], checkpoint_tool_name: str = DEFAULT_CHECKPOINT_TOOL_NAME
) -> list[StepPoint]:
    """Every LLM call of the session in order, plus the pending call when the session waits for the model.

    A call is a block of consecutive assistant messages; where the transcript recorded a call's usage, the
    call ends at the message carrying it, so two calls written back to back are two steps."""
    return list(iter_step_points(messages, checkpoint_tool_name))


def iter_step_points(
    messages: Iterable[MessageLike], checkpoint_tool_name: str = DEFAULT_CHECKPOINT_TOOL_NAME
) -> Iterator[StepPoint]:
    """`step_points` as the messages come: a call's point once its block has been read, and the message
    after it (or the end), so a replay can build the step while the rest of the session still loads."""
    counter = _StepCounter(checkpoint_tool_name)
    block: list[MessageLike] = []
    count = 0
    last: MessageLike | None = None
    for count, message in enumerate(messages, start=1):  # noqa: B007 (count is read after the loop)
        last = message
        if block and _role(message) == "assistant" and not _recorded(block[-1]):
            block.append(message)  # the call goes on (a recorded call ends at the message carrying it)
            continue
        if block:
            yield counter.call(count - 1 - len(block), block)
            block = []
        if _type(message) == "user_input":
            counter.user_input()
        elif _role(message) == "assistant":
            block = [message]
    if block:
        yield counter.call(count - len(block), block)
    if counter.open_run and last is not None and _role(last) != "assistant":
        yield StepPoint(count, counter.run, counter.calls + 1, counter.cycle + 1, None)


class _StepCounter:
    """linnkit's counters over a session's runs: the node step of each call (see the module doc)."""

    def __init__(self, checkpoint_tool_name: str) -> None:
        self.checkpoint_tool_name = checkpoint_tool_name
        self.run, self.cycle, self.calls, self.resets, self.open_run = 0, 1, 0, 0, False

    def user_input(self) -> None:
        self.run, self.cycle, self.calls, self.resets, self.open_run = self.run + 1, 1, 0, 0, True

    def call(self, start: int, block: list[MessageLike]) -> StepPoint:
        """The point of the call that wrote `block` (one LLM call's output), which starts at `start`."""
        if not self.open_run:  # a call after an answer without a new user_input: the host resumed
            self.cycle, self.calls, self.resets = 1, 0, 0
        self.cycle, self.calls = self.cycle + 1, self.calls + 1
        actions = [m for m in block if _type(m) in ACTION_TYPES]
        point = StepPoint(start, self.run, self.calls, self.cycle, _id(actions[-1]) if actions else None)
        for name in (n for m in actions if _type(m) in TOOL_ACTION_TYPES for n in _call_names(m)):
            self.cycle += 1  # one tool node per call, parallel calls included
            if name == self.checkpoint_tool_name and self.resets < MAX_CHECKPOINT_RESETS:
                self.cycle, self.resets = 0, self.resets + 1
        self.open_run = not any(_type(m) in RUN_ENDING_TYPES for m in block)
        return point


def tick_at(
    messages: Sequence[MessageLike],
    step: StepPoint | int,
    max_steps: int = DEFAULT_MAX_STEPS,
    available_tools: Iterable[str] = (),
    *,
    final_step_policy: str | None = None,
    final_step_forced_tools: Iterable[str] = (),
    checkpoint_tool_name: str = DEFAULT_CHECKPOINT_TOOL_NAME,
) -> tuple[list[MessageLike], TickState]:
    """The session prefix to build from at a step and its tick. `step` is a `StepPoint` or an index into
    `step_points(messages)` (negative counts from the end). Raises `IndexError` for a step not there."""
    point = step if isinstance(step, StepPoint) else step_points(messages, checkpoint_tool_name)[step]
    tick = tick_for(point, max_steps, available_tools, final_step_policy, final_step_forced_tools)
    return list(messages[: point.message_count]), tick


def tick_for(
    point: StepPoint,
    max_steps: int = DEFAULT_MAX_STEPS,
    available_tools: Iterable[str] = (),
    final_step_policy: str | None = None,
    final_step_forced_tools: Iterable[str] = (),
) -> TickState:
    """The tick of the LLM call at `point`."""
    return TickState(
        step_count=point.node_step,
        max_steps=max_steps,
        available_tools=tuple(available_tools),
        final_step_policy=final_step_policy,
        final_step_forced_tools=tuple(final_step_forced_tools),
    )


def _type(message: MessageLike) -> str:
    return message.type if isinstance(message, AiMessage) else str(message.get("type", ""))


def _role(message: MessageLike) -> str:
    return message.role if isinstance(message, AiMessage) else str(message.get("role", ""))


def _id(message: MessageLike) -> str:
    return message.id if isinstance(message, AiMessage) else str(message.get("id", ""))


def _call_names(message: MessageLike) -> list[str | None]:
    """The tool name of each call the action made, in order (a `tool_code` action is one call)."""
    if isinstance(message, AiMessage):
        calls, tool_name = message.tool_calls, message.meta("tool_name")
    else:
        metadata = message.get("metadata") or {}
        calls = metadata.get("tool_calls") or message.get("tool_calls") or []
        tool_name = metadata.get("tool_name")
    names = [call_name(call) if isinstance(call, Mapping) else None for call in calls]
    return names or [tool_name if isinstance(tool_name, str) else None]
