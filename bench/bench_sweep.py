"""Benchmark: sweep throughput, session-replays per second (numbers, not pass/fail).

    .venv/bin/python bench/bench_sweep.py [--rounds 2]

A 2×2 grid (`budget.maxTokens` 16000/32000 × `summarization.triggerThreshold` 0.6/0.8) over two corpora: the
nine samples, and the transcripts of ../shared/real-sessions the importers read today. Each corpus is swept
with 1 process (in this process), 2 processes, and a local Dask cluster (2 worker processes, 1 thread each);
the best of `--rounds` runs is printed. Worker start-up is inside the time, as a user waits for it.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from playground.app.sweep import plan_sweep, run_sweep  # noqa: E402

GRID = ["budget.maxTokens=16000,32000", "summarization.triggerThreshold=0.6,0.8"]
CORPORA = {"samples": ROOT / "sample_sessions", "real-sessions": ROOT.parent / "shared" / "real-sessions"}


def timed(jobs, **where) -> float:
    start = time.perf_counter()
    rows = run_sweep(jobs, **where)
    assert len(rows) == len(jobs)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    from distributed import LocalCluster

    print(f"{'corpus':<14} {'replays':>7} {'mode':<22} {'seconds':>8} {'replays/s':>10}")
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        for name, folder in CORPORA.items():
            if not folder.is_dir():
                print(f"{name:<14} missing: {folder}")
                continue
            jobs = plan_sweep([folder], GRID)
            modes = {
                "1 process": {"workers": 1},
                "2 processes": {"workers": 2},
                "dask local (2 procs)": {"scheduler": cluster.scheduler_address},
            }
            for mode, where in modes.items():
                seconds = min(timed(jobs, **where) for _ in range(args.rounds))
                print(f"{name:<14} {len(jobs):>7} {mode:<22} {seconds:>8.2f} {len(jobs) / seconds:>10.1f}")


if __name__ == "__main__":
    main()
