"""engine.safe_input.read_regular_file: what it reads and what it allocates to read it."""

from __future__ import annotations

import tracemalloc
from pathlib import Path

import pytest

from engine.safe_input import InputError, read_regular_file


def test_a_small_file_is_read_without_allocating_the_limit(tmp_path: Path) -> None:
    path = tmp_path / "s.jsonl"
    path.write_bytes(b'{"id": "m1"}\n' * 100)
    tracemalloc.start()
    try:
        data = read_regular_file(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert data == b'{"id": "m1"}\n' * 100
    assert peak < 1 << 20  # was the 2 GB limit: read(n) allocates n bytes before it reads


def test_a_file_over_the_limit_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "big.jsonl"
    path.write_bytes(b"x" * 101)
    with pytest.raises(InputError, match=r"too large: 101 bytes \(limit 100\)"):
        read_regular_file(path, max_bytes=100)
    assert read_regular_file(path, max_bytes=101) == b"x" * 101
