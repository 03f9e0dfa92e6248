"""Benchmark: latency from a key to the screen showing its build, and the memory of a large session.

    .venv/bin/python bench/bench_tui_latency.py [SESSION ...] [--edits N] [--series-running] [--memory N]

Drives the real app headless with Pilot (200x50) on the largest transcript in ../shared/real-sessions
(read by the importers) and a synthetic 1,000-message session, or on the given sessions. For each:
- `idle`: focus `budget.maxTokens`, move it one step, and time until the build of that edit reaches the
  main screen (`applied`: its handler starts putting it on the wire, bars and events) and until the screen
  has been repainted with it (`painted`: the end of the paint by which every widget the build asked to
  repaint has been drawn; Textual may draw them over two frames); each edit after everything settled;
- `busy`: the same, an edit every 100 ms, while the step series of the previous edit is being computed;
- `step`: `[`/`]` (the timeline moved one step), time to the painted build of that step, while the series
  of the last edit may still be computing.
Each session's line also gives the time of a fixed pure-Python loop before and after it (`machine_speed`):
on a shared VM the CPU's speed changes by up to 2x within seconds, and the latencies with it.
Then, when no session is given, in a fresh process, the peak RSS with a synthetic 10,000-message session
open and its build on screen; `--memory N` measures only that, with N messages. Numbers, not pass/fail.

Like `linn-playground`, it freezes what its imports made out of the garbage collector's scans
(`gc.freeze()`, as `playground.cli.main.main` does); the app itself freezes again once its first build
is shown.
`--edits N` (default 24) sets the number of edits and steps of each kind. `--series-running`: an `idle`
edit waits for its build only, not for the step series nor the cost pane's replay, which keep computing
(each edit restarts them): for a session whose series runs for minutes (the 64,000-message one of issue 32).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from textual import events
from textual.pilot import Pilot
from textual.widget import Widget

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.bench_build import machine_speed, make_session  # noqa: E402
from engine import BuildResult  # noqa: E402
from engine.importers import detect_format  # noqa: E402
from playground.app.inputs import load_inputs  # noqa: E402
from playground.tui.app import PlaygroundApp, make_app  # noqa: E402
from playground.tui.screens.main import MainScreen  # noqa: E402
from playground.tui.widgets import Timeline, WireView  # noqa: E402

EDITS = 24
BUSY_GAP = 0.1
REAL_SESSIONS = ROOT.parent / "shared" / "real-sessions"


BACKGROUND = ("timeline", "cost")  # the step series and the cost pane's replay


async def settle(app: PlaygroundApp, pilot: Pilot, series: bool = True) -> None:
    """Wait for the app's workers; with `series` False, not for the step series nor the cost pane's replay
    (`--series-running`)."""
    for _ in range(4):
        if series:
            await app.workers.wait_for_complete()
        else:
            waited = [w for w in app.workers if w.group not in BACKGROUND]
            if waited:  # an empty list would wait for every worker, the background ones too
                await app.workers.wait_for_complete(waited)
        await pilot.pause()


PAINTS: list[tuple[float, float, frozenset[Widget] | None]] = []  # the main screen's compositor refreshes:
# start, end, and the widgets each one drew (None: all, after a layout pass)
APPLIED: list[float] = []  # when the main screen began to put a build on its widgets
REFRESHED: list[tuple[float, Widget]] = []  # each widget's `refresh()`, when it was asked


def _record_paints() -> None:
    partial, layout = MainScreen._compositor_refresh, MainScreen._refresh_layout
    show, refresh = WireView.show, Widget.refresh

    def timed(screen: MainScreen) -> None:
        start, drawn = time.perf_counter(), frozenset(screen._dirty_widgets)
        partial(screen)
        PAINTS.append((start, time.perf_counter(), drawn))

    def timed_layout(screen: MainScreen, *args: Any, **kwargs: Any) -> None:
        start = time.perf_counter()
        layout(screen, *args, **kwargs)
        PAINTS.append((start, time.perf_counter(), None))

    def shown(view: WireView, result: BuildResult, **kwargs: Any) -> None:
        APPLIED.append(time.perf_counter())  # the build's handler starts with the wire
        show(view, result, **kwargs)

    def asked(widget: Widget, *args: Any, **kwargs: Any) -> Widget:
        REFRESHED.append((time.perf_counter(), widget))
        return refresh(widget, *args, **kwargs)

    MainScreen._compositor_refresh = timed  # type: ignore[method-assign]
    MainScreen._refresh_layout = timed_layout  # type: ignore[method-assign]
    WireView.show = shown  # type: ignore[method-assign]
    Widget.refresh = asked  # type: ignore[method-assign]


def press(app: PlaygroundApp, key: str) -> None:
    """A key as the terminal driver sends it (`pilot.press` would add ~100 ms of waiting for idle)."""
    app.post_message(events.Key(key, None))


async def one_edit(app: PlaygroundApp, direction: int) -> tuple[float, float]:
    """Move the focused maxTokens slider one step with its arrow key."""
    return await timed(app, lambda: press(app, "right" if direction > 0 else "left"))


async def one_step(app: PlaygroundApp, direction: int) -> tuple[float, float]:
    """Move the timeline one step with `]` / `[`."""
    key = "right_square_bracket" if direction > 0 else "left_square_bracket"
    return await timed(app, lambda: press(app, key))


async def timed(app: PlaygroundApp, act: object) -> tuple[float, float]:
    """(applied, painted) in ms from the key: painted is the end of the paint by which every widget the
    build asked to repaint (in its handler, up to the first paint after it) has been drawn."""
    target = app.workspace.generation + 1
    REFRESHED.clear()
    start = time.perf_counter()
    act()  # type: ignore[operator]
    while app.main.shown_generation < target:
        await asyncio.sleep(0.001)
    applied = APPLIED[-1]
    # the handler runs to its end before any paint: what it (and what it woke) asked to repaint
    while not (after := [paint for paint in PAINTS[-20:] if paint[0] >= applied]):
        await asyncio.sleep(0.001)
    visible = app.main._compositor.visible_widgets
    asked = {widget for at, widget in REFRESHED if applied <= at < after[0][0] and widget in visible}
    while True:
        drawn: set[Widget] = set()
        for _start, paint_end, widgets in (p for p in PAINTS[-40:] if p[0] >= applied):
            if widgets is None or asked <= drawn.union(widgets):
                return (applied - start) * 1000, (paint_end - start) * 1000
            drawn |= widgets
        await asyncio.sleep(0.001)


async def measure(
    path: Path, edits: int = EDITS, series: bool = True
) -> dict[str, list[tuple[float, float]]]:
    app = make_app(load_inputs(path))
    rounds: dict[str, list[tuple[float, float]]] = {"idle": [], "busy": [], "step": []}
    async with app.run_test(size=(200, 50)) as pilot:
        await settle(app, pilot, series)
        if app.screen is not app.main:  # a notice about bad lines
            app.pop_screen()
        app.main.action_focus_field("budget.maxTokens")
        await pilot.pause()
        for i in range(edits):
            rounds["idle"].append(await one_edit(app, 1 if i % 2 else -1))
            await settle(app, pilot, series)
        for i in range(edits):
            rounds["busy"].append(await one_edit(app, 1 if i % 2 else -1))
            await asyncio.sleep(BUSY_GAP)
        for i in range(edits):
            rounds["step"].append(await one_step(app, 1 if i % 2 else -1))
            await asyncio.sleep(BUSY_GAP)
        if series:
            await settle(app, pilot)
        else:  # leaving the app would wait for the series to end
            app.workers.cancel_all()
    return rounds


def largest_real_session() -> Path | None:
    """The largest file under ../shared/real-sessions that an importer reads."""
    if not REAL_SESSIONS.is_dir():
        return None
    for path in sorted(REAL_SESSIONS.rglob("*"), key=lambda p: p.stat().st_size, reverse=True):
        try:
            if path.is_file() and detect_format(path):
                return path
        except (ValueError, RecursionError):  # UnknownFormatError is a ValueError
            continue
    return None


async def open_and_show(path: Path, n: int, start: float) -> None:
    """Open `path` in the app, wait for its first build and a step build on screen, print the peak RSS and
    end the process there (leaving the app would wait for the background workers on 10,000 messages)."""
    app = make_app(load_inputs(path))
    async with app.run_test(size=(200, 50)) as pilot:
        while app.main.result is None:
            await asyncio.sleep(0.05)
        await pilot.pause()
        app.main.query_one(Timeline).action_move(-1)  # a step build too, while the series computes
        target = app.workspace.generation
        while app.main.shown_generation < target:
            await asyncio.sleep(0.05)
        await pilot.pause()
        rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        seconds = time.perf_counter() - start
        line = f"memory: {n} messages open in the TUI, build and a step build on screen in {seconds:.1f} s"
        print(f"{line}: peak RSS {rss / 2**20:.0f} MB", file=sys.__stdout__, flush=True)
        os._exit(0)


def memory(n: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(open_and_show(synthetic(Path(tmp), n), n, time.perf_counter()))


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
        f"  {label:<5} applied p50 {statistics.median(applied):6.1f} ms · "
        f"painted p50 {statistics.median(painted):6.1f} ms · p90 {p90:6.1f} ms · "
        f"max {max(painted):6.1f} ms"
    )


def main() -> None:
    gc.freeze()  # as playground.cli.main.main does once its imports are done
    parser = argparse.ArgumentParser(description="Key-to-screen latency of the TUI, and its memory.")
    parser.add_argument("sessions", nargs="*", type=Path, help="sessions to open (default: see above)")
    parser.add_argument("--edits", type=int, default=EDITS, help="edits and steps of each kind")
    parser.add_argument("--series-running", action="store_true", help="do not wait for the series")
    parser.add_argument("--memory", type=int, metavar="N", help="only the peak RSS with N messages (0: skip)")
    args = parser.parse_args()
    if args.memory:
        memory(args.memory)
        return
    _record_paints()
    paths = list(args.sessions)
    with tempfile.TemporaryDirectory() as tmp:
        if not paths:
            paths = [p for p in (largest_real_session(),) if p is not None]
            paths.append(synthetic(Path(tmp), 1000))
        for path in paths:
            messages = len(load_inputs(path).session.messages)
            before = machine_speed()
            rounds = asyncio.run(measure(path, args.edits, not args.series_running))
            after = machine_speed()
            speed = f"calibration loop {before:.0f} ms before, {after:.0f} after"
            print(f"{path.name} ({messages} messages; {speed})")
            for label, samples in rounds.items():
                print(line(label, samples))
    if not args.sessions and args.memory is None:
        subprocess.run([sys.executable, __file__, "--memory", "10000"], check=True)


if __name__ == "__main__":
    main()
