"""End to end in JupyterLab: the Playground on a bundled sample and on a 1,001-message transcript, driven in
headless Chromium (Debian's, through Playwright): edit latency (printed as p50/p90), the log-scale maxTokens
slider, widths and labels in a wide and a narrow pane, pin A / compare B, the note beside a control whose
edit changes nothing, the dark theme's contrast; then the executed tour, reopened with no widget state,
showing its static views. Skipped when chromium, jupyterlab or playwright is missing; never run
`playwright install`.
"""

from __future__ import annotations

import os
import re
import shutil
import statistics
import subprocess
import sys
from importlib.util import find_spec
from pathlib import Path

import pytest

from tests.e2e.test_notebook_browser import BROWSER_ARGS, CHROMIUM, free_port, wait_for_port

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = ROOT / "sample_sessions"
MISSING = [
    reason
    for reason, absent in (
        ("chromium is not installed (apt-get install -y chromium)", not Path(CHROMIUM).exists()),
        ("jupyterlab is not installed (pip install jupyterlab)", find_spec("jupyterlab") is None),
        ("playwright is not installed (pip install playwright)", find_spec("playwright") is None),
        ("nbclient is not installed", find_spec("nbclient") is None),
    )
    if absent
]
pytestmark = pytest.mark.skipif(bool(MISSING), reason="; ".join(MISSING))

LIVE_CELLS = [
    """\
from engine.messages import AiMessage
from playground.notebook import Playground


def transcript(turns):
    out = [AiMessage("s", "system", "system_prompt", "You are careful.", 0)]
    for t in range(turns):
        call = {"id": f"c{t}", "type": "function", "function": {"name": "q", "arguments": f'{{"q": {t}}}'}}
        out += [
            AiMessage(f"u{t}", "user", "user_input", f"question {t} " + "why " * 30, t),
            AiMessage(f"a{t}", "assistant", "tool_calls", "", t, {"tool_calls": [call]}),
            AiMessage(f"t{t}", "tool", "tool_output", "row " * 40, t, {"tool_call_id": f"c{t}"}),
            AiMessage(f"f{t}", "assistant", "final_answer", f"answer {t} " + "because " * 20, t),
        ]
    return out


big = Playground(transcript(250), {"budget": {"maxTokens": 120000}}, now=0)  # 1,001 messages, 500 steps
big.widget.add_class("e2e-big")
big.controls.accordion.selected_index = 0
big""",
    """\
pg = Playground("fences_showcase.jsonl")
pg.widget.add_class("e2e-sample")
pg.controls.accordion.selected_index = 0
pg""",
]

CONTRAST_JS = """
([selector, property]) => {
  const parse = (s) => {
    const m = /rgba?\\(([^)]+)\\)/.exec(s || "");
    if (!m) return null;
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const background = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c && c[3] > 0) { layers.push(c); if (c[3] >= 1) break; }
    }
    let out = [255, 255, 255];
    for (const c of layers.reverse()) out = out.map((v, i) => v * (1 - c[3]) + c[i] * c[3]);
    return out;
  };
  const lum = (c) => {
    const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(c[0]) + 0.7152 * f(c[1]) + 0.0722 * f(c[2]);
  };
  const el = document.querySelector(selector);
  const style = getComputedStyle(el);
  const fg = parse(style[property]);
  const bg = background(el);
  const ink = fg.slice(0, 3).map((v, i) => v * fg[3] + bg[i] * (1 - fg[3]));
  const [hi, lo] = [lum(ink), lum(bg)].sort((a, b) => b - a);
  return {contrast: (hi + 0.05) / (lo + 0.05), background: lum(bg)};
}
"""

