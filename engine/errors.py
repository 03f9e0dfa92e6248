"""Typed errors of the engine (spec §8, §2.3)."""

from __future__ import annotations

TOOL_HISTORY_OVERFLOW = "TOOL_HISTORY_OVERFLOW"
SUMMARIZATION_FAILED = "SUMMARIZATION_FAILED"
CONTEXT_PROVIDER_FAILED = "context_provider_failed"


class EngineError(Exception):
    """Base of every error the engine raises on purpose."""


class ContextProviderError(EngineError):
    """A stage failed; `fatal` errors abort the build, others skip that stage."""

    def __init__(
        self,
        message: str,
        *,
        code: str = CONTEXT_PROVIDER_FAILED,
        fatal: bool = False,
        provider_name: str = "",
        cause: BaseException | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.fatal = fatal
        self.provider_name = provider_name
        self.cause = cause

    def __str__(self) -> str:
        where = f" [{self.provider_name}]" if self.provider_name else ""
        return f"{self.code}{where}: {self.args[0]}"


class ConfigurationError(EngineError):
    """`Invalid AgentContextManager configuration`: a schema-valid policy the engine cannot run (§2.3)."""
