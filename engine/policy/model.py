"""The `contextPolicy` model (spec §2.1): 12 groups plus `profileId`, as frozen pydantic models.

Attributes are snake_case, the wire form (aliases) is linnkit's camelCase. Defaults are the port's
("seed") ones; `engine.policy.merge` holds the `linnkit-0.21` overlay. Every field carries what a UI
control needs: `title` (label), `description` (two lines of help) and `json_schema_extra["ui"]`
(`step`, `coarseStep`, `uiMin`, `uiMax`, `unsetMeans`). Unknown keys are dropped silently, as
linnkit's zod schema does.
"""

from __future__ import annotations

import json
import math
import types
import typing
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, model_validator
from pydantic.alias_generators import to_camel
from pydantic_core import PydanticCustomError, PydanticKnownError

from engine.messages import MESSAGE_TYPES

RULE_CONFLICT_MESSAGE = "enabledRuleIds and disabledRuleIds cannot be configured at the same time"

# Built-in reminder rules in evaluation order (§5.7): the ids `enabledRuleIds`/`disabledRuleIds` select.
BUILTIN_REMINDER_RULE_IDS: tuple[str, ...] = (
    "max_steps_force_final_answer",
    "last_steps_hint",
    "tool_call_streak_every_ten",
    "periodic_taskstate_reflection",
    "context_budget_warning",
)
BUILTIN_TRIGGER_KINDS: tuple[str, ...] = (
    "phase-equals",
    "remaining-steps-leq",
    "step-count-modulo",
    "tool-call-streak",
    "budget-warning",
    "agent-has-tool",
)


def _js_int(value: Any) -> Any:
    """JSON numbers have no int/float split: accept `5.0` where an integer is expected, as zod does."""
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        return int(value)
    return value


def _json_record(value: dict[str, Any]) -> dict[str, Any]:
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError) as err:
        reason = {"reason": str(err)}
        raise PydanticCustomError("not_json", "must be JSON-serialisable ({reason})", reason) from None
    return value


# Constraints first, then the before-validator, so that the JSON Schema keeps standard keywords.
# Integers stay within JavaScript's safe range: past it linnkit's counts lose their units, and ours would
# overflow the floats they meet (a `toolCallOverhead` of 1e308 ended a replay in an internal error).
# (checked after the constraints, so that the controls and the JSON Schema keep their own bounds)
SAFE = 2**53 - 1


def _safe_int(value: int) -> int:
    if value > SAFE:
        raise PydanticKnownError("less_than_equal", {"le": SAFE})
    if value < -SAFE:
        raise PydanticKnownError("greater_than_equal", {"ge": -SAFE})
    return value


Int = Annotated[int, BeforeValidator(_js_int), AfterValidator(_safe_int)]
PosInt = Annotated[int, Field(gt=0), BeforeValidator(_js_int), AfterValidator(_safe_int)]
NonNegInt = Annotated[int, Field(ge=0), BeforeValidator(_js_int), AfterValidator(_safe_int)]
Fraction = Annotated[float, Field(ge=0, le=1)]
PosFloat = Annotated[float, Field(gt=0)]
NonEmptyStr = Annotated[str, Field(min_length=1)]
JsonRecord = Annotated[dict[str, Any], AfterValidator(_json_record)]
MessageType = Literal[MESSAGE_TYPES]  # type: ignore[valid-type]


def knob(
    default: Any = None,
    label: str = "",
    help: str = "",
    *,
    factory: Any = None,
    step: float | None = None,
    coarse: float | None = None,
    ui: tuple[float | None, float | None] = (None, None),
    unset: Any = None,
    log: bool = False,
) -> Any:
    """A field with its UI metadata; `unset` is what the engine uses when a `None` field is left unset;
    `log` asks for a logarithmic slider (a range spanning orders of magnitude)."""
    meta = {
        "step": step,
        "coarseStep": coarse,
        "uiMin": ui[0],
        "uiMax": ui[1],
        "unsetMeans": unset,
        "scale": "log" if log else None,
    }
    extra = {"ui": {k: v for k, v in meta.items() if v is not None}}
    if factory is not None:
        return Field(default_factory=factory, title=label, description=help, json_schema_extra=extra)
    return Field(default, title=label, description=help, json_schema_extra=extra)


