"""A 200 MB transcript is refused with one line before it is read (a sparse file: nothing is written to
disk), never parsed whole; `build` streams it through the session loader instead."""

from __future__ import annotations

from pathlib import Path

from playground.cli.main import main

SIZE = 200 * 1024 * 1024


def _sparse(path: Path) -> Path:
    with path.open("wb") as handle:
        handle.write(b'{"type":"session_start","id":"x"}\n')
        handle.truncate(SIZE)
    return path


def test_import_refuses_a_200_mb_transcript_in_one_line(tmp_path: Path, capsys) -> None:
    big = _sparse(tmp_path / "big.jsonl")
    assert main(["import", str(big)]) == 2
    assert capsys.readouterr().err == (
        f"error: {big}: 209,715,200 bytes; transcripts over 160 MB are refused, not read\n"
    )


def test_build_streams_it_and_says_what_is_wrong_line_by_line(tmp_path: Path, capsys) -> None:
    big = _sparse(tmp_path / "big.jsonl")
    assert main(["build", str(big)]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"error: {big}:1: role: missing",
        f"error: {big}:2: line: too long: 209715166 bytes (limit 20971520); skipped without parsing",
    ]
