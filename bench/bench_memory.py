"""Benchmark: peak memory of `linn-playground build --json` on a 10,000-message session (target ≤ 300 MB).

    .venv/bin/python bench/bench_memory.py [--sizes 1000,10000]

Writes the synthetic coding session of `bench_build.make_session` to a temporary JSONL file, runs the CLI
on it in a child process and prints the child's peak resident set size (and the JSON output's size).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import make_session  # noqa: E402

CLI = Path(sys.executable).with_name("linn-playground")


def peak_rss_mb(args: list[str]) -> tuple[float, int, float]:
    """Run `args` alone in a child and return its peak RSS in MB, the bytes it printed and its wall time."""
    code = (
        "import resource, subprocess, sys\n"
        "done = subprocess.run(sys.argv[1:], stdout=subprocess.PIPE)\n"
        "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
        "print(peak, len(done.stdout), done.returncode)\n"
    )
    start = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, check=True)
    seconds = time.perf_counter() - start
    peak, size, returncode = (int(x) for x in out.stdout.split())
    if returncode not in (0, 1):  # 1: the build ran but warned
        raise SystemExit(f"{' '.join(args)} exited {returncode}")
    return peak / 1024, size, seconds


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="1000,10000")
    sizes = [int(n) for n in parser.parse_args().sizes.split(",")]
    print(f"{'messages':>8} {'file':>8} {'build --json peak RSS':>22} {'JSON out':>9} {'wall':>7}")
    for n in sizes:
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "session.jsonl"
            lines = [json.dumps(m.to_dict()) for m in make_session(n)]
            path.write_text("\n".join(lines) + "\n", encoding="utf-8")
            peak, size, seconds = peak_rss_mb([str(CLI), "build", "--json", str(path)])
            print(f"{n:>8} {path.stat().st_size / 1e6:>6.1f}MB {peak:>20.0f}MB {size / 1e6:>7.1f}MB "
                  f"{seconds:>6.1f}s", flush=True)
    print(f"(this process: {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB)")


if __name__ == "__main__":
    main()
