"""A session's recorded run for the CLI and the front ends: what the provider counted and billed, the
as-recorded rebuild beside it, and what a calibration file or the transcript's missing parts add. No UI.

`RecordSetup` holds the choices (`--as-recorded`, `--calibration`, `--tools`; a system prompt file is an
input of `load_inputs`), `record_of(inputs)` reads the session's calls, `truths(...)` replays it as
recorded (`engine.truth.iter_truth`), and `recorded_totals` sums it all for a totals line.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from engine.calibration import TokenRoute
from engine.cost import SessionCost
from engine.messages import AiMessage
from engine.policy import ContextPolicy, define_context_policy
from engine.prices import PriceTable
from engine.recorded import RecordedRun, recorded_cost, recorded_run
from engine.safe_input import InputError, decode_json, decode_utf8, read_regular_file
from engine.session_lines import json_type
from engine.tokens import tokenizer_from_policy
from engine.truth import (
    AS_RECORDED,
    Calibration,
    StepTruth,
    error_summary,
    fit_calibration,
    iter_truth,
    load_calibration,
)
from playground.app.inputs import PlaygroundInputs, find_sessions, load_inputs

__all__ = [
    "AS_RECORDED_POLICY",
    "CalibrationReport",
    "RecordSetup",
    "calibrate",
    "calibration_options",
    "calibration_warnings",
    "record_of",
    "recorded_totals",
    "tools_offset",
    "truth_stream",
    "truths",
]

AS_RECORDED_POLICY: ContextPolicy = define_context_policy(AS_RECORDED)
MAX_TOOLS_BYTES = 4_000_000
MAX_REPLAY_STEPS = 1_000_000  # a recorded session's steps: all of them (maxSteps only shapes reminders)


@dataclass(frozen=True, slots=True)
class RecordSetup:
    """How a recorded session is compared: a calibration (per model coefficient and offset), the tokens of
    the tool definitions the transcript lacks (`--tools`), and whether to replay as recorded."""

    calibration: Calibration | None = None
    given_offset: int | None = None
    as_recorded: bool = False

    @classmethod
    def load(
        cls, calibration: str | Path | None = None, tools: str | Path | None = None, as_recorded: bool = False
    ) -> RecordSetup:
        """Read the files (each error names its file); raises `InputError`."""
        return cls(
            load_calibration(calibration) if calibration else None,
            tools_offset(tools) if tools else None,
            as_recorded,
        )

    @classmethod
    def of(cls, inputs: PlaygroundInputs, as_recorded: bool = False) -> RecordSetup:
        return cls(inputs.calibration, inputs.given_offset, as_recorded)

    def policy(self, chosen: ContextPolicy) -> ContextPolicy:
        return AS_RECORDED_POLICY if self.as_recorded else chosen


def tools_offset(path: str | Path) -> int:
    """The tokens of a tool-definition file (a JSON list, as a request's `tools`), counted as the engine
    counts text: what every call sent beside the messages."""
    source = str(path)
    text = decode_utf8(read_regular_file(path, max_bytes=MAX_TOOLS_BYTES), source)
    try:
        tools = decode_json(text)
    except ValueError as error:
        raise InputError(source, f"not JSON: {error}") from None
    if not isinstance(tools, list):
        raise InputError(source, "a tools file is a JSON list of tool definitions")
    for index, tool in enumerate(tools):
        if not isinstance(tool, dict):
            reason = f"a tool definition is an object, got {json_type(tool)}"
            raise InputError(source, reason, field=f"[{index}]")
    counter = tokenizer_from_policy(None)
    return sum(counter.estimate_text(json.dumps(tool, ensure_ascii=False)) for tool in tools)


def calibration_options(setup: RecordSetup, run: RecordedRun, model: str | None) -> dict[str, Any]:
    """Build options that give linnkit's calibration a calibration file's samples, on the route of `model`
    (else the model of the session's last recorded call): nothing without a file."""
    if setup.calibration is None:
        return {}
    named = model or next((c.usage.model for c in reversed(run.own_calls) if c.usage.model), None)
    return {"token_route": TokenRoute(named), "calibration_samples": tuple(setup.calibration.samples())}


def calibration_warnings(inputs: PlaygroundInputs, run: RecordedRun, encoding: str) -> list[str]:
    """Why a calibration file would not calibrate this session as its user expects: fitted for other models
    (those calls then go uncalibrated: said, never a silent scale), or with another tokenizer encoding."""
    calibration = inputs.calibration
    if calibration is None:
        return []
    warnings = []
    models = sorted(
        {c.usage.model for c in run.own_calls if c.usage.model} or {inputs.build_options["model_id"]} - {None}
    )
    missing = [m for m in models if calibration.fit_for(m) is None]
    if missing:
        fitted = ", ".join(sorted(calibration.models)) or "no model"
        warnings.append(f"warning: {calibration.source}: fitted for {fitted}; not for {', '.join(missing)}: "
                        "those calls are not calibrated")  # fmt: skip
    if calibration.encoding != encoding:
        warnings.append(f"warning: {calibration.source}: fitted with {calibration.encoding} counts, this "
                        f"policy counts with {encoding}: its coefficients do not carry over")  # fmt: skip
    return warnings


def record_of(inputs: PlaygroundInputs) -> RecordedRun:
    """The calls the session records (its messages' usage, the header's other calls)."""
    return recorded_run(inputs.session.messages, inputs.header, inputs.session.message_lines)


def truth_stream(
    messages: Sequence[AiMessage], run: RecordedRun, setup: RecordSetup, options: dict[str, Any]
) -> Iterator[StepTruth]:
    """The as-recorded replay beside a policy's, a `StepTruth` a step (one build held at a time).
    `options` are that replay's build and step options; the observation simulation stays the policy's."""
    plain = {k: v for k, v in options.items() if k != "observation_store"}
    return iter_truth(
        messages,
        run,
        calibration=setup.calibration,
        given_offset=setup.given_offset,
        default_model=plain.get("model_id"),
        **plain,
    )


def truths(
    inputs: PlaygroundInputs, run: RecordedRun, setup: RecordSetup, **replay_options: Any
) -> Iterator[StepTruth]:
    """`truth_stream` of a loaded session, with its build options."""
    return truth_stream(inputs.session.messages, run, setup, {**inputs.build_options, **replay_options})


def recorded_totals(run: RecordedRun, prices: PriceTable, totals: SessionCost) -> dict[str, Any]:
    """The totals line's record: billed cost (every call, other branches and sub-agents included), the
    calls it holds, and the as-recorded rebuild's error against the record (the replay's `totals`)."""
    error = totals.as_recorded_error or error_summary([])
    billed = recorded_cost(run, prices).to_json()
    return {**billed, "asRecordedError": error, "recordProblems": list(run.problems)}


@dataclass(frozen=True, slots=True)
class SessionFit:
    """One session's calls, as the rebuild predicted them before and after a calibration."""

    path: str
    calls: int
    models: dict[str, int]
    before: dict[str, Any]  # error_summary: no calibration (coefficient 1, offsets from first calls)
    after: dict[str, Any]  # a calibration fitted without this session, learning from its earlier calls


@dataclass(frozen=True, slots=True)
class CalibrationReport:
    calibration: Calibration
    method: str  # "held-out sessions" or "leave one session out"
    sessions: tuple[SessionFit, ...]
    skipped: tuple[str, ...]  # files without recorded usage

    @property
    def inputs(self) -> list[str]:
        """Every file it read: fitted on, measured on, skipped (a calibration is never written over one)."""
        read = [*self.calibration.fitted_on, *(s.path for s in self.sessions), *self.skipped]
        return list(dict.fromkeys(read))

    def to_json(self) -> dict[str, Any]:
        held = self.calibration.held_out
        return {
            "method": self.method,
            "sessions": [
                {"path": s.path, "calls": s.calls, "models": s.models, "before": s.before, "after": s.after}
                for s in self.sessions
            ],
            "skipped": list(self.skipped),
            "before": held.get("before"),
            "after": held.get("after"),
            "models": {name: fit.to_json() for name, fit in self.calibration.models.items()},
        }


@dataclass(slots=True)
class _Loaded:
    path: str
    inputs: PlaygroundInputs
    run: RecordedRun
    plain: list[StepTruth]


def _load_recorded(paths: Sequence[str | Path], skipped: list[str], fmt: str | None) -> list[_Loaded]:
    loaded = []
    for path in find_sessions(paths)[0]:
        inputs = load_inputs(path, fmt=fmt)
        run = record_of(inputs)
        if not run.own_calls:
            skipped.append(str(path))
            continue
        plain = list(truths(inputs, run, RecordSetup(), max_steps=MAX_REPLAY_STEPS, learn=False))
        loaded.append(_Loaded(str(path), inputs, run, plain))
    return loaded


def _errors(items: Sequence[StepTruth]) -> list[float]:
    return [t.error for t in items if t.error is not None]


def calibrate(
    fit: Sequence[str | Path], test: Sequence[str | Path] = (), fmt: str | None = None
) -> CalibrationReport:
    """Fit each model's coefficient and offset on the `fit` sessions, and measure the error on sessions it
    was not fitted on: the `test` sessions, else each fit session with a calibration fitted on the others
    (never on the calls it was fitted on). `fmt` reads transcripts as that format. Raises `ValueError`
    when no fit session has recorded usage."""
    skipped: list[str] = []
    fitted = _load_recorded(fit, skipped, fmt)
    if not fitted:
        raise ValueError("no session with recorded usage to fit on: " + ", ".join(map(str, fit)))
    calibration = fit_calibration({item.path: item.plain for item in fitted})
    held = _load_recorded(test, skipped, fmt) if test else fitted
    method = "held-out sessions" if test else "leave one session out"
    rows, pooled = [], []
    for item in held:
        used = calibration
        if not test:
            others = {o.path: o.plain for o in fitted if o.path != item.path}
            used = fit_calibration(others) if others else None
        after = list(truths(item.inputs, item.run, RecordSetup(used), max_steps=MAX_REPLAY_STEPS))
        before_errors, after_errors = _errors(item.plain), _errors(after)
        pooled.append((before_errors, after_errors))
        rows.append(SessionFit(item.path, len(item.run.own_calls), item.run.models(),
                               error_summary(before_errors), error_summary(after_errors)))  # fmt: skip
    every_before = [e for b, _ in pooled for e in b]
    every_after = [e for _, a in pooled for e in a]
    held_out = {
        "method": method,
        "sessions": [row.path for row in rows],
        "before": error_summary(every_before),
        "after": error_summary(every_after),
    }
    calibration = replace(calibration, held_out=held_out)
    return CalibrationReport(calibration, method, tuple(rows), tuple(skipped))
