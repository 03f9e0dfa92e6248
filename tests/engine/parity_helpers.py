"""Helpers for the linnkit parity tests: linnkit's own unit tests drive one preprocessor or provider on a
hand-made state list, so these make such lists and a build context for them (spec §5)."""

from __future__ import annotations

import json
from typing import Any

from engine.build import build_context, must_keep_of
from engine.host_tokenizers import MockTokenizer
from engine.messages import AiMessage
from engine.pipeline import BuildContext
from engine.policy.merge import define_context_policy
from engine.providers.state import KEEP_CORE, KEEP_WM, State
from engine.result import BuildResult
from engine.tokens import TokenizerPort

ONE = MockTokenizer(1)


def provider_ctx(
    total_budget: int = 100_000, tokenizer: TokenizerPort = ONE, summarizer: Any = None, **groups: Any
) -> BuildContext:
    """A build context with `total_budget` (maxTokens = total + 100) and some policy groups (camelCase)."""
    layer = {"budget": {"maxTokens": total_budget + 100, "reservedForResponse": 100}, **groups}
    if "budget" in groups:
        layer["budget"] = {"maxTokens": total_budget + 100, "reservedForResponse": 100, **groups["budget"]}
    policy = define_context_policy(layer)
    return BuildContext(
        policy=policy,
        tokenizer=tokenizer,
        total_budget=total_budget,
        avg_chars_per_token=policy.token_estimation.avg_chars_per_token,
        summarizer=summarizer,
        model_id="default",
        now=1,
        must_keep=must_keep_of(policy, None, True),
    )


def states_of(
    messages: list[AiMessage], actions: dict[str, str] | None = None, tokens: int = 1
) -> list[State]:
    """One state per message, `skip` unless `actions` names its id (keep_core / keep_working_memory)."""
    states = []
    for index, message in enumerate(messages):
        state = State(message, index, (index,), tokens)
        action = (actions or {}).get(message.id)
        if action is not None:
            phase = "CORE_CONTEXT" if action == KEEP_CORE else "WORKING_MEMORY"
            state.keep(action, phase, "test")
        states.append(state)
    return states


def kept_wm(states: list[State]) -> list[str]:
    return [s.message.id for s in states if s.action == KEEP_WM]


def tool_calls(
    id: str, *calls: tuple[str, str, dict[str, Any]], content: str = "", **metadata: Any
) -> AiMessage:
    """An assistant `tool_calls` message; each call is (call id, tool name, arguments)."""
    listed = [
        {"id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
        for cid, name, args in calls
    ]
    return AiMessage(id, "assistant", "tool_calls", content, metadata={**metadata, "tool_calls": listed})


def tool_output(id: str, call_id: str, name: str, content: str, raw_output: str | None = None) -> AiMessage:
    metadata: dict[str, Any] = {"tool_call_id": call_id, "tool_name": name}
    if raw_output is not None:
        metadata["raw_output"] = raw_output
    return AiMessage(id, "tool", "tool_output", content, metadata=metadata)


def user_input(id: str, content: str | None = None) -> AiMessage:
    return AiMessage(id, "user", "user_input", content if content is not None else f"user {id}")


def text(id: str, role: str, type: str, content: str, **metadata: Any) -> AiMessage:
    return AiMessage(id, role, type, content, metadata=metadata or None)


def checkpoint_raw(summary: str) -> str:
    """A checkpoint tool's raw output (linnkit's StructuredToolResult shape)."""
    return json.dumps(
        {
            "data": {"_type": "context_checkpoint", "summary": summary},
            "observation": "Context checkpoint created.",
        }
    )


def preprocess(messages: list[AiMessage], **groups: Any) -> BuildResult:
    """A whole build with a roomy budget (the preprocessors' output is `result.preprocessed`)."""
    layer = {"budget": {"maxTokens": 200_000, "reservedForResponse": 100}, **groups}
    return build_context(messages, layer, tokenizer=ONE)


def ids(messages: Any) -> list[str]:
    return [m.id for m in messages]