def _group(model: type[BaseModel], label: str, help: str) -> Any:
    return Field(default_factory=model, title=label, description=help)


class PolicyModel(BaseModel):
    """Base of every policy model: camelCase aliases, unknown keys ignored, strict types, immutable."""

    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        strict=True,
        frozen=True,
        allow_inf_nan=False,
    )


class BudgetPolicy(PolicyModel):
    """Token budget: `totalBudget = maxTokens − reservedForResponse`."""

    max_tokens: PosInt = knob(
        120_000,
        "Max tokens",
        "The context window the build may fill, the response included.\n"
        "Seed default 120000 (§9 D1); linnkit 0.21 uses 232000.",
        step=1_000,
        coarse=10_000,
        ui=(1_000, 1_000_000),
        log=True,
    )
    reserved_for_response: NonNegInt = knob(
        2_400,
        "Reserved for response",
        "Tokens kept free for the model's reply; totalBudget = maxTokens − this.\n"
        "The engine refuses 0 or a value not below maxTokens.",
        step=100,
        coarse=1_000,
        ui=(0, 128_000),
    )
    working_memory_budget_percentage: Fraction = knob(
        0.7,
        "Working-memory share",
        "Share of the total budget working memory may fill (P1–P3).\n"
        "wmBudget = floor(totalBudget × share); the engine refuses 0.",
        step=0.01,
        coarse=0.1,
        ui=(0, 1),
    )

    @property
    def total_budget(self) -> int:
        return self.max_tokens - self.reserved_for_response


class ToolHistoryPolicy(PolicyModel):
    """The tool-history compressor (preprocessor 0) and the working-memory tool caps."""

    strategy: Literal["per-pair", "per-run", "none"] = knob(
        "per-run",
        "Strategy",
        "Which old tool groups survive preprocessing: the latest N pairs,\n"
        "the groups of the latest N runs, or all of them (none).",
    )
    retention_mode: Literal["drop", "compress"] = knob(
        "compress",
        "Old tool groups",
        "drop removes tool groups outside the window; compress rewrites each\n"
        "as one assistant sentence. Seed default compress (§9 D4); linnkit 0.21 drops.",
    )
    keep_latest_tool_pairs: NonNegInt = knob(
        2,
        "Keep latest pairs",
        "per-pair: how many of the newest tool groups stay as they are.\nIgnored by the other strategies.",
        step=1,
        coarse=5,
        ui=(0, 50),
    )
    keep_latest_runs: NonNegInt = knob(
        1,
        "Keep latest runs",
        "per-run: tool groups of the newest N runs (user turns) stay.\nIgnored by the other strategies.",
        step=1,
        coarse=2,
        ui=(0, 20),
    )
    max_interaction_groups: NonNegInt = knob(
        12,
        "Max interaction groups",
        "Hard cap on the tool groups kept, in preprocessing and working memory.\n"
        "Over the cap: keep-latest trims silently, fail-fast raises. The engine refuses 0.",
        step=1,
        coarse=5,
        ui=(0, 100),
    )
    overflow_strategy: Literal["keep-latest", "fail-fast"] = knob(
        "keep-latest",
        "On overflow",
        "What happens when one run has more groups than the cap:\n"
        "keep-latest keeps the newest, fail-fast raises TOOL_HISTORY_OVERFLOW.",
    )
    max_pair_tokens: NonNegInt = knob(
        6_000,
        "Max pair tokens",
        "A tool group costing more than this has its output summarised in working memory.\n"
        "The engine refuses 0.",
        step=100,
        coarse=1_000,
        ui=(0, 50_000),
    )
    max_output_summary_tokens: NonNegInt = knob(
        1_000,
        "Output summary tokens",
        "Length limit of the summary that replaces an oversized tool output.\n"
        "The engine requires 0 < this ≤ maxPairTokens.",
        step=50,
        coarse=500,
        ui=(0, 20_000),
    )


