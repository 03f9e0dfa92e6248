"""The rebuild against the record: what the engine counts a call sent, beside what the provider counted.

**As recorded.** `AS_RECORDED` is the policy that rebuilds what the agent itself sent: nothing trimmed,
compressed or summarised, no reminder, no checkpoint; the transcript's own compactions still apply (they
are `history_summary` messages, and purification drops what they replaced), so a step after a recorded
compaction sends what the agent sent after it.

**What a transcript lacks.** The provider's count covers more than the transcript holds: the system prompt
and tool definitions (Claude Code's run to 16–45k tokens and are never written), files an agent re-attaches
after a compaction, and it counts with the provider's own tokenizer. So the provider's prompt is predicted
as `ceil(coefficient × local) + offset`, per model:
- `local` is the engine's own count of the rebuilt wire (cl100k by default);
- `coefficient` is how much more the provider counts per local token (Claude ≈ 1.2 on code); 1 when no
  calibration is given;
- `offset` is what the transcript lacks: given (the tokens of `--tools`, a system prompt file becomes a
  message), or learnt from the first recorded call of each segment, or the calibration's offset before
  any call of the segment was seen. Its source is always said (`offsetSource`), so an estimate shows as one.
  A segment is one model's calls within one user turn: a new model, a compaction or a user turn starts
  one, because what an agent adds unseen changes there (Claude Code attaches reminders and files per
  turn, and Anthropic drops earlier turns' thinking from the prompt once a new turn starts); the error is
  measured on the other calls of the segment.

**Calibration.** `fit_calibration` fits each model's coefficient on the growth between calls of a segment
(the offset cancels out there) and its offset as the median first-call remainder; `Calibration` is the
YAML file `linn-playground calibrate` writes. Its samples (calls, local and actual sums per model) are also
linnkit's calibration samples (`engine.calibration`), applied when `tokenEstimation.calibration.enabled`.
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import yaml

from engine.calibration import CalibrationSample, TokenRoute
from engine.lanes import memory_lane
from engine.messages import AiMessage
from engine.policy.lint import suggestion
from engine.provider_count import provider_counts
from engine.recorded import RecordedCall, RecordedRun
from engine.replay import iter_session_steps
from engine.safe_input import InputError, YamlDocument, decode_utf8, load_yaml, read_regular_file

__all__ = [
    "AS_RECORDED",
    "CALIBRATION_KIND",
    "Calibration",
    "ModelFit",
    "StepTruth",
    "fit_calibration",
    "iter_truth",
    "load_calibration",
]

BIG = 10_000_000
SUM_BOUND = 2**53 - 1  # a calibration's sums over every call of a model (JavaScript's safe integers)
AS_RECORDED: dict[str, Any] = {
    "budget": {"maxTokens": BIG, "reservedForResponse": 1, "workingMemoryBudgetPercentage": 1},
    "toolHistory": {
        "strategy": "none",
        "maxInteractionGroups": BIG,
        "maxPairTokens": BIG,
        "maxOutputSummaryTokens": BIG,
    },
    "workingMemory": {
        "maxRecentToolInteractions": BIG,
        "minToolInteractionsToKeep": 0,
        "toolPairingSearchRange": BIG,
    },
    "reasoningRetention": {"keepLatestThoughts": BIG},
    "summarization": {"triggerThreshold": 1},
    "systemReminder": {"enabledRuleIds": []},
    "checkpoint": {"triggerToolName": "as-recorded: no checkpoint tool"},
    "toolOutput": {"observationGovernance": {"enabled": False}},
}
CALIBRATION_KIND = "linn-calibration"
TRUTH_LANE = "as-recorded"  # its builds keep their stage outputs apart from the main build's
MAX_CALIBRATION_BYTES = 1_000_000
PRIOR_TOKENS = 20_000  # the weight of a calibration's coefficient against a session's own growth
MIN_COEFFICIENT, MAX_COEFFICIENT = 0.5, 4.0
# what a provider appends to a model's name for a snapshot of it: `-20250929`, `-2025-04-14`, `@20250929`,
# `-v1:0` (Bedrock), `-latest`, `-001`
VERSION_STAMP = re.compile(r"[-_.@:](\d{3,8}|\d{4}-\d{2}-\d{2}|latest|v\d+(:\d+)?)([-_.@:]v?\d+(:\d+)?)*")


@dataclass(frozen=True, slots=True)
class ModelFit:
    """One model's fit: recorded ≈ ceil(coefficient × local) + offset; and the samples it was made from."""

    coefficient: float
    offset: int
    calls: int = 0
    local_tokens: int = 0  # Σ local over the calls: with actual_tokens, linnkit's samples
    actual_tokens: int = 0

    def predict(self, local: int, offset: int | None = None) -> int:
        return math.ceil(local * self.coefficient) + (self.offset if offset is None else offset)

    def to_json(self) -> dict[str, Any]:
        return {
            "coefficient": round(self.coefficient, 4),
            "offset": self.offset,
            "calls": self.calls,
            "localTokens": self.local_tokens,
            "actualTokens": self.actual_tokens,
        }


