"""`build_context`: the one entry of the engine. Session + policy + fences + tick → BuildResult.

The pipeline, in linnkit's order (spec §5): preprocess → states → providers → order → wire → reminders.
Each step lives in its own module; this one only calls them in order and assembles the result.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any

from engine.copyset import mark_copy, reminder_registry_for, use_copy
from engine.errors import ContextProviderError
from engine.hygiene import hygiene_warnings
from engine.messages import AiMessage
from engine.preprocess.base import Entry, Removal, StageOutput
from engine.preprocess.fence_assembly import assemble_current_turn
from engine.preprocess.fence_lifetime import apply_fence_lifetime
from engine.preprocess.observation_sim import simulate_governance
from engine.preprocess.purification import purify_history
from engine.preprocess.replay_guard import guard_tool_replay
from engine.preprocess.tool_history import compress_tool_history
from engine.providers.checkpoint import run_checkpoint
from engine.providers.core import MustKeep, TruncationRule, run_core
from engine.providers.state import ProviderReport, State, kept_count, kept_tokens
from engine.providers.summarization import TriggerCheck, run_summarization
from engine.providers.working_memory import run_working_memory
from engine.result import BuildFailure, BuildResult, Event
from engine.summarizer import OfflineSummarizer, SummarizerPort
from engine.tokens import TokenizerPort, content_token_count, tokenizer_from_policy
from engine.trace import TraceRecorder
from engine.wire import format_message

DEFAULT_MODEL_ID = "default"


@dataclass(slots=True)
class BuildContext:
    """What every stage may read: the effective policy, budget numbers, the tokenizer, the summarizer."""

    policy: Any
    tokenizer: TokenizerPort
    total_budget: int
    avg_chars_per_token: float
    summarizer: SummarizerPort | None
    model_id: str
    now: int
    trigger_check: TriggerCheck | None = None

    def estimate(self, message: AiMessage) -> int:
        return self.tokenizer.estimate_message(message, self.model_id)

    def content_tokens(self, texts: list[str]) -> int:
        """The summarization pre-check's count: tiktoken by the model id, as linnkit (spec §5.4, §9 D8)."""
        return content_token_count(texts, self.model_id, self.avg_chars_per_token)


@dataclass(slots=True)
class Pipeline:
    """Intermediate products of one build, handed to `engine.assemble` to make the result."""

    ctx: BuildContext
    session: list[AiMessage]
    entries: list[Entry] = field(default_factory=list)
    removals: list[Removal] = field(default_factory=list)
    states: list[State] = field(default_factory=list)
    events: list[Event] = field(default_factory=list)
    strategies: list[str] = field(default_factory=list)
    summary_events: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    preprocessed: list[AiMessage] = field(default_factory=list)
    preprocess_done: bool = False
    trace: TraceRecorder | None = None


def build_context(
    session: Sequence[AiMessage] | Any,
    policy: Any = None,
    *,
    fences: Any = None,
    tick: Any = None,
    tokenizer: TokenizerPort | None = None,
    summarizer: SummarizerPort | None = None,
    model_id: str | None = None,
    now: int | None = None,
    honour_fence_descriptors: bool = True,
    reminder_registry: Any = None,
    observation_store: Any = None,
    copy: str = "zh",
    detail: bool = True,
) -> BuildResult:
    """Build the context linnkit would send for `session` (a list of AiMessage or a loaded Session).

    Raises PolicyValidationError / ConfigurationError for a policy the engine cannot run. A fatal stage
    error (TOOL_HISTORY_OVERFLOW, SUMMARIZATION_FAILED) is returned in `result.error`, not raised.
    With an `observation_store`, tool outputs are first governed as `toolOutput.observationGovernance`
    would have cut them at execution time (a simulation; linnkit does this when the tool returns).
    `copy="en"` writes tool summaries and built-in reminders in English (`engine.copyset`; "zh" is linnkit's).
    `detail=False` leaves out what only a reader of one build needs (cards, decisions, the trace, hygiene
    warnings): a replay's series reads tokens, markers and summaries, and is several times faster so.
    """
    from engine.assemble import assemble_result, failed_result
    from engine.fences import as_registry
    from engine.policy import check_runtime, define_context_policy, to_wire

    messages = list(getattr(session, "messages", session))
    effective = define_context_policy(policy)
    check_runtime(effective)
    registry = as_registry(fences)
    budget = effective.budget
    ctx = BuildContext(
        policy=effective,
        tokenizer=tokenizer or tokenizer_from_policy(effective.token_estimation),
        total_budget=budget.max_tokens - budget.reserved_for_response,
        avg_chars_per_token=effective.token_estimation.avg_chars_per_token,
        summarizer=summarizer if summarizer is not None else OfflineSummarizer(),
        model_id=model_id or DEFAULT_MODEL_ID,
        now=now if now is not None else int(time.time() * 1000),
    )
    run = Pipeline(ctx, messages, warnings=hygiene_warnings(messages) if detail else [])
    if copy != "zh" and reminder_registry is None:
        reminder_registry = reminder_registry_for(copy)
    with use_copy(copy):
        try:
            _preprocess(run, registry, observation_store)
            wire_policy = to_wire(effective)
            _run_providers(run, registry, honour_fence_descriptors, wire_policy)
        except ContextProviderError as error:
            return failed_result(run, BuildFailure(error.code, str(error.args[0]), error.provider_name))
        result = assemble_result(run, registry, tick, wire_policy, reminder_registry, detail=detail)
    return result if copy == "zh" else mark_copy(result, copy)


