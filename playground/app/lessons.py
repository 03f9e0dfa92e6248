"""Lessons as data: a title, a goal and steps whose checks the engine evaluates on a build. No UI import.

A lesson is a YAML mapping (a side file `SESSION.lesson.yaml`, read within the bounds of every YAML file):

    title: Working memory under a small budget
    goal: See which messages drop first when the budget shrinks.
    start: {budget: {maxTokens: 8000}}          # optional policy layer the lesson starts from
    steps:
      - instruction: Lower budget.maxTokens until the first question (m002) is dropped.
        hint: Working memory is 70% of maxTokens minus the reserve; try 1500.
        answer: {budget: {maxTokens: 1500}}      # optional: the edit that completes the step
        check: {message: m002, fate: dropped}

A check is one mapping naming one kind (the keys beside it are its arguments); nothing is evaluated as
code. Kinds: `message` (+ `fate`: kept|dropped|replaced|compressed, optional `reason` prefix),
`strategy` (+ `applied`), `reminder` (+ `fired`), `event` (an event kind, + `fired`), `summarization`
(fires|none), `policy` (a dotted field + `is`), `tokens` (finalTokens|free|used|totalBudget + `is`),
`step` (N or `last` + `then`: a check on that replay step's build, and/or `carried`: a comparison on the
summaries it was given), `first_step` (a marker S/C/R + `is`, on the first replay step showing it), and
`all`/`any`/`not`. A comparison (`is`) is a scalar (equals) or one of `equals`, `below`, `above`,
`at_most`, `at_least` with a value.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from engine.build import build_context
from engine.policy import ContextPolicy, PolicyValidationError, effective_policy, runtime_problems
from engine.policy.lint import dotted, unknown_keys
from engine.replay import StepBuild, replay_session
from engine.result import BuildResult
from engine.safe_input import InputError, load_yaml, read_text_file
from engine.session import Session

__all__ = [
    "Check",
    "Lesson",
    "LessonError",
    "side_lesson",
    "LessonStep",
    "LessonRun",
    "StepView",
    "build_view",
    "check_step",
    "lesson_path_for",
    "load_lesson",
    "load_lesson_for",
    "parse_lesson",
    "session_view",
    "start_policy",
]

FATES = ("kept", "dropped", "replaced", "compressed")
COMPARISONS: dict[str, Callable[[Any, Any], bool]] = {
    "equals": lambda a, b: a == b,
    "below": lambda a, b: a < b,
    "above": lambda a, b: a > b,
    "at_most": lambda a, b: a <= b,
    "at_least": lambda a, b: a >= b,
}
TOKEN_FIELDS = ("finalTokens", "free", "used", "totalBudget")
MARKS = ("S", "C", "R")


class LessonError(ValueError):
    """A lesson file that cannot be used; the message names the file and the field."""


Check = Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class LessonStep:
    instruction: str
    check: Check
    hint: str = ""
    answer: dict[str, Any] = field(default_factory=dict)  # a policy layer that completes the step


@dataclass(frozen=True, slots=True)
class Lesson:
    title: str
    goal: str
    steps: tuple[LessonStep, ...]
    start: dict[str, Any] = field(default_factory=dict)  # policy layer over the session's own
    source: str = "<lesson>"

    def answer_layer(self, upto: int | None = None) -> dict[str, Any]:
        """The start layer with the answers of the first `upto` steps (all by default) merged in."""
        layer = merge_layer({}, self.start)
        for step in self.steps[: len(self.steps) if upto is None else upto]:
            layer = merge_layer(layer, step.answer)
        return layer

    @property
    def needs_replay(self) -> bool:
        return any(_uses_replay(step.check) for step in self.steps)


def start_policy(lesson: Lesson, opened: ContextPolicy, defaults: str = "seed") -> ContextPolicy:
    """The policy the lesson starts from: the one the session opened with, the lesson's `start` over it.
    A LessonError when the engine would refuse it (`start: {budget: {maxTokens: 1000}}` over a session
    that reserves 2,400 tokens for the response)."""
    if not lesson.start:
        return opened
    policy = effective_policy(lesson.start, opened, defaults)
    problems = runtime_problems(policy)
    if problems:
        field, reason = ".".join(problems[0].path), problems[0].message
        raise LessonError(f"{lesson.source}: start: {field}: {reason} (over the session's own policy)")
    return policy


def merge_layer(base: Mapping[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """Group-wise merge of two camelCase policy layers (fields of `top` win)."""
    out = {group: dict(fields) if isinstance(fields, dict) else fields for group, fields in base.items()}
    for group, fields in top.items():
        if isinstance(fields, dict) and isinstance(out.get(group), dict):
            out[group] = {**out[group], **fields}
        else:
            out[group] = fields
    return out


# -- reading ----------------------------------------------------------------------------------------


def lesson_path_for(session_path: str | Path) -> Path:
    path = Path(session_path)
    return path.with_name(path.name.removesuffix(".jsonl") + ".lesson.yaml")


def load_lesson_for(session_path: str | Path) -> Lesson | None:
    """The side lesson of a session, or None when it has none."""
    path = lesson_path_for(session_path)
    if not path.exists() and not path.is_symlink():
        return None
    return load_lesson(path)  # a FIFO or a folder there is named (read_text_file refuses it unopened)


def side_lesson(session_path: str | Path) -> tuple[Lesson | None, str | None]:
    """The side lesson of a session and None, or None and why it could not be read: a bad lesson beside a
    session never keeps the session from opening."""
    try:
        return load_lesson_for(session_path), None
    except LessonError as exc:
        return None, f"lesson not opened: {exc}"


def load_lesson(path: str | Path) -> Lesson:
    try:
        text = read_text_file(path)  # a regular file only: a FIFO would block
    except InputError as exc:
        raise LessonError(str(exc)) from None
    return parse_lesson(text, str(path))


def parse_lesson(text: str, source: str = "<lesson>") -> Lesson:
    try:
        data = load_yaml(text, source).data  # bounded: an alias bomb or a deep nest is refused
    except InputError as exc:
        raise LessonError(str(exc)) from None
    return lesson_from_dict(data, source)


def lesson_from_dict(data: Any, source: str = "<lesson>") -> Lesson:
    if not isinstance(data, dict):
        raise LessonError(f"{source}: a lesson must be a mapping with title, goal and steps")
    title, goal = _text(data, "title", source), _text(data, "goal", source, required=False)
    steps = data.get("steps")
    if not isinstance(steps, list) or not steps:
        raise LessonError(f"{source}: steps: must be a non-empty list")
    parsed = tuple(_step(item, f"steps[{i}]", source) for i, item in enumerate(steps))
    return Lesson(title, goal, parsed, _layer(data.get("start"), "start", source), source)


def _step(item: Any, where: str, source: str) -> LessonStep:
    if not isinstance(item, dict):
        raise LessonError(f"{source}: {where}: must be a mapping with instruction and check")
    check = item.get("check")
    validate_check(check, f"{where}.check", source)
    return LessonStep(
        instruction=_text(item, "instruction", source, where),
        check=check,
        hint=_text(item, "hint", source, where, required=False),
        answer=_layer(item.get("answer"), f"{where}.answer", source),
    )


def _text(data: dict, key: str, source: str, where: str = "", *, required: bool = True) -> str:
    value = data.get(key)
    name = f"{where}.{key}" if where else key
    if value is None and not required:
        return ""
    if not isinstance(value, str) or not value.strip():
        raise LessonError(f"{source}: {name}: must be a non-empty string")
    return value.strip()


def _layer(value: Any, where: str, source: str) -> dict[str, Any]:
    """A policy layer the lesson applies (`start`, a step's `answer`), checked field by field as a policy
    file is: a lesson a teacher hands out must not fail (or do nothing) only when a student presses L."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not all(isinstance(v, dict) for v in value.values()):
        raise LessonError(f"{source}: {where}: must be a policy layer ({{group: {{field: value}}}})")
    for path, reason in unknown_keys(value):  # refused here, not ignored as a policy file's would be
        raise LessonError(f"{source}: {where}.{dotted(path)}: {reason.replace(', ignored', '')}")
    try:
        effective_policy(value, None)
    except PolicyValidationError as error:
        raise LessonError(f"{source}: {where}.{error.issues[0]}") from None
    return value


def validate_check(check: Any, where: str, source: str) -> None:
    """Raise LessonError naming the field when `check` is not a check this module can evaluate."""
    if not isinstance(check, dict):
        raise LessonError(f"{source}: {where}: must be a mapping naming one check kind")
    kinds = [k for k in check if k in _EVALUATORS]
    if len(kinds) != 1:
        got = ", ".join(map(str, check)) or "none"
        raise LessonError(f"{source}: {where}: must name exactly one of {', '.join(_EVALUATORS)}; got {got}")
    reason = _ARGUMENT_RULES.get(kinds[0], lambda c, w, s: None)(check, where, source)
    if reason:
        raise LessonError(f"{source}: {where}: {reason}")


def _combined(check: Check, where: str, source: str) -> str | None:
    kind = "all" if "all" in check else "any"
    if not isinstance(check[kind], list) or not check[kind]:
        return f"{kind}: must be a non-empty list of checks"
    for i, inner in enumerate(check[kind]):
        validate_check(inner, f"{where}.{kind}[{i}]", source)
    return None


def _step_rule(check: Check, where: str, source: str) -> str | None:
    if not (check["step"] == "last" or (isinstance(check["step"], int) and check["step"] >= 1)):
        return "step: must be a step number (1, 2, ...) or 'last'"
    if "then" not in check and "carried" not in check:
        return "step: needs `then` (a check on that step's build) or `carried`"
    if "then" in check:
        validate_check(check["then"], f"{where}.then", source)
    if "carried" in check:
        _comparison(check["carried"], f"{where}.carried", source)
    return None


def _one_of(key: str, allowed: Sequence[str], default: str | None = None) -> Callable[..., str | None]:
    def rule(check: Check, where: str, source: str) -> str | None:
        if check.get(key, default) not in allowed:
            return f"{key}: must be one of {', '.join(allowed)}"
        if "is" in check or key in ("tokens", "first_step"):
            _comparison(check.get("is"), f"{where}.is", source)
        return None

    return rule


def _policy_rule(check: Check, where: str, source: str) -> str | None:
    _comparison(check.get("is"), f"{where}.is", source)
    return None


def _comparison(value: Any, where: str, source: str) -> None:
    if isinstance(value, dict):
        if len(value) != 1 or next(iter(value)) not in COMPARISONS:
            raise LessonError(f"{source}: {where}: must be one of {', '.join(COMPARISONS)} with a value")
    elif value is None:
        raise LessonError(f"{source}: {where}: missing (a value, or e.g. {{at_most: 2000}})")


# -- evaluating -------------------------------------------------------------------------------------


@dataclass
class StepView:
    """What a check sees: the current build, and the replay of the session under the same policy."""

    result: BuildResult
    replay: Callable[[], Sequence[StepBuild]] = lambda: ()
    carried: tuple[str, ...] = ()

    @cached_property
    def steps(self) -> Sequence[StepBuild]:
        return self.replay()


def session_view(session: Session, layer: Mapping[str, Any], **build_options: Any) -> StepView:
    """Build `session` under the policy `layer` (its header's fences, maxSteps and tools for the replay)."""
    header = session.header
    extra = header.extra if header else {}
    tools = extra.get("availableTools") if isinstance(extra.get("availableTools"), list) else ()
    options = {"fences": header.fences if header else None, **build_options}
    max_steps = (header.max_steps if header else None) or 80
    return build_view(session.messages, dict(layer), max_steps=max_steps, available_tools=tools, **options)


def build_view(
    messages: Sequence[Any], policy: Any, *, max_steps: int, available_tools: Sequence[str], **options: Any
) -> StepView:
    """The whole session built under `policy`; its replay is run only if a check asks for it."""
    result = build_context(list(messages), policy, **options)

    def replay() -> list[StepBuild]:
        return replay_session(
            list(messages), policy, max_steps=max_steps, available_tools=tuple(available_tools), **options
        )

    return StepView(result, replay)


def check_step(check: Check, view: StepView) -> bool:
    kind = next(k for k in check if k in _EVALUATORS)
    return _EVALUATORS[kind](check, view)


def _compare(actual: Any, wanted: Any) -> bool:
    if isinstance(wanted, dict):
        (op, value), = wanted.items()
        try:
            return actual is not None and COMPARISONS[op](actual, value)
        except TypeError:
            return False
    return actual == wanted


def _message(check: Check, view: StepView) -> bool:
    decision = view.result.decision_for(str(check["message"]))
    if decision is None:
        return False
    fate = check.get("fate", "kept")
    compressed = decision.reason == "replaced_by_tool_history_compression"
    holds = {
        "kept": decision.kept,
        "dropped": not decision.kept and not decision.reason.startswith("replaced_by_"),
        "replaced": decision.reason.startswith("replaced_by_"),
        "compressed": compressed,
    }[fate]
    return holds and decision.reason.startswith(str(check.get("reason", "")))


def _strategy(check: Check, view: StepView) -> bool:
    return (check["strategy"] in view.result.strategies_applied) == bool(check.get("applied", True))


def _reminder(check: Check, view: StepView) -> bool:
    return (check["reminder"] in view.result.reminder.hit_rule_ids) == bool(check.get("fired", True))


def _event(check: Check, view: StepView) -> bool:
    return any(e.kind == check["event"] for e in view.result.events) == bool(check.get("fired", True))


def _summarization(check: Check, view: StepView) -> bool:
    return bool(view.result.summary_events) == (check["summarization"] == "fires")


def _policy(check: Check, view: StepView) -> bool:
    value: Any = view.result.effective_policy
    for part in str(check["policy"]).split("."):
        value = value.get(part) if isinstance(value, dict) else None
    return _compare(value, check["is"])


def _tokens(check: Check, view: StepView) -> bool:
    account = view.result.tokens
    value = {
        "finalTokens": account.final_tokens,
        "free": account.free,
        "used": account.used,
        "totalBudget": account.total_budget,
    }[check["tokens"]]
    return _compare(value, check["is"])


def _step_check(check: Check, view: StepView) -> bool:
    steps = view.steps
    if not steps:
        return False
    number = len(steps) if check["step"] == "last" else check["step"]
    if number > len(steps):
        return False
    built = steps[number - 1]
    inner = StepView(built.result, lambda: steps, built.carried_ids)
    if "carried" in check and not _compare(len(built.carried_ids), check["carried"]):
        return False
    return "then" not in check or check_step(check["then"], inner)


def _first_step(check: Check, view: StepView) -> bool:
    first = next((s.number for s in view.steps if check["first_step"] in s.markers), None)
    return _compare(first, check["is"])


_EVALUATORS: dict[str, Callable[[Check, StepView], bool]] = {
    "message": _message,
    "strategy": _strategy,
    "reminder": _reminder,
    "summarization": _summarization,
    "event": _event,
    "policy": _policy,
    "tokens": _tokens,
    "step": _step_check,
    "first_step": _first_step,
    "all": lambda c, v: all(check_step(inner, v) for inner in c["all"]),
    "any": lambda c, v: any(check_step(inner, v) for inner in c["any"]),
    "not": lambda c, v: not check_step(c["not"], v),
}


_ARGUMENT_RULES: dict[str, Callable[[Check, str, str], str | None]] = {
    "all": _combined,
    "any": _combined,
    "not": lambda c, w, s: validate_check(c["not"], f"{w}.not", s),
    "step": _step_rule,
    "message": _one_of("fate", FATES, "kept"),
    "summarization": _one_of("summarization", ("fires", "none")),
    "tokens": _one_of("tokens", TOKEN_FIELDS),
    "first_step": _one_of("first_step", MARKS),
    "policy": _policy_rule,
}


def _uses_replay(check: Any) -> bool:
    if not isinstance(check, dict):
        return False
    if "step" in check or "first_step" in check:
        return True
    inner = check.get("all") or check.get("any") or ([check["not"]] if "not" in check else [])
    return any(_uses_replay(c) for c in inner)


@dataclass
class LessonRun:
    """A student's way through a lesson: steps are done in order, each once its check holds.

    `update` evaluates the current step on a new build; a step, once done, stays done (later edits may
    undo what it asked, as the next step often does). At most one step completes per build, so a step is
    completed by an edit made while it is current, never by the build that completed the one before.
    """

    lesson: Lesson
    done: list[bool] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.done = [False] * len(self.lesson.steps)

    @property
    def current(self) -> int | None:
        """Index of the first step not done yet; None when the lesson is complete."""
        return next((i for i, ok in enumerate(self.done) if not ok), None)

    @property
    def complete(self) -> bool:
        return all(self.done)

    def update(self, view: StepView) -> bool:
        """Evaluate the current step on `view`; True when it was completed by this build."""
        index = self.current
        if index is None or not check_step(self.lesson.steps[index].check, view):
            return False
        self.done[index] = True
        return True

    @property
    def current_step(self) -> LessonStep | None:
        index = self.current
        return None if index is None else self.lesson.steps[index]

    def reset(self) -> dict[str, Any]:
        """Start again; returns the policy layer the lesson starts from."""
        self.done = [False] * len(self.lesson.steps)
        return dict(self.lesson.start)
