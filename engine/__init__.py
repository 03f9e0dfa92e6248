"""linn-playground's engine: a pure-Python port of linnkit's context-building pipeline. No UI imports.

The one entry is `build_context(session, policy, fences=..., tick=..., tokenizer=..., summarizer=...)`,
which returns an immutable `BuildResult`: wire messages, one decision per message, token accounting,
events and the ContextTrace.
"""

from engine.build import build_context
from engine.errors import ConfigurationError, ContextProviderError, EngineError
from engine.fences import FenceDescriptor, FenceInjection, FenceRegistry, dump_fences, load_fences
from engine.invariants import InvariantReport, check_invariants
from engine.messages import AiMessage
from engine.policy import (
    ContextPolicy,
    PolicyValidationError,
    define_context_policy,
    dump_policy,
    effective_policy,
    load_policy,
    merge_context_policy,
)
from engine.result import BuildFailure, BuildResult, Decision, Event, ReminderOutcome, TokenAccount, WireCard
from engine.session import Session, load_session, save_session
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
    "InvariantReport",
    "MockTokenizer",
    "OfflineSummarizer",
    "PolicyValidationError",
    "ReminderOutcome",
    "Session",
    "SummarizerPort",
    "TokenAccount",
    "TokenizerPort",
    "WireCard",
    "build_context",
    "check_invariants",
    "define_context_policy",
    "dump_fences",
    "dump_policy",
    "effective_policy",
    "load_fences",
    "load_policy",
    "load_session",
    "merge_context_policy",
    "save_session",
    "to_anthropic",
]
