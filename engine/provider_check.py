"""Would the provider accept this wire? A check beyond linnkit's invariants (C1–C12).

linnkit 0.21 can send a tool call with no result (a must-keep type naming `tool_calls`, a checkpoint
group holding an unanswered parallel call); the port does the same, faithfully, and this module says
that OpenAI or Anthropic would reject the request, and why:

- OpenAI Chat Completions: an assistant message with `tool_calls` must be followed, before any other
  message, by one `tool` message per call id; a `tool` message must answer such a call; an assistant
  message with null content needs tool calls.
- Anthropic Messages (the `to_anthropic` projection): at least one turn; turns alternate;
  each `tool_use` is answered by a `tool_result` in the very next user turn, results first; no turn is
  empty and no text block is blank.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from engine.wire import to_anthropic

OPENAI = "OpenAI"
ANTHROPIC = "Anthropic"

__all__ = ["ANTHROPIC", "OPENAI", "WireProblem", "check_anthropic", "check_openai", "check_wire"]


@dataclass(frozen=True, slots=True)
class WireProblem:
    """One reason `provider` would reject the request; `index` is the message's position in its shape."""

    provider: str
    index: int | None
    message: str

    def __str__(self) -> str:
        return f"{self.provider} would reject this request: {self.message}"


def _label(call_id: Any) -> str:
    text = call_id if isinstance(call_id, str) and call_id else "(no id)"
    return text if text.isprintable() and len(text) <= 60 else repr(text[:60])


def check_openai(wire: Sequence[dict[str, Any]]) -> list[WireProblem]:
    """Why OpenAI Chat Completions would reject `wire` (OpenAI chat shape), in message order."""
    problems: list[WireProblem] = []
    pending: dict[str, int] = {}  # call id -> index of the assistant message, until answered
    declared: set[str] = set()
    for index, message in enumerate(wire):
        role = message.get("role")
        if role == "tool":
            call = message.get("tool_call_id")
            if call in pending:
                del pending[call]
            elif call in declared:
                problems.append(
                    WireProblem(OPENAI, index, f"the result of call {_label(call)} is not right after it")
                )
            else:
                problems.append(
                    WireProblem(OPENAI, index, f"tool result {index} answers no call ({_label(call)})")
                )
            continue
        problems += _unanswered(OPENAI, pending)
        pending.clear()
        calls = message.get("tool_calls") or []
        if role == "assistant" and not calls and message.get("content") is None:
            problems.append(
                WireProblem(OPENAI, index, f"assistant message {index} has no content and no tool calls")
            )
        for call in calls:
            call_id = call.get("id") if isinstance(call, dict) else None
            pending[call_id] = index
            declared.add(call_id)
    problems += _unanswered(OPENAI, pending)
    return problems


def _unanswered(provider: str, pending: dict[Any, int]) -> list[WireProblem]:
    return [WireProblem(provider, at, f"call {_label(call)} has no result") for call, at in pending.items()]


def check_anthropic(
    wire: Sequence[dict[str, Any]], payload: dict[str, Any] | None = None
) -> list[WireProblem]:
    """Why the Anthropic Messages API would reject the projection of `wire` (OpenAI chat shape);
    `payload` is that projection when the caller made it already (`to_anthropic(wire)`)."""
    messages = (payload if payload is not None else to_anthropic(list(wire)))["messages"]
    problems: list[WireProblem] = []
    if not messages:
        problems.append(WireProblem(ANTHROPIC, None, "there is no user or assistant message"))
    pending: dict[Any, int] = {}
    for index, message in enumerate(messages):
        role, blocks = message["role"], message["content"]
        if index and messages[index - 1]["role"] == role:
            problems.append(WireProblem(ANTHROPIC, index, f"turns {index - 1} and {index} are both {role}"))
        if not blocks:
            problems.append(WireProblem(ANTHROPIC, index, f"{role} turn {index} is empty"))
        results = [b.get("tool_use_id") for b in blocks if b.get("type") == "tool_result"]
        for call in results:
            if call in pending:
                del pending[call]
            else:
                problems.append(
                    WireProblem(ANTHROPIC, index, f"tool_result for {_label(call)} follows no tool_use")
                )
        problems += _unanswered(ANTHROPIC, pending)
        pending.clear()
        kinds = [b.get("type") for b in blocks]
        if results and kinds[: len(results)] != ["tool_result"] * len(results):
            problems.append(
                WireProblem(ANTHROPIC, index, f"user turn {index} has text before its tool results")
            )
        for block in blocks:
            if block.get("type") == "text" and not str(block.get("text", "")).strip():
                problems.append(WireProblem(ANTHROPIC, index, f"{role} turn {index} has a blank text block"))
            if block.get("type") == "tool_use":
                pending[block.get("id")] = index
    problems += _unanswered(ANTHROPIC, pending)
    return problems


def check_wire(
    wire: Sequence[dict[str, Any]], anthropic: dict[str, Any] | None = None
) -> list[WireProblem]:
    """Both providers' problems with `wire`: OpenAI's first, then Anthropic's (of `anthropic`, the
    projection of `wire`, when given)."""
    return check_openai(wire) + check_anthropic(wire, anthropic)
