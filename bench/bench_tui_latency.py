"""Benchmark: latency from a policy change (one slider key) to the wire view showing the new build.

    .venv/bin/python bench/bench_tui_latency.py [SESSION.jsonl ...]

Drives the real app headless with Pilot (200x50) on each bundled sample (or the given sessions) plus a
synthetic 1,000-message session. For each: focus `budget.maxTokens`, move it one step, and time until the
main screen has applied the build of that edit to the wire view (`applied`) and until the screen has been
repainted with it (`painted`, the end of the next compositor refresh).
Two rounds: `idle` (each edit after everything settled) and `busy` (an edit every 100 ms, while the
timeline of the previous edit is still being recomputed in the background). Numbers, not pass/fail.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from textual.pilot import Pilot

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_build import make_session  # noqa: E402
from playground.inputs import SAMPLES_DIR, load_inputs  # noqa: E402
from playground.tui.app import PlaygroundApp, make_app  # noqa: E402
from playground.tui.panels.policy_field import PolicyField  # noqa: E402
from playground.tui.screens.main import MainScreen  # noqa: E402

EDITS = 16
BUSY_GAP = 0.1


async def settle(app: PlaygroundApp, pilot: Pilot) -> None:
    for _ in range(4):
        await app.workers.wait_for_complete()
        await pilot.pause()


PAINTS: list[float] = []  # end times of the main screen's compositor refreshes


def _record_paints() -> None:
    refresh = MainScreen._compositor_refresh

    def timed(screen: MainScreen) -> None:
        refresh(screen)
        PAINTS.append(time.perf_counter())

    MainScreen._compositor_refresh = timed  # type: ignore[method-assign]


async def one_edit(app: PlaygroundApp, direction: int) -> tuple[float, float]:
    """Move the maxTokens slider one step, as its arrow key does (`pilot.press` adds ~100 ms of waiting)."""
    target = app.workspace.generation + 1
    slider = app.main.query_one("#field-budget-maxTokens", PolicyField).input
    start = time.perf_counter()
    slider.action_move(direction)
    while app.main.shown_generation < target:
        await asyncio.sleep(0.0005)
    applied = time.perf_counter()
    while not PAINTS or PAINTS[-1] < applied:
        await asyncio.sleep(0.0005)
    return (applied - start) * 1000, (PAINTS[-1] - start) * 1000


async def measure(path: Path) -> dict[str, list[tuple[float, float]]]:
    app = make_app(load_inputs(path))
    rounds: dict[str, list[tuple[float, float]]] = {"idle": [], "busy": []}
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot)
        if app.screen is not app.main:  # a notice about bad lines
            app.pop_screen()
        app.main.action_focus_field("budget.maxTokens")
        await pilot.pause()
        for i in range(EDITS):
            rounds["idle"].append(await one_edit(app, 1 if i % 2 else -1))
            await settle(app, pilot)
        for i in range(EDITS):
            rounds["busy"].append(await one_edit(app, 1 if i % 2 else -1))
            await asyncio.sleep(BUSY_GAP)
        await settle(app, pilot)
    return rounds


def synthetic(folder: Path, n: int) -> Path:
    path = folder / f"synthetic_{n}.jsonl"
    header = {"kind": "linn-session", "version": 1, "title": f"synthetic {n}", "contextPolicy": {}}
    lines = [json.dumps(header)] + [json.dumps(m.to_dict()) for m in make_session(n)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def line(label: str, samples: list[tuple[float, float]]) -> str:
    applied, painted = [s[0] for s in samples], [s[1] for s in samples]
    p90 = statistics.quantiles(painted, n=10)[-1]
    return (
        f"  {label:<5} applied median {statistics.median(applied):6.1f} ms · "
        f"painted median {statistics.median(painted):6.1f} ms · p90 {p90:6.1f} ms · "
        f"max {max(painted):6.1f} ms"
    )


def main() -> None:
    _record_paints()
    paths = [Path(p) for p in sys.argv[1:]] or sorted(SAMPLES_DIR.glob("*.jsonl"))
    with tempfile.TemporaryDirectory() as tmp:
        if not sys.argv[1:]:
            paths.append(synthetic(Path(tmp), 1000))
        for path in paths:
            messages = len(load_inputs(path).session.messages)
            rounds = asyncio.run(measure(path))
            print(f"{path.name} ({messages} messages)")
            for label, samples in rounds.items():
                print(line(label, samples))


if __name__ == "__main__":
    main()
