"""What a Playground opens: a session (file, `Session` or messages), a policy and fences (files or objects).

Files are read by `playground.app.inputs.load_inputs`, as the CLI and the TUI read them: a policy file
replaces the policy in the session header, a fence file the header's descriptors. Objects given
directly replace them the same way.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import (
    DEFAULT_MAX_STEPS,
    AiMessage,
    ContextPolicy,
    FenceRegistry,
    PolicyFileError,
    Session,
    as_registry,
    available_tools,
    check_copy,
    effective_policy,
    layer_warnings,
    load_fences,
    messages_from,
    read_policy_layer,
    runtime_problems,
)
from playground.app.inputs import PlaygroundInputs, header_dict, header_fences, load_inputs
from playground.app.recording import stored_inputs

__all__ = ["Sources", "open_sources"]

PathLike = str | os.PathLike[str]
SessionInput = PathLike | Session | Sequence[AiMessage | dict[str, Any]]
PolicyInput = PathLike | ContextPolicy | dict[str, Any] | None
FencesInput = PathLike | FenceRegistry | Sequence[Any] | None


@dataclass(slots=True)
class Sources:
    session: Session
    header: dict[str, Any]
    policy: ContextPolicy
    fences: FenceRegistry | None
    session_path: Path | None = None
    policy_path: Path | None = None
    fences_path: Path | None = None
    notes: list[str] = field(default_factory=list)  # what was wrong with the session file

    @property
    def messages(self) -> list[AiMessage]:
        return self.session.messages

    def inputs(self, defaults: str, copy: str = "zh") -> PlaygroundInputs:
        """What the workspace opens: this session, policy and fences under a defaults profile."""
        return PlaygroundInputs(self.session, self.policy, self.fences, defaults, check_copy(copy))

    @property
    def title(self) -> str:
        name = self.header.get("title") or (self.session_path.name if self.session_path else None)
        return str(name or "in-memory session")

    @property
    def lesson(self) -> str | None:
        lesson = self.header.get("lesson")
        return lesson if isinstance(lesson, str) else None

    @property
    def max_steps(self) -> int:
        header = self.session.header
        return (header.max_steps if header is not None else None) or DEFAULT_MAX_STEPS

    @property
    def available_tools(self) -> tuple[str, ...]:
        return available_tools(self.header)

    @property
    def export_path(self) -> Path:
        """Where the Export button writes by default: the policy file, else beside the session."""
        if self.policy_path is not None:
            return self.policy_path
        if self.session_path is not None:
            return self.session_path.with_name(f"{self.session_path.stem}.policy.yaml")
        return Path("policy.yaml")


def _is_path(value: Any) -> bool:
    return isinstance(value, str | os.PathLike)


def open_sources(
    session: SessionInput, policy: PolicyInput, fences: FencesInput, defaults: str, store: Any = None
) -> Sources:
    """Resolve the Playground's arguments; raises the loaders' errors (they name file, line, field).
    `session` may be `run:ID`, a run of the audit store (`store`: its path, None the default one)."""
    policy_file = Path(policy) if _is_path(policy) else None
    fence_file = Path(fences) if _is_path(fences) else None
    if _is_path(session):
        inputs = stored_inputs(str(session), policy_file, store) or load_inputs(
            session, policy_file, fence_file, defaults
        )
        loaded, header = inputs.session, inputs.header
        chosen_policy, chosen_fences = inputs.policy, inputs.fences
    else:
        loaded = session if isinstance(session, Session) else _in_memory(session)
        header = header_dict(loaded)
        layer = read_policy_layer(policy_file) if policy_file else header.get("contextPolicy") or {}
        chosen_policy = effective_policy(layer, None, defaults)
        listed = header.get("fences")
        chosen_fences = load_fences(fence_file) if fence_file else header_fences(listed)
    if isinstance(policy, ContextPolicy):
        chosen_policy = policy
    elif isinstance(policy, dict):
        for problem in layer_warnings(policy, "policy"):  # a typo in a dict is said, as in a file
            warnings.warn(str(problem), stacklevel=3)
        chosen_policy = effective_policy(policy, None, defaults)
    elif policy is not None and policy_file is None:
        expected = "a file path, a dict of policy groups or a ContextPolicy"
        raise TypeError(f"policy: expected {expected}, not {type(policy).__name__}")
    if fences is not None and fence_file is None:
        chosen_fences = as_registry(fences)
    problems = runtime_problems(chosen_policy)  # said now, not as an HTML status on the first build
    if problems:
        field, reason = ".".join(problems[0].path), problems[0].message
        raise PolicyFileError("policy", reason, text=f"policy: {field}: {reason}")
    notes = [str(problem) for problem in loaded.problems]
    return Sources(
        loaded,
        header,
        chosen_policy,
        chosen_fences,
        loaded.path,
        policy_file,
        fence_file,
        notes,
    )


def _in_memory(messages: Sequence[AiMessage | dict[str, Any]]) -> Session:
    if not isinstance(messages, Sequence) or isinstance(messages, str | bytes):
        kind = type(messages).__name__
        raise TypeError(f"session: expected a file path, a Session or a list of messages, not {kind}")
    return Session(None, None, messages_from(messages))
