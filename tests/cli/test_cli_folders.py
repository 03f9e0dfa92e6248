"""Transcript folders through the command line and the shared input loader (TUI, notebook, build)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from playground.app.inputs import find_sessions, load_inputs
from playground.cli.main import main

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions"
CLINE = DATA / "cline" / "1767225600000"
COPILOT = DATA / "copilot-cli" / "0cb916db-26aa-40f2-86b5-1ba81b225fd2"


def test_import_reads_a_task_folder_by_its_root_and_writes_a_session(tmp_path, capsys):
    target = tmp_path / "task.jsonl"
    assert main(["import", str(CLINE), "-o", str(target)]) == 0
    out = capsys.readouterr().out
    assert "detected format: cline; 13 messages" in out
    assert "4 tool calls, 4 tool results" in out
    assert main(["validate", str(target)]) in (0, 1)
    assert "orphans: 0" in capsys.readouterr().out


def test_build_and_the_loader_open_a_session_folder():
    assert main(["build", str(COPILOT)]) == 0
    inputs = load_inputs(COPILOT)
    assert len(inputs.session.messages) == 11
    assert inputs.session.header.model_id == "claude-sonnet-4.5"


def test_a_folder_missing_its_part_is_one_error_line(tmp_path, capsys):
    root = tmp_path / "conv"
    root.mkdir()
    (root / "base_state.json").write_text("{}", encoding="utf-8")
    assert main(["import", str(root)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: {root / 'events'}: missing part folder; no event can be read"]


def test_a_missing_optional_part_is_a_problem_and_exit_1(tmp_path, capsys):
    root = Path(shutil.copytree(CLINE, tmp_path / "task"))
    (root / "ui_messages.json").unlink()
    assert main(["import", str(root)]) == 1
    assert (
        f"problem: {root / 'ui_messages.json'}: missing part file; usage not read" in capsys.readouterr().out
    )


def test_find_sessions_takes_a_transcript_folder_whole():
    sessions, skipped = find_sessions([CLINE, COPILOT])
    assert sessions == [CLINE, COPILOT] and skipped == []


def test_find_sessions_in_a_storage_folder_takes_each_task_whole(tmp_path):
    tasks = tmp_path / "globalStorage" / "tasks"
    shutil.copytree(CLINE, tasks / "1767225600000")
    shutil.copytree(COPILOT, tmp_path / "session-state" / COPILOT.name)
    (tmp_path / "notes.txt").write_text("not a transcript", encoding="utf-8")
    sessions, skipped = find_sessions([tmp_path])
    assert sessions == [tasks / "1767225600000", tmp_path / "session-state" / COPILOT.name]
    assert skipped == [tmp_path / "notes.txt"]


def test_from_names_the_folder_format_and_refuses_one_that_reads_no_folders(capsys):
    assert main(["import", str(CLINE), "--from", "cline"]) == 0
    assert "detected format: cline; 13 messages" in capsys.readouterr().out
    assert main(["import", str(CLINE), "--from", "claude-code"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"error: {CLINE}: format 'claude-code' does not read folders (folders: ")


def test_a_file_whose_values_break_a_formats_detector_is_skipped_and_the_rest_runs(tmp_path, capsys):
    # `{"resourceSpans": 12345}` made the OTel detector raise: every command on the folder ended in an
    # internal error before any session ran
    folder = tmp_path / "runs"
    folder.mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "sample_sessions" / "short_chat.jsonl", folder)
    (folder / "spans.json").write_text('{"resourceSpans": 12345}', encoding="utf-8")
    out = tmp_path / "rows.csv"
    code = main(["sweep", str(folder), "--vary", "budget.maxTokens=20000", "--out", str(out), "--jobs", "1"])
    captured = capsys.readouterr()
    assert "internal error" not in captured.out + captured.err
    assert code == 0 and "short_chat.jsonl" in out.read_text(encoding="utf-8")


def test_a_task_folder_with_a_value_of_the_wrong_type_is_one_line(tmp_path, capsys):
    task = tmp_path / "task"
    shutil.copytree(CLINE, task)
    history = task / "api_conversation_history.json"
    messages = json.loads(history.read_text(encoding="utf-8"))
    messages[1]["content"] = [{"type": "text", "text": ["x"]}]
    history.write_text(json.dumps(messages), encoding="utf-8")
    assert main(["import", str(task)]) == 1  # read, with a problem: the message is left out by name
    out = capsys.readouterr().out
    problem = f"{history}: [1].content[0].text: must be text (a string), got an array; left out"
    assert f"  problem: {problem}\n" in out
    assert "detected format: cline; 10 messages" in out


def test_a_sweeps_summary_never_replaces_the_session_it_sweeps(tmp_path, capsys):
    session = tmp_path / "r.summary.jsonl"  # the summary of `--out r.jsonl` would be written here
    shutil.copy(Path(__file__).resolve().parents[2] / "sample_sessions" / "short_chat.jsonl", session)
    before = session.read_bytes()
    out = tmp_path / "r.jsonl"
    assert main(["sweep", str(session), "--vary", "budget.maxTokens=20000", "--out", str(out)]) == 2
    assert capsys.readouterr().err.strip() == (
        f"error: {session}: refusing to write over {session}, which this command reads"
    )
    assert session.read_bytes() == before and not out.exists()


def test_a_sweeps_summary_replaces_only_an_earlier_summary(tmp_path, capsys):
    session = Path(__file__).resolve().parents[2] / "sample_sessions" / "short_chat.jsonl"
    out, summary = tmp_path / "r.csv", tmp_path / "r.summary.csv"
    summary.write_text("my notes\n", encoding="utf-8")
    assert main(["sweep", str(session), "--vary", "budget.maxTokens=20000", "--out", str(out)]) == 2
    said = "holds something else than a sweep's summary; move it or choose another --out"
    assert capsys.readouterr().err.strip() == f"error: {summary} (the sweep's summary): {said}"
    assert summary.read_text(encoding="utf-8") == "my notes\n" and not out.exists()
    summary.unlink()
    for tokens in ("20000", "30000"):  # a second sweep into the same --out rewrites its own summary
        assert main(["sweep", str(session), "--vary", f"budget.maxTokens={tokens}", "--out", str(out)]) == 0
    assert summary.read_text(encoding="utf-8").startswith("policy,sessions,errors")


def test_no_page_over_the_lesson_beside_the_session_and_no_fit_into_a_missing_folder(tmp_path, capsys):
    samples = Path(__file__).resolve().parents[2] / "sample_sessions"
    session, lesson = tmp_path / "chat.jsonl", tmp_path / "chat.lesson.yaml"
    shutil.copy(samples / "short_chat.jsonl", session)
    shutil.copy(samples / "short_chat.lesson.yaml", lesson)
    before = lesson.read_bytes()
    assert main(["build", str(session), "--html", str(lesson)]) == 2
    said = f"error: {lesson}: refusing to write over {lesson}, which this command reads"
    assert capsys.readouterr().err.strip() == said
    assert lesson.read_bytes() == before
    missing = tmp_path / "no" / "cal.yaml"
    assert main(["calibrate", str(session), "-o", str(missing)]) == 2  # said before the fit, not after it
    assert capsys.readouterr().err.strip() == f"error: {missing}: its folder {missing.parent} does not exist"


def test_no_output_over_a_file_of_a_transcript_folder_or_a_session_in_a_folder(tmp_path, capsys):
    task = tmp_path / "session"
    shutil.copytree(COPILOT, task)
    events = task / "events.jsonl"
    before = events.read_bytes()
    page = ["build", str(task), "--html", str(events)]
    imported = ["import", str(task), "-o", str(events), "--force"]
    for command in (page, imported):
        assert main(command) == 2
        said = f"error: {events}: refusing to write over a file of {task}, which this command reads"
        assert capsys.readouterr().err.strip() == said
    assert events.read_bytes() == before
    sessions = tmp_path / "sessions"
    sessions.mkdir()
    shutil.copy(Path(__file__).resolve().parents[2] / "sample_sessions" / "short_chat.jsonl", sessions)
    target = sessions / "short_chat.jsonl"
    vary = ["--vary", "budget.maxTokens=20000"]
    assert main(["sweep", str(sessions), *vary, "--out", str(target)]) == 2
    assert "refusing to write over a file of" in capsys.readouterr().err


def test_a_notebook_export_never_writes_over_a_file_of_the_folder_it_opened(tmp_path):
    from engine import PolicyFileError
    from playground.notebook import Playground

    task = tmp_path / "session"
    shutil.copytree(COPILOT, task)
    before = (task / "events.jsonl").read_bytes()
    with pytest.raises(PolicyFileError, match="refusing to overwrite a protected file"):
        Playground(task).export_report(task / "events.jsonl")
    assert (task / "events.jsonl").read_bytes() == before
