"""The audit store on real DuckDB files: what a recorded run holds, one run per content hash, reading it
back to replay again, and the schema's migrations."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from engine import CostTracker, iter_step_costs
from playground.app.inputs import load_inputs
from playground.app.store import SCHEMA_VERSION, RunCapture, StoreError, open_store
from playground.app.store.db import migrate
from playground.cli.main import main

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
SUMMARIZING = SAMPLES / "summarization_trigger.jsonl"


def capture(session: Path, settings: dict | None = None, layer: str | None = None):
    """A run captured the way `replay` does it (its steps, costs and totals)."""
    inputs = load_inputs(session, layer)
    options = {**inputs.build_options, "max_steps": inputs.max_steps}
    tracker = CostTracker(inputs.session.messages, policy=inputs.policy, shape="openai")
    run = RunCapture(inputs, inputs.policy, settings or {"wire": "openai", "maxSteps": inputs.max_steps})
    for step, cost in iter_step_costs(inputs.session.messages, inputs.policy, tracker=tracker, **options):
        run.add(step, cost)
    return run.finish(tracker.totals().to_json())




def replay_json(capsys, *argv: str) -> tuple[list[dict], dict]:
    assert main(["replay", *argv, "--json"]) == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    return lines[:-1], lines[-1]["totals"]


def test_replay_record_keeps_each_step_as_replay_json_prints_it(tmp_path, capsys):
    store = tmp_path / "runs.duckdb"
    before = SUMMARIZING.read_bytes()
    steps, totals = replay_json(capsys, str(SUMMARIZING), "--record", "--store", str(store))
    with open_store(store, read_only=True) as opened:
        (listed,) = opened.runs()
        stored = opened.get(listed["run_id"][:8])
    assert SUMMARIZING.read_bytes() == before  # the session is never written
    assert stored.run["steps"] == totals["steps"] == len(steps) == len(stored.steps)
    assert stored.run["tokens_sent"] == totals["tokensSent"]
    assert stored.run["cache_breaks"] == totals["cacheBreaks"]
    assert stored.run["summaries_made"] == totals["summariesMade"] > 0
    assert stored.totals == totals
    for line, row in zip(steps, stored.steps, strict=True):
        assert (row["step"], row["tokens_sent"], row["cached_tokens"], row["new_tokens"]) == (
            line["step"], line["tokensSent"], line["cachedTokens"], line["newTokens"]
        )  # fmt: skip
        assert (row["cache_break_at"], row["cache_break_by"]) == (line["cacheBreakAt"], line["cacheBreakBy"])
        assert (row["summary_made"], row["reminders"]) == (line["summaryMade"], line["reminders"])
        assert row["summaries_carried"] == line["summariesCarried"]
        assert row["cost_usd"] == pytest.approx(line["costUsd"], abs=5e-7)  # JSON rounds to 6 places
    made = [s["step"] for s in stored.steps if s["summary_made"]]
    assert made and {e["step"] for e in stored.events if e["kind"] == "summarization"} >= set(made)
    # the last step's fate of every message, and the user requests where they first appear
    final = [d for d in stored.decisions if d["final"]]
    assert {d["message_id"] for d in final} >= {m.id for m in stored.session().messages}
    firsts = {d["message_id"] for d in stored.decisions if not d["final"] and d["type"] == "user_input"}
    users = {m.id for m in stored.session().messages if m.type == "user_input"}
    assert firsts == users


def test_a_run_is_recorded_once_and_another_policy_is_another_run(tmp_path):
    path = tmp_path / "runs.duckdb"
    first = capture(SUMMARIZING)
    with open_store(path) as store:
        assert store.record(first) == first.run_id
        assert store.record(capture(SUMMARIZING)) == first.run_id  # same content: same run, no new row
        counts = {t: store.query(f"SELECT count(*) FROM {t}")[1][0][0] for t in ("runs", "steps", "sessions")}
        assert counts == {"runs": 1, "steps": len(first.steps), "sessions": 1}
        policy = tmp_path / "p.yaml"
        policy.write_text("budget: {maxTokens: 9000}\n", encoding="utf-8")
        other = capture(SUMMARIZING, layer=str(policy))
        assert store.record(other) != first.run_id
        assert store.query("SELECT count(*) FROM runs")[1] == [(2,)]
        assert store.query("SELECT count(*) FROM sessions")[1] == [(1,)]  # the session is kept once
        assert len(store.runs(policy_hash=other.run["policy_hash"][:10])) == 1
        assert len(store.runs(session="summarization_trigger")) == 2


def test_a_stored_run_replays_again_to_the_same_figures(tmp_path):
    run = capture(SUMMARIZING)
    with open_store(tmp_path / "runs.duckdb") as store:
        stored = store.get(store.record(run))
    session, policy = stored.session(), stored.policy()
    assert [m.id for m in session.messages] == [m.id for m in load_inputs(SUMMARIZING).session.messages]
    tracker = CostTracker(session.messages, policy=policy, shape="openai")
    steps = iter_step_costs(session.messages, policy, tracker=tracker, max_steps=stored.settings["maxSteps"])
    assert [cost.tokens_sent for _, cost in steps] == [s["tokens_sent"] for s in stored.steps]


def test_an_older_store_is_migrated_and_keeps_its_rows(tmp_path):
    path = tmp_path / "old.duckdb"
    connection = duckdb.connect(str(path))
    migrate(connection, 0, upto=1)
    connection.execute("INSERT INTO runs (run_id, source, steps) VALUES ('abcd1234', 'old.jsonl', 3)")
    connection.close()
    with open_store(path) as store:
        assert store.query("SELECT value FROM meta")[1] == [(str(SCHEMA_VERSION),)]
        assert store.query("SELECT run_id, steps, sweep FROM runs")[1] == [("abcd1234", 3, None)]


def test_a_newer_store_is_refused_in_one_line(tmp_path):
    path = tmp_path / "new.duckdb"
    open_store(path).close()
    connection = duckdb.connect(str(path))
    connection.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    connection.close()
    with pytest.raises(StoreError) as raised:
        open_store(path)
    assert str(raised.value) == (
        f"{path}: written by a newer linn-playground (schema 99; this one reads up to {SCHEMA_VERSION}); "
        "upgrade, or choose another --store"
    )


def test_another_duckdb_database_is_not_taken_for_a_store(tmp_path):
    path = tmp_path / "other.duckdb"
    connection = duckdb.connect(str(path))
    connection.execute("CREATE TABLE t (x INT)")
    connection.close()
    with pytest.raises(StoreError, match="not a linn-playground store"):
        open_store(path)
    assert duckdb.connect(str(path)).execute("SELECT count(*) FROM t").fetchall() == [(0,)]


def test_an_exported_run_replays_to_the_same_run(tmp_path, capsys):
    store, out = tmp_path / "runs.duckdb", tmp_path / "out"
    session = SAMPLES / "fences_showcase.jsonl"
    assert main(["replay", str(session), "--record", "--store", str(store)]) == 0
    run_id = capsys.readouterr().err.strip().splitlines()[-1].split()[2]
    assert main(["runs", "export", run_id, str(out), "--store", str(store)]) == 0
    stem = out / f"run-{run_id}"
    files = [Path(f"{stem}.jsonl"), Path(f"{stem}.policy.yaml"), Path(f"{stem}.fences.yaml")]
    assert capsys.readouterr().out.splitlines()[1] == (
        f"open it: linn-playground {files[0]} --policy {files[1]} --fences {files[2]} --defaults seed"
    )
    again = ["replay", str(files[0]), "--policy", str(files[1]), "--fences", str(files[2])]
    assert main([*again, "--record", "--store", str(store)]) == 0
    assert capsys.readouterr().err.strip().splitlines()[-1] == f"already recorded: run {run_id} in {store}"
    before = [f.read_bytes() for f in files]
    assert main(["runs", "export", run_id, str(out), "--store", str(store)]) == 2
    assert capsys.readouterr().err == f"error: {files[0]}: already exists; pass --force to replace it\n"
    assert [f.read_bytes() for f in files] == before


def test_record_with_html_is_refused(tmp_path, capsys):
    with pytest.raises(SystemExit) as raised:
        main(["replay", str(SUMMARIZING), "--record", "--html", str(tmp_path / "r.html")])
    assert raised.value.code == 2
    assert "--record keeps a text or --json replay; leave out --html" in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()


def test_runs_lists_filters_and_shows(tmp_path, capsys):
    store = str(tmp_path / "runs.duckdb")
    for session in ("short_chat.jsonl", "summarization_trigger.jsonl"):
        assert main(["replay", str(SAMPLES / session), "--record", "--store", store]) == 0
    capsys.readouterr()

    def listed(*filters: str) -> list[dict]:
        assert main(["runs", "--store", store, "--json", *filters]) == 0
        return [json.loads(line) for line in capsys.readouterr().out.splitlines()]

    both = listed()
    assert [Path(run["source"]).name for run in both] == ["summarization_trigger.jsonl", "short_chat.jsonl"]
    assert [run["steps"] for run in both] == [13, 4]
    assert [Path(r["source"]).name for r in listed("--session", "short_chat")] == ["short_chat.jsonl"]
    assert len(listed("--policy-hash", both[0]["policy_hash"][:8])) == 1
    assert len(listed("--since", "1d")) == 2 and listed("--since", "2999-01-01") == []
    assert main(["runs", "--store", store, "--since", "last week"]) == 2
    assert capsys.readouterr().err == (
        "error: --since 'last week': expected 7d, 12h, 30m or an ISO date such as 2026-12-01\n"
    )
    assert main(["runs", "show", both[0]["run_id"][:6], "--store", store]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"run {both[0]['run_id']}"
    header = next(i for i, line in enumerate(lines) if line.startswith("step "))
    assert len(lines) - header - 2 == 13  # the step rows, then the decisions line
    assert lines[-1].startswith("decisions stored: ")


def test_the_default_store_is_the_env_var_else_the_xdg_data_folder(tmp_path, monkeypatch, capsys):
    from playground.app.store import default_store_path

    monkeypatch.delenv("LINN_PLAYGROUND_STORE", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_store_path() == tmp_path / "data" / "linn-playground" / "runs.duckdb"
    monkeypatch.setenv("LINN_PLAYGROUND_STORE", str(tmp_path / "mine.duckdb"))
    assert main(["replay", str(SAMPLES / "short_chat.jsonl"), "--record"]) == 0
    assert capsys.readouterr().err.strip().endswith(f" in {tmp_path / 'mine.duckdb'}")
    assert main(["runs", "query", "SELECT count(*) AS n FROM runs", "--json"]) == 0
    assert capsys.readouterr().out == '{"n": 1}\n'
    assert not (tmp_path / "data").exists()


def test_a_stored_runs_inputs_replay_to_the_same_run(tmp_path, capsys):
    from playground.app.sweep import capture_run

    store = tmp_path / "runs.duckdb"
    session = SAMPLES / "fences_showcase.jsonl"
    assert main(["replay", str(session), "--record", "--store", str(store)]) == 0
    capsys.readouterr()
    with open_store(store, read_only=True) as opened:
        stored = opened.get(opened.runs()[0]["run_id"])
    inputs = stored.inputs()
    assert inputs.session.path == session.resolve() and inputs.fences is not None
    assert capture_run(inputs, inputs.policy).run_id == stored.run_id


def test_json_with_html_is_refused_rather_than_one_of_them_dropped(tmp_path, capsys):
    for command in ("build", "replay"):
        with pytest.raises(SystemExit) as raised:
            main([command, str(SUMMARIZING), "--json", "--html", str(tmp_path / "r.html")])
        assert raised.value.code == 2
        said = "--json prints to the terminal and --html writes a page: give one of them"
        assert said in capsys.readouterr().err
    assert not (tmp_path / "r.html").exists()
