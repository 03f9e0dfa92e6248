"""`pg.record()`: the notebook keeps a replay under its current policy in the audit store, as `replay
--record` does (the same run for the same session, policy and settings)."""

from __future__ import annotations

from engine.policy import set_value
from playground.app.inputs import SAMPLES_DIR
from playground.app.store import open_store
from playground.cli.main import main
from playground.notebook import Playground, diff

SUMMARIZING = SAMPLES_DIR / "summarization_trigger.jsonl"


def test_record_keeps_the_current_policys_run(tmp_path, capsys):
    store = tmp_path / "runs.duckdb"
    assert main(["replay", str(SUMMARIZING), "--record", "--store", str(store)]) == 0
    recorded = capsys.readouterr().err.strip().splitlines()[-1].split()[2]
    pg = Playground(SUMMARIZING, debounce=0)
    assert pg.record(store).startswith(recorded)  # unedited: the replay's own run
    pg.policy = set_value(pg.policy, ("summarization", "triggerThreshold"), 0.9)
    edited = pg.record(store)
    with open_store(store, read_only=True) as opened:
        assert [run["run_id"][:12] for run in opened.runs()] == [edited[:12], recorded]
        stored = opened.get(edited)
    assert stored.policy().summarization.trigger_threshold == 0.9
    assert stored.run["summaries_made"] == 0 and stored.run["steps"] == 13
    pg.close()


def test_a_stored_run_opens_and_diffs_against_today_s_policy(tmp_path, capsys):
    """`Playground("run:ID", store=...)` is the run as recorded (recording it again is the same run);
    `diff("run:ID", policy_b=...)` puts it beside today's policy, as the files' diff does."""
    store, today = tmp_path / "runs.duckdb", tmp_path / "today.yaml"
    today.write_text("summarization:\n  triggerThreshold: 0.9\n", encoding="utf-8")
    assert main(["replay", str(SUMMARIZING), "--record", "--store", str(store)]) == 0
    recorded = capsys.readouterr().err.strip().splitlines()[-1].split()[2]
    pg = Playground(f"run:{recorded}", store=store, debounce=0)
    assert pg.record(store).startswith(recorded)
    pg.close()
    stored = diff(f"run:{recorded}", policy_b=today, store=store)
    files = diff(SUMMARIZING, policy_b=today)
    assert [s.to_json() for s in stored.diff.steps] == [s.to_json() for s in files.diff.steps]
    assert stored.diff.changed_steps