class ObservationGovernancePolicy(PolicyModel):
    """Execution-time observation limits (not an engine input; the playground may simulate them)."""

    enabled: bool = knob(
        True,
        "Observation governance",
        "At execution time, cut a tool observation over the limits to a preview.\n"
        "Not an engine input: the playground may simulate it.",
    )
    max_chars: PosInt = knob(
        20_000,
        "Max observation chars",
        "An observation longer than this becomes a preview plus observationTruncation.\n"
        "Counted in UTF-16 code units.",
        step=500,
        coarse=5_000,
        ui=(1, 200_000),
    )
    max_lines: PosInt = knob(
        1_200,
        "Max observation lines",
        "An observation with more lines than this becomes a preview.\n"
        "Applied together with the character limit.",
        step=50,
        coarse=500,
        ui=(1, 20_000),
    )


class ToolOutputPolicy(PolicyModel):
    observation_governance: ObservationGovernancePolicy = knob(
        factory=ObservationGovernancePolicy,
        label="Observation governance",
        help="Limits applied when a tool result is recorded.\nThe build itself does not read them.",
    )


SidecarBehavior = Literal["allow", "degrade_to_text", "provider_empty_replay_field"]


class ProviderReplayPolicy(PolicyModel):
    """The replay guard (preprocessor 0.5); it runs only when some field is set."""

    provider: NonEmptyStr | None = knob(
        None,
        "Provider",
        "Provider name, for the trace only.\nUnset: the guard does not run unless another field is set.",
    )
    requires_reasoning_details_for_tool_replay: bool | None = knob(
        None,
        "Requires reasoning sidecar",
        "The provider rejects replayed tool calls without reasoning_details.\nUnset counts as false.",
        unset=False,
    )
    missing_sidecar_behavior: SidecarBehavior | None = knob(
        None,
        "Missing sidecar",
        "What to do with a tool call whose reasoning sidecar is missing:\n"
        "allow it, degrade the group to text, or send an empty replay field.",
        unset="allow",
    )


class SummarizationPolicy(PolicyModel):
    """The summarisation provider (§5.4)."""

    trigger_threshold: Fraction = knob(
        0.7,
        "Trigger threshold",
        "Summarise when the kept context reaches this share of the total budget\n"
        "(two-stage check, §5.4). The engine refuses 0.",
        step=0.01,
        coarse=0.1,
        ui=(0, 1),
    )
    budget_percentage: Fraction = knob(
        0.12,
        "Summary budget",
        "Length hint for the summary: floor(totalBudget × share) tokens.\n"
        "The engine requires 0 < share ≤ 0.5.",
        step=0.01,
        coarse=0.05,
        ui=(0, 0.5),
    )
    oldest_messages_percentage: Fraction = knob(
        0.75,
        "Oldest messages share",
        "Share of the summarisable messages (oldest first) that the summary replaces.\n"
        "n = ceil(candidates × share).",
        step=0.01,
        coarse=0.1,
        ui=(0, 1),
    )
    agent_id: NonEmptyStr | None = knob(
        None,
        "Summary agent",
        "Prompt key / agent that writes the summary.\nUnset: hosts use history_compression.",
        unset="history_compression",
    )
    failure_behavior: Literal["fail-fast", "continue-if-within-budget"] = knob(
        "fail-fast",
        "On summary failure",
        "fail-fast raises SUMMARIZATION_FAILED; continue-if-within-budget keeps\n"
        "the unsummarised context when it still fits.",
    )


class TruncationRule(PolicyModel):
    """Caps a must-keep fence kind at a fraction of the total budget."""

    fence_kind: NonEmptyStr = Field(title="Fence kind")
    max_budget_fraction: Annotated[float, Field(gt=0, le=1)] = Field(title="Max budget fraction")
    strategy_name: NonEmptyStr = Field(title="Strategy name")


