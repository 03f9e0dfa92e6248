"""Benchmark: the audit store (numbers, not pass/fail).

    .venv/bin/python bench/bench_store.py [--steps 1000] [--rounds 5] [--runs 1000] [--run-messages 200]

1. Recording's overhead on a replay of `--steps` steps (a generated coding session, summaries firing):
   the replay with its costs as `replay` runs it, against the same replay captured and recorded into a new
   store (open, insert, commit), alternating, median of 5 rounds each, in wall time and in the process's
   CPU time (fairer on a loaded machine; DuckDB's threads included). Target: at most +10 %.
2. A query over `--runs` stored runs (a sweep of one generated session under that many budgets, recorded
   as `sweep --record` does): the steps where a summary fired, per policy, and the runs whose user
   requests or must-keep messages were not kept, per policy; median of 20, on an open read-only store,
   and the first one after opening it. Target: at most 100 ms.
3. Bytes per stored step: the store file's size over its step rows (decisions, events and the session
   text included).
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import make_session  # noqa: E402

from engine import CostTracker, iter_step_costs, save_session  # noqa: E402
from engine.encodings import load_encoding  # noqa: E402
from playground.app.inputs import load_inputs  # noqa: E402
from playground.app.store import RunCapture, open_store  # noqa: E402
from playground.app.sweep import RETURN, plan_sweep, run_sweep, with_capture  # noqa: E402

POLICY = {"budget": {"maxTokens": 16000, "reservedForResponse": 2000},
          "summarization": {"triggerThreshold": 0.3}}  # fmt: skip
QUERIES = {
    "summary steps per policy": """
        SELECT r.policy_hash, count(*) AS steps, count(DISTINCT r.run_id) AS runs
        FROM steps s JOIN runs r USING (run_id) WHERE s.summary_made IS NOT NULL
        GROUP BY 1 ORDER BY 2 DESC""",
    "runs losing watched messages, per policy": """
        SELECT r.policy_changes, count(DISTINCT d.run_id) AS runs, count(*) AS decisions
        FROM decisions d JOIN runs r USING (run_id) WHERE NOT d.final AND d.action <> 'kept'
        GROUP BY 1 ORDER BY 2 DESC""",
}


def write_session(folder: Path, messages: int) -> Path:
    path = folder / f"generated_{messages}.jsonl"
    header = {"kind": "linn-session", "version": 1, "title": f"generated {messages}", "contextPolicy": POLICY,
              "maxSteps": 100_000}  # fmt: skip
    save_session(make_session(messages), path, header=header)
    return path


def replay_once(path: Path, store: Path | None, run: int = 0) -> tuple[float, float]:
    """One replay with its costs (as `replay` runs it); with `store`, captured and recorded too (`run`
    a setting, so that each round records a new run). Wall and process CPU seconds."""
    wall, cpu = time.perf_counter(), time.process_time()
    inputs = load_inputs(path)
    messages, policy = inputs.session.messages, inputs.policy
    options = {**inputs.build_options, "max_steps": inputs.max_steps}
    tracker = CostTracker(messages, policy=policy, model_id=options["model_id"])
    capture = RunCapture(inputs, policy, {"round": run}) if store else None
    for step, cost in iter_step_costs(messages, policy, tracker=tracker, **options):
        line = step.summary()
        cost.to_json()
        if capture is not None:
            capture.add(step, cost, line)
    if capture is not None and store is not None:
        with open_store(store) as opened:
            opened.record(capture.finish(tracker.totals().to_json()))
    return time.perf_counter() - wall, time.process_time() - cpu


def overhead(folder: Path, steps: int, rounds: int) -> None:
    path = write_session(folder, 2 * steps)
    store = folder / "overhead.duckdb"
    replay_once(path, store, -1)  # warm: tokenizer, imports; the store made, as after a first --record
    plain, recorded = [], []
    for n in range(rounds):  # alternating, so a change of the machine's speed falls on both
        plain.append(replay_once(path, None))
        recorded.append(replay_once(path, store, n))
    for i, clock in enumerate(("wall", "CPU")):
        a, b = statistics.median(t[i] for t in plain), statistics.median(t[i] for t in recorded)
        print(f"1. replay of {steps} steps ({clock}, median of {rounds}): {a:.2f} s; captured and recorded: "
              f"{b:.2f} s; overhead {100 * (b - a) / a:+.1f} % (target <= +10 %)")


def populate(folder: Path, runs: int, messages: int, jobs: int) -> Path:
    path = write_session(folder, messages)
    budgets = ",".join(str(8000 + 24 * k) for k in range(runs))
    plan = with_capture(plan_sweep([path], [f"budget.maxTokens={budgets}"]), RETURN)
    store = folder / "runs.duckdb"
    start = time.perf_counter()
    with open_store(store) as opened:
        run_sweep(plan, workers=jobs, on_run=opened.record)
        opened.connection.execute("CHECKPOINT")
    print(f"   {runs} runs of {messages} messages swept and recorded in {time.perf_counter() - start:.0f} s")
    return store


def query_times(store: Path) -> None:
    for name, sql in QUERIES.items():
        start = time.perf_counter()
        with open_store(store, read_only=True) as opened:
            _, rows = opened.query(sql)
            first = time.perf_counter() - start
            times = []
            for _ in range(20):
                start = time.perf_counter()
                opened.query(sql)
                times.append(time.perf_counter() - start)
        print(f"2. {name}: {1000 * statistics.median(times):.1f} ms median, {1000 * first:.0f} ms with "
              f"opening the store ({len(rows)} rows; target <= 100 ms)")


def bytes_per_step(store: Path) -> None:
    with open_store(store, read_only=True) as opened:
        tables = ("runs", "steps", "decisions", "events")
        counts = {t: opened.query(f"SELECT count(*) FROM {t}")[1][0][0] for t in tables}
    size = os.path.getsize(store)
    print(f"3. {size / counts['steps']:.0f} bytes per stored step ({size / 1e6:.1f} MB: " +
          ", ".join(f"{n:,} {t}" for t, n in counts.items()) + ")")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=1000, help="0: leave out the overhead figure")
    parser.add_argument("--runs", type=int, default=1000, help="0: leave out the query and size figures")
    parser.add_argument("--run-messages", type=int, default=200)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5, help="rounds of the overhead figure")
    args = parser.parse_args()
    load_encoding("cl100k_base")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    with tempfile.TemporaryDirectory() as folder:
        if args.steps:
            overhead(Path(folder), args.steps, args.rounds)
        if args.runs:
            store = populate(Path(folder), args.runs, args.run_messages, args.jobs)
            query_times(store)
            bytes_per_step(store)


if __name__ == "__main__":
    main()
