"""A large Claude Code transcript is read a line at a time: the same result as reading its text, without
ever holding the file as one string (bench/bench_import.py measures the 100 MB case)."""

from __future__ import annotations

import pytest

import engine.importers as importers
import playground.app.inputs as inputs
from engine.importers import EmptyImportError, import_file, import_text
from playground.cli.main import main
from tests.engine.test_import_detection import REPO

SAMPLE = REPO / "tests" / "data" / "real-sessions" / "claude-code" / "session-3fe1b6bc.jsonl"


@pytest.fixture
def small_threshold(monkeypatch):
    monkeypatch.setattr(importers, "STREAM_BYTES", 1000)


def test_streamed_import_equals_the_text_import(small_threshold, monkeypatch):
    def never(*_):
        raise AssertionError("the whole file was read as one string")

    monkeypatch.setattr(importers, "read_transcript", never)
    streamed = import_file(SAMPLE)
    monkeypatch.undo()
    whole = import_text(SAMPLE.read_text(encoding="utf-8"), name=str(SAMPLE))
    assert [m.to_dict() for m in streamed.messages] == [m.to_dict() for m in whole.messages]
    assert (streamed.skipped_lines, streamed.problems, streamed.other_calls) == (
        whole.skipped_lines,
        whole.problems,
        whole.other_calls,
    )
    assert len(streamed.messages) > 100


def test_a_streamed_file_with_bad_lines_names_them(small_threshold, tmp_path):
    path = tmp_path / "big.jsonl"
    lines = SAMPLE.read_bytes().split(b"\n")
    path.write_bytes(b"\n".join([*lines[:40], b'{"type": "user", "message": \xff}', b"{broken", *lines[40:]]))
    result = import_file(path)
    assert [str(p) for p in result.problems[:2]] == [
        f"{path}:41: invalid UTF-8 at byte 28",
        f"{path}:42: invalid JSON (Expecting property name enclosed in double quotes at column 2)",
    ]


def test_a_streamed_file_that_yields_nothing_is_an_error(small_threshold, tmp_path):
    path = tmp_path / "big.jsonl"
    path.write_text('{"type": "file-history-snapshot", "messageId": "m", "snapshot": {}}\n' * 40)
    with pytest.raises(EmptyImportError, match="read as claude-code, no message came in"):
        import_file(path)


def test_the_commands_open_a_large_transcript_a_line_at_a_time(small_threshold, monkeypatch, capsys):
    def never(*_):
        raise AssertionError("the whole file was read as one string")

    monkeypatch.setattr(inputs, "_sniff", never)
    assert main(["validate", str(SAMPLE)]) in (0, 1)
    out = capsys.readouterr().out
    whole = import_text(SAMPLE.read_text(encoding="utf-8"), name=str(SAMPLE))
    assert out.startswith(f"session: {SAMPLE}  ({len(whole.messages)} messages)\n")
