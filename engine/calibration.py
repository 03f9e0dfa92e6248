"""Token calibration from provider usage, as linnkit 0.21 does it (`token-calibration.ts`, spec §3).

A host feeds samples: a build's local estimate and what the provider then counted for that request (its
input, cache read and cache write together), on a route (provider, base URL, model, provider model). Once
`tokenEstimation.calibration.enabled` and at least `minSamples` (3) samples of the build's own route have
both counts above 0, every message estimate of the build becomes `ceil(local × clamp(Σactual/Σlocal,
minCoefficient=1, maxCoefficient=4))`: the states, every re-estimate and `finalTokens`; text estimates
(the reminder, the summary agent's prompt) stay local. The budget itself does not change.

The trace says what happened (`ContextTrace.tokenCalibration`, and on each message decision when the token
breakdown is on): enabled, applied, route, sample count, coefficient, the clamps, local and calibrated
estimates and their delta, the samples' ledger ids.

A sample may stand for several (`count`, with summed counts): a calibration file stores a model's samples
so, and the coefficient, a ratio of sums, is the same.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.messages import AiMessage
from engine.tokens import TokenizerPort

__all__ = [
    "CalibratedTokenizer",
    "CalibrationSample",
    "CalibrationState",
    "TokenRoute",
    "calibrated",
    "calibration_state",
]

DEFAULT_MIN_SAMPLES = 3
DEFAULT_MIN_COEFFICIENT = 1.0
DEFAULT_MAX_COEFFICIENT = 4.0


@dataclass(frozen=True, slots=True)
class TokenRoute:
    """Where a request goes; samples calibrate only builds on the same route (all four fields equal)."""

    model_id: str | None = None
    provider_id: str | None = None
    base_url: str | None = None
    provider_model_id: str | None = None

    def to_json(self) -> dict[str, str]:
        names = (("providerId", self.provider_id), ("baseURL", self.base_url), ("modelId", self.model_id),
                 ("providerModelId", self.provider_model_id))  # fmt: skip
        return {key: value for key, value in names if value is not None}


@dataclass(frozen=True, slots=True)
class CalibrationSample:
    """One request's local estimate beside what the provider counted (`count` requests, summed)."""

    route: TokenRoute
    local_estimate_tokens: int
    actual_input_tokens: int
    ledger_entry_id: str | None = None
    count: int = 1


@dataclass(frozen=True, slots=True)
class CalibrationState:
    enabled: bool
    route: TokenRoute | None
    sample_count: int
    min_samples: int
    min_coefficient: float
    max_coefficient: float
    coefficient: float | None = None  # set once enough samples match
    ledger_ids: tuple[str, ...] = field(default=())

    @property
    def applied(self) -> bool:
        return self.enabled and self.coefficient is not None

    def calibrate(self, local: int) -> int:
        return math.ceil(local * self.coefficient) if self.applied else local  # type: ignore[operator]

    def trace(self, local: int = 0) -> dict[str, Any]:
        """linnkit's `TokenUsageCalibrationTrace` for one estimate (0: the build's own, top-level entry)."""
        calibrated = self.calibrate(local)
        out: dict[str, Any] = {"enabled": self.enabled, "applied": self.applied}
        if self.route is not None:
            out["route"] = self.route.to_json()
        out["sampleCount"] = self.sample_count
        if self.coefficient is not None:
            out["coefficient"] = self.coefficient
        out.update(
            minSamples=self.min_samples,
            minCoefficient=self.min_coefficient,
            maxCoefficient=self.max_coefficient,
            localEstimateTokens=local,
            calibratedEstimateTokens=calibrated,
            deltaTokens=calibrated - local,
        )
        if self.ledger_ids:
            out["sampleLedgerEntryIds"] = list(self.ledger_ids)
        return out


def _setting(policy: Any, name: str, default: Any) -> Any:
    value = getattr(policy, name, None) if policy is not None else None
    return default if value is None else value


def calibration_state(
    policy: Any, route: TokenRoute | None, samples: Iterable[CalibrationSample] = ()
) -> CalibrationState:
    """linnkit's `buildTokenUsageCalibrationState`: `policy` is `tokenEstimation.calibration` (or None)."""
    enabled = _setting(policy, "enabled", False) is True
    minimum = int(_setting(policy, "min_samples", DEFAULT_MIN_SAMPLES))
    low = float(_setting(policy, "min_coefficient", DEFAULT_MIN_COEFFICIENT))
    high = float(_setting(policy, "max_coefficient", DEFAULT_MAX_COEFFICIENT))
    if not enabled or route is None:
        return CalibrationState(enabled, route, 0, minimum, low, high)
    matching = [
        s for s in samples if s.route == route and s.local_estimate_tokens > 0 and s.actual_input_tokens > 0
    ]
    count = sum(s.count for s in matching)
    ids = tuple(s.ledger_entry_id for s in matching if s.ledger_entry_id is not None)
    if count < minimum:
        return CalibrationState(enabled, route, count, minimum, low, high, None, ids)
    ratio = sum(s.actual_input_tokens for s in matching) / sum(s.local_estimate_tokens for s in matching)
    return CalibrationState(enabled, route, count, minimum, low, high, min(max(ratio, low), high), ids)


class CalibratedTokenizer(TokenizerPort):
    """A tokenizer whose message estimates are calibrated; its text estimates and backend are the inner
    one's. `local` keeps what the inner one said (the trace and the host's next sample need it)."""

    def __init__(self, inner: TokenizerPort, state: CalibrationState) -> None:
        self.inner = inner
        self.state = state
        self.is_host = inner.is_host

    @property
    def backend(self) -> str:
        return self.inner.backend

    def estimate_text(self, text: str, model_id: str | None = None) -> int:
        return self.inner.estimate_text(text, model_id)

    def estimate_message(self, msg: AiMessage, model_id: str | None = None) -> int:
        return self.state.calibrate(self.inner.estimate_message(msg, model_id))

    def estimate_messages(self, messages: Sequence[AiMessage], model_id: str | None = None) -> list[int]:
        return [self.state.calibrate(n) for n in self.inner.estimate_messages(messages, model_id)]

    def local(self, msg: AiMessage, model_id: str | None = None) -> int:
        return self.inner.estimate_message(msg, model_id)


_MADE: list[CalibratedTokenizer] = []


def calibrated(inner: TokenizerPort, state: CalibrationState) -> CalibratedTokenizer:
    """The calibrated tokenizer for `inner` under `state`: the same object for the same pair, as the stage
    cache keeps token counts (and working memory its floors) by the tokenizer's identity."""
    for made in _MADE:
        if made.inner is inner and made.state == state:
            return made
    made = CalibratedTokenizer(inner, state)
    _MADE.insert(0, made)
    del _MADE[4:]
    return made