class MustKeepPolicy(PolicyModel):
    """Core context (§5.3): what is always kept."""

    always_keep_types: list[MessageType] = knob(
        factory=lambda: ["system_prompt", "user_input"],
        label="Always keep types",
        help="Message types core context always keeps.\nThe default keeps the system prompt and user inputs.",
    )
    always_keep_fence_kinds: list[NonEmptyStr] = knob(
        factory=list,
        label="Always keep fence kinds",
        help="Fence kinds core context always keeps, e.g. memory-context.\n"
        "A descriptor's mustKeep adds its kind (seed defaults, §9 D6).",
    )
    truncation_rules: list[TruncationRule] = knob(
        factory=list,
        label="Truncation rules",
        help="[{fenceKind, maxBudgetFraction ∈ (0,1], strategyName}]: cap a kept fence\n"
        "kind at a share of the total budget, truncating it to fit.",
    )


class WorkingMemoryPolicy(PolicyModel):
    """Working memory (§5.3)."""

    max_recent_tool_interactions: NonNegInt = knob(
        2,
        "Recent tool groups",
        "Current-run tool groups P1 keeps in their raw form.\n"
        "The engine requires this ≤ maxInteractionGroups.",
        step=1,
        coarse=5,
        ui=(0, 20),
    )
    min_tool_interactions_to_keep: NonNegInt = knob(
        2,
        "Min tool groups",
        "Tool groups P1 keeps even over budget (forced).\n0 lets the budget decide.",
        step=1,
        coarse=5,
        ui=(0, 20),
    )
    tool_pairing_search_range: PosInt = knob(
        10,
        "Pairing search range",
        "How many messages after a tool call its outputs may appear.\nOutputs further away are orphans.",
        step=1,
        coarse=5,
        ui=(1, 100),
    )


class CheckpointPolicy(PolicyModel):
    """The checkpoint provider (§5.4)."""

    keep_pairs_before: NonNegInt = knob(
        2,
        "Keep pairs before",
        "Tool groups kept before the latest checkpoint; older history is purged.\n"
        "Only applies once a checkpoint tool has run.",
        step=1,
        coarse=5,
        ui=(0, 20),
    )
    trigger_tool_name: NonEmptyStr = knob(
        "context_checkpoint",
        "Checkpoint tool",
        "Name of the tool whose call marks a checkpoint.\n"
        'A raw_output containing "context_checkpoint" also counts.',
    )


class ReasoningRetentionPolicy(PolicyModel):
    keep_latest_thoughts: NonNegInt = knob(
        1,
        "Keep latest thoughts",
        "How many of the newest `thought` messages working memory keeps.\nOlder ones are dropped.",
        step=1,
        coarse=5,
        ui=(0, 20),
    )


class CalibrationPolicy(PolicyModel):
    """Token calibration (0.21): left unset by linnkit; runtime defaults in `unsetMeans`."""

    enabled: bool | None = knob(
        None,
        "Calibration",
        "Scale local estimates by a coefficient learnt from provider usage.\nUnset: off.",
        unset=False,
    )
    min_samples: PosInt | None = knob(
        None,
        "Min samples",
        "Provider usage samples needed before the coefficient applies.\nUnset: 3.",
        step=1,
        coarse=5,
        ui=(1, 50),
        unset=3,
    )
    min_coefficient: PosFloat | None = knob(
        None,
        "Min coefficient",
        "Lower clamp of the calibration coefficient.\nUnset: 1.",
        step=0.05,
        coarse=0.5,
        ui=(0.1, 4),
        unset=1.0,
    )
    max_coefficient: PosFloat | None = knob(
        None,
        "Max coefficient",
        "Upper clamp of the calibration coefficient.\nUnset: 4.",
        step=0.05,
        coarse=0.5,
        ui=(0.5, 10),
        unset=4.0,
    )


class RemoteCountPolicy(PolicyModel):
    """Remote token counting (0.21): left unset by linnkit."""

    enabled: bool | None = knob(
        None,
        "Remote count",
        "Ask the provider to count the final context's tokens.\nUnset: off.",
        unset=False,
    )
    failure_behavior: Literal["use-local-estimate", "fail-fast"] | None = knob(
        None,
        "On count failure",
        "use-local-estimate falls back to the local count; fail-fast raises.\nUnset: use-local-estimate.",
        unset="use-local-estimate",
    )


