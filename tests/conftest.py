"""Shared test setup: where the references are, and the rule that CI never skips a test needing them.

Tests that read `<repo>/../shared` (conformance cases, real sessions) skip with a reason naming the
missing path when run outside the workspace. With `CI` set, such a skip is a failure: CI must run them.
"""

from __future__ import annotations

import gc
import os
from collections.abc import Generator
from pathlib import Path

import pytest

pytest_plugins = ["pytester"]

SHARED = Path(__file__).resolve().parents[1].parent / "shared"


def _skip_reason(report: pytest.TestReport) -> str:
    longrepr = report.longrepr
    return str(longrepr[2]) if isinstance(longrepr, tuple) and len(longrepr) == 3 else str(longrepr)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Generator[None, None, None]:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if report.skipped and os.environ.get("CI") and str(SHARED) in _skip_reason(report):
        report.outcome = "failed"
        report.longrepr = f"CI is set but the references are missing: {_skip_reason(report)}"


@pytest.fixture(autouse=True)
def _collector_left_on() -> Generator[None, None, None]:
    """A test that leaves Python's cyclic garbage collector off fails here, not in whichever test next
    relies on it (the app holds it off while a key's effect is on its way to the screen)."""
    yield
    if not gc.isenabled():
        gc.enable()
        pytest.fail("this test left Python's cyclic garbage collector off")
