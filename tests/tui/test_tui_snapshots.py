"""Snapshots of the playground at 160x48 on the test session (tests/tui_session.py).

Regenerate after a deliberate change: `.venv/bin/pytest tests/test_tui_snapshots.py --snapshot-update`.
The session is opened by a relative path from a temporary working directory, so no path varies.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Markdown

from playground.app.compare import compare_builds
from playground.app.inputs import load_inputs
from playground.tui.app import PlaygroundApp, make_app
from tests.tui.test_tui_app import ALL_KEPT
from tests.tui_session import POLICY, write_session

SIZE = (160, 48)


@pytest.fixture
def app(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> PlaygroundApp:
    monkeypatch.chdir(tmp_path)
    write_session(tmp_path)
    return make_app(load_inputs("sales.jsonl"))


async def settle(pilot: Pilot) -> None:
    for _ in range(4):
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
    pilot.app.clear_notifications()


async def smaller_budget(pilot: Pilot) -> None:
    """maxTokens 4000 → 3000: u1 and f1 are dropped."""
    await settle(pilot)
    pilot.app.main.action_focus_field("budget.maxTokens")
    await pilot.pause()
    await pilot.press("left")
    await settle(pilot)


def test_main_screen(snap_compare: Callable[..., bool], app: PlaygroundApp) -> None:
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        result = pilot.app.main.result
        assert result.kept_ids == ALL_KEPT and result.tokens.max_tokens == 4000

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_dropped_messages_view(snap_compare: Callable[..., bool], app: PlaygroundApp) -> None:
    async def run_before(pilot: Pilot) -> None:
        await smaller_budget(pilot)
        pilot.app.main.query_one("WireList").focus()
        await pilot.press("d")
        await settle(pilot)
        rows = pilot.app.main.query_one("WireList").rows
        assert [r.message_id for r in rows if r.kind == "dropped"] == ["u1", "f1"]

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_compare_view(snap_compare: Callable[..., bool], app: PlaygroundApp) -> None:
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("a")
        await smaller_budget(pilot)
        ws = pilot.app.workspace
        assert ws.pinned is not None and ws.changes_since_pin() == ["budget.maxTokens 4000 → 3000"]
        removed = compare_builds(ws.pinned.result, pilot.app.main.result).of("removed")
        assert [d.message_id for d in removed] == ["u1", "f1"]

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_help_screen(snap_compare: Callable[..., bool], app: PlaygroundApp) -> None:
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        help_text = pilot.app.screen.query_one(Markdown).source
        assert "| `n` / `E` | new fence, from any panel / tool summaries and reminders in" in help_text

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_bad_session_notice(
    snap_compare: Callable[..., bool], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    write_session(tmp_path, "bad.jsonl", bad_lines=True)
    assert snap_compare(make_app(load_inputs("bad.jsonl")), terminal_size=SIZE, run_before=settle)


def test_invalid_value_error(
    snap_compare: Callable[..., bool], app: PlaygroundApp, tmp_path: Path
) -> None:
    async def run_before(pilot: Pilot) -> None:
        await settle(pilot)
        pilot.app.main.action_focus_field("budget.reservedForResponse")
        await pilot.pause()
        layer = {**POLICY, "budget": {**POLICY["budget"], "reservedForResponse": 128000}}
        policy_file = tmp_path / "too-much.json"  # a file can hold what no slider reaches
        policy_file.write_text(json.dumps(layer), encoding="utf-8")
        pilot.app.workspace.load_policy_file(policy_file)
        pilot.app.main.policy_loaded()
        await settle(pilot)
        assert pilot.app.workspace.errors() == {
            ("budget", "reservedForResponse"): "reservedForResponse must be > 0 and < maxTokens"
        }

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