class TokenEstimationPolicy(PolicyModel):
    """Token estimation (§3)."""

    encoding: NonEmptyStr = knob(
        "cl100k_base",
        "Encoding",
        "tiktoken encoding used for budgeting.\nThe engine refuses a blank name.",
    )
    avg_chars_per_token: PosFloat = knob(
        2.0,
        "Chars per token",
        "Fallback estimate when no tokenizer is available:\ntokens = ceil(chars / this).",
        step=0.1,
        coarse=0.5,
        ui=(0.5, 8),
    )
    tool_call_overhead: NonNegInt = knob(
        50,
        "Tool-call overhead",
        "Tokens added per tool call on top of its name and arguments.\n"
        "Fallback path only; tiktoken counts the JSON.",
        step=5,
        coarse=50,
        ui=(0, 500),
    )
    calibration: CalibrationPolicy | None = knob(
        None,
        "Calibration",
        "{enabled, minSamples, minCoefficient, maxCoefficient}.\nUnset in linnkit; off at runtime.",
    )
    remote_count: RemoteCountPolicy | None = knob(
        None,
        "Remote count",
        "{enabled, failureBehavior}.\nUnset in linnkit; off at runtime.",
    )


class ReminderTrigger(PolicyModel):
    """The trigger of an extra reminder rule; which fields matter depends on `kind` (§5.7)."""

    kind: NonEmptyStr
    threshold: NonNegInt | Annotated[float, Field(ge=0)] | None = None
    value: str | Int | float | bool | None = None
    modulo_step: bool | None = None
    tool_name: NonEmptyStr | None = None
    period: PosInt | None = None
    min_step: NonNegInt | None = None
    ratio: Fraction | None = None
    config: JsonRecord | None = None


class ExtraReminderRule(PolicyModel):
    """A host-defined reminder rule, evaluated after the built-ins."""

    id: NonEmptyStr
    trigger: ReminderTrigger
    content_template: NonEmptyStr
    content_args: JsonRecord | None = None


class ReminderThresholds(PolicyModel):
    tool_call_streak: NonNegInt = knob(
        10,
        "Tool-call streak",
        "Remind after every N consecutive tool-call steps in one run.\n0 turns the streak rule off.",
        step=1,
        coarse=5,
        ui=(0, 50),
    )
    taskstate_reflection_period: PosInt = knob(
        30,
        "Reflection period",
        "Ask for a task-state reflection every N steps (also the first step it fires).\n"
        "Steps are node steps: one LLM call plus its tools is 2.",
        step=1,
        coarse=10,
        ui=(1, 200),
    )
    budget_warning_ratio: Fraction = knob(
        0.9,
        "Budget warning ratio",
        "Warn from step floor(maxSteps × ratio) for 4 steps, if the checkpoint tool exists.\n"
        "Counts steps, not tokens.",
        step=0.01,
        coarse=0.1,
        ui=(0, 1),
    )
    last_steps_hint_threshold: NonNegInt = knob(
        0,
        "Last-steps hint",
        "Hint when at most N steps remain.\n0 = off.",
        step=1,
        coarse=5,
        ui=(0, 40),
    )


class SystemReminderPolicy(PolicyModel):
    """The reminder stage (§5.7): which rules run and their thresholds."""

    enabled_rule_ids: list[NonEmptyStr] | None = knob(
        None,
        "Enabled built-ins",
        "Allowlist of built-in rule ids ([] = none).\nNull = no allowlist: every built-in not disabled runs.",
    )
    disabled_rule_ids: list[NonEmptyStr] = knob(
        factory=list,
        label="Disabled built-ins",
        help="Denylist of built-in rule ids.\nCannot be combined with an allowlist.",
    )
    thresholds: ReminderThresholds = knob(
        factory=ReminderThresholds,
        label="Thresholds",
        help="Numbers the built-in rules use.\nMerged field by field.",
    )
    extra_rules: list[ExtraReminderRule] = knob(
        factory=list,
        label="Extra rules",
        help="[{id, trigger: {kind, …}, contentTemplate, contentArgs?}], after the built-ins.\n"
        "A rule with an unknown kind or template is dropped silently.",
    )

    @model_validator(mode="after")
    def _allow_or_deny(self) -> SystemReminderPolicy:
        if self.enabled_rule_ids is not None and self.disabled_rule_ids:
            raise PydanticCustomError("rule_conflict", RULE_CONFLICT_MESSAGE, {"field": "disabledRuleIds"})
        return self


