"""Conformance with linnkit itself: run the cases of `shared/conformance/` and compare (format in its README).

A case holds a build's complete input and linnkit 0.21.0's result; `run_case` rebuilds it here and returns
the result record, `compare` says where the two differ.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.build import build_context
from engine.fences import as_registry
from engine.host_tokenizers import MockTokenizer
from engine.messages import AiMessage
from engine.policy import effective_policy
from engine.replay import PlannedStep, run_replay
from engine.result import BuildResult
from engine.safe_input import InputError, decode_json, decode_utf8, read_regular_file
from engine.summarizer import FailingSummarizer, FixedSummarizer, SummarizerPort
from engine.ticks import TickState
from engine.tokens import TokenizerPort

ORACLE_MODEL = "oracle-model"
COMPARED_FIELDS = (
    "wire",
    "keptIds",
    "preprocessedIds",
    "summarizationFired",
    "checkpointFired",
    "reminderHitRuleIds",
    "reminderText",
    "finalTokens",
)


@dataclass(frozen=True, slots=True)
class CaseOutcome:
    name: str
    passed: bool
    difference: str | None
    actual: dict[str, Any]


def case_files(paths: Iterable[str | Path]) -> list[Path]:
    """Each path given, and the `*.json` files in each folder and its subfolders (the shared cases sit in
    `cases/` and `replay/`), symlinked folders not followed."""
    files: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if not path.is_dir():
            files.append(path)
            continue
        for folder, subfolders, names in os.walk(path):
            subfolders.sort()
            files.extend(sorted(Path(folder) / name for name in names if name.endswith(".json")))
    return files


def load_cases(paths: Iterable[str | Path]) -> list[dict[str, Any]]:
    return [read_case(f) for f in case_files(paths)]


def read_case(path: Path) -> dict[str, Any]:
    """One case file; a file that is not a case raises InputError naming it and the field. A case without
    a name is named after its file."""
    try:
        case = decode_json(decode_utf8(read_regular_file(path), str(path)))
    except json.JSONDecodeError as exc:
        reason = f"not valid JSON: {exc.msg} (column {exc.colno})"
        raise InputError(str(path), reason, line=exc.lineno) from None
    except ValueError as exc:  # JsonLimitError; InputError is raised as is
        if isinstance(exc, InputError):
            raise
        raise InputError(str(path), f"not valid JSON: {exc}") from None
    if not isinstance(case, dict):
        raise InputError(str(path), "not a conformance case: expected a JSON object")
    missing = [key for key in ("messages", "expected") if key not in case]
    if missing:
        raise InputError(str(path), f"not a conformance case: no {', '.join(missing)}")
    problem = _shape_problem(case)
    if problem is not None:
        raise InputError(str(path), problem[1], field=problem[0])
    case.setdefault("name", path.stem)
    return case


_OBJECTS = ("expected", "tokenizer", "summary")  # a case's keys that must be objects
_OPTIONAL_OBJECTS = ("contextPolicy", "hostFallbackPolicy", "tick", "options")


def _shape_problem(case: dict[str, Any]) -> tuple[str, str] | None:
    """(field, reason) for the first part of a case the runner could not read, or None."""
    problem = _messages_problem(case["messages"])
    if problem is not None:
        return problem
    for key in _OBJECTS + _OPTIONAL_OBJECTS:
        value = case.get(key)
        if key in _OBJECTS and key not in case:
            return key, "missing"
        if (key in _OBJECTS or value is not None) and not isinstance(value, dict):
            return key, f"must be an object, got {_kind(value)}"
    if not isinstance(case.get("fences", []), list):
        return "fences", f"must be an array, got {_kind(case['fences'])}"
    return (
        _tokenizer_problem(case["tokenizer"])
        or _summary_problem(case["summary"])
        or _number_problem(case.get("options") or {}, "now", "options")
        or _ticks_problem(case)
        or _expected_problem(case)
    )


def _summary_problem(spec: dict[str, Any]) -> tuple[str, str] | None:
    """The summarizer's fixed text, or the error it fails with (`case_summarizer`): a string."""
    key = "error" if "error" in spec else "text"
    if not isinstance(spec.get(key), str):
        return f"summary.{key}", f"must be a string, got {_kind(spec.get(key))}"
    return None