def _preprocess(run: Pipeline, registry, observation_store) -> None:
    checkpoint_tool = run.ctx.policy.checkpoint.trigger_tool_name
    entries = [Entry(m, (i,)) for i, m in enumerate(run.session)]
    stages = (
        []
        if observation_store is None
        else [lambda e: simulate_governance(e, run.ctx.policy.tool_output, observation_store)]
    )
    stages += [
        lambda e: compress_tool_history(e, run.ctx.policy.tool_history, checkpoint_tool),
        lambda e: guard_tool_replay(e, run.ctx.policy.provider_replay, checkpoint_tool),
        purify_history,
    ]
    if registry is not None:
        stages += [lambda e: assemble_current_turn(e, registry), lambda e: apply_fence_lifetime(e, registry)]
    for stage in stages:
        try:
            output: StageOutput = stage(entries)
        except Exception as error:  # linnkit: only a fatal ContextProviderError aborts (spec §5.1)
            if isinstance(error, ContextProviderError) and error.fatal:
                raise
            run.warnings.append(f"a preprocessor failed and was skipped: {error!r}")
            continue
        entries = output.entries
        run.removals.extend(output.removals)
        run.events.extend(output.events)
        if output.strategy:
            run.strategies.append(output.strategy)
    run.entries = entries
    run.preprocessed = [e.message for e in entries]
    run.preprocess_done = True


def must_keep_of(policy: Any, registry, honour_descriptors: bool) -> MustKeep:
    """Core's must-keep policy; descriptor `mustKeep`/`maxBudgetFraction` join it (spec §9 D6)."""
    must_keep = policy.must_keep
    kinds = set(must_keep.always_keep_fence_kinds)
    rules = [
        TruncationRule(r.fence_kind, r.max_budget_fraction, r.strategy_name)
        for r in must_keep.truncation_rules
    ]
    if registry is not None and honour_descriptors:
        for descriptor in registry.list():
            if descriptor.must_keep:
                kinds.add(descriptor.kind)
            fraction = descriptor.max_budget_fraction
            if fraction is not None and fraction < 1:
                rules.append(TruncationRule(descriptor.kind, fraction, f"fence-budget:{descriptor.kind}"))
    return MustKeep(frozenset(must_keep.always_keep_types), frozenset(kinds), tuple(rules))


def _run_providers(run: Pipeline, registry, honour_descriptors: bool, effective_policy: dict) -> None:
    ctx = run.ctx
    run.states = [State(e.message, i, e.origins, ctx.estimate(e.message)) for i, e in enumerate(run.entries)]
    run.trace = TraceRecorder(ctx.policy.context_trace, effective_policy, ctx.total_budget)
    available = ctx.total_budget
    must_keep = must_keep_of(ctx.policy, registry, honour_descriptors)
    providers = [
        ("CoreContextProvider", lambda: (*run_core(run.states, must_keep, ctx), [])),
        ("WorkingMemoryProvider", lambda: (*run_working_memory(run.states, ctx), [])),
        ("CheckpointProvider", lambda: (*run_checkpoint(run.states, ctx), [])),
    ]
    for name, provider in providers:
        available = _run_one(run, name, provider, available)
    # Summarization has its own skip rule (its pre-check), so it runs even when nothing is left.
    summarize = lambda: run_summarization(run.states, available, ctx)  # noqa: E731
    _run_one(run, "SummarizationProvider", summarize, available, may_skip=False)


def _run_one(run: Pipeline, name: str, provider, available: int, *, may_skip: bool = True) -> int:
    """Run one provider, trace it, and return the remaining budget (spec §5.2)."""
    before = (kept_tokens(run.states), kept_count(run.states))
    started = time.perf_counter()
    if may_skip and available <= 0:
        report, events, persisted = ProviderReport(name, skipped=True), [], []
    else:
        saved = _snapshot(run.states)
        try:
            report, events, persisted = provider()
        except Exception as error:  # linnkit swallows a failing provider and loses its changes
            if isinstance(error, ContextProviderError) and error.fatal:
                raise
            run.states[:] = _restore(saved)
            run.warnings.append(f"{name} failed; its changes were discarded: {error!r}")
            return available
    after = (kept_tokens(run.states), kept_count(run.states))
    available -= report.tokens_used
    run.trace.provider(report, before, after, (time.perf_counter() - started) * 1000, available)
    run.events.extend(events)
    run.strategies.extend(report.strategies)
    run.summary_events.extend(persisted)
    return available


_STATE_FIELDS = (
    "action",
    "phase",
    "strategy",
    "processed",
    "tokens",
    "replacement_source_ids",
    "truncation",
    "kept",
)


_read_state = attrgetter(*_STATE_FIELDS)


def _snapshot(states: list[State]) -> list[tuple[State, tuple]]:
    return [(s, _read_state(s)) for s in states]


def _restore(saved: list[tuple[State, tuple]]) -> list[State]:
    for state, values in saved:
        for field_name, value in zip(_STATE_FIELDS, values, strict=True):
            setattr(state, field_name, value)
    return [state for state, _ in saved]


def final_order(states: list[State]) -> list[State]:
    """Kept states: system_prompt, then summaries, then the rest, each by originalIndex (spec §5.5)."""
    kept = [s for s in states if s.kept]

    def block(state: State) -> int:
        kind = state.message.type
        return 0 if kind == "system_prompt" else 1 if kind == "history_summary" else 2

    return sorted(kept, key=lambda s: (block(s), s.index))


def wire_of(states: list[State], registry) -> list[dict[str, Any] | None]:
    return [format_message(s.current, registry) for s in states]
