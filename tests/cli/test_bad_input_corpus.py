"""The bad-input corpus (tests/badinput/): every file gives its one expected line and exit code, with no
traceback, no hang and nothing dropped silently; plus the faults that cannot live in a file (FIFOs, a
closed pipe, a full disk)."""

from __future__ import annotations

import gzip
import json
import os
import signal
import stat
import subprocess
import sys
from html import escape
from pathlib import Path

import pytest
import yaml

from engine import AiMessage, build_context
from engine.fences import FenceError, load_fences
from engine.importers import import_file
from engine.policy import PolicyFileError, PolicyValidationError, define_context_policy, read_policy_file
from engine.session import SessionLoadError, load_session, save_session
from playground.app.explain import decision_rows, incomplete_groups, why_dropped
from playground.app.inputs import load_inputs
from playground.cli.main import main
from playground.notebook.sources import open_sources
from playground.web.views import trace_view

CORPUS = Path(__file__).resolve().parents[1] / "badinput"
RUNS = yaml.safe_load((CORPUS / "expected.yaml").read_text(encoding="utf-8"))
SECONDS = 20  # far above any run (the slowest takes ~0.4 s); a hang fails instead of blocking the suite


def test_the_corpus_covers_every_file_and_is_large_enough():
    files = {p.name for p in CORPUS.iterdir()} - {"expected.yaml"}
    assert len(files) >= 60
    assert files == {run["file"] for run in RUNS}


def _timeout(signum, frame):
    raise TimeoutError(f"no answer within {SECONDS} s")


@pytest.mark.parametrize("run", RUNS, ids=[f"{r['file']}-{r['run'].split()[0]}" for r in RUNS])
def test_corpus_file(run, monkeypatch, capsys):
    monkeypatch.chdir(CORPUS)
    before = {path.name: path.read_bytes() for path in CORPUS.iterdir()}
    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(SECONDS)
    try:
        code = main(run["run"].format(file=run["file"]).split())
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    captured = capsys.readouterr()
    output = captured.out + captured.err
    assert {path.name: path.read_bytes() for path in CORPUS.iterdir()} == before  # nothing written
    lines = [line.strip() for line in output.splitlines()]
    assert "Traceback" not in output and "internal error" not in output and " at at " not in output
    assert "\x1b" not in output  # control characters from the input never reach the terminal raw
    assert code == run["exit"], output[-2000:]
    if "says_in" in run:
        assert any(run["says_in"] in line for line in lines), output[-2000:]
    else:
        assert run["says"] in lines, output[-2000:]


# -- the API raises typed errors naming file and line --------------------------------------------


def test_api_errors_are_typed_and_one_line():
    with pytest.raises(PolicyFileError) as policy:
        read_policy_file(CORPUS / "p_alias_bomb.yaml")
    assert str(policy.value) == (
        f"{CORPUS}/p_alias_bomb.yaml:6: aliases expand to more than 200000 values (an alias bomb?)"
    )
    assert policy.value.line == 6
    with pytest.raises(FenceError, match=r"f_deep.yaml:1: nested deeper than 100 levels$"):
        load_fences(CORPUS / "f_deep.yaml")
    session = load_session(CORPUS / "s_huge_int.jsonl")
    assert [str(p) for p in session.errors] == [
        f"{CORPUS}/s_huge_int.jsonl:4: json: number too large: more than 4300 digits"
    ]
    assert session.skipped_lines == [4]
    assert load_session(CORPUS / "s_empty.jsonl").skipped_lines == []  # "is empty" is not a skipped line


def test_messages_never_build_the_whole_value():
    bomb: list = ["lol"] * 9
    for _ in range(9):  # 9^10 items if expanded; shared references cost nothing until printed
        bomb = [bomb] * 9
    with pytest.raises(PolicyValidationError) as caught:
        define_context_policy({"budget": {"maxTokens": bomb}})
    shown = "[[[[[[[[[['lol', 'lol', 'lol', 'lol', 'lol', 'lol', 'lol', …"
    assert str(caught.value) == f"budget.maxTokens: {shown} is not an integer"


def test_policy_warnings_from_the_api():
    loaded = read_policy_file(CORPUS / "p_duplicate_key.yaml")
    assert loaded.layer == {"budget": {"maxTokens": 6000}}
    assert [str(w) for w in loaded.warnings] == [
        f"{CORPUS}/p_duplicate_key.yaml:3: budget.maxTokens: written twice (first on line 2); "
        "the last value is used"
    ]
    assert read_policy_file(CORPUS / "p_good.yaml").warnings == ()


