"""Benchmark: the notebook Playground's kernel side of an edit (build + redrawn HTML views), no browser.

    .venv/bin/python bench/bench_notebook.py

On each bundled sample and a synthetic 1,000-message session: the time of one `maxTokens` edit and of one
step move, with the step series already replayed (as after the background fill), p50/p90 over a few
edits; and the widget models one Playground makes. The browser's share (comm transfer, DOM) is measured
by tests/e2e/test_notebook_jupyterlab.py (`pytest -s`), which prints input → DOM change p50/p90.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from ipywidgets.widgets.widget import _instances  # noqa: E402

from bench.bench_build import make_session  # noqa: E402
from playground.app.inputs import SAMPLES_DIR  # noqa: E402
from playground.notebook import Playground  # noqa: E402

EDITS = 8


def figures(values: list[float]) -> str:
    ordered = sorted(values)
    p90 = ordered[min(len(ordered) - 1, round(0.9 * (len(ordered) - 1)))]
    return f"p50 {statistics.median(values):6.1f} ms  p90 {p90:6.1f} ms"


class Later:
    """A scheduler that keeps callbacks for `run()`, as the kernel's loop runs them after the edit."""

    def __init__(self) -> None:
        self.pending: list = []

    def __call__(self, delay: float, callback) -> Later:
        self.pending.append(callback)
        return self

    def cancel(self) -> None:
        pass  # a cancelled series slice finds its run outdated and does nothing

    def run(self) -> None:
        while self.pending:
            self.pending.pop(0)()


def measure(name: str, session) -> None:
    before = len(_instances)
    later = Later()
    pg = Playground(session, now=0, scheduler=later)
    models = len(_instances) - before
    later.run()  # the background fill, done
    slider = pg.controls.input(("budget", "maxTokens"))
    edits, moves = [], []
    for _ in range(EDITS):
        start = time.perf_counter()
        slider.value = slider.value * 0.93
        edits.append(1000 * (time.perf_counter() - start))
        later.run()  # the background work of this edit, before the next one
    for _ in range(EDITS):
        start = time.perf_counter()
        pg.step = max(1, pg.step - 1)
        moves.append(1000 * (time.perf_counter() - start))
    size = f"{len(pg.messages):5d} msgs {models:4d} models"
    print(f"{name:<22} {size}  edit {figures(edits)}  step {figures(moves)}")
    pg.close()


def main() -> None:
    for path in sorted(SAMPLES_DIR.glob("*.jsonl")):
        measure(path.stem, path)
    measure("synthetic", make_session(1000))


if __name__ == "__main__":
    main()