class ContextTracePolicy(PolicyModel):
    """The ContextTrace (§6)."""

    enabled: bool = knob(
        False,
        "Trace",
        "Produce a ContextTrace with each build.\nIt never enters the messages.",
    )
    include_message_ids: bool = knob(
        True,
        "Message ids in trace",
        "Include message ids in message-decision events.\nOff redacts them.",
    )
    include_token_breakdown: bool = knob(
        True,
        "Token breakdown",
        "Include per-message token numbers and tokenComponents.\nOff writes 0 for every token field.",
    )
    max_trace_events: PosInt = knob(
        200,
        "Max trace events",
        "Events beyond this are discarded and the trace is marked overflowed.\n"
        "One event per provider plus one per final message.",
        step=10,
        coarse=100,
        ui=(1, 5_000),
    )


class ContextPolicy(PolicyModel):
    """The whole policy; build one with `define_context_policy` or `effective_policy`."""

    profile_id: NonEmptyStr = knob("agent", "Profile id", "Routing key for hosts.\nNot an engine input.")
    budget: BudgetPolicy = _group(BudgetPolicy, "Budget", "How many tokens the context may use.")
    tool_history: ToolHistoryPolicy = _group(
        ToolHistoryPolicy, "Tool history", "What preprocessing keeps of old tool groups."
    )
    tool_output: ToolOutputPolicy = _group(
        ToolOutputPolicy, "Tool output", "Execution-time observation limits (not an engine input)."
    )
    provider_replay: ProviderReplayPolicy = _group(
        ProviderReplayPolicy, "Provider replay", "The reasoning-sidecar replay guard."
    )
    summarization: SummarizationPolicy = _group(
        SummarizationPolicy, "Summarization", "When history is summarised, and how much."
    )
    must_keep: MustKeepPolicy = _group(MustKeepPolicy, "Must keep", "What core context always keeps.")
    working_memory: WorkingMemoryPolicy = _group(
        WorkingMemoryPolicy, "Working memory", "How working memory fills its budget."
    )
    checkpoint: CheckpointPolicy = _group(CheckpointPolicy, "Checkpoint", "History purge at checkpoints.")
    reasoning_retention: ReasoningRetentionPolicy = _group(
        ReasoningRetentionPolicy, "Reasoning retention", "How many thought messages are kept."
    )
    token_estimation: TokenEstimationPolicy = _group(
        TokenEstimationPolicy, "Token estimation", "How tokens are counted for budgeting."
    )
    system_reminder: SystemReminderPolicy = _group(
        SystemReminderPolicy, "System reminder", "Reminders appended to the last wire message."
    )
    context_trace: ContextTracePolicy = _group(
        ContextTracePolicy, "Context trace", "The trace of each build's decisions."
    )


GROUPS: tuple[str, ...] = tuple(
    field.alias or name for name, field in ContextPolicy.model_fields.items() if name != "profile_id"
)


def to_wire(model: PolicyModel) -> dict[str, Any]:
    """linnkit's wire form: camelCase, unset (`None`) fields omitted, `enabledRuleIds: null` kept."""
    data = model.model_dump(by_alias=True, exclude_none=True, mode="json")
    if isinstance(model, ContextPolicy) and model.system_reminder.enabled_rule_ids is None:
        data["systemReminder"] = {"enabledRuleIds": None, **data["systemReminder"]}
    elif isinstance(model, SystemReminderPolicy) and model.enabled_rule_ids is None:
        data = {"enabledRuleIds": None, **data}
    return data


def unwrap_annotation(annotation: Any) -> Any:
    """Strip `Annotated[...]` and `X | None` down to X (a real union is returned as it is)."""
    while True:
        origin = typing.get_origin(annotation)
        if origin is Annotated:
            annotation = typing.get_args(annotation)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation
