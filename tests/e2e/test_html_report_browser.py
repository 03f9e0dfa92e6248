"""End to end: the HTML report of a replay opens in Debian's Chromium with no console error and no request
leaving the file. Skipped when chromium or playwright is missing (never `playwright install`)."""

from __future__ import annotations

from pathlib import Path

import pytest

from playground.cli.main import main
from tests.e2e.test_notebook_browser import BROWSER_ARGS, CHROMIUM, MISSING

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
pytestmark = pytest.mark.skipif(
    any("chromium" in m or "playwright" in m for m in MISSING), reason="; ".join(MISSING)
)


def test_the_replay_report_opens_without_console_errors(tmp_path):
    from playwright.sync_api import sync_playwright

    out = tmp_path / "report.html"
    assert main(["replay", str(SAMPLES / "summarization_trigger.jsonl"), "--html", str(out)]) == 0
    problems: list[str] = []
    requests: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda msg: problems.append(msg.text) if msg.type == "error" else None)
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("request", lambda request: requests.append(request.url))
            page.goto(out.as_uri(), timeout=30_000)
            page.wait_for_load_state("load", timeout=30_000)
            assert page.title() == "Summarization trigger: the oldest turns become one summary"
            assert page.locator("svg.lp-chart rect").count() == 13
            assert page.locator(".lp-wire .lp-card").count() == 8
            assert "tokens" in page.locator(".lp-budget").inner_text()
        finally:
            browser.close()
    assert problems == []
    assert requests == [out.as_uri()]
