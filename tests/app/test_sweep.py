"""Sweeps: the grid, one row of totals per session × policy, processes and Dask alike, and resuming."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from playground.app.inputs import find_sessions
from playground.app.sweep import (
    SweepError,
    parse_vary,
    plan_sweep,
    policy_grid,
    run_sweep,
    summarize,
    summary_path,
)
from playground.cli.main import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
SHORT, SUMMARIZING = str(SAMPLES / "short_chat.jsonl"), str(SAMPLES / "summarization_trigger.jsonl")
GRID = ["summarization.triggerThreshold=0.5,0.9"]
FIELDS = ("steps", "tokensSent", "cachedTokens", "cacheBreaks", "summariesMade", "userRequestsDropped",
          "costUsd")  # fmt: skip


def _jobs():
    return plan_sweep([SHORT, SUMMARIZING], GRID)


def test_the_grid_is_every_combination_in_order():
    assert parse_vary("budget.maxTokens=16000, 32000") == ("budget.maxTokens", [16000, 32000])
    grid = policy_grid(["budget.maxTokens=16000,32000", "summarization.triggerThreshold=0.6,0.8"])
    assert [policy for policy, _ in grid] == [
        "budget.maxTokens=16000 summarization.triggerThreshold=0.6",
        "budget.maxTokens=16000 summarization.triggerThreshold=0.8",
        "budget.maxTokens=32000 summarization.triggerThreshold=0.6",
        "budget.maxTokens=32000 summarization.triggerThreshold=0.8",
    ]
    assert grid[1][1] == (("budget.maxTokens", 16000), ("summarization.triggerThreshold", 0.8))
    assert policy_grid([]) == [("base", ())]


@pytest.mark.parametrize(
    ("vary", "message"),
    [
        (["budget.maxTokens"], "--vary 'budget.maxTokens': expected FIELD=VALUE[,VALUE...]"),
        (["budget.maxTokenz=1"], "--vary 'budget.maxTokenz=1': unknown policy field 'budget.maxTokenz'"),
        (["budget.maxTokens=20000,"], "--vary 'budget.maxTokens=20000,': an empty value (a comma too many?)"),
        # YAML 1.2 numbers, as in a policy file: a zero-padded 20000 is 20000, not octal 8192
        (["budget.maxTokens=20000,020000"], "--vary 'budget.maxTokens=20000,020000': 020000 given twice"),
        (["budget.maxTokens=1,2", "budget.maxTokens=3"], "--vary names a field twice: budget.maxTokens"),
        (["budget.maxTokens=-5"], "--vary budget.maxTokens=-5: budget.maxTokens"),
        (["budget.maxTokens=20000,20000"], "--vary 'budget.maxTokens=20000,20000': 20000 given twice"),
        (["budget.maxTokens=20000,1000"], "--vary budget.maxTokens=1000: budget.reservedForResponse: "
         "reservedForResponse must be > 0 and < maxTokens"),
    ],
)
def test_a_bad_grid_is_refused_before_any_replay(vary, message):
    with pytest.raises(SweepError) as raised:
        plan_sweep([SHORT], vary)
    assert str(raised.value).startswith(message)


def test_folders_hold_the_sessions_the_importers_read(tmp_path):
    (tmp_path / "notes.md").write_text("# not a session")
    (tmp_path / "data.json").write_text('{"not": "messages"}')
    (tmp_path / "s.jsonl").write_text(Path(SHORT).read_text())
    sessions, skipped = find_sessions([tmp_path])
    assert sessions == [tmp_path / "s.jsonl"]
    assert sorted(p.name for p in skipped) == ["data.json", "notes.md"]


def test_a_row_per_session_and_policy_with_the_replays_totals():
    rows = run_sweep(_jobs(), workers=1)
    assert [(Path(r["session"]).name, r["policy"]) for r in rows] == [
        ("short_chat.jsonl", "summarization.triggerThreshold=0.5"),
        ("short_chat.jsonl", "summarization.triggerThreshold=0.9"),
        ("summarization_trigger.jsonl", "summarization.triggerThreshold=0.5"),
        ("summarization_trigger.jsonl", "summarization.triggerThreshold=0.9"),
    ]
    assert [tuple(r[k] for k in FIELDS) for r in rows] == [
        (4, 1183, 618, 0, 0, 0, 0.009039),
        (4, 1183, 618, 0, 0, 0, 0.009039),
        (13, 9240, 7385, 1, 1, 10, 0.031921),  # sends fewer tokens than 0.9, and costs more
        (13, 10187, 8718, 0, 0, 0, 0.025299),
    ]
    assert rows[2]["breaks.summary"] == 1 and rows[2]["summarization.triggerThreshold"] == 0.5
    summary = summarize(rows)
    assert [(s["policy"], s["sessions"], s["tokensSent.sum"], s["costUsd.median"]) for s in summary] == [
        ("summarization.triggerThreshold=0.5", 2, 10423.0, 0.02048),
        ("summarization.triggerThreshold=0.9", 2, 11370.0, 0.017169),
    ]
    assert summary[0]["costUsd.p90"] == round(0.009039 + 0.9 * (0.031921 - 0.009039), 6)


def test_processes_give_the_same_rows():
    assert run_sweep(_jobs(), workers=2) == run_sweep(_jobs(), workers=1)


def test_the_dask_local_cluster_gives_the_same_rows():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:  # fmt: skip
        on_dask = run_sweep(_jobs(), scheduler=cluster.scheduler_address)
    assert on_dask == run_sweep(_jobs(), workers=1)


class Interrupted(Exception):
    pass


@pytest.mark.parametrize("suffix", [".csv", ".jsonl", ".parquet"])
def test_an_interrupted_sweep_continues_from_what_it_wrote(tmp_path, suffix):
    whole = tmp_path / f"whole{suffix}"
    run_sweep(_jobs(), out=whole, workers=1)
    out = tmp_path / f"cut{suffix}"

    def stop_after_two(_row, done, _total):
        if done == 2:
            raise Interrupted

    with pytest.raises(Interrupted):
        run_sweep(_jobs(), out=out, workers=1, on_row=stop_after_two)
    journal = out if suffix != ".parquet" else out.with_name(out.name + ".partial.jsonl")
    assert journal.exists() and not (suffix == ".parquet" and out.exists())
    seen = []
    rows = run_sweep(_jobs(), out=out, workers=1, on_row=lambda row, done, total: seen.append((row, done)))
    assert [done for _, done in seen] == [2, 3, 4]  # the two written rows are not replayed again
    assert seen[0][0] == {}
    assert rows == run_sweep(_jobs(), workers=1)
    assert out.read_bytes() == whole.read_bytes()
    assert not out.with_name(out.name + ".partial.jsonl").exists()


@pytest.mark.parametrize("suffix", [".csv", ".jsonl"])
def test_a_sweep_of_other_sessions_into_the_same_out_keeps_the_rows_there(tmp_path, suffix):
    out = tmp_path / f"r{suffix}"
    first = run_sweep(plan_sweep([SHORT], GRID), out=out, workers=1)
    seen = []
    second = run_sweep(plan_sweep([SUMMARIZING], GRID), out=out, workers=1,
                       on_row=lambda row, done, total: seen.append((done, total)))  # fmt: skip
    assert seen == [(1, 2), (2, 2)]  # the first sweep's rows are not this plan's progress
    both = run_sweep(plan_sweep([SUMMARIZING, SHORT], GRID), out=out, workers=1)  # nothing left to replay
    assert both == second + first


def test_a_base_policy_that_cannot_be_read_is_named_once_before_any_replay(tmp_path):
    missing = tmp_path / "missing.yaml"
    with pytest.raises(SweepError) as raised:
        plan_sweep([SHORT, SUMMARIZING], GRID, base_policy=missing)
    assert str(raised.value) == f"--policy {missing}: no such file"


def test_a_csv_of_another_grid_is_not_mixed_in(tmp_path):
    out = tmp_path / "r.csv"
    run_sweep(_jobs(), out=out, workers=1)
    other = plan_sweep([SHORT], ["budget.maxTokens=16000"])
    with pytest.raises(SweepError, match="written by a sweep of other fields; choose another --out"):
        run_sweep(other, out=out, workers=1)


def test_the_sweep_command_writes_rows_and_the_summary(tmp_path, capsys):
    out = tmp_path / "results.jsonl"
    code = main(["sweep", SHORT, SUMMARIZING, "--vary", GRID[0], "--out", str(out), "--jobs", "1"])
    assert code == 0
    printed, err = capsys.readouterr()
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert [(line["tokensSent"], line["cachedTokens"]) for line in lines] == [
        (1183, 618), (1183, 618), (9240, 7385), (10187, 8718),
    ]  # fmt: skip
    summary = [json.loads(line) for line in summary_path(out).read_text().splitlines()]
    assert [s["costUsd.sum"] for s in summary] == [0.04096, 0.034338]
    assert "sweep: 2 sessions × 2 policies = 4 replays" in err
    assert "summarization.triggerThreshold=0.5        2      0.0410" in printed
    assert f"per-policy summary to {summary_path(out)}" in printed


def test_the_sweep_command_refuses_a_bad_grid_or_output(tmp_path, capsys):
    assert main(["sweep", SHORT, "--vary", "budget.maxTokens=x"]) == 2
    assert "error: --vary budget.maxTokens=\"x\": budget.maxTokens" in capsys.readouterr().err
    assert main(["sweep", SHORT, "--vary", GRID[0], "--out", str(tmp_path / "r.xlsx")]) == 2
    assert "r.xlsx: output must end in .csv, .jsonl, .parquet" in capsys.readouterr().err
    assert main(["sweep", str(tmp_path), "--vary", GRID[0]]) == 2
    assert "error: no session files found" in capsys.readouterr().err


def test_a_base_policy_replaces_each_sessions_own(tmp_path, capsys):
    base = tmp_path / "base.yaml"
    base.write_text("summarization:\n  triggerThreshold: 0.9\n")
    out = tmp_path / "r.parquet"
    assert main(["sweep", SUMMARIZING, "--policy", str(base), "--vary", "budget.maxTokens=3000",
                 "--out", str(out), "--jobs", "1"]) == 0  # fmt: skip
    import pandas as pd

    frame = pd.read_parquet(out)
    # the base file replaces the header's policy (threshold 0.5, its own reserve): no summary, and the
    # defaults' larger reserve leaves less of the 3000 tokens
    assert list(frame["summariesMade"]) == [0] and list(frame["tokensSent"]) == [4732]
    assert list(frame["budget.maxTokens"]) == [3000]
    assert summary_path(out).name == "r.summary.csv"
