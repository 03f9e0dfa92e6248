"""The audit store when things go wrong, on real DuckDB files: a corrupt or truncated file, a store another
process holds, a recording process killed mid-run, SQL that fails. One line each, and nothing recorded
before is lost."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import duckdb
import pytest

from playground.app.store import open_store
from playground.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SHORT = ROOT / "sample_sessions" / "short_chat.jsonl"


def record_sample(store: Path, capsys) -> None:
    assert main(["replay", str(SHORT), "--record", "--store", str(store)]) == 0
    capsys.readouterr()


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "Traceback" not in err[0], err
    return err[0]


def test_a_file_that_is_not_a_database_is_refused_and_kept(tmp_path, capsys):
    path = tmp_path / "runs.duckdb"
    path.write_bytes(b"these are notes, not a database\n" * 200)
    before = path.read_bytes()
    assert main(["runs", "--store", str(path)]) == 2
    assert one_error_line(capsys) == (
        f"error: {path}: not a readable DuckDB store (corrupt, truncated or another kind of file); "
        "move it aside or choose another --store"
    )
    assert main(["replay", str(SHORT), "--record", "--store", str(path)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(f"error: not recorded: {path}: not a")
    assert path.read_bytes() == before


@pytest.mark.parametrize("name", ["session.jsonl", "results.csv"])
def test_a_session_or_a_csv_as_the_store_is_refused_before_a_run_is_lost(tmp_path, capsys, name):
    # DuckDB opens such a file as an empty database in memory: the run would be "recorded" and gone
    path = tmp_path / name
    path.write_bytes(SHORT.read_bytes())
    assert main(["replay", str(SHORT), "--record", "--store", str(path)]) == 1
    refusal = f"error: not recorded: {path}: not a readable DuckDB store"
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(refusal)
    assert main(["runs", "--store", str(path)]) == 2
    assert one_error_line(capsys).startswith(f"error: {path}: not a readable DuckDB store")
    assert path.read_bytes() == SHORT.read_bytes()


def test_a_truncated_store_is_one_line(tmp_path, capsys):
    path = tmp_path / "runs.duckdb"
    record_sample(path, capsys)
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 3])
    assert main(["runs", "query", "SELECT count(*) FROM steps", "--store", str(path)]) == 2
    assert one_error_line(capsys) == (
        f"error: {path}: not a readable DuckDB store (corrupt, truncated or another kind of file); "
        "move it aside or choose another --store"
    )
    assert main(["replay", str(SHORT), "--record", "--wire", "anthropic", "--store", str(path)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith(f"error: not recorded: {path}: not a")
    assert len(path.read_bytes()) == len(data) // 3  # left as it was, for the user to look at


def test_a_store_another_process_holds_is_named_with_its_pid(tmp_path, capsys):
    path = tmp_path / "runs.duckdb"
    record_sample(path, capsys)
    hold = "import duckdb, sys; c = duckdb.connect(sys.argv[1]); print('held', flush=True); sys.stdin.read()"
    holder = subprocess.Popen(
        [sys.executable, "-c", hold, str(path)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        assert main(["runs", "--store", str(path)]) == 2
        assert one_error_line(capsys) == (
            f"error: {path}: the store is in use by another process (PID {holder.pid}); close it or choose "
            "another --store"
        )
        assert main(["replay", str(SHORT), "--record", "--store", str(path)]) == 1
        assert "the store is in use by another process" in capsys.readouterr().err
    finally:
        holder.stdin.close()
        holder.wait(timeout=30)
    with open_store(path, read_only=True) as store:
        assert store.query("SELECT count(*) FROM runs")[1] == [(1,)]


RECORDER = textwrap.dedent(
    """
    import sys
    from engine import CostTracker, iter_step_costs
    from playground.app.inputs import load_inputs
    from playground.app.store import RunCapture, open_store

    inputs = load_inputs(sys.argv[2])
    messages, policy = inputs.session.messages, inputs.policy
    with open_store(sys.argv[1]) as store:
        for n in range(10_000):
            tracker = CostTracker(messages, policy=policy)
            capture = RunCapture(inputs, policy, {"n": n})  # another setting: another run
            for step, cost in iter_step_costs(messages, policy, tracker=tracker, **inputs.build_options):
                capture.add(step, cost)
            store.record(capture.finish(tracker.totals().to_json()))
            print(n, flush=True)
    """
)


@pytest.mark.parametrize("how", [signal.SIGKILL, signal.SIGINT])
def test_a_recording_killed_midway_leaves_every_run_before_it_whole(tmp_path, how):
    path = tmp_path / "runs.duckdb"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    command = [sys.executable, "-c", RECORDER, str(path), str(SHORT)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    try:
        for _ in range(3):
            process.stdout.readline()
        time.sleep(0.05)  # somewhere in the next run
        process.send_signal(how)
        process.wait(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    with open_store(path, read_only=True) as store:
        (runs,) = store.query("SELECT count(*) FROM runs")[1][0]
        assert runs >= 3
        incomplete = store.query(
            "SELECT r.run_id FROM runs r LEFT JOIN steps s USING (run_id) GROUP BY r.run_id, r.steps "
            "HAVING count(s.step) <> r.steps"
        )[1]
        assert incomplete == []
        orphans = store.query("SELECT count(*) FROM steps WHERE run_id NOT IN (SELECT run_id FROM runs)")[1]
        assert orphans == [(0,)]


def test_sql_that_fails_is_one_line_and_exit_1(tmp_path, capsys):
    path = tmp_path / "runs.duckdb"
    record_sample(path, capsys)
    assert main(["runs", "query", "SELECT nope FROM steps", "--store", str(path)]) == 1
    assert one_error_line(capsys).startswith('error: query failed: Binder Error: Referenced column "nope"')
    assert main(["runs", "query", "DELETE FROM runs", "--store", str(path)]) == 1
    assert "read-only" in one_error_line(capsys)
    assert main(["runs", "query", "SELECT count(*) AS n FROM runs", "--store", str(path), "--json"]) == 0
    assert capsys.readouterr().out == '{"n": 1}\n'


def test_no_store_and_no_run_are_exit_2(tmp_path, capsys):
    missing = tmp_path / "none.duckdb"
    assert main(["runs", "--store", str(missing)]) == 2
    said = one_error_line(capsys)
    assert said == f"error: {missing}: no store here yet (record a run: replay SESSION --record)"
    assert not missing.exists()
    path = tmp_path / "runs.duckdb"
    record_sample(path, capsys)
    assert main(["runs", "show", "ffff", "--store", str(path)]) == 2
    assert one_error_line(capsys) == f"error: {path}: no run ffff"


def test_a_store_path_that_is_a_folder_is_refused(tmp_path, capsys):
    assert main(["replay", str(SHORT), "--record", "--store", str(tmp_path)]) == 1
    assert capsys.readouterr().err.strip().splitlines()[-1] == (
        f"error: not recorded: {tmp_path}: not a regular file; a store is one DuckDB file"
    )
    assert duckdb.__version__  # the real package, never a stand-in


FULL_DISK = textwrap.dedent(
    """
    import resource, signal, sys
    from playground.cli.main import main
    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails (EFBIG), as on a full disk
    resource.setrlimit(resource.RLIMIT_FSIZE, (50_000, 50_000))
    sys.exit(main(["replay", sys.argv[2], "--record", "--store", sys.argv[1]]))
    """
)


def test_a_disk_that_fills_while_recording_keeps_what_was_there(tmp_path, capsys):
    path = tmp_path / "runs.duckdb"
    record_sample(path, capsys)
    tool_loop = ROOT / "sample_sessions" / "tool_loop_runs.jsonl"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-c", FULL_DISK, str(path), str(tool_loop)], capture_output=True,
                          text=True, env=env, timeout=300)  # fmt: skip
    assert done.returncode == 1
    said = done.stderr.strip().splitlines()[-1]
    assert said.startswith(f"error: not recorded: {path}: recording failed, nothing of this run was kept: ")
    assert "File too large" in said and "Traceback" not in done.stderr
    with open_store(path, read_only=True) as store:
        assert store.query("SELECT count(*), sum(steps) FROM runs")[1] == [(1, 4)]
        assert store.query("SELECT count(*) FROM steps")[1] == [(4,)]
    assert main(["replay", str(tool_loop), "--record", "--store", str(path)]) == 0  # room again: recorded
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("recorded: run ")


def _threads(pid: int) -> int:
    status = Path(f"/proc/{pid}/status").read_text()
    return int(next(line.split()[1] for line in status.splitlines() if line.startswith("Threads:")))


def test_ctrl_c_during_a_query_is_interrupted_not_an_internal_error(tmp_path, capsys):
    store = tmp_path / "runs.duckdb"
    record_sample(store, capsys)
    endless = "select count(*) from range(100000000000)"
    command = [sys.executable, "-m", "playground.cli", "runs", "query", endless, "--store", str(store)]
    proc = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 30
    while _threads(proc.pid) < 2 and time.monotonic() < deadline:  # DuckDB's workers: the store is open
        time.sleep(0.05)
    time.sleep(1.0)  # the query under way
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, err.strip()) == (130, "interrupted"), err


def test_query_json_keeps_columns_sharing_a_name_and_writes_no_bare_nan(tmp_path, capsys):
    store = tmp_path / "runs.duckdb"
    record_sample(store, capsys)
    joined = "SELECT r.tokens_sent, s.tokens_sent FROM runs r JOIN steps s ON r.run_id = s.run_id LIMIT 1"
    assert main(["runs", "query", joined, "--json", "--store", str(store)]) == 0
    captured = capsys.readouterr()
    assert list(json.loads(captured.out)) == ["tokens_sent", "tokens_sent_2"]
    assert captured.err == "note: columns sharing a name are keyed tokens_sent_2 in --json\n"
    endless = "SELECT 'inf'::DOUBLE AS x, 'nan'::DOUBLE AS y"
    assert main(["runs", "query", endless, "--json", "--store", str(store)]) == 0
    assert capsys.readouterr().out == '{"x": null, "y": null}\n'