def _messages_problem(messages: Any) -> tuple[str, str] | None:
    """The case's messages: objects with a string id, role and type, their content a string and their
    metadata an object (or null)."""
    if not isinstance(messages, list):
        return "messages", f"must be an array, got {_kind(messages)}"
    for index, message in enumerate(messages):
        if not isinstance(message, dict):
            return f"messages[{index}]", f"must be an object, got {_kind(message)}"
        for key in ("id", "role", "type"):
            if key not in message:
                return f"messages[{index}].{key}", "missing"
            if not isinstance(message[key], str):
                return f"messages[{index}].{key}", f"must be a string, got {_kind(message[key])}"
        for key, kind, wanted in (("content", str, "a string"), ("metadata", dict, "an object")):
            if message.get(key) is not None and not isinstance(message[key], kind):
                return f"messages[{index}].{key}", f"must be {wanted} or null, got {_kind(message[key])}"
    return None


def _number_problem(
    spec: dict[str, Any], key: str, path: str, *, required: bool = False
) -> tuple[str, str] | None:
    if key not in spec or (spec[key] is None and not required):
        return (f"{path}.{key}", "missing") if required else None
    value = spec[key]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"{path}.{key}", f"must be a number, got {_kind(value)}"
    return None


def _tokenizer_problem(spec: dict[str, Any]) -> tuple[str, str] | None:
    """A mock tokenizer's counts are numbers (`case_tokenizer`)."""
    if spec.get("kind") != "mock":
        return None
    return (
        _number_problem(spec, "tokensPerMessage", "tokenizer", required=True)
        or _number_problem(spec, "tokensPerText", "tokenizer")
        or _number_problem(spec, "charsPerToken", "tokenizer")
    )


def _ticks_problem(case: dict[str, Any]) -> tuple[str, str] | None:
    """The tick of a build, and each replay step's `upto` and tick (`TickState.from_case`)."""
    ticks: list[tuple[str, Any]] = [("tick", case.get("tick"))]
    if case.get("kind") == "replay":
        steps = case.get("steps")
        if not isinstance(steps, list):
            return "steps", f"must be an array, got {_kind(steps)}"
        for index, step in enumerate(steps):
            where = f"steps[{index}]"
            if not isinstance(step, dict):
                return where, f"must be an object, got {_kind(step)}"
            upto = step.get("upto")
            if isinstance(upto, bool) or not isinstance(upto, int):
                return f"{where}.upto", f"must be an integer, got {_kind(upto)}"
            ticks.append((f"{where}.tick", step.get("tick")))
    for where, tick in ticks:
        if tick is None:
            continue
        if not isinstance(tick, dict):
            return where, f"must be an object, got {_kind(tick)}"
        problem = _number_problem(tick, "stepCount", where, required=True) or _number_problem(
            tick, "maxSteps", where
        )
        if problem is not None:
            return problem
        for key in ("availableTools", "finalStepForcedTools"):
            tools = tick.get(key)
            if tools is not None and not (isinstance(tools, list) and all(isinstance(t, str) for t in tools)):
                return f"{where}.{key}", f"must be an array of strings, got {_kind(tools)}"
    return None


def _expected_problem(case: dict[str, Any]) -> tuple[str, str] | None:
    """(field, reason) for the first part of `expected` the comparison could not read, or None."""
    expected = case["expected"]
    if case.get("kind") != "replay":
        return _record_problem("expected", expected)
    for key in ("steps", "persistedAfter"):
        if not isinstance(expected.get(key), list):
            return f"expected.{key}", f"must be an array, got {_kind(expected.get(key))}"
    for index, record in enumerate(expected["steps"]):
        if not isinstance(record, dict):
            return f"expected.steps[{index}]", f"must be an object, got {_kind(record)}"
        problem = _record_problem(f"expected.steps[{index}]", record)
        if problem is not None:
            return problem
    return None