# -- faults that are not files --------------------------------------------------------------------


def _cli(*args: str, stdout=subprocess.PIPE) -> subprocess.CompletedProcess:
    command = [sys.executable, "-m", "playground.cli", *args]
    return subprocess.run(
        command, cwd=CORPUS, stdout=stdout, stderr=subprocess.PIPE, text=True, timeout=SECONDS
    )


def test_the_cli_module_runs_as_the_command_does():
    """`python -m playground.cli.main` is the command too (it printed nothing and exited 0)."""
    done = subprocess.run(
        [sys.executable, "-m", "playground.cli.main", "validate", "missing.jsonl"],
        cwd=CORPUS, capture_output=True, text=True, timeout=SECONDS,
    )  # fmt: skip
    assert (done.returncode, done.stderr.strip()) == (2, "error: missing.jsonl: file: no such file")


# every command and option that reads a file, with the FIFO as that file (`{fifo}`)
FIFO_RUNS = [
    ("validate {fifo}", "file: "),
    ("validate good_session.jsonl --policy {fifo}", ""),
    ("validate good_session.jsonl --fences {fifo}", ""),
    ("build good_session.jsonl --calibration {fifo}", ""),
    ("build good_session.jsonl --system-prompt {fifo}", ""),
    ("replay good_session.jsonl --prices {fifo}", ""),
    ("replay good_session.jsonl --tools {fifo}", ""),
    ("conformance {fifo}", ""),
    ("import {fifo}", ""),
    ("calibrate {fifo}", "file: "),
]


@pytest.mark.parametrize("run", [run for run, _ in FIFO_RUNS], ids=[run for run, _ in FIFO_RUNS])
def test_a_fifo_is_refused_before_it_is_opened(tmp_path, run):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    done = _cli(*run.format(fifo=fifo).split())  # would block forever on open(); _cli times out instead
    assert done.returncode == 2, done.stderr
    field = dict(FIFO_RUNS)[run]
    assert done.stderr.splitlines()[-1] == f"error: {fifo}: {field}is a FIFO (named pipe), not a regular file"


# every option that writes a file, with a FIFO as that file: an output is made whole, then moved over the
# path, which would put a plain file in a device's or a FIFO's place (as root, /dev/null)
FIFO_OUTPUTS = [
    "export good_session.jsonl --to openai -o {fifo}",
    "export good_session.jsonl --to openai -o {fifo} --force",
    "import ../data/real-sessions/codex/test_conversation_oai.jsonl -o {fifo} --force",
    "build good_session.jsonl --html {fifo}",
    "replay good_session.jsonl --html {fifo}",
    "diff good_session.jsonl good_session.jsonl --html {fifo}",
    "sweep good_session.jsonl --out {fifo}.csv",
]


@pytest.mark.parametrize("run", FIFO_OUTPUTS)
def test_an_output_over_a_fifo_is_refused_and_the_fifo_stays(tmp_path, run):
    fifo = tmp_path / "pipe"
    target = Path(run.format(fifo=fifo).split()[-2 if run.endswith("--force") else -1])
    os.mkfifo(target)
    done = _cli(*run.format(fifo=fifo).split())
    assert done.returncode == 2, done.stderr
    # (a sweep first reads an existing --out to resume it, and says so as an input)
    refusal = f"error: {target}: is a FIFO (named pipe), not a regular file"
    assert done.stderr.splitlines()[-1].startswith(refusal)
    assert stat.S_ISFIFO(os.stat(target).st_mode)


@pytest.mark.parametrize("device", ["/dev/null", "/dev/zero"])
def test_import_refuses_a_device(device):
    done = _cli("import", device)
    assert done.returncode == 2
    assert done.stderr == f"error: {device}: is a character device, not a regular file\n"


def test_a_transcript_keeps_its_readable_lines(tmp_path):
    imported = import_file(CORPUS / "i_invalid_utf8.jsonl")
    assert len(imported.messages) == 5  # the bad byte's message too, with U+FFFD in its place
    assert imported.messages[3].content == "a\ufffd.txt"
    assert len(import_file(CORPUS / "i_huge_int.jsonl").messages) == 4  # all but the bad line
    assert [m.content for m in import_file(CORPUS / "i_array_deep_element.json").messages] == ["hi", "ok"]


