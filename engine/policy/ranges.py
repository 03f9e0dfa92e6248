"""The range a numeric field may take in a given policy: its schema bounds, linnkit's engine-config rules
(§2.3) and the fields it is compared with (`reservedForResponse < maxTokens`, ...).

`ControlSpec` bounds are static; a slider whose range follows the policy asks `value_range(policy, path)`
after every edit, so `reservedForResponse` can never slide to `maxTokens` and `maxTokens` never below
`reservedForResponse`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.policy.controls import control_for, get_value
from engine.policy.model import ContextPolicy

Path = tuple[str, ...]

# (field, side, other field, strict): field must stay below ("max") or above ("min") the other one.
_RELATIONS: tuple[tuple[Path, str, Path, bool], ...] = (
    (("budget", "reservedForResponse"), "max", ("budget", "maxTokens"), True),
    (("budget", "maxTokens"), "min", ("budget", "reservedForResponse"), True),
    (("toolHistory", "maxOutputSummaryTokens"), "max", ("toolHistory", "maxPairTokens"), False),
    (("toolHistory", "maxPairTokens"), "min", ("toolHistory", "maxOutputSummaryTokens"), False),
    (("workingMemory", "maxRecentToolInteractions"), "max", ("toolHistory", "maxInteractionGroups"), False),
    (("toolHistory", "maxInteractionGroups"), "min", ("workingMemory", "maxRecentToolInteractions"), False),
)

# linnkit's engine-config rules on single fields, where stricter than the schema: (min, min strict, max).
_RUNTIME: dict[Path, tuple[float | None, bool, float | None]] = {
    ("budget", "maxTokens"): (0, True, None),
    ("budget", "reservedForResponse"): (0, True, None),
    ("budget", "workingMemoryBudgetPercentage"): (0, True, 1),
    ("summarization", "triggerThreshold"): (0, True, 1),
    ("summarization", "budgetPercentage"): (0, True, 0.5),
    ("workingMemory", "toolPairingSearchRange"): (0, True, None),
    ("toolHistory", "maxPairTokens"): (0, True, None),
    ("toolHistory", "maxOutputSummaryTokens"): (0, True, None),
    ("toolHistory", "maxInteractionGroups"): (0, True, None),
    ("workingMemory", "minToolInteractionsToKeep"): (0, False, None),
    ("workingMemory", "maxRecentToolInteractions"): (0, False, None),
    ("tokenEstimation", "avgCharsPerToken"): (0, True, None),
    ("tokenEstimation", "toolCallOverhead"): (0, False, None),
}


@dataclass(frozen=True, slots=True)
class ValueRange:
    """Where a numeric field may go now. `ui_min`/`ui_max` is the slider range, clipped to the bounds;
    `reasons` names the fields that narrowed it (`< budget.maxTokens (8000)`)."""

    minimum: float | None
    minimum_exclusive: bool
    maximum: float | None
    maximum_exclusive: bool
    ui_min: float | None
    ui_max: float | None
    reasons: tuple[str, ...] = ()

    def problem(self, value: float) -> str | None:
        """Why `value` is outside the range, or None."""
        low, high = self.minimum, self.maximum
        if low is not None and (value < low or (self.minimum_exclusive and value == low)):
            return f"{value:g} must be {'>' if self.minimum_exclusive else '>='} {low:g}"
        if high is not None and (value > high or (self.maximum_exclusive and value == high)):
            return f"{value:g} must be {'<' if self.maximum_exclusive else '<='} {high:g}"
        return None


def _tighter_low(
    current: tuple[float | None, bool], candidate: tuple[float, bool]
) -> tuple[float | None, bool]:
    value, strict = current
    if value is None or candidate[0] > value or (candidate[0] == value and candidate[1]):
        return candidate
    return current


def _tighter_high(
    current: tuple[float | None, bool], candidate: tuple[float, bool]
) -> tuple[float | None, bool]:
    value, strict = current
    if value is None or candidate[0] < value or (candidate[0] == value and candidate[1]):
        return candidate
    return current


def value_range(policy: ContextPolicy, path: Path) -> ValueRange:
    """The range of the numeric field at `path` given the rest of `policy`."""
    spec = control_for(path)
    low: tuple[float | None, bool] = (spec.minimum, spec.minimum_exclusive)
    high: tuple[float | None, bool] = (spec.maximum, spec.maximum_exclusive)
    if spec.path in _RUNTIME:
        run_min, run_strict, run_max = _RUNTIME[spec.path]
        if run_min is not None:
            low = _tighter_low(low, (run_min, run_strict))
        if run_max is not None:
            high = _tighter_high(high, (run_max, False))
    reasons = []
    for field, side, other, strict in _RELATIONS:
        if field != spec.path:
            continue
        bound = get_value(policy, other)
        if not isinstance(bound, int | float) or isinstance(bound, bool) or not math.isfinite(bound):
            continue
        if side == "max":
            high = _tighter_high(high, (bound, strict))
            reasons.append(f"{'<' if strict else '<='} {'.'.join(other)} ({bound:g})")
        else:
            low = _tighter_low(low, (bound, strict))
            reasons.append(f"{'>' if strict else '>='} {'.'.join(other)} ({bound:g})")
    ui_min, ui_max = spec.ui_min, spec.ui_max
    step = 1 if spec.kind.endswith("int") else (spec.step or 0.01)  # the smallest value past a strict bound
    if low[0] is not None:
        floor_value = low[0] + (step if low[1] else 0)
        ui_min = floor_value if ui_min is None else max(ui_min, floor_value)
    if high[0] is not None:
        ceiling = high[0] - (step if high[1] else 0)
        ui_max = ceiling if ui_max is None else min(ui_max, ceiling)
    if ui_min is not None and ui_max is not None and ui_max < ui_min:
        ui_max = ui_min  # no room left: the slider pins at its one allowed value
    return ValueRange(low[0], low[1], high[0], high[1], ui_min, ui_max, tuple(reasons))