def _record_problem(path: str, record: dict[str, Any]) -> tuple[str, str] | None:
    error = record.get("error")
    if error is not None and not (isinstance(error, dict) and "code" in error):
        return f"{path}.error", f"must be null or an object with a code, got {_kind(error)}"
    return None


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    kinds = {bool: "a boolean", int: "a number", float: "a number", str: "a string", list: "an array"}
    return kinds.get(type(value), "an object")


def case_tokenizer(spec: dict[str, Any]) -> TokenizerPort | None:
    if spec.get("kind") != "mock":
        return None
    return MockTokenizer(
        tokens_per_message=spec["tokensPerMessage"],
        tokens_per_text=spec.get("tokensPerText", 10),
        chars_per_token=spec.get("charsPerToken"),
    )


def case_summarizer(spec: dict[str, Any]) -> SummarizerPort:
    return FailingSummarizer(spec["error"]) if "error" in spec else FixedSummarizer(spec["text"])


def _inputs(case: dict[str, Any]) -> tuple[list[AiMessage], dict[str, Any], dict[str, Any]]:
    """The case's messages, effective policy and the build options the linnkit oracle fixed."""
    messages = [AiMessage.from_dict(m) for m in case["messages"]]
    policy = effective_policy(
        case.get("contextPolicy"), case.get("hostFallbackPolicy"), defaults="linnkit-0.21"
    )
    options = {
        "fences": as_registry(case.get("fences") or []),
        "tokenizer": case_tokenizer(case["tokenizer"]),
        "summarizer": case_summarizer(case["summary"]),
        "model_id": ORACLE_MODEL,
        "now": (case.get("options") or {}).get("now"),
        "honour_fence_descriptors": False,
    }
    return messages, policy, options


def _tick(spec: dict[str, Any] | None) -> TickState | None:
    return TickState.from_case(spec) if spec else None


def run_case(case: dict[str, Any]) -> dict[str, Any]:
    """Build one case the way the linnkit oracle did; return the README's result record (§3, or §6 for a
    replay case). A case that raises gets its error in the record instead of stopping a run."""
    try:
        if case.get("kind") == "replay":
            return {"name": case["name"], **_replay_record(case)}
        messages, policy, options = _inputs(case)
        result = build_context(messages, policy, tick=_tick(case.get("tick")), **options)
        return {"name": case["name"], **_record(result)}
    except Exception as error:  # noqa: BLE001 - any failure of one case is that case's result
        return {"name": case.get("name", "?"), "error": {"code": "EXCEPTION", "message": _describe(error)}}


def _replay_record(case: dict[str, Any]) -> dict[str, Any]:
    messages, policy, options = _inputs(case)
    plan = [PlannedStep(step["upto"], _tick(step.get("tick"))) for step in case["steps"]]
    steps, persisted_after = [], []
    for step in run_replay(messages, plan, policy, **options):
        steps.append(_record(step.result))
        if step.persisted is not None:
            persisted_after.append(step.upto)
    return {"steps": steps, "persistedAfter": persisted_after}


def _record(result: BuildResult) -> dict[str, Any]:
    if result.error is not None:
        return {
            "error": {"code": result.error.code},
            "wire": None,
            "keptIds": None,
            "preprocessedIds": [m.id for m in result.preprocessed] if result.preprocessed else None,
            "summarizationFired": False,
            "checkpointFired": False,
            "reminderHitRuleIds": None,
            "reminderText": None,
            "finalTokens": None,
        }
    return {
        "error": None,
        "wire": list(result.wire),
        "keptIds": list(result.kept_ids),
        "preprocessedIds": [m.id for m in result.preprocessed],
        "summarizationFired": "ai_history_summarization" in result.strategies_applied,
        "checkpointFired": "checkpoint_trim_before" in result.strategies_applied,
        "reminderHitRuleIds": list(result.reminder.hit_rule_ids),
        "reminderText": result.reminder.appended_text,
        "finalTokens": result.tokens.final_tokens,
    }


def _describe(error: BaseException) -> str:
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text[:300]}" if text else type(error).__name__