IDENTITY = ModelFit(1.0, 0)


@dataclass(frozen=True, slots=True)
class Calibration:
    """Fits per model (and per family, `claude-*`), and what they were fitted and tested on."""

    models: dict[str, ModelFit]
    encoding: str = "cl100k_base"
    fitted_on: tuple[str, ...] = ()
    held_out: dict[str, Any] = field(default_factory=dict)
    source: str = "<memory>"

    def fit_for(self, model: str | None) -> ModelFit | None:
        """The model's fit (exact, else the name the id extends by a date or version stamp: the dated id
        `claude-opus-4-6-20260101` finds `claude-opus-4-6`, `gemini-3-pro-image-preview` does not find
        `gemini-3-pro`: another model), else its family's (`claude-*`: every model of that provider the
        file was fitted on), else None."""
        if not model:
            return None
        if model in self.models:
            return self.models[model]
        names = [
            n
            for n in self.models
            if not n.endswith("*") and model.startswith(n) and VERSION_STAMP.fullmatch(model[len(n) :])
        ]
        if names:
            return self.models[max(names, key=len)]
        return self.models.get(family(model))

    def samples(self) -> list[CalibrationSample]:
        """linnkit's calibration samples: each model's calls, summed (the coefficient is a ratio of sums)."""
        return [
            CalibrationSample(TokenRoute(model), fit.local_tokens, fit.actual_tokens, None, fit.calls)
            for model, fit in self.models.items()
            if not model.endswith("*") and fit.calls > 0
        ]

    def to_yaml(self) -> str:
        document = {
            "kind": CALIBRATION_KIND,
            "version": 1,
            "encoding": self.encoding,
            "fittedOn": list(self.fitted_on),
            "models": {name: fit.to_json() for name, fit in self.models.items()},
            "heldOut": self.held_out,
        }
        return yaml.safe_dump(document, sort_keys=False, allow_unicode=True)


def load_calibration(path: str | Path) -> Calibration:
    """Read a calibration file (`safe_load`); a malformed one raises `InputError` naming file, line, field."""
    source = str(path)
    document = load_yaml(
        decode_utf8(read_regular_file(path, max_bytes=MAX_CALIBRATION_BYTES), source), source
    )
    data = document.data
    if not isinstance(data, Mapping) or data.get("kind") != CALIBRATION_KIND:
        raise InputError(source, f"not a calibration file (expected `kind: {CALIBRATION_KIND}`)")
    models = data.get("models")
    if not isinstance(models, Mapping) or not models:
        raise InputError(
            source, "a calibration file lists `models:` (model → coefficient, offset)", field="models"
        )
    _refuse_unknown(data, _CALIBRATION_KEYS, source, document, ())
    fits: dict[str, ModelFit] = {}
    for name, row in models.items():
        where, line = f"models.{name}", document.line_of(("models", name))
        if not isinstance(row, Mapping):
            raise InputError(source, "expected a mapping", line=line, field=where)
        _refuse_unknown(row, _FIT_KEYS, source, document, ("models", name))
        coefficient, offset = row.get("coefficient"), row.get("offset", 0)
        if (
            isinstance(coefficient, bool)
            or not isinstance(coefficient, int | float)
            or not 0 < coefficient <= 10
        ):
            raise InputError(
                source, "a coefficient is a number in (0, 10]", line=line, field=f"{where}.coefficient"
            )
        counts = {key: row.get(key, 0) for key in ("offset", "calls", "localTokens", "actualTokens")}
        for key, value in counts.items():
            bound = BIG if key == "offset" else SUM_BOUND  # an offset is one call's; the rest sum every call
            if isinstance(value, bool) or not isinstance(value, int) or value < 0 or value > bound:
                raise InputError(source, f"a whole number in 0..{bound:,}", line=line, field=f"{where}.{key}")
        fits[str(name)] = ModelFit(float(coefficient), offset, counts["calls"], counts["localTokens"],
                                   counts["actualTokens"])  # fmt: skip
    fitted = data.get("fittedOn") if isinstance(data.get("fittedOn"), list) else []
    held = data.get("heldOut") if isinstance(data.get("heldOut"), dict) else {}
    return Calibration(
        fits, str(data.get("encoding") or "cl100k_base"), tuple(map(str, fitted)), held, source
    )


