"""The TUI's diff screen, driven through the real app: D or the palette opens it, n / p move."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Static
from textual.worker import WorkerCancelled

from playground.app.inputs import SAMPLES_DIR
from playground.tui.app import PlaygroundApp
from playground.tui.commands import palette_commands
from playground.tui.screens.diff import DiffScreen
from playground.tui.screens.main import MainScreen
from tests.tui.test_tui_app import focus_field, run, settle
from tests.tui_session import write_session


def text_of(screen: DiffScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


async def open_diff(app: PlaygroundApp, pilot: Pilot) -> DiffScreen:
    await pilot.press("D")
    await pilot.pause()
    screen = app.screen
    assert isinstance(screen, DiffScreen)
    await screen.workers.wait_for_complete()
    await pilot.pause()
    return screen


def test_diff_pinned_policy_against_the_edited_one(tmp_path: Path) -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await pilot.press("a")  # pin A: maxTokens 4000
        await focus_field(app, pilot, "budget.maxTokens")
        await pilot.press("left")  # B: 3000
        await settle(app, pilot)
        screen = await open_diff(app, pilot)
        diff = screen.diff
        assert diff is not None and diff.alignment == "step" and len(diff.steps) == 7
        head = text_of(screen, "#diff-head").splitlines()
        assert head[:2] == ["A: pinned policy (step 7)", "B: the current policy"]
        a, b = diff.totals_a, diff.totals_b
        assert head[3].startswith(f"cost ${a.cost_usd:,.4f} → ${b.cost_usd:,.4f}")
        assert f"cache breaks {a.breaks} → {b.breaks} · sent " in head[3]
        changed = diff.changed_steps
        assert changed and text_of(screen, "#diff-step").startswith(
            f"change 1/{len(changed)}: step {changed[0] + 1} ↔"
        )
        last = diff.steps[-1]
        assert [m.id_a for m in last.of("removed")] == ["u1", "f1"]
        for _ in changed:
            await pilot.press("n")
        assert screen.position == len(changed) - 1
        assert text_of(screen, "#diff-step").startswith(f"change {len(changed)}/{len(changed)}: step 7 ↔ 7")
        assert "− [" in text_of(screen, "#diff-a") and "u1 (user)" in text_of(screen, "#diff-a")
        assert "B · step 7" in text_of(screen, "#diff-b")
        await pilot.press("p")
        assert screen.position == len(changed) - 2
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)

    run(write_session(tmp_path), scenario)


def test_palette_opens_the_diff_against_the_opened_policy(tmp_path: Path) -> None:
    assert any(c.action == "diff" and c.title.startswith("Diff two runs") for c in palette_commands())

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        await pilot.press("ctrl+p")
        await pilot.pause()
        await pilot.press(*"Diff two runs")
        await settle(app, pilot)
        await pilot.press("enter")
        await settle(app, pilot)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        await screen.workers.wait_for_complete()
        await pilot.pause()
        assert screen.diff is not None and screen.diff.changed_steps == []
        assert text_of(screen, "#diff-step") == "the two runs sent the same context at every step"
        assert text_of(screen, "#diff-head").startswith("A: the policy the session opened with")

    run(write_session(tmp_path), scenario)


def test_closing_the_diff_stops_its_replays() -> None:
    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        app.main.action_diff()  # what D runs (Pilot's press waits until the worker is done)
        screen = app.screen
        assert isinstance(screen, DiffScreen)
        await pilot.pause(0.1)
        (worker,) = [w for w in app.workers if w.group == "diff"]
        await screen.action_dismiss()
        with pytest.raises(WorkerCancelled):
            await worker.wait()
        await pilot.pause(3)  # both replays of the whole session take ~1.5 s: they stopped
        assert isinstance(app.screen, MainScreen) and screen.diff is None

    run(SAMPLES_DIR / "tool_loop_runs.jsonl", scenario)  # 71 steps a side
