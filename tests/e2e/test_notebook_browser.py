"""End to end: the Playground in a real browser. A Voilà server on loopback runs a small notebook, headless
Chromium (Debian's, driven by Playwright) moves a policy slider and the step slider, and the wire view
changes. Skipped when chromium, voila or playwright is missing. Never run `playwright install`: the
browser comes from `apt-get install -y chromium`.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from importlib.util import find_spec
from pathlib import Path

import pytest

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
MISSING = [
    reason
    for reason, absent in (
        ("chromium is not installed (apt-get install -y chromium)", not Path(CHROMIUM).exists()),
        ("voila is not installed (pip install voila)", find_spec("voila") is None),
        ("playwright is not installed (pip install playwright)", find_spec("playwright") is None),
        ("nbformat is not installed", find_spec("nbformat") is None),
    )
    if absent
]
pytestmark = pytest.mark.skipif(bool(MISSING), reason="; ".join(MISSING))

BROWSER_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
SCREENSHOT = Path("/tmp/linn_notebook_e2e.png")
NOTEBOOK_CODE = """\
from engine.messages import AiMessage
from playground.notebook import Playground

messages = [AiMessage("s", "system", "system_prompt", "Be brief.", 0)]
for i in range(30):
    messages.append(AiMessage(f"u{i}", "user", "user_input", f"question {i} " + "why " * 100, i))
    messages.append(AiMessage(f"a{i}", "assistant", "final_answer", f"answer {i} " + "because " * 100, i))
pg = Playground(messages, {"budget": {"maxTokens": 12000, "reservedForResponse": 1000}}, now=0)
pg.controls.accordion.selected_index = 0  # open the budget group

import ipywidgets as W  # a probe for the test: how many builds the kernel ran

builds = W.Label(f"builds {pg.builds}")
builds.add_class("e2e-builds")
pg.views.wire.observe(lambda _change: setattr(builds, "value", f"builds {pg.builds}"), "value")
W.VBox([builds, pg.widget])
"""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_for_port(port: int, proc: subprocess.Popen, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"voila exited with {proc.returncode}")
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise TimeoutError(f"voila did not listen on port {port} within {timeout} s")


@pytest.fixture
def voila_url(tmp_path):
    import nbformat

    notebook = nbformat.v4.new_notebook()
    notebook.cells = [nbformat.v4.new_code_cell(NOTEBOOK_CODE)]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(notebook, tmp_path / "play.ipynb")
    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
        "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
        "IPYTHONDIR": str(tmp_path / "ipython"),
    }
    command = [sys.executable, "-m", "voila", "play.ipynb", "--no-browser", f"--port={port}"]
    command += ["--Voila.ip=127.0.0.1", "--show_tracebacks=True"]
    log = (tmp_path / "voila.log").open("w")
    proc = subprocess.Popen(command, cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


def wire_header(page) -> str:
    return page.locator(".lp-wire-view .lp-wire .lp-muted").first.inner_text()


def wait_for_builds(page, count: int) -> None:
    """The probe label is set after the wire view changed: wait for it rather than read it at once."""
    page.wait_for_function(
        "(n) => document.querySelector('.e2e-builds').innerText === `builds ${n}`", arg=count, timeout=30_000
    )


def test_moving_sliders_changes_the_wire_view(voila_url):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.goto(voila_url, timeout=120_000)
            page.wait_for_selector(".lp-wire-view .lp-card", timeout=120_000)
            # step 30: before the last answer; the first page of the wire
            assert wire_header(page) == "60 messages · 6\u202f439 tok · rows 1–25 of 60"
            wait_for_builds(page, 1)

            # a policy slider (log scale), by typing into its readout: 12000 → 5000
            readout = page.locator(".lp-field-budget-maxTokens .widget-readout")
            readout.click()
            page.keyboard.press("Control+A")
            page.keyboard.type("5000")
            page.keyboard.press("Enter")
            page.wait_for_function(
                "() => document.querySelector('.lp-wire-view .lp-muted').innerText.startsWith('26 messages')",
                timeout=30_000,
            )
            assert wire_header(page) == "26 messages · 2\u202f733 tok · rows 1–25 of 26"
            wait_for_builds(page, 2)  # one edit, one rebuild (the counter follows the wire)
            budget = page.locator(".lp-budget-view").inner_text()
            assert "max tokens\t5\u202f000" in budget

            # the step slider, by mouse: drag the handle to the far left (step 1)
            step = page.locator(".lp-step-view .noUi-handle")
            step.scroll_into_view_if_needed()
            track = page.locator(".lp-step-view .noUi-base").bounding_box()
            box = step.bounding_box()
            page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
            page.mouse.down()
            page.mouse.move(track["x"] - 20, box["y"] + box["height"] / 2, steps=10)
            page.mouse.up()
            page.wait_for_function(
                "() => document.querySelector('.lp-wire-view .lp-muted').innerText.startsWith('2 messages')",
                timeout=30_000,
            )
            assert page.locator(".lp-wire-view .lp-card").count() == 2
            wait_for_builds(page, 3)  # a drag, one rebuild
            page.screenshot(path=str(SCREENSHOT), full_page=True)
        finally:
            browser.close()