def test_the_api_refuses_a_fifo(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(SessionLoadError, match="is a FIFO"):
        load_session(fifo)
    with pytest.raises(PolicyFileError, match="is a FIFO"):
        read_policy_file(fifo)
    with pytest.raises(FenceError, match="is a FIFO"):
        load_fences(fifo)


def test_a_closed_pipe_ends_with_one_line():
    reader, writer = os.pipe()
    os.close(reader)  # `validate … | true`: nobody reads
    try:
        done = _cli("build", "good_session.jsonl", "--json", stdout=writer)
    finally:
        os.close(writer)
    assert done.returncode == 1
    assert done.stderr == "error: the output was closed early (broken pipe)\n"


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="needs /dev/full to simulate a full disk")
def test_a_full_disk_ends_with_one_line():
    with open("/dev/full", "w") as full:
        done = _cli("build", "good_session.jsonl", "--json", stdout=full)
    assert done.returncode == 1
    assert done.stderr == "error: cannot write the output: No space left on device\n"


def test_one_bad_fence_of_a_header_costs_that_fence_only():
    inputs = load_inputs(CORPUS / "s_header_one_bad_fence.jsonl")
    assert inputs.fences is not None and inputs.fences.kinds() == ["memory"]
    in_memory = open_sources(load_session(CORPUS / "s_header_one_bad_fence.jsonl"), None, None, "seed")
    assert in_memory.fences.kinds() == ["memory"]  # the notebook given a Session object
    assert len(inputs.session.messages) == 6
    assert [p.field for p in inputs.session.problems] == ["fences[1].llmRole"]


@pytest.mark.parametrize("name", ["s_tool_calls_strings.jsonl", "s_function_string.jsonl"])
def test_a_line_with_unreadable_tool_calls_loads_and_is_written_back_as_it_was(name, tmp_path):
    session = load_session(CORPUS / name)
    assert [m.id for m in session.messages] == ["s", "u1", "d", "a1", "t1", "f1"]  # 6, where 5 loaded
    calls = session.messages[2].tool_calls
    assert calls == ([] if name == "s_tool_calls_strings.jsonl" else [{"id": "c9"}])
    written = save_session(session, tmp_path / "out.jsonl")
    line = json.loads(written.read_text(encoding="utf-8").splitlines()[3])
    source = json.loads((CORPUS / name).read_text(encoding="utf-8").splitlines()[3])
    assert line["metadata"] == source["metadata"]


def test_an_imported_message_with_unreadable_tool_calls_comes_in():
    for name in ("i_tool_calls_not_list.jsonl", "i_tool_calls_strings.jsonl"):
        imported = import_file(CORPUS / name)
        assert [m.type for m in imported.messages][2] == "final_answer"  # its text, no call
        assert len(imported.messages) == 6


