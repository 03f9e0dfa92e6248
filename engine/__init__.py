"""linn-playground's engine: a pure-Python port of linnkit's context-building pipeline. No UI imports.

The one entry is `build_context(session, policy, fences=..., tick=..., tokenizer=..., summarizer=...)`,
which returns an immutable `BuildResult`: wire messages, one decision per message, token accounting,
events and the ContextTrace. Bad input raises typed errors whose text is one line per problem
(`SessionLoadError`, `PolicyFileError`, `InputError`; fence files `FenceError`); `result.provider_problems`
says why OpenAI or Anthropic would reject the wire.

This module is the engine's whole public surface: the front ends (`playground.tui`, `playground.notebook`,
the CLI) import the engine only from here, and `tests/test_engine_exports.py` pins `__all__`.
"""

from engine.build import build_context
from engine.cache_breaks import MECHANISMS
from engine.calibration import CalibrationSample, TokenRoute
from engine.conformance import case_files, load_cases, read_case, run_all
from engine.copyset import check_copy
from engine.cost import CostTracker, SessionCost, StepCost, iter_step_costs, session_cost
from engine.errors import ConfigurationError, ContextProviderError, EngineError
from engine.export import FORMATS as EXPORT_FORMATS
from engine.export import export_session, export_wire
from engine.fences import (
    DEFAULT_TEMPLATE,
    LIFETIMES,
    LLM_ROLES,
    PLACEMENTS,
    FenceDescriptor,
    FenceError,
    FenceInjection,
    FenceRegistry,
    as_registry,
    dump_fences,
    load_fences,
)
from engine.host_tokenizers import MockTokenizer
from engine.hygiene import HygieneWarning, hygiene_checks
from engine.importers import format_names, import_file
from engine.invariants import InvariantReport, check_invariants
from engine.messages import AiMessage, call_arguments, call_name
from engine.policy import (
    ContextPolicy,
    ControlSpec,
    GroupSpec,
    PolicyFileError,
    PolicyValidationError,
    control_for,
    define_context_policy,
    dump_policy,
    effective_policy,
    get_value,
    load_policy,
    merge_context_policy,
    policy_controls,
    policy_diff,
    policy_groups,
    read_policy_file,
    read_policy_layer,
    runtime_problems,
    write_atomic,
)
from engine.policy.lint import layer_warnings
from engine.policy.ranges import ValueRange, value_range
from engine.prices import (
    BUILTIN_PRICES,
    DEFAULT_PRICE_MODEL,
    Price,
    PriceTable,
    load_price_table,
    resolve_price,
)
from engine.provider_check import WireProblem, check_wire
from engine.recorded import RecordedCall, RecordedRun, recorded_cost, recorded_run
from engine.reminders import DEFAULT_MAX_STEPS
from engine.replay import build_at_step, iter_session_steps
from engine.result import (
    CATEGORY_ORDER,
    BuildFailure,
    BuildResult,
    Decision,
    Event,
    ReminderOutcome,
    TokenAccount,
    WireCard,
)
from engine.safe_input import InputError, LoadProblem, output_kind_problem
from engine.session import Session, SessionLoadError, SessionSaveError, load_session, save_session
from engine.session_lines import available_tools, messages_from
from engine.summarizer import FailingSummarizer, FixedSummarizer, OfflineSummarizer, SummarizerPort
from engine.ticks import StepPoint, step_points
from engine.tokens import DefaultTokenizer, TokenizerPort, tokenizer_from_policy
from engine.truth import AS_RECORDED, Calibration, ModelFit, StepTruth, iter_truth, load_calibration
from engine.usage import RecordedUsage
from engine.wire import to_anthropic

__all__ = [
    "AS_RECORDED",
    "BUILTIN_PRICES",
    "CATEGORY_ORDER",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_PRICE_MODEL",
    "DEFAULT_TEMPLATE",
    "EXPORT_FORMATS",
    "LIFETIMES",
    "LLM_ROLES",
    "MECHANISMS",
    "PLACEMENTS",
    "AiMessage",
    "BuildFailure",
    "BuildResult",
    "Calibration",
    "CalibrationSample",
    "ConfigurationError",
    "ContextPolicy",
    "ContextProviderError",
    "ControlSpec",
    "CostTracker",
    "Decision",
    "DefaultTokenizer",
    "EngineError",
    "Event",
    "FailingSummarizer",
    "FenceDescriptor",
    "FenceError",
    "FenceInjection",
    "FenceRegistry",
    "FixedSummarizer",
    "GroupSpec",
    "HygieneWarning",
    "InputError",
    "InvariantReport",
    "LoadProblem",
    "MockTokenizer",
    "ModelFit",
    "OfflineSummarizer",
    "PolicyFileError",
    "PolicyValidationError",
    "Price",
    "PriceTable",
    "RecordedCall",
    "RecordedRun",
    "RecordedUsage",
    "ReminderOutcome",
    "Session",
    "SessionCost",
    "SessionLoadError",
    "SessionSaveError",
    "StepCost",
    "StepPoint",
    "StepTruth",
    "SummarizerPort",
    "TokenAccount",
    "TokenRoute",
    "TokenizerPort",
    "ValueRange",
    "WireCard",
    "WireProblem",
    "as_registry",
    "available_tools",
    "build_at_step",
    "build_context",
    "call_arguments",
    "call_name",
    "case_files",
    "check_copy",
    "check_invariants",
    "check_wire",
    "control_for",
    "define_context_policy",
    "dump_fences",
    "dump_policy",
    "effective_policy",
    "export_session",
    "export_wire",
    "format_names",
    "get_value",
    "hygiene_checks",
    "import_file",
    "iter_session_steps",
    "iter_step_costs",
    "iter_truth",
    "layer_warnings",
    "load_calibration",
    "load_cases",
    "load_fences",
    "load_policy",
    "load_price_table",
    "load_session",
    "merge_context_policy",
    "messages_from",
    "output_kind_problem",
    "policy_controls",
    "policy_diff",
    "policy_groups",
    "read_case",
    "read_policy_file",
    "read_policy_layer",
    "recorded_cost",
    "recorded_run",
    "resolve_price",
    "run_all",
    "runtime_problems",
    "save_session",
    "session_cost",
    "step_points",
    "to_anthropic",
    "tokenizer_from_policy",
    "value_range",
    "write_atomic",
]