CLIPPED_JS = """
(root) => {
  const box = document.querySelector(root);
  const items = box.querySelectorAll(
    "button, .widget-readout, .lp-field .widget-html-content, .widget-toggle-button,"
    + " .jupyter-widget-Collapse-header, .widget-gridbox > .widget-html"
  );
  const clipped = [];
  for (const el of items) {
    if (el.offsetParent === null) continue;  // not shown (a closed group)
    if (el.scrollWidth > el.clientWidth + 1) clipped.push(el.innerText.trim() || el.title);
  }
  const track = box.querySelector(".lp-field-budget-maxTokens .noUi-base").getBoundingClientRect().width;
  return {clipped, track, overflow: box.scrollWidth - box.clientWidth};
}
"""


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    """A JupyterLab server on loopback over a folder with the live notebook and the executed tour."""
    import nbformat
    from nbclient import NotebookClient

    folder = tmp_path_factory.mktemp("lab")
    for name in ("fences_showcase.jsonl", "fences_showcase.fences.yaml", "fences_showcase.lesson.yaml"):
        shutil.copy(SAMPLES / name, folder / name)
    live = nbformat.v4.new_notebook()
    live.cells = [nbformat.v4.new_code_cell(code) for code in LIVE_CELLS]
    live.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nbformat.write(live, folder / "live.ipynb")
    tour = nbformat.read(SAMPLES / "tour.ipynb", as_version=4)
    NotebookClient(tour, timeout=300, resources={"metadata": {"path": str(SAMPLES)}}).execute()
    nbformat.write(tour, folder / "tour-saved.ipynb")  # as a colleague receives it: outputs, no widget state

    port = free_port()
    env = {
        **os.environ,
        "JUPYTER_CONFIG_DIR": str(folder / ".config"),
        "JUPYTER_RUNTIME_DIR": str(folder / ".runtime"),
        "JUPYTER_DATA_DIR": str(folder / ".data"),  # no notebook signatures: the saved tour is untrusted
        "JUPYTERLAB_SETTINGS_DIR": str(folder / ".settings"),
        "JUPYTERLAB_WORKSPACES_DIR": str(folder / ".workspaces"),
        "IPYTHONDIR": str(folder / ".ipython"),
    }
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", f"--port={port}"]
    command += ["--ServerApp.ip=127.0.0.1", "--IdentityProvider.token=", "--ServerApp.password="]
    command += [
        "--LabApp.expose_app_in_browser=True",
        "--LabApp.news_url=None",
        f"--ServerApp.root_dir={folder}",
    ]
    command += ["--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate"]
    log = (folder / "lab.log").open("w")
    proc = subprocess.Popen(command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, proc)
        yield f"http://127.0.0.1:{port}/lab/tree/"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        log.close()


@pytest.fixture(scope="module")
def browser():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=BROWSER_ARGS)
        try:
            yield chromium
        finally:
            chromium.close()


def open_notebook(browser, url: str, width: int = 1600):
    page = browser.new_page(viewport={"width": width, "height": 1000})
    page.goto(url, timeout=120_000)
    page.wait_for_function(
        "() => window.jupyterapp && window.jupyterapp.shell.currentWidget"
        " && window.jupyterapp.shell.currentWidget.sessionContext"
        " && window.jupyterapp.shell.currentWidget.sessionContext.session?.kernel?.status === 'idle'",
        timeout=120_000,
    )
    return page


def latencies(page, root: str, field: str, view: str, presses: int) -> list[float]:
    """Milliseconds from a key press on `field`'s slider to the first DOM change in `view` (the kernel's
    rebuild arriving), one per press."""
    target = f"{root} {view}"
    page.evaluate(
        """(sel) => { window.__changes = window.__changes || {}; window.__changes[sel] = [];
          new MutationObserver(() => window.__changes[sel].push(performance.now())).observe(
            document.querySelector(sel), {subtree: true, childList: true, characterData: true}); }""",
        target,
    )
    handle = page.locator(f"{root} {field} .noUi-handle").first
    handle.focus()
    out = []
    for _ in range(presses):
        start = page.evaluate("performance.now()")
        handle.press("ArrowLeft")
        page.wait_for_function(
            "([sel, t]) => window.__changes[sel].some((c) => c > t)", arg=[target, start], timeout=20_000
        )
        changed = page.evaluate("([sel, t]) => window.__changes[sel].find((c) => c > t)", [target, start])
        out.append(changed - start)
        page.wait_for_timeout(60)
    return out


