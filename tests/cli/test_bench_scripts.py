"""Every benchmark script still loads: a module it imports that moved or lost a name fails here, not the
next time someone measures."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench"


@pytest.mark.parametrize("script", sorted(BENCH.glob("bench_*.py")), ids=lambda path: path.name)
def test_a_bench_script_loads_and_has_a_main(script: Path) -> None:
    namespace = runpy.run_path(str(script), run_name="loaded_by_a_test")  # its `__main__` block does not run
    assert callable(namespace.get("main")), f"{script.name} has no main()"


def test_bench_replay_takes_its_sizes_as_words_or_comma_lists() -> None:
    items = runpy.run_path(str(BENCH / "bench_replay.py"), run_name="loaded_by_a_test")["_items"]
    assert items(["1000", "4000,10000", "16000"]) == ["1000", "4000", "10000", "16000"]
    assert items(["default,tight"]) == ["default", "tight"]
