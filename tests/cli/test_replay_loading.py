"""`replay` of a linn session builds its steps while the file loads: the records and the exit code are those
of a replay of the whole session loaded first, and a bad line late in the file is named as it always was."""

from __future__ import annotations

import json
from pathlib import Path

from engine.session import SessionReader, save_session
from playground.app import inputs
from playground.cli import commands
from playground.cli.main import main
from tests.cli.test_replay_stream import write_session
from tests.engine.test_truth import session


def _replay(path: Path, capsys) -> tuple[int, list[str], list[str]]:
    code = main(["replay", str(path), "--json"])
    out, err = capsys.readouterr()
    return code, out.splitlines(), err.splitlines()


def test_steps_are_built_while_the_session_loads_and_a_late_bad_line_is_named(tmp_path, capsys, monkeypatch):
    clean = write_session(tmp_path / "clean.jsonl", turns=20)  # 60 steps
    lines = clean.read_text().splitlines()
    wrong = '{"id": "x", "role": "bot", "type": "chat"}'
    bad_lines = [*lines[:-6], "{not json", *lines[-6:-2], wrong, *lines[-2:]]
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join(bad_lines) + "\n")
    records: list[int] = []
    read_at: dict[int, int] = {}  # file line -> records written when it was read
    print_step, feed = commands._print_step, SessionReader._feed

    def counting_print(*args, **kwargs):
        records.append(1)
        print_step(*args, **kwargs)

    def noting_feed(self, number, *rest):
        read_at[number] = len(records)
        feed(self, number, *rest)

    clean_code, clean_out, clean_err = _replay(clean, capsys)
    monkeypatch.setattr(inputs, "STREAM_FROM_BYTES", 0)  # as a session of many megabytes is read
    monkeypatch.setattr(commands, "_print_step", counting_print)
    monkeypatch.setattr(SessionReader, "_feed", noting_feed)
    code, out, err = _replay(bad, capsys)

    assert (code, clean_code) == (1, 0)
    assert out == clean_out  # the bad lines were skipped, as a whole load skips them
    assert len(out) == 61 and json.loads(out[-1])["totals"]["steps"] == 60
    first_bad, second_bad = len(lines) - 5, len(lines)  # 1-based file lines of the two bad lines
    assert read_at[1] == 0 and read_at[first_bad] >= 55  # streamed: most records were out before it was read
    assert [line.removeprefix(f"{bad}:") for line in err if line.startswith(str(bad))] == [
        f"{first_bad}: json: not valid JSON: Expecting property name enclosed in double quotes at column 2",
        f'{second_bad}: role/type: unknown role/type pair "bot"/"chat"; roles are system, user, assistant, '
        "tool",
    ]
    assert [line for line in err if not line.startswith(str(bad))] == clean_err  # the prices line


def test_a_session_that_may_record_usage_is_read_whole_first(tmp_path, capsys, monkeypatch):
    """Recorded usage puts the recorded call beside each step: a `usage` key spelled with an escape is one."""
    monkeypatch.setattr(inputs, "STREAM_FROM_BYTES", 0)
    plain = tmp_path / "recorded.jsonl"
    save_session(session(), plain, header={"kind": "linn-session", "version": 1, "title": "recorded"})
    escaped = tmp_path / "escaped.jsonl"
    escaped.write_text(plain.read_text().replace('"usage"', '"\\u0075sage"'))
    assert '"usage"' not in escaped.read_text()
    code, out, _ = _replay(plain, capsys)
    escaped_code, escaped_out, _ = _replay(escaped, capsys)
    assert (code, escaped_code) == (0, 0)
    assert out == escaped_out
    assert [json.loads(line)["recorded"]["promptTokens"] for line in out[:-1]] == [1010, 1030, 1060, 2000]


def test_a_bad_policy_ends_the_load_of_a_streamed_session_with_its_file_closed(tmp_path, capsys, monkeypatch):
    session = write_session(tmp_path / "long.jsonl", turns=5)
    policy = tmp_path / "p.yaml"
    policy.write_text("budget:\n  maxTokens: -5\n")
    monkeypatch.setattr(inputs, "STREAM_FROM_BYTES", 0)
    closed: list[bool] = []
    close = SessionReader.close
    monkeypatch.setattr(SessionReader, "close", lambda self: (closed.append(self.done), close(self)))
    assert main(["replay", str(session), "--json", "--policy", str(policy)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith(f"error: {policy}:2: budget.maxTokens") and err.count("\n") == 1
    assert closed == [False]  # closed while its lines were still to be read
