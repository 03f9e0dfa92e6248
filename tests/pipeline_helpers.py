"""Builders for the build-pipeline tests: spec §10's vocabulary (`sys`, `uX`, `aX`, `gX`) and a checked build.

`group("g1")` is the pair `a_g1` (calls `search` with `{"q":"x"}`, id `call_g1`) + `t_g1` (`result g1`).
`build(...)` runs `build_context` and asserts that every error-level invariant holds, unless told which
invariant failures to expect.
"""

from __future__ import annotations

import json
from typing import Any

from engine.build import build_context
from engine.fences import FenceDescriptor, FenceRegistry
from engine.invariants import check_invariants
from engine.messages import AiMessage
from engine.result import BuildResult
from engine.tokens import DefaultTokenizer

SYSTEM_TEXT = "You are helpful."
CHECKPOINT_RAW = (
    '{"data":{"_type":"context_checkpoint","summary":"phase 1 done"},"observation":"Checkpoint saved"}'
)


def sys(text: str = SYSTEM_TEXT, id: str = "sys") -> AiMessage:
    return AiMessage(id, "system", "system_prompt", text)


def user(id: str, text: str | None = None) -> AiMessage:
    return AiMessage(id, "user", "user_input", f"user {id}" if text is None else text)


def answer(id: str, text: str | None = None, **metadata: Any) -> AiMessage:
    return AiMessage(
        id, "assistant", "final_answer", f"answer {id}" if text is None else text, metadata=metadata or None
    )


def call(call_id: str, name: str = "search", arguments: str = '{"q":"x"}') -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def calls(id: str, *tool_calls: dict[str, Any], content: str = "", **metadata: Any) -> AiMessage:
    return AiMessage(
        id, "assistant", "tool_calls", content, metadata={"tool_calls": list(tool_calls), **metadata}
    )


def output(id: str, call_id: str, content: str, tool_name: str = "search", **metadata: Any) -> AiMessage:
    meta = {"tool_call_id": call_id, "tool_name": tool_name, **metadata}
    return AiMessage(id, "tool", "tool_output", content, metadata=meta)


def group(
    name: str,
    args: str = '{"q":"x"}',
    result: str | None = None,
    tool: str = "search",
    raw_output: str | None = None,
    **anchor_metadata: Any,
) -> list[AiMessage]:
    """The pair `a_{name}` + `t_{name}` (call id `call_{name}`)."""
    extra = {"raw_output": raw_output} if raw_output is not None else {}
    return [
        calls(f"a_{name}", call(f"call_{name}", tool, args), **anchor_metadata),
        output(f"t_{name}", f"call_{name}", f"result {name}" if result is None else result, tool, **extra),
    ]


def checkpoint_group(name: str = "cp") -> list[AiMessage]:
    """A `context_checkpoint` call whose raw output carries the summary `phase 1 done` (spec E6)."""
    return group(name, "{}", "Checkpoint saved", tool="context_checkpoint", raw_output=CHECKPOINT_RAW)


def fence(id: str, kind: str, content: str, placement: str, role: str = "user", **attrs: Any) -> AiMessage:
    metadata = {"fenceKind": kind, "fenceAttrs": attrs, "fencePlacement": placement}
    return AiMessage(id, role, "context_injection", content, metadata=metadata)


def summary_message(event: dict[str, Any]) -> AiMessage:
    """The `history_summary` message a host appends to history for a build's summary event (spec §5.4)."""
    metadata = {
        "messageType": "summary",
        "originalMessageCount": event["original_message_count"],
        "compressionRatio": event["compression_ratio"],
        "includedOldSummary": event["included_old_summary"],
        "replacedMessageIds": event["replaced_message_ids"],
        "summarySeq": event["summary_seq"],
    }
    return AiMessage(event["id"], "system", "history_summary", event["content"], event["timestamp"], metadata)


def registry(*descriptors: dict[str, Any]) -> FenceRegistry:
    return FenceRegistry(FenceDescriptor.from_dict(d) for d in descriptors)


def flatten(*items: AiMessage | list[AiMessage]) -> list[AiMessage]:
    out: list[AiMessage] = []
    for item in items:
        out.extend(item if isinstance(item, list) else [item])
    return out


def policy(**groups: dict[str, Any]) -> dict[str, Any]:
    """The §10 defaults (maxTokens 1100, reserved 100, trace on) with some groups overridden (camelCase)."""
    out: dict[str, Any] = {
        "budget": {"maxTokens": 1100, "reservedForResponse": 100},
        "contextTrace": {"enabled": True},
    }
    for key, value in groups.items():
        out[key] = {**out.get(key, {}), **value}
    return out


def fallback_tokenizer() -> DefaultTokenizer:
    """The default tokenizer on its fallback path: ceil(len / 2), tool-call overhead 50 (spec E1)."""
    return DefaultTokenizer(None, 2.0, 50)


def build(
    messages: list[AiMessage],
    policy_layer: Any = None,
    *,
    expect_failures: tuple[str, ...] = (),
    **options: Any,
) -> BuildResult:
    """`build_context`, then the invariants: exactly `expect_failures` fail among the error-level ones."""
    result = build_context(messages, policy(**{}) if policy_layer is None else policy_layer, **options)
    if result.error is None:
        report = check_invariants(result, host_tokenizer=_host(options.get("tokenizer")))
        assert tuple(f.id for f in report.errors) == expect_failures, str(report)
    return result


def _host(tokenizer: Any) -> Any:
    return tokenizer if getattr(tokenizer, "is_host", False) else None


def provider_events(result: BuildResult) -> dict[str, dict[str, Any]]:
    assert result.trace is not None
    return {e["providerName"]: e for e in result.trace["events"] if e["kind"] == "provider"}


def decision_events(result: BuildResult) -> list[dict[str, Any]]:
    assert result.trace is not None
    return [e for e in result.trace["events"] if e["kind"] == "message-decision"]


def contents(result: BuildResult) -> list[str]:
    return [m.content for m in result.messages]


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