def figures(name: str, values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"{name}: n={len(values)} p50 {statistics.median(values):.0f} ms, p90 {p90:.0f} ms"


def test_the_playground_in_jupyterlab(lab, browser, capsys):
    page = open_notebook(browser, lab + "live.ipynb")
    errors: list[str] = []
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.evaluate("() => window.jupyterapp.commands.execute('notebook:run-all-cells')")
    for root in (".e2e-sample", ".e2e-big"):
        page.wait_for_selector(f"{root} .lp-wire-view .lp-card", timeout=120_000)
    sample, big = ".e2e-sample", ".e2e-big"

    # 2. the log scale: 8 000 sits at log(8 000 / 1 000) / log(1 000) = 30 % of the track, not at 0.7 %
    readout = page.locator(f"{sample} .lp-field-budget-maxTokens .widget-readout")
    assert readout.inner_text() == "8,000"
    track = page.locator(f"{sample} .lp-field-budget-maxTokens .noUi-base").bounding_box()
    knob = page.locator(f"{sample} .lp-field-budget-maxTokens .noUi-handle").bounding_box()
    assert (knob["x"] + knob["width"] / 2 - track["x"]) / track["width"] == pytest.approx(0.30, abs=0.03)

    # 4. pin A, then every edit below builds B against it
    page.locator(f"{sample} button", has_text="pin A").click()
    page.wait_for_function(f"() => document.querySelector('{sample}').innerText.includes('A → B')")

    # 1. latency: key press → the rebuilt view in the page, on the sample and on 1,001 messages
    measured = {
        "sample maxTokens": latencies(page, sample, ".lp-field-budget-maxTokens", ".lp-budget-view", 8),
        "sample step": latencies(page, sample, ".lp-step-view", ".lp-wire-view", 6),
        "1,001 msgs maxTokens": latencies(page, big, ".lp-field-budget-maxTokens", ".lp-budget-view", 8),
        "1,001 msgs step": latencies(page, big, ".lp-step-view", ".lp-wire-view", 8),
    }
    with capsys.disabled():
        print("\ninput → DOM change in JupyterLab:")
        for name, values in measured.items():
            print("  " + figures(name, values))
    assert all(max(values) < 5_000 for values in measured.values())

    # 2. each press moved maxTokens ~7 % and the policy got two significant digits: 8 000 → 4 600 or so
    shown = int(readout.inner_text().replace(",", ""))
    assert 3_000 <= shown <= 5_500 and shown % 100 == 0
    assert (
        f"max tokens\t{shown:,}".replace(",", "\u202f")
        in page.locator(f"{sample} .lp-budget-view").inner_text()
    )

    # 4. B (lower maxTokens) drops messages A kept, listed in the compare table
    compare = page.locator(f"{sample} .lp-compare")
    compare.wait_for(timeout=20_000)
    assert compare.locator("tr").count() >= 1 and "−" in compare.inner_text()

    # 2. nothing clipped, the slider keeps a usable width; then the same in a narrow pane
    for width in (1600, 640):
        page.set_viewport_size({"width": width, "height": 1000})
        page.wait_for_timeout(400)
        layout = page.evaluate(CLIPPED_JS, sample)
        assert layout["clipped"] == [], (width, layout)
        page.screenshot(path=f"/tmp/linn_notebook_lab_{width}.png")
        assert layout["track"] >= 150 and layout["overflow"] <= 1, (width, layout)
    page.set_viewport_size({"width": 1600, "height": 1000})

    # 7. an edit that cannot change the shown step says so beside its control
    page.locator(f"{sample} .jupyter-widget-Collapse-header", has_text="Checkpoint").click()
    knob = page.locator(f"{sample} .lp-field-checkpoint-keepPairsBefore .noUi-handle")
    knob.focus()
    knob.press("ArrowRight")
    note = page.locator(f"{sample} .lp-field-checkpoint-keepPairsBefore .lp-note")
    note.wait_for(timeout=20_000)
    assert re.match(r"no change at step \d+: the model receives the same messages", note.inner_text())

    # 6. the dark theme: cards, muted text and the current-step marker follow it and stay readable
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', {theme: 'JupyterLab Dark'})"
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'", timeout=30_000)
    page.wait_for_timeout(500)
    card = page.evaluate(CONTRAST_JS, [f"{sample} .lp-wire-view .lp-card", "color"])
    muted = page.evaluate(CONTRAST_JS, [f"{sample} .lp-wire-view .lp-muted", "color"])
    marker = page.evaluate(CONTRAST_JS, [f"{sample} .lp-current-marker", "borderTopColor"])
    with capsys.disabled():
        print(f"dark theme contrast: card {card['contrast']:.1f}, muted {muted['contrast']:.1f}, "
              f"current step {marker['contrast']:.1f}")  # fmt: skip
    assert card["background"] < 0.1  # a dark card, not a white one
    assert card["contrast"] >= 7 and muted["contrast"] >= 4.5 and marker["contrast"] >= 3
    page.screenshot(path="/tmp/linn_notebook_lab_dark.png", full_page=True)
    assert not [e for e in errors if "widget" in e.lower()], errors
    page.close()


def test_the_saved_tour_shows_its_static_views_without_widget_state(lab, browser):
    page = open_notebook(browser, lab + "tour-saved.ipynb?reset")  # ?reset: only this notebook open
    page.wait_for_function("() => document.querySelectorAll('.lp-static').length === 8", timeout=60_000)
    text = page.evaluate("() => document.body.innerText")
    assert "VBox(children" not in text and "Error displaying widget" not in text
    first = page.locator(".lp-static").first
    assert first.inner_text().startswith("linn-playground · ")
    assert first.locator(".lp-wire-summary tr").count() >= 1
    assert first.locator(".lp-bar .lp-seg").first.bounding_box()["width"] > 0  # the budget bar
    bars = first.locator(".lp-step-bars .lp-step-col")  # the step chart, as boxes the sanitizer keeps
    assert bars.count() >= 1 and bars.first.bounding_box()["height"] > 0
    page.close()
