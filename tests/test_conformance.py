"""Every conformance case (linnkit 0.21.0's own results, shared/conformance/cases) through the port."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.conformance import compare, load_cases, run_case

CASES_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "conformance" / "cases"
CASES = load_cases([CASES_DIR]) if CASES_DIR.is_dir() else []


@pytest.mark.skipif(not CASES, reason=f"no conformance cases in {CASES_DIR}")
@pytest.mark.parametrize("case", CASES, ids=[case["name"] for case in CASES])
def test_case(case):
    assert compare(case, run_case(case)) is None


def test_case_names_match_their_files():
    if not CASES:
        pytest.skip(f"no conformance cases in {CASES_DIR}")
    assert [c["name"] for c in CASES] == sorted(p.stem for p in CASES_DIR.glob("*.json"))