_CALIBRATION_KEYS = ("kind", "version", "encoding", "fittedOn", "models", "heldOut")
_FIT_KEYS = ("coefficient", "offset", "calls", "localTokens", "actualTokens")


def _refuse_unknown(
    row: Mapping[Any, Any], known: tuple[str, ...], source: str, document: YamlDocument, at: tuple[Any, ...]
) -> None:
    """A key the file format does not have: a typo there (`ofset: 40`) would silently leave its default."""
    for key in row:
        if key not in known:
            hint = suggestion(str(key), known) or f" (known: {', '.join(known)})"
            field = ".".join(map(str, (*at, key)))
            line = document.line_of((*at, key))
            raise InputError(source, f"unknown key{hint}", line=line, field=field)


@dataclass(frozen=True, slots=True)
class StepTruth:
    """One step of a recorded session: the recorded call (if any), the as-recorded rebuild's local count and
    the provider count predicted from it, and how that prediction was made."""

    step: int
    upto: int
    segment: tuple[str, int]  # (model, user turns and compactions before the step): an offset's reach
    recorded: RecordedCall | None
    as_recorded_local: int
    fit: ModelFit
    offset: int | None  # None: nothing to learn it from yet (no calibration, no earlier call of the segment)
    offset_source: str | None  # "given", "first call", "calibration"
    learnt_here: bool = False  # this step's record set the segment's offset (its error says nothing)
    carried_reasoning: int = 0  # encrypted reasoning of the turn's earlier calls, sent again (unseen)
    estimate: int = 0  # linnkit's estimate of the as-recorded wire (its calibration samples' local side)

    @property
    def model(self) -> str:
        return self.segment[0]

    def predict(self, local: int) -> int | None:
        """The provider's count for a build of `local` tokens at this step."""
        if self.offset is None:
            return None
        return self.fit.predict(local, self.offset) + self.carried_reasoning

    @property
    def as_recorded_prompt(self) -> int | None:
        return self.predict(self.as_recorded_local)

    @property
    def error(self) -> float | None:
        """(predicted − recorded) / recorded of the as-recorded rebuild; None when either is missing."""
        predicted = self.as_recorded_prompt
        if (
            self.recorded is None
            or predicted is None
            or self.learnt_here
            or not self.recorded.usage.prompt_tokens
        ):
            return None
        return (predicted - self.recorded.usage.prompt_tokens) / self.recorded.usage.prompt_tokens

    def to_json(self) -> dict[str, Any]:
        """The per-step fields `replay --json` adds for a recorded session."""
        usage = self.recorded.usage if self.recorded is not None else None
        error = self.error
        return {
            "recorded": None
            if usage is None
            else {
                "promptTokens": usage.prompt_tokens,
                "cacheReadTokens": usage.cache_read_tokens,
                "cacheWriteTokens": usage.cache_write_tokens,
                "outputTokens": usage.output_tokens,
                "model": usage.model,
            },
            "asRecorded": {
                "localTokens": self.as_recorded_local,
                "promptTokens": self.as_recorded_prompt,
                "coefficient": round(self.fit.coefficient, 4),
                "offset": self.offset,
                "offsetSource": self.offset_source,
                "carriedReasoningTokens": self.carried_reasoning,
                "errorPct": None if error is None else round(100 * error, 2),
            },
        }


