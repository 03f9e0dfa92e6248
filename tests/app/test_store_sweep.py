"""Sweeps into the audit store: `sweep --record`, Parquet parts written by the workers (processes and a
Dask cluster), read as they are, and `runs import`."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow.dataset as ds
import pytest
import yaml

from playground.app.store import open_store
from playground.app.sweep import plan_sweep, run_sweep, with_capture
from playground.cli.main import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
SHORT, SUMMARIZING = SAMPLES / "short_chat.jsonl", SAMPLES / "summarization_trigger.jsonl"
GRID = "summarization.triggerThreshold=0.5,0.9"
SWEEP = ["sweep", str(SHORT), str(SUMMARIZING), "--vary", GRID]


def stored(path: Path, sql: str) -> list[tuple]:
    with open_store(path, read_only=True) as store:
        return store.query(sql)[1]


def test_sweep_record_and_parquet_parts_hold_the_same_runs(tmp_path, capsys):
    store, parts, imported = tmp_path / "runs.duckdb", tmp_path / "parts", tmp_path / "imported.duckdb"
    assert main([*SWEEP, "--record", "--store", str(store), "--jobs", "2"]) == 0
    assert "recorded 4 runs (0 already there) in" in capsys.readouterr().err
    assert main([*SWEEP, "--parquet-runs", str(parts), "--jobs", "2"]) == 0
    assert main(["runs", "import", str(parts), "--store", str(imported)]) == 0
    assert f"imported 4 runs from {parts}" in capsys.readouterr().out
    every = "SELECT run_id, sweep, sweep_policy, steps, tokens_sent, cache_breaks FROM runs ORDER BY run_id"
    assert stored(store, every) == stored(imported, every)
    steps = "SELECT run_id, step, tokens_sent, cached_tokens, summary_made FROM steps ORDER BY run_id, step"
    assert stored(store, steps) == stored(imported, steps)
    policies = stored(store, "SELECT sweep_policy, count(*) FROM runs GROUP BY 1 ORDER BY 1")
    assert policies == [("summarization.triggerThreshold=0.5", 2), ("summarization.triggerThreshold=0.9", 2)]
    # the same sweep imported again, or into the store that recorded it: nothing new
    assert main(["runs", "import", str(parts), "--store", str(store)]) == 0
    assert "imported 0 runs" in capsys.readouterr().out
    assert stored(store, "SELECT count(*) FROM steps") == stored(imported, "SELECT count(*) FROM steps")


def test_a_replay_recorded_alone_is_the_sweeps_run(tmp_path, capsys):
    store = tmp_path / "runs.duckdb"
    assert main([*SWEEP, "--record", "--store", str(store), "--jobs", "1"]) == 0
    layer = json.loads(SUMMARIZING.read_text(encoding="utf-8").splitlines()[0])["contextPolicy"]
    layer.setdefault("summarization", {})["triggerThreshold"] = 0.5  # the header's policy, as the grid's
    policy = tmp_path / "p.yaml"
    policy.write_text(yaml.safe_dump(layer), encoding="utf-8")
    capsys.readouterr()
    assert main(["replay", str(SUMMARIZING), "--policy", str(policy), "--record", "--store", str(store)]) == 0
    said = capsys.readouterr().err.strip().splitlines()[-1]
    assert said.startswith("already recorded: run ")
    (row,) = stored(store, f"SELECT sweep_policy FROM runs WHERE starts_with(run_id, '{said.split()[3]}')")
    assert row == ("summarization.triggerThreshold=0.5",)


def test_parquet_parts_read_as_they_are(tmp_path):
    parts = tmp_path / "parts"
    jobs = with_capture(plan_sweep([SHORT, SUMMARIZING], [GRID]), str(parts))
    rows = run_sweep(jobs, workers=1)
    runs = {row["run"]: row["steps"] for row in rows}
    glob = (parts / "steps" / "**" / "*.parquet").as_posix()
    by_run = duckdb.sql(f"SELECT run_id, count(*), any_value(sweep) FROM '{glob}' GROUP BY 1").fetchall()
    assert {run: count for run, count, _ in by_run} == runs
    assert {sweep for *_, sweep in by_run} == {jobs[0].sweep_id}
    table = ds.dataset(parts / "runs", format="parquet", partitioning="hive").to_table().to_pylist()
    assert sorted(row["run_id"] for row in table) == sorted(runs)
    assert all(row["session"] == row["session_hash"][:16] for row in table)


def test_a_run_whose_runs_part_is_missing_is_not_imported(tmp_path, capsys):
    parts = tmp_path / "parts"
    rows = run_sweep(with_capture(plan_sweep([SHORT], [GRID]), str(parts)), workers=1)
    cut = next((parts / "runs").rglob(f"{rows[0]['run']}.parquet"))
    cut.unlink()  # a worker killed between its steps part and its runs part
    assert main(["runs", "import", str(parts), "--store", str(tmp_path / "s.duckdb")]) == 0
    assert "imported 1 runs" in capsys.readouterr().out
    assert stored(tmp_path / "s.duckdb", "SELECT DISTINCT run_id FROM steps") == [(rows[1]["run"],)]


def test_importing_a_folder_without_runs_is_one_line_exit_2(tmp_path, capsys):
    assert main(["runs", "import", str(tmp_path), "--store", str(tmp_path / "s.duckdb")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {tmp_path}: no runs/**/*.parquet parts here (see README, Stored runs)"]


def test_record_and_parquet_runs_together_are_refused(tmp_path, capsys):
    both = ["--record", "--parquet-runs", str(tmp_path / "p"), "--store", str(tmp_path / "s")]
    assert main([*SWEEP, *both]) == 2
    assert "choose --record or --parquet-runs" in capsys.readouterr().err


def test_dask_workers_write_the_parts(tmp_path):
    distributed = pytest.importorskip("distributed")
    parts = tmp_path / "parts"
    jobs = with_capture(plan_sweep([SHORT, SUMMARIZING], [GRID]), str(parts))
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:  # fmt: skip
        rows = run_sweep(jobs, scheduler=cluster.scheduler_address)
    written = {p.stem for p in (parts / "runs").rglob("*.parquet")}
    assert written == {row["run"] for row in rows} and len(written) == 4
