"""The TUI's "Record this replay" (ctrl+p): the session's replay under the current policy kept in the audit
store, the same run `replay --record` makes; a store it cannot use is one error notice."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine.policy import set_value
from playground.app.inputs import SAMPLES_DIR, load_inputs
from playground.app.recording import StoredRuns
from playground.app.store import open_store
from playground.cli.main import main
from playground.tui.app import PlaygroundApp, make_app
from playground.tui.commands import palette_commands

SIZE = (160, 48)
SUMMARIZING = SAMPLES_DIR / "summarization_trigger.jsonl"


def notices(app: PlaygroundApp) -> list[tuple[str, str, str]]:
    return [(n.title, n.message, n.severity) for n in app._notifications]


def record_twice(app: PlaygroundApp) -> list[tuple[str, str, str]]:
    """Record as opened, then with summarization.triggerThreshold at 0.9; the notices after each."""

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await app.workers.wait_for_complete()
            for edit in (None, 0.9):
                if edit is not None:
                    app.workspace.set_policy(
                        set_value(app.workspace.policy, ("summarization", "triggerThreshold"), edit)
                    )
                await app.run_action("record")
                await app.workers.wait_for_complete()
                await pilot.pause()

    asyncio.run(scenario())
    return notices(app)


def test_record_this_replay_keeps_the_current_policys_run(tmp_path: Path, capsys) -> None:
    store = tmp_path / "runs.duckdb"
    assert main(["replay", str(SUMMARIZING), "--record", "--store", str(store)]) == 0
    recorded = capsys.readouterr().err.strip().splitlines()[-1].split()[2]
    said = record_twice(make_app(load_inputs(SUMMARIZING), str(store)))
    with open_store(store, read_only=True) as opened:
        runs = opened.runs()
        edited = runs[0]["run_id"]
        assert opened.get(edited).policy().summarization.trigger_threshold == 0.9
    assert [run["run_id"][:12] for run in runs] == [edited[:12], recorded]
    assert [n for n in said if n[0] != "record"] == [
        ("already recorded", f"run {recorded} in {store}", "information"),
        ("recorded", f"run {edited[:12]} in {store}", "information"),
    ]
    assert "record" in {c.action for c in palette_commands() if c.on_app}


def test_a_store_it_cannot_use_is_an_error_notice(tmp_path: Path) -> None:
    store = tmp_path / "runs.duckdb"
    store.write_bytes(b"not a database\n" * 100)
    said = record_twice(make_app(load_inputs(SUMMARIZING), str(store)))
    errors = [n for n in said if n[0] == "not recorded"]
    assert len(errors) == 2 and errors[0][2] == "error"
    assert errors[0][1].startswith(f"{store}: not a readable DuckDB store")
    assert store.read_bytes() == b"not a database\n" * 100


def test_a_stored_run_opens_in_the_playground_as_it_was_recorded(tmp_path: Path, capsys) -> None:
    """`linn-playground run:ID`: the run's own session, policy and fences; recording it again is the same run
    (it replays to its id), and the edit after it a new one."""
    store, policy = tmp_path / "runs.duckdb", tmp_path / "p.yaml"
    policy.write_text("summarization:\n  triggerThreshold: 0.7\n", encoding="utf-8")
    assert main(["replay", str(SUMMARIZING), "--policy", str(policy), "--record", "--store", str(store)]) == 0
    recorded = capsys.readouterr().err.strip().splitlines()[-1].split()[2]
    stored = StoredRuns(str(store))
    inputs = stored.inputs(f"run:{recorded}")
    stored.close()
    assert inputs.policy.summarization.trigger_threshold == 0.7
    said = record_twice(make_app(inputs, str(store)))
    assert [n for n in said if n[0] != "record"][0] == (
        "already recorded", f"run {recorded} in {store}", "information"
    )
    assert main([f"run:{recorded[:6]}0000", "--store", str(store)]) == 2  # no such run: one line, no app
    assert capsys.readouterr().err.startswith(f"error: run:{recorded[:6]}0000: {store}: ")
