"""linn-playground's engine: a pure-Python port of linnkit's context-building pipeline. No UI imports.

The one entry is `build_context(session, policy, fences=..., tick=..., tokenizer=..., summarizer=...)`,
which returns an immutable `BuildResult`: wire messages, one decision per message, token accounting,
events and the ContextTrace. Bad input raises typed errors whose text is one line per problem
(`SessionLoadError`, `PolicyFileError`, `InputError`; fence files `FenceError`); `result.provider_problems`
says why OpenAI or Anthropic would reject the wire.
"""

from engine.build import build_context
from engine.errors import ConfigurationError, ContextProviderError, EngineError
from engine.fences import FenceDescriptor, FenceInjection, FenceRegistry, dump_fences, load_fences
from engine.invariants import InvariantReport, check_invariants
from engine.messages import AiMessage
from engine.policy import (
    ContextPolicy,
    PolicyFileError,
    PolicyValidationError,
    define_context_policy,
    dump_policy,
    effective_policy,
    load_policy,
    merge_context_policy,
    read_policy_file,
)
from engine.provider_check import WireProblem, check_wire
from engine.result import BuildFailure, BuildResult, Decision, Event, ReminderOutcome, TokenAccount, WireCard
from engine.safe_input import InputError, LoadProblem
from engine.session import Session, SessionLoadError, load_session, save_session
from engine.summarizer import FailingSummarizer, FixedSummarizer, OfflineSummarizer, SummarizerPort
from engine.tokens import DefaultTokenizer, MockTokenizer, TokenizerPort
from engine.wire import to_anthropic

__all__ = [
    "AiMessage",
    "BuildFailure",
    "BuildResult",
    "ConfigurationError",
    "ContextPolicy",
    "ContextProviderError",
    "Decision",
    "DefaultTokenizer",
    "EngineError",
    "Event",
    "FailingSummarizer",
    "FenceDescriptor",
    "FenceInjection",
    "FenceRegistry",
    "FixedSummarizer",
    "InputError",
    "InvariantReport",
    "LoadProblem",
    "MockTokenizer",
    "OfflineSummarizer",
    "PolicyFileError",
    "PolicyValidationError",
    "ReminderOutcome",
    "Session",
    "SessionLoadError",
    "SummarizerPort",
    "TokenAccount",
    "TokenizerPort",
    "WireCard",
    "WireProblem",
    "build_context",
    "check_invariants",
    "check_wire",
    "define_context_policy",
    "dump_fences",
    "dump_policy",
    "effective_policy",
    "load_fences",
    "load_policy",
    "load_session",
    "merge_context_policy",
    "read_policy_file",
    "save_session",
    "to_anthropic",
]
