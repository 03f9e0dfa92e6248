"""Token calibration from provider usage, as linnkit 0.21's own tests pin it (AgentContextManager
contextTrace tests): off by default, only same-route samples, at least minSamples, the clamp, the trace."""

from __future__ import annotations

import math

import pytest

from engine import build_context
from engine.calibration import CalibrationSample, TokenRoute, calibration_state
from engine.host_tokenizers import MockTokenizer
from engine.messages import AiMessage

ROUTE = TokenRoute("glm-via-openrouter", "openrouter", "https://openrouter.ai/api/v1")
OTHER = TokenRoute("glm-official", "zhipu", "https://open.bigmodel.cn/api/paas/v4")
TEN = MockTokenizer(tokens_per_message=10)  # linnkit's test tokenizer: 10 a message
MESSAGES = [
    AiMessage("system_1", "system", "system_prompt", "系统提示", 1),
    AiMessage("user_1", "user", "user_input", "当前问题", 2),
]
TRACED = {"contextTrace": {"enabled": True, "includeTokenBreakdown": True}}


def sample(route: TokenRoute, ledger: str, actual: int) -> CalibrationSample:
    return CalibrationSample(route, 10, actual, ledger)


def policy(**calibration) -> dict:
    return {"tokenEstimation": {"calibration": calibration}, **TRACED} if calibration else dict(TRACED)


def build(layer: dict, samples: list[CalibrationSample], route: TokenRoute | None = ROUTE):
    return build_context(MESSAGES, layer, tokenizer=TEN, token_route=route, calibration_samples=samples)


def test_off_by_default_the_estimates_stay_local() -> None:
    samples = [sample(ROUTE, f"ledger_{n}", 20) for n in (1, 2, 3)]
    result = build(policy(), samples)
    assert result.tokens.final_tokens == 20 and result.tokens.local_final_tokens is None
    assert result.trace["tokenCalibration"] == {
        "enabled": False, "applied": False, "route": ROUTE.to_json(), "sampleCount": 0,
        "minSamples": 3, "minCoefficient": 1.0, "maxCoefficient": 4.0,
        "localEstimateTokens": 0, "calibratedEstimateTokens": 0, "deltaTokens": 0,
    }  # fmt: skip


def test_too_few_samples_on_the_route_apply_nothing_and_say_so() -> None:
    result = build(
        policy(enabled=True, minSamples=2), [sample(OTHER, "ledger_other", 50), sample(ROUTE, "ledger_1", 20)]
    )
    assert result.tokens.final_tokens == 20
    got = result.trace["tokenCalibration"]
    assert (got["applied"], got["sampleCount"], got["minSamples"], got["sampleLedgerEntryIds"]) == (
        False, 1, 2, ["ledger_1"],
    )  # fmt: skip
    assert "coefficient" not in got


def test_only_same_route_samples_calibrate_every_message() -> None:
    samples = [
        sample(ROUTE, "ledger_1", 20),
        sample(ROUTE, "ledger_2", 20),
        sample(OTHER, "ledger_other", 50),
    ]
    result = build(policy(enabled=True, minSamples=2), samples)
    assert result.tokens.final_tokens == 40 and result.tokens.local_final_tokens == 20
    top = result.trace["tokenCalibration"]
    assert (top["applied"], top["sampleCount"], top["coefficient"], top["sampleLedgerEntryIds"]) == (
        True, 2, 2.0, ["ledger_1", "ledger_2"],
    )  # fmt: skip
    decisions = [e for e in result.trace["events"] if e["kind"] == "message-decision"]
    assert [(d["messageId"], d["tokens"]) for d in decisions] == [("system_1", 20), ("user_1", 20)]
    calibrated = decisions[0]["tokenCalibration"]
    keys = ("localEstimateTokens", "calibratedEstimateTokens", "deltaTokens")
    assert [calibrated[key] for key in keys] == [10, 20, 10]


@pytest.mark.parametrize(("actual", "coefficient"), [(5, 1.0), (100, 4.0), (15, 1.5)])
def test_the_coefficient_is_clamped(actual: int, coefficient: float) -> None:
    state = calibration_state(
        type(
            "C", (), {"enabled": True, "min_samples": 1, "min_coefficient": None, "max_coefficient": None}
        )(),
        ROUTE,
        [sample(ROUTE, "a", actual)],
    )
    assert state.coefficient == coefficient
    assert state.calibrate(7) == math.ceil(7 * coefficient)


def test_no_route_no_calibration_and_samples_summed_count_as_many() -> None:
    assert not build(policy(enabled=True, minSamples=1), [sample(ROUTE, "a", 20)], route=None).trace[
        "tokenCalibration"
    ]["applied"]
    three = CalibrationSample(ROUTE, 30, 45, None, count=3)  # a calibration file's samples, summed
    result = build(policy(enabled=True), [three])
    assert result.trace["tokenCalibration"]["sampleCount"] == 3
    assert result.tokens.final_tokens == 30  # ceil(10 × 1.5) a message


def test_no_decision_calibration_without_the_token_breakdown() -> None:
    layer = policy(enabled=True, minSamples=1)
    layer["contextTrace"]["includeTokenBreakdown"] = False
    result = build(layer, [sample(ROUTE, "a", 30)])
    decisions = [e for e in result.trace["events"] if e["kind"] == "message-decision"]
    assert decisions and all("tokenCalibration" not in d for d in decisions)
    assert result.trace["tokenCalibration"]["coefficient"] == 3.0 and result.tokens.final_tokens == 60