def compare(case: dict[str, Any], actual: dict[str, Any]) -> str | None:
    """The first difference as `field: expected … | actual …`, or None when the case passes."""
    known = {m["id"] for m in case["messages"]}
    if case.get("kind") != "replay":
        return _compare_record(case["expected"], actual, known)
    if actual.get("error") is not None and "steps" not in actual:
        return f"error: expected a replay | actual {json.dumps(actual['error'], ensure_ascii=False)}"
    want_steps, got_steps = case["expected"]["steps"], actual.get("steps") or []
    for index, (want, got) in enumerate(zip(want_steps, got_steps, strict=False)):
        difference = _compare_record(want, got, known)
        if difference:
            return f"steps[{index}].{difference}"
    if len(want_steps) != len(got_steps):
        return f"steps: expected {len(want_steps)} step records | actual {len(got_steps)}"
    return _diff("persistedAfter", case["expected"]["persistedAfter"], actual.get("persistedAfter"))


def _compare_record(expected: dict[str, Any], actual: dict[str, Any], known: set[str]) -> str | None:
    if expected.get("error") is not None:
        code = expected["error"]["code"]
        got = actual.get("error")
        got_code = got.get("code") if isinstance(got, dict) else got
        return None if got_code == code else f"error: expected {json.dumps(code)} | actual {json.dumps(got)}"
    if actual.get("error") is not None:
        return f"error: expected null | actual {json.dumps(actual['error'], ensure_ascii=False)}"
    want, got = _normalised(expected, known), _normalised(actual, known)
    for field in COMPARED_FIELDS:
        if field not in actual:
            return f"{field}: missing from the actual result"
        difference = _diff(field, want.get(field), got.get(field))
        if difference:
            return difference
    return None


def _normalised(record: dict[str, Any], known: set[str]) -> dict[str, Any]:
    mapping: dict[str, str] = {}

    def norm(ids: Any) -> Any:
        if not isinstance(ids, list):  # null, or a malformed case's value: compared as it is
            return ids
        out = []
        for value in ids:
            if isinstance(value, str) and value not in known:
                value = mapping.setdefault(value, f"<new-{len(mapping) + 1}>")
            out.append(value)
        return out

    result = dict(record)
    result["preprocessedIds"] = norm(record.get("preprocessedIds"))
    result["keptIds"] = norm(record.get("keptIds"))
    return result


def _diff(path: str, want: Any, got: Any) -> str | None:
    if isinstance(want, dict) and isinstance(got, dict):
        for key in sorted(set(want) | set(got)):
            if key not in got or key not in want:
                return (
                    f"{path}.{key}: expected {_show(want.get(key, '<missing>'))} | actual "
                    f"{_show(got.get(key, '<missing>'))}"
                )
            inner = _diff(f"{path}.{key}", want[key], got[key])
            if inner:
                return inner
        return None
    if isinstance(want, list) and isinstance(got, list):
        for index, (a, b) in enumerate(zip(want, got, strict=False)):
            inner = _diff(f"{path}[{index}]", a, b)
            if inner:
                return inner
        if len(want) != len(got):
            return f"{path}: expected {len(want)} items | actual {len(got)} items"
        return None
    if isinstance(want, str) and isinstance(got, str) and want != got:
        at = next(
            (i for i, (a, b) in enumerate(zip(want, got, strict=False)) if a != b), min(len(want), len(got))
        )
        return (
            f"{path}: expected {_show(want[max(0, at - 30) : at + 40])} | actual "
            f"{_show(got[max(0, at - 30) : at + 40])} @char {at}"
        )
    if _equal(want, got):
        return None
    return f"{path}: expected {_show(want)} | actual {_show(got)}"


def _equal(a: Any, b: Any) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def _show(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 200 else text[:200] + "…"


def run_all(cases: list[dict[str, Any]]) -> list[CaseOutcome]:
    outcomes = []
    for case in cases:
        missing = [key for key in ("name", "messages", "expected") if key not in case]
        if missing:
            name = str(case.get("name", "?"))
            outcomes.append(CaseOutcome(name, False, f"not a conformance case: no {', '.join(missing)}", {}))
            continue
        actual = run_case(case)
        difference = compare(case, actual)
        outcomes.append(CaseOutcome(case["name"], difference is None, difference, actual))
    return outcomes