def family(model: str) -> str:
    """The key pooling a provider's models in a calibration: `claude-opus-4-6` → `claude-*`."""
    return model.split("-", 1)[0] + "-*"


def _segment_model(run: RecordedRun, upto: int, last: str | None, default: str | None) -> str:
    call = run.at_step(upto)
    return (call.usage.model if call and call.usage.model else None) or last or default or "unknown"


@dataclass
class _Learner:
    """A model's coefficient learnt as the session goes: the calibration's (or 1) weighed as PRIOR_TOKENS
    of local growth, then the growth between this session's consecutive recorded calls of a segment,
    where the offset cancels (`c = (c0 × PRIOR + Σ Δrecorded) / (PRIOR + Σ Δlocal)`). Only calls before
    the step are used, as a host feeding usage back would have them."""

    prior: float
    local: int = 0  # Σ Δlocal
    actual: int = 0  # Σ Δrecorded
    last: tuple[tuple[str, int], int, int] | None = None  # (segment, local, recorded) of the last call

    def coefficient(self) -> float:
        value = (self.prior * PRIOR_TOKENS + self.actual) / (PRIOR_TOKENS + self.local)
        return min(max(value, MIN_COEFFICIENT), MAX_COEFFICIENT)

    def observe(self, segment: tuple[str, int], local: int, actual: int) -> None:
        if self.last is not None and self.last[0] == segment and local > self.last[1]:
            self.local += local - self.last[1]
            self.actual += actual - self.last[2]
        self.last = (segment, local, actual)


def iter_truth(
    messages: Sequence[AiMessage],
    run: RecordedRun,
    *,
    calibration: Calibration | None = None,
    given_offset: int | None = None,
    default_model: str | None = None,
    per_turn: bool = True,
    learn: bool = True,
    **replay_options: Any,
) -> Iterator[StepTruth]:
    """Replay the session as recorded and say, per step, what the provider counted and what the rebuild
    predicts it counted. `given_offset`: the tokens the transcript is known to lack (tool definitions).
    `per_turn`: a user turn starts a segment too (else only a model or a compaction does). `learn`: each
    model's coefficient also learns from the session's earlier recorded calls (`_Learner`)."""
    starts = ("history_summary", "user_input") if per_turn else ("history_summary",)

    def starts_segment(m: AiMessage) -> bool:
        # a provider-run tool (web search) returns results no transcript holds: the offset changes there
        return m.type in starts or (m.type == "tool_output" and m.meta("synthetic") is True)

    options = {k: v for k, v in replay_options.items() if k not in ("policy", "detail")}
    anchors: dict[tuple[str, int], tuple[int, int]] = {}  # segment → (local, recorded) of its first call
    learners: dict[str, _Learner] = {}
    compactions = done = 0
    carried = 0  # the turn's encrypted reasoning so far (the API drops it when a user turn begins)
    last_model: str | None = None
    replay = iter_session_steps(messages, AS_RECORDED, detail=False, **options)
    while True:
        with memory_lane(TRUTH_LANE):
            step = next(replay, None)
        if step is None:
            return
        upto = step.point.message_count
        compactions += sum(1 for m in messages[done:upto] if starts_segment(m))
        if any(m.type in ("user_input", "history_summary") for m in messages[done:upto]):
            carried = 0
        done = upto
        model = last_model = _segment_model(run, upto, last_model, default_model)
        segment = (model, compactions)
        calibrated = calibration.fit_for(model) if calibration else None
        fit = calibrated or IDENTITY
        learner = learners.get(model) or learners.setdefault(model, _Learner(fit.coefficient))
        if learn:
            fit = replace(fit, coefficient=learner.coefficient())
        estimate = step.result.tokens.final_tokens + step.result.reminder.tokens
        counts = provider_counts(step.result, model)
        local = estimate if counts is None else sum(counts)
        recorded = run.at_step(upto)
        learnt_here = segment not in anchors and recorded is not None and given_offset is None
        if learnt_here:
            anchors[segment] = (local, recorded.usage.prompt_tokens - carried)
        if given_offset is not None:
            offset, source = given_offset, "given"
        elif segment in anchors:
            anchor_local, anchor_actual = anchors[segment]
            offset, source = anchor_actual - math.ceil(anchor_local * fit.coefficient), "first call"
        elif calibrated is not None:
            offset, source = fit.offset, "calibration"
        else:
            offset, source = None, None
        yield StepTruth(
            step.number, upto, segment, recorded, local, fit, offset, source, learnt_here, carried, estimate
        )
        if recorded is not None:
            learner.observe(segment, local, recorded.usage.prompt_tokens - carried)
            if recorded.usage.reasoning_carried:
                carried += recorded.usage.reasoning_tokens or 0