def test_import_into_a_folder_writes_a_file_named_after_the_transcript(tmp_path, capsys):
    source = CORPUS / "i_tool_calls_not_list.jsonl"
    before = source.read_bytes()
    assert main(["import", str(source), "-o", str(tmp_path)]) == 1  # written; the import names a problem
    target = tmp_path / "i_tool_calls_not_list.jsonl"
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {target}"
    assert len(load_session(target).messages) == 6
    assert main(["import", str(source), "-o", str(tmp_path)]) == 2
    assert capsys.readouterr().err == f"error: {target}: already exists; pass --force to replace it\n"
    assert main(["import", str(source), "-o", str(tmp_path), "--force"]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == f"wrote {target}"
    assert main(["import", str(source), "-o", str(CORPUS)]) == 2  # would be the transcript itself
    refusal = "is the transcript being imported; write the session elsewhere"
    assert capsys.readouterr().err == f"error: {source}: {refusal}\n"
    assert main(["import", str(source), "-o", f"{tmp_path}/missing/"]) == 2
    assert capsys.readouterr().err == f"error: {tmp_path}/missing/: no such folder\n"
    assert not (tmp_path / "missing").exists() and source.read_bytes() == before


def test_the_trace_says_why_a_call_awaiting_its_result_is_dropped():
    inputs = load_inputs(CORPUS / "s_ends_awaiting_call.jsonl")
    result = build_context(inputs.session.messages, inputs.policy, **inputs.build_options)
    decision = result.decision_for("a1")
    assert decision.reason == "dropped_by_budget_or_priority"  # linnkit's own reason, kept
    why = "call c1 awaits its result (the session ends on it); a call is sent only with its result"
    assert ("why", why) in decision_rows(decision, str, why_dropped(result, decision))
    assert escape(why) in trace_view(result, "a1")
    assert why_dropped(result, result.decision_for("u1")) is None


def test_a_call_answered_nowhere_but_not_last_is_named_as_such():
    orphan = AiMessage("a0", "assistant", "tool_calls", "", 0, {"tool_calls": [{"id": "c0", "function": {}}]})
    later = AiMessage("u9", "user", "user_input", "next", 1)
    why = "call c0 has no result; a call is sent only with its result"
    assert incomplete_groups([orphan, later]) == {"a0": why}


EMPTY_PATHS = [
    ["validate", ""],
    [""],
    ["build", "good_session.jsonl", "--html", ""],
    ["export", "good_session.jsonl", "--to", "openai", "-o", ""],
    ["replay", "good_session.jsonl", "--policy", ""],
    ["conformance", ""],
    ["sweep", "good_session.jsonl", "--out", ""],
]


@pytest.mark.parametrize("argv", EMPTY_PATHS, ids=[" ".join(a) or "''" for a in EMPTY_PATHS])
def test_an_empty_path_is_refused_not_read_as_another(argv):
    done = _cli(*argv)
    assert done.returncode == 2
    assert done.stderr.splitlines()[-1].endswith(": an empty path")


def test_half_an_emoji_is_written_as_its_escape(tmp_path):
    lines = (CORPUS / "good_session.jsonl").read_text(encoding="utf-8").splitlines()
    lines[2] = lines[2].replace('"list files"', '"list \\ud83d files"')  # a lone high surrogate
    session = tmp_path / "half.jsonl"
    session.write_text("\n".join(lines) + "\n", encoding="utf-8")
    exported, page = tmp_path / "out.json", tmp_path / "page.html"
    assert _cli("export", str(session), "--to", "openai", "-o", str(exported)).returncode == 0
    assert "list \ud83d files" in json.loads(exported.read_text(encoding="utf-8"))["messages"][1]["content"]
    done = _cli("build", str(session), "--html", str(page))
    assert done.returncode == 0, done.stderr
    assert "list \\ud83d files" in page.read_text(encoding="utf-8")


def test_conformance_reads_subfolders_and_names_a_folder_without_a_case(tmp_path):
    nested = tmp_path / "suite" / "cases"
    nested.mkdir(parents=True)
    (nested / "one.json").write_bytes((CORPUS / "c_good.json").read_bytes())
    (tmp_path / "empty").mkdir()
    found = _cli("conformance", str(tmp_path / "suite"))
    assert found.returncode == 0 and found.stdout.splitlines()[-1] == "1 passed, 0 failed"
    empty = _cli("conformance", str(tmp_path / "empty"))
    assert empty.returncode == 2
    assert empty.stderr == f"error: {tmp_path / 'empty'}: no conformance case (a .json file) in it\n"


def test_a_sweep_never_resumes_from_nor_appends_to_a_session(tmp_path):
    out = tmp_path / "results.jsonl"
    out.write_bytes((CORPUS / "good_session.jsonl").read_bytes())
    vary = ("--vary", "budget.maxTokens=20000")
    done = _cli("sweep", "good_session.jsonl", *vary, "--out", str(out), "--jobs", "1")
    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines()[-1] == f"error: {out}:1: not a sweep's results row; choose another --out"
    assert out.read_bytes() == (CORPUS / "good_session.jsonl").read_bytes()


def test_plain_bad_arguments_end_with_one_line_not_an_internal_error(tmp_path):
    store = tmp_path / "runs.duckdb"
    assert _cli("replay", "good_session.jsonl", "--record", "--store", str(store)).returncode == 0
    said = {
        ("serve", "--port", "-1"): (
            2, "linn-playground serve: error: argument --port: a port is 0 to 65535, got -1"
        ),
        ("runs", "--store", str(store), "query", " "): (1, "error: query failed: the query is empty"),
        ("replay", "good_session.jsonl", "--max-steps", "-1"): (
            2, "linn-playground replay: error: argument --max-steps: must be 1 or more, got -1"
        ),
        ("runs", "--store", str(store), "--since", "99999999d"): (
            2, "error: --since '99999999d': further back than any date"
        ),
    }  # fmt: skip
    for argv, (code, line) in said.items():
        done = _cli(*argv)
        assert (done.returncode, done.stderr.splitlines()[-1]) == (code, line), argv
    done = _cli("sweep", "good_session.jsonl", "--scheduler", "bogus")
    assert done.stderr.splitlines()[-1].startswith("error: --scheduler") and "internal" not in done.stderr


def test_a_sweep_says_with_its_exit_code_whether_a_session_failed(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    partly = _cli("sweep", "good_session.jsonl", str(fifo), "--vary", "budget.maxTokens=20000", "--jobs", "1")
    assert partly.returncode == 1, partly.stderr
    assert f"{fifo}: " in partly.stderr and "is a FIFO (named pipe), not a regular file" in partly.stderr
    nothing = _cli("sweep", str(fifo), "--vary", "budget.maxTokens=20000", "--jobs", "1")
    assert nothing.returncode == 2, nothing.stderr


def test_utf16_and_gzip_files_are_named_as_what_they_are(tmp_path):
    text = (CORPUS / "good_session.jsonl").read_text(encoding="utf-8")
    utf16, packed = tmp_path / "s16.jsonl", tmp_path / "s.jsonl.gz"
    utf16.write_text(text, encoding="utf-16")
    packed.write_bytes(gzip.compress(text.encode("utf-8")))
    for path, what in ((utf16, "UTF-16 text (its byte order mark says so); save it as UTF-8"),
                       (packed, "gzip-compressed; unpack it first (gunzip)")):  # fmt: skip
        for command in ("validate", "import"):
            done = _cli(command, str(path))
            assert done.returncode == 2 and done.stderr == f"error: {path}: encoding: is {what}\n"


@pytest.mark.parametrize("command", ["build", "replay"])
def test_a_page_that_cannot_be_written_is_refused_before_the_work(tmp_path, command):
    missing = tmp_path / "no-such-folder" / "page.html"
    done = _cli(command, "good_session.jsonl", "--html", str(missing))
    assert done.returncode == 2 and done.stdout == ""  # nothing built, nothing printed
    assert done.stderr == f"error: {missing}: its folder {missing.parent} does not exist\n"


def test_serve_on_a_port_in_use_names_it(tmp_path):
    import socket

    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        done = _cli("serve", "good_session.jsonl", "--port", str(port))
    assert done.returncode == 2
    last = done.stderr.splitlines()[-1]
    assert last.startswith(f"error: cannot serve on 127.0.0.1:{port}: ") and "in use" in last


def test_runs_export_into_a_file_names_it(tmp_path):
    store, file = tmp_path / "runs.duckdb", tmp_path / "notes.txt"
    assert _cli("replay", "good_session.jsonl", "--record", "--store", str(store)).returncode == 0
    run_id = _cli("runs", "--store", str(store)).stdout.splitlines()[1].split()[0]  # under the header
    file.write_text("kept")
    done = _cli("runs", "--store", str(store), "export", run_id, str(file))
    assert done.returncode == 2
    assert done.stderr == f"error: {file}: not a folder (the run's files are written into one)\n"
    assert file.read_text() == "kept"


def test_utf8_files_joined_end_to_end_read_past_the_byte_order_mark_inside(tmp_path):
    lines = (CORPUS / "good_session.jsonl").read_bytes().splitlines(keepends=True)
    joined = tmp_path / "joined.jsonl"
    joined.write_bytes(b"\xef\xbb\xbf" + b"".join(lines[:3]) + b"\xef\xbb\xbf" + b"".join(lines[3:]))
    done = _cli("validate", str(joined))
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"session: {joined}  ({len(lines) - 1} messages)" in done.stdout


def test_validate_names_a_lesson_beside_the_session_that_cannot_be_opened(tmp_path):
    session = tmp_path / "s.jsonl"
    session.write_bytes((CORPUS / "good_session.jsonl").read_bytes())
    lesson = tmp_path / "s.lesson.yaml"
    lesson.write_text("title: t\nsteps: {a: 1}\n")
    done = _cli("validate", str(session))
    assert done.returncode == 1
    assert f"  lesson not opened: {lesson}: steps: must be a non-empty list" in done.stdout.splitlines()
    lesson.unlink()
    os.mkfifo(lesson)
    done = _cli("validate", str(session))  # refused before it is opened: no hang
    assert done.returncode == 1 and f"lesson not opened: {lesson}: is a FIFO (named pipe)" in done.stdout
