"""The command line on recorded sessions: `replay` beside the record, `--as-recorded`, `--calibration`,
`--tools`, `--system-prompt`, and `calibrate`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.session import save_session
from playground.cli.main import main
from tests.engine.test_truth import session

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "real-sessions"
MORE = Path(__file__).resolve().parents[1] / "data" / "real-sessions"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason=f"real sessions not found at {SHARED}")


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    path = tmp_path / "recorded.jsonl"
    save_session(session(), path, header={"kind": "linn-session", "version": 1, "title": "recorded"})
    return path


def replay_lines(capsys, *argv: str) -> tuple[list[dict], dict, str]:
    code = main(["replay", *argv, "--json"])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    lines = [json.loads(line) for line in captured.out.splitlines()]
    return lines[:-1], lines[-1]["totals"], captured.err


def test_replay_puts_the_record_beside_each_step(recorded, capsys) -> None:
    steps, totals, err = replay_lines(capsys, str(recorded), "--as-recorded")
    assert [s["recorded"]["promptTokens"] for s in steps] == [1010, 1030, 1060, 2000]
    assert [s["recorded"]["model"] for s in steps] == ["m", "m", "m2", "m2"]
    assert [s["asRecorded"]["offsetSource"] for s in steps] == ["first call"] * 4
    errors = [s["asRecorded"]["errorPct"] for s in steps]
    assert errors[0] is None and errors[2] is None and None not in (errors[1], errors[3])  # first calls learn
    # genai-prices knows neither m nor m2: the steps take the session's row, the record stays unpriced
    assert {s["priceModel"] for s in steps} == {"claude-sonnet-4-5"}
    assert totals["recordedCalls"] == 4 and totals["unpricedCalls"] == {"m": 2, "m2": 2}
    assert totals["asRecordedError"]["calls"] == 2
    assert "each recorded call by the model it names" in err


def test_a_calibration_file_applies_and_a_bad_one_is_refused(recorded, tmp_path, capsys) -> None:
    calibration = tmp_path / "cal.yaml"
    calibration.write_text("kind: linn-calibration\nmodels:\n  m: {coefficient: 2, offset: 100}\n")
    steps, _, err = replay_lines(capsys, str(recorded), "--as-recorded", "--calibration", str(calibration))
    assert [s["asRecorded"]["coefficient"] for s in steps] == [2.0, 2.0, 1.0, 1.0]  # m2 has no fit
    assert f"warning: {calibration}: fitted for m; not for m2: those calls are not calibrated" in err
    local = [s["asRecorded"]["localTokens"] for s in steps]
    assert steps[1]["asRecorded"]["promptTokens"] == 2 * local[1] + (1010 - 2 * local[0])
    calibration.write_text("kind: linn-calibration\nmodels:\n  m: {coefficient: zero}\n")
    assert main(["replay", str(recorded), "--calibration", str(calibration)]) == 2
    assert (
        f"{calibration}:3: models.m.coefficient: a coefficient is a number in (0, 10]"
        in capsys.readouterr().err
    )


def test_tools_and_a_system_prompt_the_transcript_lacks(recorded, tmp_path, capsys) -> None:
    tools = tmp_path / "tools.json"
    tools.write_text(json.dumps([{"name": "ls", "description": "list files", "input_schema": {}}]))
    prompt = tmp_path / "system.txt"
    prompt.write_text("You are a careful agent.")
    steps, _, _ = replay_lines(capsys, str(recorded), "--as-recorded", "--tools", str(tools),
                               "--system-prompt", str(prompt))  # fmt: skip
    offset = steps[0]["asRecorded"]["offset"]
    assert steps[0]["asRecorded"]["offsetSource"] == "given" and 10 < offset < 40
    assert steps[0]["asRecorded"]["localTokens"] > steps[0]["tokensSent"] - 1  # the prompt is a message now
    assert main(["build", str(recorded), "--system-prompt", str(tmp_path / "missing.txt")]) == 2
    tools.write_text("{}")
    assert main(["replay", str(recorded), "--tools", str(tools)]) == 2
    assert "a tools file is a JSON list of tool definitions" in capsys.readouterr().err


def test_calibrate_fits_writes_and_reports_on_other_sessions(recorded, tmp_path, capsys) -> None:
    other = tmp_path / "other.jsonl"
    messages = [m.with_(id=m.id + "-b") for m in session()]
    save_session(messages, other, header={"kind": "linn-session", "version": 1})
    out = tmp_path / "cal.yaml"
    assert main(["calibrate", str(recorded), "--test", str(other), "-o", str(out), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["method"] == "held-out sessions"
    assert [s["path"] for s in report["sessions"]] == [str(other)]
    assert 990 < report["models"]["m"]["offset"] < 1010
    assert out.read_text().startswith("kind: linn-calibration")
    assert main(["calibrate", str(recorded), "-o", str(recorded)]) == 2  # never over a session
    assert capsys.readouterr().err.endswith(f"refusing to write over {recorded}, which this command reads\n")
    assert main(["calibrate", str(recorded), "-o", str(out)]) == 2  # nor over another file without --force
    assert capsys.readouterr().err == f"error: {out}: already exists; pass --force to replace it\n"
    assert main(["calibrate", str(recorded), "-o", str(out), "--force"]) == 0


@needs_shared
def test_a_real_session_says_what_was_billed() -> None:
    from engine.prices import BUILTIN_PRICES
    from engine.recorded import recorded_cost
    from playground.app.inputs import load_inputs
    from playground.app.recorded import record_of

    inputs = load_inputs(SHARED / "claude-code" / "long_session.jsonl")
    cost = recorded_cost(record_of(inputs), BUILTIN_PRICES)
    assert cost.calls == 221  # 217 of the conversation, 4 of its two sub-agent files
    assert cost.cost_usd == pytest.approx(6.172572, abs=1e-6)  # Opus 4.6, Haiku 4.5, Sonnet 4.5 list prices
    assert cost.other_calls_usd == pytest.approx(0.856356, abs=1e-6)


def test_a_sweep_row_of_a_recorded_session_says_what_it_billed(tmp_path, capsys) -> None:
    from playground.app.sweep import plan_sweep, run_job
    from tests.tui.test_tui_recorded import priced_session

    path = priced_session(tmp_path)
    jobs = plan_sweep([path], ["budget.maxTokens=8000,200000"])
    rows = [run_job(job) for job in jobs]
    assert all(row["error"] is None for row in rows)
    # Opus 4.6 (5 / 0.5 / 6.25 / 10 / 25 $ per M): a1 50 + 6250 + 500, a2 505 + 125 + 750; Haiku 4.5
    # (1 / 0.1 / 1.25 / 2 / 5): a3 1060 written for an hour 2120 + 200, a4 2500 + 250
    assert rows[0]["recordedCostUsd"] == rows[1]["recordedCostUsd"] == 0.01325
    assert rows[0]["promptTokens"] is not None and rows[0]["rebuildMedianErrorPct"] is not None
    out = tmp_path / "rows.csv"
    argv = ["sweep", str(path), "--vary", "budget.maxTokens=8000", "--jobs", "1", "--out", str(out)]
    assert main(argv) == 0
    assert "recordedCostUsd" in out.read_text().splitlines()[0]
