"""`linn-playground diff`: two sessions, one session under two policies; text, --json, --html; bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.session import save_session
from playground.cli.main import main
from tests.app.test_rundiff import run_a, run_b

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "tool_loop_runs.jsonl"
HEADER = {"kind": "linn-session", "version": 1, "title": "weather",
          "contextPolicy": {"budget": {"maxTokens": 8000, "reservedForResponse": 100}}}  # fmt: skip


def sessions(tmp_path: Path) -> tuple[Path, Path]:
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    save_session(run_a(), a, header=HEADER)
    save_session(run_b(), b, header=HEADER)
    return a, b


def test_two_sessions_text(tmp_path, capsys) -> None:
    a, b = sessions(tmp_path)
    assert main(["diff", str(a), str(b)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"A: {a} (header policy)" and out[1] == f"B: {b} (header policy)"
    assert out[2].startswith("aligned by user turns and tool-call ids: 5 steps, 3 differ")
    assert out[3].startswith("step 3 ↔ 3  tokens") and out[5].startswith("  ~ [4] ans1 (assistant)")
    assert out[5].endswith("It is sunny {+and warm+}")


def test_one_session_two_policies_json(tmp_path, capsys) -> None:
    drop = tmp_path / "drop.yaml"
    drop.write_text("toolHistory:\n  retentionMode: drop\n", encoding="utf-8")
    assert main(["diff", str(SAMPLE), "--policy-b", str(drop), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert (payload["alignment"], payload["steps"], payload["a"]) == ("step", 71, f"{SAMPLE} (header policy)")
    step17 = payload["diff"][16]
    assert [m["idA"] for m in step17["removed"]] == ["m003", "m004", "m005", "m006", "m007", "m008", "m009"]
    assert step17["cacheBreakChange"] == "added"
    assert step17["b"]["cacheBreak"]["mechanism"] == "tool_history" and step17["a"]["cacheBreak"] is None
    assert step17["prefixDiffersAt"]["message"] == 2
    assert payload["totals"]["a"]["cacheBreaks"] - payload["totals"]["b"]["cacheBreaks"] == 40


def test_html_written_atomically_never_over_a_session(tmp_path, capsys) -> None:
    a, b = sessions(tmp_path)
    out = tmp_path / "diff.html"
    assert main(["diff", str(a), str(b), "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<script" not in page and "http" not in page
    assert "It is sunny<ins> and warm</ins>" in page and "step — ↔ 5" in page
    before = a.read_bytes()
    assert main(["diff", str(a), str(b), "--html", str(a)]) == 2
    assert a.read_bytes() == before
    assert capsys.readouterr().err.strip().startswith("error:")


def test_bad_input_one_line_exit_2(tmp_path, capsys) -> None:
    a, _ = sessions(tmp_path)
    assert main(["diff", str(a)]) == 2
    assert capsys.readouterr().err == (
        "error: diff: give a second session B, or --policy-a and --policy-b that differ\n"
    )
    assert main(["diff", str(a), str(tmp_path / "missing.jsonl")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error:") and "missing.jsonl" in err[0]
    bad = tmp_path / "bad.yaml"
    bad.write_text("budget:\n  maxTokens: -5\n", encoding="utf-8")
    assert main(["diff", str(a), "--policy-b", str(bad)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.yaml" in err[0] and "maxTokens" in err[0]


def test_html_escapes_session_text(tmp_path, capsys) -> None:
    a, _ = sessions(tmp_path)
    hostile = [m.with_(content="<script>alert(1)</script>") if m.id == "ans1" else m for m in run_a()]
    b = tmp_path / "hostile.jsonl"
    save_session(hostile, b, header=HEADER)
    out = tmp_path / "page.html"
    assert main(["diff", str(a), str(b), "--html", str(out)]) == 0
    page = out.read_text(encoding="utf-8")
    assert "<script" not in page and "<ins>&lt;script&gt;alert(1)&lt;/script&gt;</ins>" in page


def test_a_skipped_line_is_said_once_and_exits_1(tmp_path, capsys) -> None:
    a, _ = sessions(tmp_path)
    damaged = tmp_path / "damaged.jsonl"
    damaged.write_text(a.read_text(encoding="utf-8") + "not json\n", encoding="utf-8")
    assert main(["diff", str(damaged), str(damaged), "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["changedSteps"] == 0
    (line,) = captured.err.strip().splitlines()
    assert line.startswith(f"{damaged}:{len(run_a()) + 2}: json: not valid JSON")  # after the header


def test_run_b_replayed_beside_a_prints_what_one_process_prints(tmp_path, capsys) -> None:
    drop = tmp_path / "drop.yaml"
    drop.write_text("toolHistory:\n  retentionMode: drop\n", encoding="utf-8")
    printed = []
    for jobs in ("1", "2"):
        assert main(["diff", str(SAMPLE), "--policy-b", str(drop), "--jobs", jobs, "--all"]) == 0
        printed.append(capsys.readouterr().out)
    assert printed[0] == printed[1] and printed[0].count("\nstep ") == 71
    with pytest.raises(SystemExit) as ended:
        main(["diff", str(SAMPLE), "--policy-b", str(drop), "--jobs", "3"])
    assert ended.value.code == 2
    assert "argument --jobs: invalid choice: 3 (choose from 1, 2)" in capsys.readouterr().err