def _percentile(values: Sequence[float], q: float) -> float:
    ordered = sorted(values)
    k = (len(ordered) - 1) * q
    low, high = math.floor(k), math.ceil(k)
    return ordered[low] + (ordered[high] - ordered[low]) * (k - low)


def error_summary(errors: Iterable[float]) -> dict[str, Any]:
    """Median and p90 of absolute relative errors, in percent, and how many calls they are of."""
    values = [abs(e) for e in errors]
    if not values:
        return {"calls": 0, "medianErrorPct": None, "p90ErrorPct": None}
    return {
        "calls": len(values),
        "medianErrorPct": round(100 * statistics.median(values), 2),
        "p90ErrorPct": round(100 * _percentile(values, 0.9), 2),
    }


def fit_calibration(
    truths_by_session: Mapping[str, Sequence[StepTruth]], encoding: str = "cl100k_base"
) -> Calibration:
    """Fit each model's coefficient and offset on the recorded calls of these sessions (as-recorded replays
    made without a calibration). `claude-*` (a family) pools every model of one provider."""
    pairs: dict[str, dict[str, list[tuple[int, int]]]] = {}  # model → session → (Δlocal, Δrecorded)
    firsts: dict[str, list[tuple[int, int]]] = {}
    sums: dict[str, list[int]] = {}
    for name, truths in truths_by_session.items():
        first: dict[tuple[str, int], StepTruth] = {}
        for truth in truths:
            if truth.recorded is None:
                continue
            actual = truth.recorded.usage.prompt_tokens - truth.carried_reasoning  # what the text shows
            for key in (truth.model, family(truth.model)):
                total = sums.setdefault(key, [0, 0, 0])
                total[0] += 1
                total[1] += truth.estimate
                total[2] += actual
            if truth.segment not in first:
                first[truth.segment] = truth
                for key in (truth.model, family(truth.model)):
                    firsts.setdefault(key, []).append((truth.as_recorded_local, actual))
                continue
            start = first[truth.segment]
            delta = (
                truth.as_recorded_local - start.as_recorded_local,
                actual - (start.recorded.usage.prompt_tokens - start.carried_reasoning),
            )
            for key in (truth.model, family(truth.model)):
                pairs.setdefault(key, {}).setdefault(name, []).append(delta)
    models: dict[str, ModelFit] = {}
    for key, (calls, local, actual) in sums.items():
        # each session's own least-squares growth ratio, then their median: one session of large file reads
        # (whose tokens the provider counts differently) must not set the coefficient of all the others
        ratios = [_growth_ratio(growth) for growth in pairs.get(key, {}).values()]
        ratios = [r for r in ratios if r is not None]
        coefficient = statistics.median(ratios) if ratios else 1.0
        coefficient = min(max(coefficient, MIN_COEFFICIENT), MAX_COEFFICIENT)
        remainders = [a - math.ceil(coefficient * loc) for loc, a in firsts.get(key, [])]
        offset = max(0, round(statistics.median(remainders))) if remainders else 0
        models[key] = ModelFit(coefficient, offset, calls, local, actual)
    return Calibration(models, encoding, tuple(truths_by_session))


def _growth_ratio(growth: Sequence[tuple[int, int]]) -> float | None:
    """Δrecorded / Δlocal over one session's calls, least squares through the origin; None without growth."""
    den = sum(dl * dl for dl, _ in growth)
    return sum(dl * dr for dl, dr in growth) / den if den else None
