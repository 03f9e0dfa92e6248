"""`diff run:ID ...`: a stored run beside another, or beside itself replayed under today's policy."""

from __future__ import annotations

import json
from pathlib import Path

from playground.app.store import open_store
from playground.cli.main import main

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "tool_loop_runs.jsonl"


def record(store: Path, capsys, *policy: str) -> str:
    """Replay the sample into the store (under a policy file when given) and return the new run's id."""
    before = _ids(store) if store.exists() else set()
    assert main(["replay", str(SAMPLE), *policy, "--record", "--store", str(store), "--json"]) == 0
    capsys.readouterr()
    (new,) = _ids(store) - before
    return new


def _ids(store: Path) -> set[str]:
    with open_store(store, read_only=True) as opened:
        return {run["run_id"] for run in opened.runs()}


def test_a_stored_run_against_today_s_policy_equals_the_same_diff_of_files(tmp_path, capsys) -> None:
    store = tmp_path / "runs.duckdb"
    drop = tmp_path / "drop.yaml"
    drop.write_text("toolHistory:\n  retentionMode: drop\n", encoding="utf-8")
    run_id = record(store, capsys)
    assert main(["diff", f"run:{run_id[:10]}", "--policy-b", str(drop), "--store", str(store), "--json"]) == 0
    stored = json.loads(capsys.readouterr().out)
    assert main(["diff", str(SAMPLE), "--policy-b", str(drop), "--json"]) == 0
    files = json.loads(capsys.readouterr().out)
    assert (stored["alignment"], stored["steps"]) == ("step", 71)
    assert stored["diff"] == files["diff"] and stored["totals"] == files["totals"]


def test_two_stored_runs(tmp_path, capsys) -> None:
    store = tmp_path / "runs.duckdb"
    drop = tmp_path / "drop.yaml"
    drop.write_text("toolHistory:\n  retentionMode: drop\n", encoding="utf-8")
    first, second = record(store, capsys), record(store, capsys, "--policy", str(drop))
    assert main(["diff", f"run:{first}", f"run:{second}", "--store", str(store)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[2] == "aligned by step index: 71 steps, 55 differ (wire shape openai)"


def test_an_unknown_run_or_a_missing_store_is_one_line(tmp_path, capsys) -> None:
    store = tmp_path / "runs.duckdb"
    assert main(["diff", "run:abc", "--policy-b", "x.yaml", "--store", str(store)]) == 2
    err = capsys.readouterr().err
    assert err == f"error: run:abc: {store}: no store here yet (record a run: replay SESSION --record)\n"
