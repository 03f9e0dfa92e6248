"""`build_context`: the one entry of the engine. Session + policy + fences + tick → BuildResult.

The pipeline, in linnkit's order (spec §5): preprocess → states → providers → order → wire → reminders.
Each step lives in its own module; this one only calls them in order and hands the `Pipeline` to
`engine.assemble`. Preprocessor outputs are reused across builds when a stage's inputs did not change
(`engine.stage_cache`): a policy edit that a stage does not read costs that stage nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from operator import attrgetter
from typing import Any

from engine.assemble import assemble_result, failed_result
from engine.calibration import (
    CalibratedTokenizer,
    CalibrationSample,
    TokenRoute,
    calibrated,
    calibration_state,
)
from engine.copyset import active_copy, mark_copy, reminder_registry_for, use_copy
from engine.errors import ContextProviderError
from engine.fences import FenceDescriptor, FenceRegistry, as_registry
from engine.groups import CHECKPOINT_TOOL
from engine.hygiene import hygiene_warnings
from engine.lineage import known
from engine.messages import AiMessage
from engine.observation import ObservationPreviewPort
from engine.pipeline import BuildContext, ContextProvider, MustKeep, Pipeline, TruncationRule
from engine.policy import ContextPolicy, check_runtime, define_context_policy, to_wire
from engine.preprocess.base import ID_SCOPE, Entry, StageOutput
from engine.preprocess.fence_assembly import assemble_current_turn
from engine.preprocess.fence_lifetime import apply_fence_lifetime
from engine.preprocess.observation_sim import simulate_governance
from engine.preprocess.purification import purify_history
from engine.preprocess.replay_guard import guard_tool_replay
from engine.preprocess.tool_history import compress_tool_history
from engine.providers.checkpoint import run_checkpoint
from engine.providers.core import run_core
from engine.providers.state import ProviderReport, State, States, kept_states
from engine.providers.summarization import run_summarization
from engine.providers.working_memory import run_working_memory
from engine.reminders import ReminderRegistry
from engine.result import BuildFailure, BuildResult
from engine.session import Session
from engine.session_lines import messages_from
from engine.stage_cache import STAGE_CACHE, entries_for
from engine.summarizer import OfflineSummarizer, SummarizerPort
from engine.ticks import TickState
from engine.tokens import DefaultTokenizer, TokenizerPort, tokenizer_from_policy
from engine.trace import TraceRecorder

DEFAULT_MODEL_ID = "default"
_TOKENS = attrgetter("tokens")

Fences = FenceRegistry | Iterable[FenceDescriptor] | Mapping[str, Any] | None


def build_context(
    session: Sequence[AiMessage] | Session,
    policy: ContextPolicy | Mapping[str, Any] | None = None,
    *,
    fences: Fences = None,
    tick: TickState | None = None,
    tokenizer: TokenizerPort | None = None,
    summarizer: SummarizerPort | None = None,
    model_id: str | None = None,
    now: int | None = None,
    honour_fence_descriptors: bool = True,
    reminder_registry: ReminderRegistry | None = None,
    observation_store: ObservationPreviewPort | None = None,
    copy: str = "zh",
    detail: bool = True,
    token_route: TokenRoute | None = None,
    calibration_samples: Sequence[CalibrationSample] = (),
) -> BuildResult:
    """Build the context linnkit would send for `session` (a list of AiMessage or a loaded Session).

    Raises PolicyValidationError / ConfigurationError for a policy the engine cannot run. A fatal stage
    error (TOOL_HISTORY_OVERFLOW, SUMMARIZATION_FAILED) is returned in `result.error`, not raised.
    With an `observation_store`, tool outputs are first governed as `toolOutput.observationGovernance`
    would have cut them at execution time (a simulation; linnkit does this when the tool returns).
    `copy="en"` writes tool summaries and built-in reminders in English (`engine.copyset`; "zh" is linnkit's).
    `detail=False` leaves out what only a reader of one build needs (cards, decisions, the trace, hygiene
    warnings): a replay's series reads tokens, markers and summaries, and is several times faster so.
    `token_route` and `calibration_samples` are what a host passes linnkit for token calibration
    (`engine.calibration`): applied when `tokenEstimation.calibration.enabled` and enough samples match.
    """
    given = getattr(session, "messages", session)  # a Session, or anything holding .messages
    if known(given):  # a replay's step list: never changed
        messages = given
    else:  # a loaded session's messages were checked as they were read; a caller's list is checked here
        messages = list(given) if isinstance(session, Session) else messages_from(given)
    effective = define_context_policy(policy)
    check_runtime(effective)
    registry = as_registry(fences)
    budget = effective.budget
    calibration = calibration_state(effective.token_estimation.calibration, token_route, calibration_samples)
    tokenizer = tokenizer or tokenizer_from_policy(effective.token_estimation)
    ctx = BuildContext(
        policy=effective,
        tokenizer=calibrated(tokenizer, calibration) if calibration.applied else tokenizer,
        total_budget=budget.max_tokens - budget.reserved_for_response,
        avg_chars_per_token=effective.token_estimation.avg_chars_per_token,
        summarizer=summarizer if summarizer is not None else OfflineSummarizer(),
        model_id=model_id or DEFAULT_MODEL_ID,
        now=now if now is not None else int(time.time() * 1000),
        must_keep=must_keep_of(effective, registry, honour_fence_descriptors),
        calibration=calibration,
    )
    run = Pipeline(ctx, messages, registry, warnings=hygiene_warnings(messages) if detail else [])
    run.traced = detail and effective.context_trace.enabled
    if copy != "zh" and reminder_registry is None:
        reminder_registry = reminder_registry_for(copy)
    with use_copy(copy):
        try:
            _preprocess(run, observation_store)
            wire_policy = _wire_form(effective)
            _run_providers(run, wire_policy)
        except ContextProviderError as error:
            return failed_result(run, BuildFailure(error.code, str(error.args[0]), error.provider_name))
        result = assemble_result(run, tick, wire_policy, reminder_registry, detail=detail)
    return result if copy == "zh" else mark_copy(result, copy)


# The policy's wire form for the result and the trace: a frozen policy object gives the same dict every
# time (a replay's steps and a TUI's rebuilds pass the same object), so it is made once per object. The
# dict is shared between results: like the rest of a BuildResult, it is read, never changed.
_WIRE_FORMS: list[tuple[ContextPolicy, dict[str, Any]]] = []


def _wire_form(policy: ContextPolicy) -> dict[str, Any]:
    for held, wire in _WIRE_FORMS:
        if held is policy:
            return wire
    wire = to_wire(policy)
    _WIRE_FORMS.insert(0, (policy, wire))
    del _WIRE_FORMS[4:]
    return wire


Stage = tuple[str, Callable[[list[Entry]], StageOutput], tuple[Any, ...] | None]


def _stages(run: Pipeline, observation_store: ObservationPreviewPort | None) -> list[Stage]:
    """The preprocessors in order, each with the inputs besides its entries that it reads (its policy
    group, the checkpoint tool's name, the fence descriptors), or None when those cannot be compared (an
    observation store is read from disk). The function itself is part of the key, so a stage swapped
    for another (a test's stand-in) never meets the other's outputs."""
    policy, registry = run.ctx.policy, run.registry
    checkpoint_tool = policy.checkpoint.trigger_tool_name
    scope = (active_copy(),)  # summary wording (created ids are scoped after the stages: `scope_created`)
    stages: list[Stage] = []
    if observation_store is not None:
        tool_output = policy.tool_output
        stages.append(("governance", lambda e: simulate_governance(e, tool_output, observation_store), None))
    tool_history, replay = policy.tool_history, policy.provider_replay
    stages += [
        (
            "tool_history",
            # linnkit's compressor knows only the built-in checkpoint tool, whatever the trigger tool is
            lambda e: compress_tool_history(e, tool_history, CHECKPOINT_TOOL),
            (compress_tool_history, tool_history, CHECKPOINT_TOOL, scope),
        ),
        (
            "replay_guard",
            lambda e: guard_tool_replay(e, replay, checkpoint_tool),
            (guard_tool_replay, replay, checkpoint_tool, scope),
        ),
        ("purification", purify_history, (purify_history,)),
    ]
    if registry is not None:
        descriptors = tuple(registry.list())
        stages += [
            (
                "fence_assembly",
                lambda e: assemble_current_turn(e, registry),
                (assemble_current_turn, descriptors, scope),
            ),
            (
                "fence_lifetime",
                lambda e: apply_fence_lifetime(e, registry),
                (apply_fence_lifetime, descriptors),
            ),
        ]
    return stages


def _preprocess(run: Pipeline, observation_store: ObservationPreviewPort | None) -> None:
    entries = entries_for(run.session)
    for name, stage, key in _stages(run, observation_store):
        try:
            output = STAGE_CACHE.run(name, stage, entries, key)
        except Exception as error:  # linnkit: only a fatal ContextProviderError aborts (spec §5.1)
            if isinstance(error, ContextProviderError) and error.fatal:
                raise
            run.warnings.append(f"a preprocessor failed and was skipped: {error!r}")
            continue
        entries = output.entries
        run.removal_lists.append(output.removals)
        run.events.extend(output.events)
        if output.strategy:
            run.strategies.append(output.strategy)
    run.unscoped = entries
    run.entries, run.scope = STAGE_CACHE.scoped(entries), ID_SCOPE.get()
    run.preprocess_done = True


def must_keep_of(policy: ContextPolicy, registry: FenceRegistry | None, honour_descriptors: bool) -> MustKeep:
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


def _providers() -> list[tuple[str, ContextProvider]]:
    """Core, working memory, checkpoint (spec §5.2); summarization runs after them with its own skip rule."""
    return [
        ("CoreContextProvider", run_core),
        ("WorkingMemoryProvider", run_working_memory),
        ("CheckpointProvider", run_checkpoint),
    ]


def _run_providers(run: Pipeline, effective_policy: dict[str, Any]) -> None:
    ctx = run.ctx
    run.states = _initial_states(run)
    tokenizer = ctx.tokenizer
    local = tokenizer.local if isinstance(tokenizer, CalibratedTokenizer) else tokenizer.estimate_message
    run.trace = TraceRecorder(
        ctx.policy.context_trace,
        effective_policy,
        ctx.total_budget,
        ctx.calibration,
        lambda message: local(message, ctx.model_id),
    )
    available = ctx.total_budget
    done: list[tuple[ContextProvider, int]] = []
    for name, provider in _providers():
        available = _run_one(run, name, provider, available, done)
    # Summarization has its own skip rule (its pre-check), so it runs even when nothing is left.
    _run_one(run, "SummarizationProvider", run_summarization, available, done, may_skip=False)


def _initial_states(run: Pipeline) -> list[State]:
    tokenizer = run.ctx.tokenizer
    inner = tokenizer.inner if isinstance(tokenizer, CalibratedTokenizer) else tokenizer
    # The default tokenizer's count does not read a message's id: the created messages are counted before
    # their ids were scoped, as the very objects earlier steps counted (a replay scopes them anew per summary)
    counted = run.unscoped if isinstance(inner, DefaultTokenizer) and run.unscoped else run.entries
    tokens = STAGE_CACHE.tokens(counted, tokenizer, run.ctx.model_id)
    origin = STAGE_CACHE.starting_states(run.entries, tokens)
    return States(origin.states, tokens, STAGE_CACHE.grown_from(tokens), starting=True, origin=origin)


_UNTRACED = (0, 0)  # a build whose trace is not made does not count what each provider kept


def _kept(states: list[State]) -> tuple[int, int]:
    """Kept tokens and kept count, for the trace's provider event."""
    kept = kept_states(states)
    return sum(map(_TOKENS, kept)), len(kept)


def _run_one(
    run: Pipeline,
    name: str,
    provider: ContextProvider,
    available: int,
    done: list[tuple[ContextProvider, int]],
    *,
    may_skip: bool = True,
) -> int:
    """Run one provider, trace it, and return the remaining budget (spec §5.2). `done` lists the providers
    that ran before it with the budget each was given."""
    before = _kept(run.states) if run.traced else _UNTRACED
    started = time.perf_counter()
    if may_skip and available <= 0:
        report, events, persisted = ProviderReport(name, skipped=True), (), ()
    else:
        try:
            outcome = provider(run.states, available, run.ctx)
        except Exception as error:  # linnkit swallows a failing provider and loses its changes
            if isinstance(error, ContextProviderError) and error.fatal:
                raise
            run.states = _states_before(run, done)
            run.warnings.append(f"{name} failed; its changes were discarded: {error!r}")
            return available
        done.append((provider, available))
        report, events, persisted = outcome.report, outcome.events, outcome.persisted
        if outcome.trigger_check is not None:
            run.trigger_check = outcome.trigger_check
    after = _kept(run.states) if run.traced else _UNTRACED
    available -= report.tokens_used
    run.trace.provider(report, before, after, (time.perf_counter() - started) * 1000, available)
    run.events.extend(events)
    run.strategies.extend(report.strategies)
    run.summary_events.extend(persisted)
    return available


def _states_before(run: Pipeline, done: list[tuple[ContextProvider, int]]) -> list[State]:
    """The states as they were before a failed provider: the providers before it run again on fresh states
    (they are deterministic). Cheaper than a snapshot before every provider, and failures are rare."""
    states = _initial_states(run)
    for provider, available in done:
        provider(states, available, run.ctx)
    return states
