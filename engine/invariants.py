"""The 12 context-harness invariants C1–C12 (spec §7), checked against a build result.

`check_invariants(result, ...)` returns the violations in words; every test that builds also checks them.
C11 is literal, as in linnkit: with the defaults an older `user_input` dropped by working memory fails it,
so the UI shows C11 as a warning.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from engine.jsvalues import js_trim
from engine.messages import call_id
from engine.result import BuildResult
from engine.tokens import TokenizerPort

WARNING_ONLY = frozenset({"C11_MUST_KEEP_TYPES_KEPT"})


@dataclass(frozen=True, slots=True)
class Failure:
    id: str
    title: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class InvariantReport:
    failures: tuple[Failure, ...]

    @property
    def ok(self) -> bool:
        return not self.failures

    @property
    def errors(self) -> tuple[Failure, ...]:
        return tuple(f for f in self.failures if f.id not in WARNING_ONLY)

    def __str__(self) -> str:
        return "\n".join(f"{f.id}: {f.message}" for f in self.failures) or "all invariants hold"


def check_invariants(
    result: BuildResult,
    *,
    expected_policy: dict[str, Any] | None = None,
    host_tokenizer: TokenizerPort | None = None,
    enabled: Iterable[str] | None = None,
    disabled: Iterable[str] = (),
) -> InvariantReport:
    policy = result.effective_policy
    trace = result.trace
    checks = [
        ("C1_TRACE_ENABLED_MATCHES_POLICY", "trace exists iff contextTrace.enabled", _c1),
        ("C2_EFFECTIVE_POLICY_MATCHES_EXPECTED", "trace.effectivePolicy equals the expected policy", _c2),
        ("C3_TRACE_OPTIONS_MATCH_POLICY", "trace options equal the policy's", _c3),
        ("C4_TRACE_EVENT_LIMIT", "events within maxTraceEvents", _c4),
        ("C5_FINAL_COUNTS_MATCH_MESSAGES", "originalCount / finalCount match the lists", _c5),
        ("C6_FINAL_TOKENS_WITHIN_BUDGET", "0 ≤ finalTokens ≤ totalBudget", _c6),
        ("C7_PROVIDER_TOKEN_DELTA", "tokenDelta = afterTokens − beforeTokens", _c7),
        ("C8_TRACE_DETAIL_OPTIONS", "ids and token fields follow the detail options", _c8),
        ("C9_MESSAGE_DECISION_REASON", "reasons start with kept_by_ / dropped_by_", _c9),
        ("C10_TOOL_PAIR_DECISIONS_STAY_TOGETHER", "a call and its output share one fate", _c10),
        ("C11_MUST_KEEP_TYPES_KEPT", "every alwaysKeepTypes message is kept", _c11),
        ("C12_HOST_TOKENIZER_DRIVES_BUDGET", "the host tokenizer's counts are the budget's", _c12),
    ]
    wanted = set(enabled) if enabled is not None else None
    failures = []
    for check_id, title, check in checks:
        if (wanted is not None and check_id not in wanted) or check_id in set(disabled):
            continue
        message = check(result, trace, policy, expected_policy, host_tokenizer)
        if message:
            failures.append(Failure(check_id, title, message))
    return InvariantReport(tuple(failures))


def _decisions(trace: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in trace["events"] if e["kind"] == "message-decision"]


def _c1(result, trace, policy, expected, host):
    enabled = bool(policy.get("contextTrace", {}).get("enabled"))
    if enabled != (trace is not None):
        return f"contextTrace.enabled is {enabled} but a trace {'is' if trace else 'is not'} present"
    return None


def _c2(result, trace, policy, expected, host):
    if trace is None or expected is None:
        return None
    if trace.get("effectivePolicy") != expected:
        return "trace.effectivePolicy differs from the expected policy"
    return None


def _c3(result, trace, policy, expected, host):
    if trace is None:
        return None
    options = policy.get("contextTrace", {})
    for key in ("includeMessageIds", "includeTokenBreakdown", "maxTraceEvents"):
        if key in options and trace.get(key) != options[key]:
            return f"{key} is {trace.get(key)!r} in the trace but {options[key]!r} in the policy"
    return None


def _c4(result, trace, policy, expected, host):
    if trace is None:
        return None
    count, limit = len(trace["events"]), trace["maxTraceEvents"]
    if count > limit or (trace["overflowed"] and count != limit):
        return f"{count} events for maxTraceEvents {limit} (overflowed={trace['overflowed']})"
    return None


def _c5(result, trace, policy, expected, host):
    if trace is None:
        return None
    if trace["originalCount"] != len(result.preprocessed) or trace["finalCount"] != len(result.messages):
        return (
            f"counts {trace['originalCount']}/{trace['finalCount']} vs lists "
            f"{len(result.preprocessed)}/{len(result.messages)}"
        )
    return None


def _c6(result, trace, policy, expected, host):
    tokens = result.tokens
    if not 0 <= tokens.final_tokens <= tokens.total_budget:
        return f"finalTokens {tokens.final_tokens} outside 0..{tokens.total_budget} (must-keep overflow?)"
    return None


def _c7(result, trace, policy, expected, host):
    if trace is None:
        return None
    for event in trace["events"]:
        if (
            event["kind"] == "provider"
            and event["tokenDelta"] != event["afterTokens"] - event["beforeTokens"]
        ):
            return f"{event['providerName']}: tokenDelta {event['tokenDelta']} is not after − before"
    return None


def _c8(result, trace, policy, expected, host):
    if trace is None:
        return None
    for event in trace["events"]:
        if not trace["includeMessageIds"] and "messageId" in event:
            return "a messageId is present although includeMessageIds is off"
        if not trace["includeTokenBreakdown"]:
            fields = ("tokens", "beforeTokens", "afterTokens", "tokenDelta", "tokensUsed")
            if any(event.get(f, 0) != 0 for f in fields):
                return "token fields are not 0 although includeTokenBreakdown is off"
    return None


def _c9(result, trace, policy, expected, host):
    if trace is None:
        return None
    for event in _decisions(trace):
        prefix = "kept_by_" if event["kept"] else "dropped_by_"
        if not event["reason"].startswith(prefix):
            return f"message {event.get('messageId', event['originalIndex'])}: reason {event['reason']!r}"
    return None


def _c10(result, trace, policy, expected, host):
    """A call and its output share one fate; and (beyond linnkit's check) a kept call has a kept output."""
    if trace is None or trace["overflowed"] or not trace["includeMessageIds"]:
        return None
    by_id = {}
    for event in _decisions(trace):
        by_id.setdefault(event["messageId"], event)
    preprocessed = {m.id: m for m in result.preprocessed}
    call_kept: dict[str, bool] = {}
    for message_id, event in by_id.items():
        message = preprocessed.get(message_id)
        if message is not None and message.type == "tool_calls":
            for call in message.tool_calls:
                if js_trim(cid := call_id(call)):  # a call without an id joins no group: nothing answers it
                    call_kept[cid] = event["kept"]
    answered: set[str] = set()
    for message_id, event in by_id.items():
        message = preprocessed.get(message_id)
        if message is None or message.type != "tool_output" or message.tool_call_id not in call_kept:
            continue
        if call_kept[message.tool_call_id] != event["kept"]:
            return f"tool call {message.tool_call_id} and its output {message_id} were split"
        answered.add(message.tool_call_id)
    sent = {m.tool_call_id for m in result.messages if m.type == "tool_output"}
    unanswered = [c for c, kept in call_kept.items() if kept and c not in answered and c not in sent]
    if unanswered:
        return f"tool call {unanswered[0]} is kept without an output (the session has none for it)"
    return None


def _c11(result, trace, policy, expected, host):
    if trace is None or trace["overflowed"] or not trace["includeMessageIds"]:
        return None
    types = set(policy.get("mustKeep", {}).get("alwaysKeepTypes") or [])
    if not types:
        return None
    kept = {m.id for m in result.messages}
    missing = [m.id for m in result.preprocessed if m.type in types and m.id not in kept]
    if missing:
        return f"must-keep types dropped: {', '.join(missing[:8])}" + ("…" if len(missing) > 8 else "")
    return None


def _c12(result, trace, policy, expected, host):
    if host is None or trace is None or trace["overflowed"] or not trace["includeTokenBreakdown"]:
        return None
    for event in _decisions(trace):
        index = event["originalIndex"]
        if index < 0:
            continue
        estimate = host.estimate_message(result.preprocessed[index])
        if event["tokens"] != estimate:
            return (
                f"decision for index {index} has {event['tokens']} tokens, the host tokenizer says {estimate}"
            )
    total = sum(host.estimate_message(m) for m in result.messages)
    if total != result.tokens.final_tokens:
        return f"finalTokens {result.tokens.final_tokens} but the host tokenizer sums {total}"
    return None
