"""Samples as data: sample_sessions/src/*.yaml describe the samples; make_samples.py writes them exactly."""

from __future__ import annotations

import importlib
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
NAMES = (
    "checkpoint_midtask", "chinese_session", "damaged_history", "fences_showcase", "long_chat_overflow",
    "max_steps_streak", "short_chat", "summarization_trigger", "tool_loop_runs",
)  # fmt: skip
WRITTEN = sorted(
    [f"{n}.jsonl" for n in NAMES]
    + [f"{n}.lesson.yaml" for n in NAMES]
    + ["fences_showcase.fences.yaml", "tight_budget.policy.yaml"]
)
BASE = 1715670000000  # the generator's clock starts here


@pytest.fixture(scope="module")
def make_samples():
    """The generator imported as the script runs: its folder first on the path (it imports descriptions)."""
    sys.path.insert(0, str(SAMPLES))
    try:
        yield importlib.import_module("make_samples")
    finally:
        sys.path.remove(str(SAMPLES))
        for name in ("make_samples", "descriptions"):
            sys.modules.pop(name, None)


def test_regenerated_samples_equal_the_committed_files_byte_for_byte(tmp_path):
    done = subprocess.run(
        [sys.executable, str(SAMPLES / "make_samples.py"), "--out", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout.startswith("20 written: ")
    assert sorted(p.name for p in tmp_path.iterdir()) == WRITTEN
    for name in WRITTEN:
        assert (tmp_path / name).read_bytes() == (SAMPLES / name).read_bytes(), f"{name} differs"


def test_check_names_the_stale_and_missing_files_and_writes_nothing(tmp_path, make_samples, capsys):
    for name in WRITTEN:
        shutil.copy(SAMPLES / name, tmp_path / name)
    assert make_samples.main(["--check", "--out", str(tmp_path)]) == 0
    assert capsys.readouterr().out == "all samples up to date\n"
    (tmp_path / "short_chat.lesson.yaml").write_text("title: edited by hand\n", encoding="utf-8")
    (tmp_path / "tight_budget.policy.yaml").unlink()
    assert make_samples.main(["--check", "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().out == "2 stale: short_chat.lesson.yaml, tight_budget.policy.yaml\n"
    assert (tmp_path / "short_chat.lesson.yaml").read_text(encoding="utf-8") == "title: edited by hand\n"
    assert not (tmp_path / "tight_budget.policy.yaml").exists()


# -- a small description, written out and broken field by field -----------------------------------

TINY = """\
title: Tiny
lesson: "Line one.\\nLine two."
max_steps: 9
policy: {budget: {maxTokens: 4000}}
repo: toy
messages:
- system: You help.
- user: Count to three.
- tools:
  - shell:
      command: seq 3
      output: {template: "line {i}", repeat: 3}
  - read_file: a.txt
- answer:
  - "Done: "
  - {template: "{name}={value:03d}", each: [{name: a, value: 7}, {name: b, value: 8}], join: ", "}
lesson_file: "title: T\\n"
files: {tiny.policy.yaml: "budget: {maxTokens: 4000}\\n"}
"""
TOY_REPO = "files:\n  a.txt: |\n    hello\n    world\n"


def write_tiny(tmp_path: Path, description: str = TINY) -> Path:
    src = tmp_path / "src"
    (src / "repos").mkdir(parents=True)
    (src / "tiny.yaml").write_text(description, encoding="utf-8")
    (src / "repos" / "toy.yaml").write_text(TOY_REPO, encoding="utf-8")
    return src


def test_a_description_becomes_a_session_with_derived_ids_clock_and_call_ids(tmp_path, make_samples):
    src = write_tiny(tmp_path)
    assert make_samples.main(["--src", str(src), "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "tiny.jsonl", "tiny.lesson.yaml", "tiny.policy.yaml",
    ]  # fmt: skip
    lines = (tmp_path / "out" / "tiny.jsonl").read_text(encoding="utf-8").splitlines()
    head, *messages = [json.loads(line) for line in lines]
    assert head == {
        "kind": "linn-session", "version": 1, "title": "Tiny", "lesson": "Line one.\nLine two.",
        "modelId": "claude-sonnet-4-5", "maxSteps": 9,
        "contextPolicy": {"budget": {"maxTokens": 4000}, "contextTrace": {"enabled": True}},
    }  # fmt: skip
    assert [(m["id"], m["type"]) for m in messages] == [
        ("m001", "system_prompt"), ("m002", "user_input"), ("m003", "tool_calls"),
        ("m004", "tool_output"), ("m005", "tool_output"), ("m006", "final_answer"),
    ]  # fmt: skip
    # every message advances the clock 2 s + 25 ms a character; a user message 45 s more before it
    assert messages[0]["timestamp"] == BASE + 2000 + 25 * len("You help.")
    assert messages[1]["timestamp"] - messages[0]["timestamp"] == 45_000 + 2000 + 25 * len("Count to three.")
    calls = messages[2]["metadata"]["tool_calls"]
    assert [c["function"]["name"] for c in calls] == ["run_shell", "read_file"]
    assert [len(c["id"]) for c in calls] == [29, 29] and calls[0]["id"] != calls[1]["id"]
    assert all(c["id"].startswith("call_") for c in calls)
    assert messages[3]["content"] == "line 0\nline 1\nline 2"
    assert messages[3]["metadata"]["tool_call_id"] == calls[0]["id"]
    raw = {"observation": "line 0\nline 1\nline 2", "exitCode": 0}
    assert json.loads(messages[3]["metadata"]["raw_output"]) == raw
    assert messages[4]["content"] == "     1\thello\n     2\tworld"
    assert messages[5]["content"] == "Done: a=007, b=008"
    lesson = (tmp_path / "out" / "tiny.lesson.yaml").read_text(encoding="utf-8")
    assert lesson == make_samples.LESSON_HEAD + "title: T\n"


SHELL, READ = "messages[2].tools[0].shell", "messages[2].tools[1].read_file"


@pytest.mark.parametrize(
    ("old", "new", "where"),
    [
        ("title: Tiny\n", "", "title: missing"),
        ("max_steps: 9", "max_steps: nine", "max_steps: expected an integer, got a string"),
        ("max_steps: 9", "max_step: 9", "max_step: unknown field (expected one of title, lesson, model, "),
        ("- user: Count", "- reply: Count", "messages[1]: expected one of system, user, answer, thought, "),
        ("      command: seq 3\n", "", f"{SHELL}.command: missing"),
        ("seq 3\n", "seq 3\n      pytest: {passed: 1}\n", f"{SHELL}: expected output or pytest, not both\n"),
        ('{template: "line {i}", repeat: 3}', "3", f"{SHELL}.output: expected a text (a string, a list of "),
        ("line {i}", "line {n}", f"{SHELL}.output.template: template field {{n}} is not one of i, item\n"),
        ("line {i}", "{i.__class__}", f"{SHELL}.output.template: template field {{i.__class__}} is not one"),
        ("repeat: 3}", "repeat: 3, each: [x]}", f"{SHELL}.output: a template needs either each or repeat\n"),
        ("read_file: a.txt", "read_file: b.txt", f"{READ}: no file 'b.txt' in the repository\n"),
        ("read_file: a.txt", "read_file: [a.txt]", f"{READ}: expected a string, got a list\n"),
        ("repo: toy", "repo: nope", "repo: no repository src/repos/nope.yaml\n"),
        ('lesson_file: "title: T\\n"', 'lesson_file: "- a"', "lesson_file: expected a lesson (a YAML"),
        ("files: {tiny", "files: {../tiny", "files.../tiny.policy.yaml: expected a file name without a "),
        ("title: Tiny", "title: [Tiny", "line 2: YAML error: expected ',' or ']', but got ':'\n"),
        ("title: Tiny", "title: !!python/object/apply:os.system [echo]", "line 1: YAML error: could not "),
    ],
)
def test_a_bad_description_is_one_line_naming_file_and_field(tmp_path, make_samples, capsys, old, new, where):
    assert old in TINY
    src = write_tiny(tmp_path, TINY.replace(old, new, 1))
    out = tmp_path / "out"
    assert make_samples.main(["--src", str(src), "--out", str(out)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"error: {src / 'tiny.yaml'}: {where}")
    assert captured.err.count("\n") == 1
    assert not out.exists()  # nothing is written when a description is bad
