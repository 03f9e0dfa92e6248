"""Benchmark: `linn-playground replay --json` on a long session, as a user runs it (numbers, not pass/fail).

    .venv/bin/python bench/bench_replay_stream.py [--size 100000] [--policy tight|default] [--seconds 120]

Writes `bench_build.make_session(size)` (under the policy, in the session header) to a temporary file,
runs the command in a child and reads its records as they come: the time to the first record, the
records per second, the bytes of the first and the last 100 records (flat when a record's size does not
grow with the session's length), and the child's peak RSS. After `--seconds` the child gets Ctrl-C
(SIGINT) and must end with every record whole (0: let it finish). Targets (issue 32): first record
≤ 1 s, peak RSS ≤ 500 MB on 100,000 messages.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import make_session  # noqa: E402
from bench_replay import POLICIES  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EDGE = 100
# the child prints its own peak RSS at exit (a Ctrl-C included), after the command's own output
CHILD = (
    "import atexit, resource, sys\n"
    "atexit.register(lambda: print('peak-rss', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
    " file=sys.stderr))\n"
    "from playground.cli.main import main\n"
    "sys.exit(main(sys.argv[1:]))\n"
)


def write_session(path: Path, size: int, policy: dict) -> None:
    header = {"kind": "linn-session", "version": 1, "title": f"bench {size}", "contextPolicy": policy}
    lines = [json.dumps(header)] + [json.dumps(m.to_dict()) for m in make_session(size)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=100_000)
    parser.add_argument("--policy", choices=sorted(POLICIES), default="tight")
    parser.add_argument("--seconds", type=float, default=120, help="Ctrl-C after it (0: never)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "session.jsonl"
        write_session(path, args.size, POLICIES[args.policy])
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        command = [sys.executable, "-c", CHILD, "replay", str(path), "--json"]
        start = time.perf_counter()
        child = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        if args.seconds:
            timer = threading.Timer(args.seconds, lambda: child.send_signal(signal.SIGINT))
            timer.start()
        first_at, sizes, steps, totals = None, [], 0, None
        for line in child.stdout:
            record = json.loads(line)  # every line a whole record, Ctrl-C or not
            if "totals" in record:
                totals = record["totals"]
                continue
            first_at = first_at if first_at is not None else time.perf_counter() - start
            steps += 1
            sizes.append(len(line))
        errors = child.stderr.read()
        child.wait()
        seconds = time.perf_counter() - start
        if args.seconds:
            timer.cancel()
    peak = next((int(w.split()[1]) for w in errors.splitlines() if w.startswith("peak-rss")), 0) / 1024
    edge = min(EDGE, len(sizes))
    print(f"replay --json, {args.size} messages, policy {args.policy}: exit {child.returncode}, "
          f"{steps} records in {seconds:.1f} s ({steps / seconds:.0f}/s), totals line: {totals is not None}")
    print(f"first record after {first_at if first_at is not None else float('nan'):.2f} s · peak RSS "
          f"{peak:.1f} MiB · bytes per record, first {edge}: {sum(sizes[:edge]) / max(edge, 1):.0f}, last "
          f"{edge}: {sum(sizes[-edge:]) / max(edge, 1):.0f} · output {sum(sizes) / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
