"""With `CI` set, a test that skips because `../shared` is missing fails; other skips stay skips."""

from __future__ import annotations

from pathlib import Path

import pytest

PROBE = """
import pytest
from conftest import SHARED

def test_needs_the_references():
    pytest.skip(f"cases not found at {SHARED / 'conformance'}")

def test_skips_for_another_reason():
    pytest.skip("needs /dev/full")
"""


@pytest.mark.parametrize(("ci", "failed", "skipped"), [("1", 1, 1), ("", 0, 2)])
def test_missing_references_fail_under_ci(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, ci: str, failed: int, skipped: int
) -> None:
    pytester.makeconftest((Path(__file__).parents[1] / "conftest.py").read_text(encoding="utf-8"))
    pytester.makepyfile(test_probe=PROBE)
    monkeypatch.setenv("CI", ci)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(failed=failed, skipped=skipped)
    if failed:
        result.stdout.fnmatch_lines(["*CI is set but the references are missing: *conformance*"])
