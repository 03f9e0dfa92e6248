"""ContextTrace: provider events, message decisions and token components (spec §6).

Produced only when `contextTrace.enabled`; it never enters the messages.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

from engine.calibration import CalibrationState
from engine.jsvalues import js_truthy
from engine.messages import AiMessage
from engine.providers.state import KEEP_CORE, ProviderReport, State


class TraceRecorder:
    def __init__(
        self,
        options: Any,
        effective_policy: dict[str, Any],
        total_budget: int,
        calibration: CalibrationState | None = None,
        local_estimate: Callable[[AiMessage], int] | None = None,
    ) -> None:
        self.calibration = calibration
        self.local_estimate = local_estimate  # the uncalibrated message estimate, for the decisions' trace
        self.enabled = bool(options.enabled)
        self.include_ids = bool(options.include_message_ids)
        self.include_tokens = bool(options.include_token_breakdown)
        self.max_events = int(options.max_trace_events)
        self.effective_policy = effective_policy
        self.total_budget = total_budget
        self.events: list[dict[str, Any]] = []
        self.overflowed = False

    def _add(self, event: dict[str, Any]) -> None:
        if len(self.events) >= self.max_events:
            self.overflowed = True
            return
        self.events.append(event)

    def provider(
        self,
        report: ProviderReport,
        before: tuple[int, int],
        after: tuple[int, int],
        duration_ms: float,
        remaining: int,
    ) -> None:
        tokens = self.include_tokens
        self._add(
            {
                "kind": "provider",
                "providerName": report.name,
                "skipped": report.skipped,
                "durationMs": round(duration_ms, 3),
                "beforeTokens": before[0] if tokens else 0,
                "afterTokens": after[0] if tokens else 0,
                "tokenDelta": after[0] - before[0] if tokens else 0,
                "tokensUsed": report.tokens_used if tokens else 0,
                "beforeKeptCount": before[1],
                "afterKeptCount": after[1],
                "strategiesApplied": list(dict.fromkeys(report.strategies)),
                "remainingBudget": remaining,
            }
        )

    def decisions(self, states: list[State]) -> None:
        for state in states:
            event: dict[str, Any] = {
                "kind": "message-decision",
                "originalIndex": state.index,
                "role": state.message.role,
                "type": state.message.type,
                "action": state.action,
                "tokens": state.tokens if self.include_tokens else 0,
                "kept": state.kept,
                "reason": decision_reason(state),
            }
            if state.phase is not None:
                event["phase"] = state.phase
            if self.include_ids:
                event["messageId"] = state.message.id
                if state.replacement_source_ids:
                    event["replacementSourceIds"] = list(state.replacement_source_ids)
            calibration = self._calibration_of(state)
            if calibration is not None:
                event["tokenCalibration"] = calibration
            self._add(event)

    def _calibration_of(self, state: State) -> dict[str, Any] | None:
        """A state's estimate as calibrated (linnkit: its first estimate, or core's re-estimate of what it
        keeps); none for a summary the build made, nor with the token breakdown off."""
        if not self.include_tokens or self.calibration is None or self.local_estimate is None:
            return None
        if state.index < 0:
            return None
        message = state.current if state.action == KEEP_CORE else state.message
        return self.calibration.trace(self.local_estimate(message))

    def finish(
        self, original_count: int, final_states: list[State], final_tokens: int, states: list[State]
    ) -> dict[str, Any]:
        """The trace; `states` are every state after the providers (linnkit makes a token component of
        each, kept or not, in their order)."""
        trace: dict[str, Any] = {
            "enabled": True,
            "includeMessageIds": self.include_ids,
            "includeTokenBreakdown": self.include_tokens,
            "maxTraceEvents": self.max_events,
            "overflowed": self.overflowed,
            "effectivePolicy": self.effective_policy,
            "totalBudget": self.total_budget,
            "originalCount": original_count,
            "finalCount": len(final_states),
            "finalTokens": final_tokens,
            "truncated": original_count != len(final_states),
            "events": self.events,
        }
        if self.calibration is not None:
            trace["tokenCalibration"] = self.calibration.trace()
        if self.include_tokens:
            trace["tokenComponents"] = [token_component(s, self.include_ids) for s in states]
        return trace


def decision_reason(state: State) -> str:
    if state.kept:
        return f"kept_by_{state.phase}" if state.phase else f"kept_by_{state.action}"
    return f"dropped_by_{state.phase}" if state.phase else "dropped_by_budget_or_priority"


def component_kind(state: State) -> str:
    """linnkit's `classifyMessage`, in its order."""
    message = state.message
    if js_truthy(message.meta("fenceKind")):
        return "fence"
    if message.type == "history_summary" or message.meta("messageType") == "summary":
        return "history-summary"
    if message.role == "tool" or message.type in ("tool_output", "tool_calls", "tool_code"):
        return "tool"
    if message.type in ("context_injection", "context_before", "context_after"):
        return "context-injection"
    return message.role if message.role in ("system", "user", "assistant") else "other"


def token_component(state: State, include_ids: bool = True) -> dict[str, Any]:
    message = state.message
    label = message.fence_kind or message.meta("tool_name") or message.meta("messageType") or message.type
    component: dict[str, Any] = {
        "componentId": f"{state.index}:{message.id}" if include_ids else str(state.index),
        "kind": component_kind(state),
        "tokens": state.tokens,
        "source": "local-estimate",
        "confidence": "estimate",
        "label": label,
        "role": message.role,
        "action": state.action,
        "kept": state.kept,
    }
    if include_ids:  # with ids off, no id leaks through the components either
        component["messageId"] = message.id
    truncation = message.meta("observationTruncation")
    if isinstance(truncation, dict):
        original, preview = truncation.get("originalChars"), truncation.get("previewChars")
        if isinstance(original, int) and isinstance(preview, int) and 0 < preview < original:
            estimate = max(state.tokens, math.ceil(state.tokens * original / preview))
            component.update(
                truncatedAtExecution=True,
                originalTokensEstimate=estimate,
                droppedTokensEstimate=estimate - state.tokens,
            )
    return component
