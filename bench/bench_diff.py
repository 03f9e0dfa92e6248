"""Benchmark: `diff` of two 1k-message runs against one replay of the longer (numbers, not pass/fail).

    .venv/bin/python bench/bench_diff.py [--size 1000] [--repeat 3]

Run A is the bench session (`bench_build.make_session`); run B is A with one word changed in every tenth
tool output and one more tool call in every fifth turn (so the steps align by user turns and tool-call
ids). One replay is what `linn-playground replay` does for the longer run: every step built in full and
costed (`engine.cost`), counting with a fresh tokenizer (a new process's). The diff replays both runs the
same way and compares every aligned step (wire messages, word diffs, prefix, breaks). In one process
(`--jobs 1`) its two sides count with one fresh tokenizer, as the command's do, so B's replay finds the
texts A counted; with two (`--jobs 2`, the command's default on two cores) B replays in a forked child
(`playground.app.side_worker`). Also: one session under two policies (aligned by step index).

Each figure is printed as wall time and as CPU time (this process's and its children's, so the child's
replay counts). Each of `--repeat` rounds times the replay and then every diff, and a ratio is the median
of the rounds' own ratios: the machine's speed drifts, and a replay timed apart from the diffs once
made every diff look up to 1.6x slower than it was. Target (issue 33): diff ≤ 2 × one replay.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from bench_build import make_session  # noqa: E402

from engine.encodings import load_encoding  # noqa: E402
from engine.messages import AiMessage  # noqa: E402
from engine.policy import define_context_policy  # noqa: E402
from engine.prices import BUILTIN_PRICES  # noqa: E402
from engine.session import save_session  # noqa: E402
from engine.tokens import DefaultTokenizer  # noqa: E402
from playground.app.building import BuildOptions  # noqa: E402
from playground.app.costing import CostRequest, cost_stream  # noqa: E402
from playground.app.diffing import ReplaySource  # noqa: E402
from playground.app.pacing import paced_collection  # noqa: E402
from playground.app.rundiff import diff_runs  # noqa: E402
from playground.app.side_worker import parallel_sides  # noqa: E402
from playground.cli.main import main as cli_main  # noqa: E402

LAYER = {
    "budget": {"maxTokens": 16000, "reservedForResponse": 2000},
    "summarization": {"triggerThreshold": 0.3},
}
OTHER = {**LAYER, "toolHistory": {"retentionMode": "drop"}}


def run_b(a: list[AiMessage], size: int) -> list[AiMessage]:
    """A with an edited word in every tenth tool output and an extra tool call in every fifth turn."""
    out: list[AiMessage] = []
    outputs = turns = 0
    for message in a:
        if message.type == "tool_output":
            outputs += 1
            if outputs % 10 == 0:
                message = message.with_(content=message.content.replace("def", "async def", 1))
        if message.type == "final_answer":
            turns += 1
            if turns % 5 == 0:
                call = {"id": f"extra{turns}", "type": "function",
                        "function": {"name": "grep", "arguments": json.dumps({"q": "TODO"})}}  # fmt: skip
                out.append(AiMessage(f"xa{turns}", "assistant", "tool_calls", "", message.timestamp,
                                     {"tool_calls": [call]}))  # fmt: skip
                out.append(AiMessage(f"xt{turns}", "tool", "tool_output", "no match", message.timestamp,
                                     {"tool_call_id": f"extra{turns}", "tool_name": "grep"}))  # fmt: skip
        out.append(message)
    return out[:size]


def request(messages: list[AiMessage], layer: dict, tokenizer: DefaultTokenizer | None = None) -> CostRequest:
    """A costed replay counting with `tokenizer` (a fresh one, nothing counted yet, when None)."""
    options = BuildOptions(tokenizer=tokenizer or DefaultTokenizer(), model_id="claude-sonnet-4-5")
    price = BUILTIN_PRICES.find("claude-sonnet-4-5")
    return CostRequest(tuple(messages), define_context_policy(layer), options, 80, (), "openai", price)


def one_replay(messages: list[AiMessage]) -> int:
    _, stream = cost_stream(request(messages, LAYER))
    return sum(1 for _ in paced_collection(stream))  # the collector paced as `replay` and `diff` pace it


def diff(
    a: list[AiMessage], layer_a: dict, b: list[AiMessage], layer_b: dict, jobs: int
) -> tuple[str, int, int]:
    # one fresh tokenizer for both sides, as the command's: both count with `tokenizer_from_policy`'s
    tokenizer = DefaultTokenizer()
    sources = parallel_sides(
        ReplaySource("A", request(a, layer_a, tokenizer), "bench-a"),
        ReplaySource("B", request(b, layer_b, tokenizer), "bench-b"),
        jobs,
    )
    result = diff_runs(*sources)
    return result.alignment, len(result.steps), len(result.changed_steps)


def cpu_seconds() -> float:
    """CPU time of this process and of its children that ended (a diff's worker is joined before it ends)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def once(run: Callable[[], object]) -> tuple[object, float, float]:
    """`run()`'s result, its wall and its CPU seconds."""
    wall, cpu = time.perf_counter(), cpu_seconds()
    out = run()
    return out, time.perf_counter() - wall, cpu_seconds() - cpu


def rounds(base: Callable[[], object], runs: dict[str, Callable[[], object]], repeat: int) -> dict[str, Any]:
    """Each round times `base` and then every run, so that a change of the machine's speed (up to 2x
    within seconds on a shared VM) meets them alike; per run, the medians of its seconds and of its
    round's ratios to `base`, and its last result."""
    seen: dict[str, dict[str, list[float]]] = {
        name: {"wall": [], "cpu": [], "rw": [], "rc": []} for name in runs
    }
    base_times: dict[str, list[float]] = {"wall": [], "cpu": []}
    results: dict[str, object] = {}
    for _ in range(repeat):
        results["base"], wall0, cpu0 = once(base)
        base_times["wall"].append(wall0)
        base_times["cpu"].append(cpu0)
        for name, run in runs.items():
            results[name], wall, cpu = once(run)
            for key, value in (("wall", wall), ("cpu", cpu), ("rw", wall / wall0), ("rc", cpu / cpu0)):
                seen[name][key].append(value)
    median = statistics.median
    return {
        "base": (results["base"], median(base_times["wall"]), median(base_times["cpu"])),
        **{
            name: (results[name], *(median(v[k]) for k in ("wall", "cpu", "rw", "rc")))
            for name, v in seen.items()
        },
    }


def figures(wall: float, cpu: float, wall_ratio: float, cpu_ratio: float) -> str:
    return f"wall {wall:.2f} s = {wall_ratio:.2f} ×, CPU {cpu:.2f} s = {cpu_ratio:.2f} ×"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--size", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    load_encoding("cl100k_base")  # a one-off cost of the process, not of a replay
    a = make_session(args.size)
    b = run_b(a, args.size)
    print(f"median of {args.repeat} rounds (each: the replay, then every diff); CPU counts the diff's worker")
    print(f"load average at start: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    longer = b  # as many messages as A, more steps (the extra tool calls)
    cases = {
        f"{name}, --jobs {jobs}": partial(diff, *sides, jobs)
        for name, *sides in (
            ("two runs of a task", a, LAYER, b, LAYER),
            ("one session, two policies", a, LAYER, a, OTHER),
        )
        for jobs in (1, 2)
    }
    measured = rounds(lambda: one_replay(longer), cases, args.repeat)
    steps, wall, cpu = measured.pop("base")
    print(
        f"one replay of the longer run ({len(longer)} messages, {steps} steps, costed):"
        f" wall {wall:.2f} s, CPU {cpu:.2f} s"
    )
    for name, ((alignment, aligned, changed), *times) in measured.items():
        print(
            f"diff, {name}: {figures(*times)} one replay (target ≤ 2) · aligned by {alignment}: {aligned}"
            f" steps, {changed} differ"
        )
    commands(a, b, args.repeat)


def commands(a: list[AiMessage], b: list[AiMessage], repeat: int) -> None:
    """The same as the commands a user runs: `replay B --json` against `diff A B --json` (output to
    /dev/null), and `diff A --policy-a P1 --policy-b P2 --json`."""
    with tempfile.TemporaryDirectory() as folder:
        header = {
            "kind": "linn-session",
            "version": 1,
            "modelId": "claude-sonnet-4-5",
            "contextPolicy": LAYER,
        }
        path_a, path_b, other = (Path(folder) / name for name in ("a.jsonl", "b.jsonl", "other.yaml"))
        save_session(a, path_a, header=header)
        save_session(b, path_b, header=header)
        other.write_text(yaml.safe_dump(OTHER), encoding="utf-8")
        quiet = partial(_quiet, cli_main)
        runs = {
            f"{name} --jobs {jobs}": partial(quiet, [*argv, "--jobs", jobs])
            for name, argv in (
                ("diff A B --json", ["diff", str(path_a), str(path_b), "--json"]),
                ("diff A --policy-b OTHER --json", ["diff", str(path_a), "--policy-b", str(other), "--json"]),
            )
            for jobs in ("1", "2")
        }
        measured = rounds(partial(quiet, ["replay", str(path_b), "--json"]), runs, repeat)
        _, wall, cpu = measured.pop("base")
        print(f"command: replay B --json: wall {wall:.2f} s, CPU {cpu:.2f} s")
        for name, (_, *times) in measured.items():
            print(f"command: {name}: {figures(*times)} replay (target ≤ 2)")


def _quiet(run: Callable[[list[str]], int], argv: list[str]) -> int:
    with open(os.devnull, "w") as sink, contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        return run(argv)


if __name__ == "__main__":
    main()
