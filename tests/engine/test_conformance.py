"""Every conformance case (linnkit 0.21.0's own results, shared/conformance/cases) through the port."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.conformance import compare, load_cases, run_case

CONFORMANCE = Path(__file__).resolve().parents[2].parent / "shared" / "conformance"
CASES_DIR = CONFORMANCE / "cases"
CASES = load_cases([CASES_DIR]) if CASES_DIR.is_dir() else []
REPLAY_DIR = CONFORMANCE / "replay"
REPLAYS = load_cases([REPLAY_DIR]) if REPLAY_DIR.is_dir() else []


@pytest.mark.skipif(not CASES, reason=f"no conformance cases in {CASES_DIR}")
@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_case(case):
    assert compare(case, run_case(case)) is None


def test_case_names_match_their_files():
    if not CASES:
        pytest.skip(f"no conformance cases in {CASES_DIR}")
    assert [c["name"] for c in CASES] == sorted(p.stem for p in CASES_DIR.glob("*.json"))


@pytest.mark.skipif(not REPLAYS, reason=f"no replay cases in {REPLAY_DIR}")
@pytest.mark.parametrize("case", REPLAYS, ids=[case["name"] for case in REPLAYS])
def test_replay_case(case):
    actual = run_case(case)
    assert compare(case, actual) is None
    assert len(actual["steps"]) == len(case["steps"])


def test_a_case_that_raises_becomes_its_own_error():
    broken = {"name": "bad", "kind": "replay", "messages": [{"id": 1}], "steps": [], "expected": {}}
    actual = run_case(broken)
    assert actual["name"] == "bad"
    assert actual["error"]["code"] == "EXCEPTION"
    assert compare(broken, actual).startswith("error: expected a replay | actual")


# cases the linnkit oracle's widened generator (bench/linnkit_oracle) found the port deciding otherwise, with
# linnkit 0.21.0's own records as expected: roles that do not match the type, a top-level `tool_calls`, a
# `summarySeq` written as text; and counts with gpt2, r50k_base, p50k_base and p50k_edit (`encoding_*`)
ORACLE_DIR = Path(__file__).resolve().parents[1] / "data" / "linnkit-oracle"
ORACLE_CASES = load_cases([ORACLE_DIR])


@pytest.mark.parametrize("case", ORACLE_CASES, ids=[case["name"] for case in ORACLE_CASES])
def test_oracle_case(case):
    assert compare(case, run_case(case)) is None


def test_the_oracle_cases_are_there():
    assert len(ORACLE_CASES) == 14
