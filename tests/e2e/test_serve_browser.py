"""End to end: `linn-playground serve` in Debian's Chromium. The page connects to the Textual app, the
`budget.maxTokens` slider is moved by keyboard, and the wire header the app sends changes. The terminal
is drawn on a canvas, so the text is read from the websocket frames the browser receives (ANSI stripped).
Skipped when chromium, playwright or textual-serve is missing; the server is stopped at teardown.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

import pytest

from engine.build import build_context
from engine.session import load_session
from tests.e2e.test_notebook_browser import BROWSER_ARGS, CHROMIUM, free_port, wait_for_port

SCREENSHOT = Path("/tmp/linn_serve_e2e.png")
SESSION = Path(__file__).resolve().parents[2] / "sample_sessions" / "long_chat_overflow.jsonl"
MISSING = [
    reason
    for reason, absent in (
        ("chromium is not installed (apt-get install -y chromium)", not Path(CHROMIUM).exists()),
        ("playwright is not installed (pip install playwright)", find_spec("playwright") is None),
        ("textual-serve is not installed (pip install textual-serve)", find_spec("textual_serve") is None),
    )
    if absent
]
pytestmark = pytest.mark.skipif(bool(MISSING), reason="; ".join(MISSING))
ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[@-Z\\-_])")
WIRE = re.compile(r"WIRE openai · (\d+) messages · ([\d\u202f ,]+) tok")


@pytest.fixture
def served(tmp_path):
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    command = [sys.executable, "-m", "playground.cli", "serve", str(SESSION),
               "--port", str(port)]
    proc = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
                            env={**os.environ, "COLUMNS": "160"})
    try:
        wait_for_port(port, proc, timeout=60)
        yield f"http://127.0.0.1:{port}/"
    finally:
        os.killpg(proc.pid, signal.SIGTERM)  # the server and the app it started for the tab
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()


class Screen:
    """Everything the app wrote to the browser, as text."""

    def __init__(self) -> None:
        self.raw = bytearray()

    def on_frame(self, payload: bytes | str) -> None:
        if isinstance(payload, bytes):
            self.raw += payload

    @property
    def text(self) -> str:
        return ANSI.sub("", self.raw.decode("utf-8", "replace"))

    def text_since(self, offset: int) -> str:
        return ANSI.sub("", self.raw[offset:].decode("utf-8", "replace"))

    def wire_headers(self) -> list[tuple[int, str]]:
        return [(int(m.group(1)), m.group(2).strip()) for m in WIRE.finditer(self.text)]


def wait_until(page, condition, timeout: float, what: str) -> None:
    """Poll with the page's own timer: Playwright delivers websocket frames only while it is called."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        page.wait_for_timeout(200)
    raise TimeoutError(f"{what} within {timeout} s")


def expected(share: float) -> tuple[int, str]:
    """The wire header the engine's own build gives for this working-memory share."""
    session = load_session(SESSION)
    layer = {**session.header.context_policy}
    layer["budget"] = {**layer["budget"], "workingMemoryBudgetPercentage": share}
    result = build_context(session.messages, layer, fences=session.header.fences)
    return len(result.cards), f"{result.tokens.final_tokens:,}".replace(",", " ")


def test_moving_a_slider_in_the_browser_changes_the_wire(served):
    from playwright.sync_api import sync_playwright

    screen = Screen()
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1700, "height": 1000})
            # nothing but the local server (the page's web font would go to the internet)
            page.route(re.compile(r"^(?!https?://127\.0\.0\.1[:/]|ws://127\.0\.0\.1[:/]).*"),
                       lambda route: route.abort())
            page.on("websocket", lambda ws: ws.on("framereceived", screen.on_frame))
            page.goto(served, timeout=30_000, wait_until="domcontentloaded")
            wait_until(page, lambda: screen.wire_headers(), 60, "the app drew its wire")
            assert screen.wire_headers()[-1] == expected(0.70) == (31, "1 540")
            page.locator("#terminal").click()
            page.keyboard.press("Control+p")  # the command palette: go to the slider
            page.wait_for_timeout(3000)  # the palette placeholder is drawn cell by cell: no text to wait on
            page.keyboard.type("Go to field: budget.workingMemoryBudgetPercentage")
            wait_until(page, lambda: "Working-memory share ·" in screen.text, 30, "the palette")
            drawn = len(screen.raw)
            page.keyboard.press("Enter")
            # the palette closes and the slider takes the focus: its footer offers "Type value" (an arrow key
            # sent before that would move whatever had the focus, e.g. the step chart)
            wait_until(page, lambda: "Type value" in screen.text_since(drawn), 60, "the slider's focus")
            for _ in range(20):  # steps of 0.01 down (a key the terminal drops under load is no matter)
                page.keyboard.press("ArrowLeft")
                page.wait_for_timeout(100)
            wait_until(page, lambda: screen.wire_headers()[-1][0] <= 25, 60, "messages left the wire")
            # every wire the page showed is the engine's build for a share the slider passed through
            passed = {expected(hundredths / 100) for hundredths in range(50, 71)}
            assert set(screen.wire_headers()) <= passed
        finally:
            page.screenshot(path=str(SCREENSHOT))
            browser.close()
