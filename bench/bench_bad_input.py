"""Benchmark: loading within bounds (numbers, not pass/fail).

    .venv/bin/python bench/bench_bad_input.py

Prints the time `load_session` takes on a generated 100,001-line session (the cost of the bounds on the
common path), how fast each hostile input is refused (a 10,000-deep line, a YAML alias bomb that would
expand to 9^10 values, a 10,000-deep policy), the provider check on a 10,000-message wire, and how many
runs of the bad-input corpus (tests/badinput/expected.yaml, and a FIFO given to each command that reads a
file) end clearly: the exit code and the line the README gives, no traceback, no hang.
"""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.policy import PolicyFileError, read_policy_file  # noqa: E402
from engine.provider_check import check_wire  # noqa: E402
from engine.session import load_session  # noqa: E402
from playground.cli.main import main as cli  # noqa: E402

CORPUS = Path(__file__).resolve().parents[1] / "tests" / "badinput"
SECONDS = 20  # a run slower than this counts as a hang
FIFO_RUNS = (
    "validate {fifo}", "validate good_session.jsonl --policy {fifo}",
    "validate good_session.jsonl --fences {fifo}",
    "build good_session.jsonl --calibration {fifo}", "build good_session.jsonl --system-prompt {fifo}",
    "replay good_session.jsonl --prices {fifo}", "replay good_session.jsonl --tools {fifo}",
    "conformance {fifo}", "import {fifo}", "calibrate {fifo}",
)  # fmt: skip


def best_ms(action, repeat: int = 3) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def write_session(path: Path, pairs: int) -> None:
    with path.open("w", encoding="utf-8") as out:
        out.write(json.dumps({"kind": "linn-session", "version": 1}) + "\n")
        for i in range(pairs):
            call = {"id": f"c{i}", "type": "function", "function": {"name": "grep", "arguments": '{"q": 1}'}}
            stamp = 1_700_000_000_000 + i
            out.write(
                json.dumps(
                    {
                        "id": f"a{i}",
                        "role": "assistant",
                        "type": "tool_calls",
                        "content": "",
                        "timestamp": stamp,
                        "metadata": {"tool_calls": [call]},
                    }
                )
                + "\n"
            )
            out.write(
                json.dumps(
                    {
                        "id": f"t{i}",
                        "role": "tool",
                        "type": "tool_output",
                        "content": "x" * 200,
                        "timestamp": stamp,
                        "metadata": {"tool_call_id": f"c{i}", "tool_name": "grep"},
                    }
                )
                + "\n"
            )


def alias_bomb() -> str:
    text, previous = 'a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n', "a"
    for name in "bcdefghi":
        text += f"{name}: &{name} [" + ",".join([f"*{previous}"] * 9) + "]\n"
        previous = name
    return text


def refused(path: Path) -> str:
    try:
        read_policy_file(path)
    except PolicyFileError as error:
        return str(error)
    return "accepted"


def _hang(signum, frame):
    raise TimeoutError


def corpus_run(run: dict) -> bool:
    """One corpus run, in this process: its exit code and line as expected, no traceback, no hang."""
    out, err = io.StringIO(), io.StringIO()
    signal.signal(signal.SIGALRM, _hang)
    signal.alarm(SECONDS)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = cli(run["run"].format(file=run["file"]).split())
    except (TimeoutError, Exception):  # noqa: BLE001 - an escaped exception is a run that did not end clearly
        return False
    finally:
        signal.alarm(0)
    text = out.getvalue() + err.getvalue()
    lines = [line.strip() for line in text.splitlines()]
    said = any(run["says_in"] in line for line in lines) if "says_in" in run else run["says"] in lines
    return code == run["exit"] and said and "Traceback" not in text and "internal error" not in text


def fifo_run(command: str, fifo: Path) -> bool:
    """A FIFO given to a command, in a subprocess: refused with exit 2 before it is opened."""
    args = [sys.executable, "-m", "playground.cli", *command.format(fifo=fifo).split()]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    try:
        done = subprocess.run(args, cwd=CORPUS, capture_output=True, text=True, timeout=SECONDS, env=env)
    except subprocess.TimeoutExpired:
        return False
    return done.returncode == 2 and done.stderr.strip().endswith("is a FIFO (named pipe), not a regular file")


def corpus_tally() -> None:
    runs = yaml.safe_load((CORPUS / "expected.yaml").read_text(encoding="utf-8"))
    here = os.getcwd()
    os.chdir(CORPUS)
    try:
        unclear = [f"{r['file']} ({r['run'].split()[0]})" for r in runs if not corpus_run(r)]
    finally:
        os.chdir(here)
    with tempfile.TemporaryDirectory() as folder:
        fifo = Path(folder) / "pipe"
        os.mkfifo(fifo)
        unclear += [command.format(fifo="FIFO") for command in FIFO_RUNS if not fifo_run(command, fifo)]
    total = len(runs) + len(FIFO_RUNS)
    print(f"bad-input corpus: {total - len(unclear)} of {total} runs end clearly")
    for name in unclear:
        print(f"  not clearly: {name}")


def main() -> None:
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        session = root / "big.jsonl"
        write_session(session, 50_000)
        print(f"load_session, 100,001 lines:          {best_ms(lambda: load_session(session)):8.1f} ms")
        deep = root / "deep.jsonl"
        deep.write_text(
            '{"id":"d","role":"user","type":"user_input","metadata":' + "[" * 10_000 + "]" * 10_000 + "}"
        )
        print(f"load_session, one 10,000-deep line:   {best_ms(lambda: load_session(deep)):8.1f} ms")
        bomb = root / "bomb.yaml"
        bomb.write_text(alias_bomb())
        size = bomb.stat().st_size
        print(f"policy alias bomb ({size} bytes) refused: {best_ms(lambda: refused(bomb)):8.1f} ms")
        print(f"  {refused(bomb)}")
        deep_policy = root / "deep.yaml"
        deep_policy.write_text("budget: " + "[" * 10_000 + "]" * 10_000 + "\n")
        print(f"policy, 10,000-deep, refused:         {best_ms(lambda: refused(deep_policy)):8.1f} ms")
    wire = [{"role": "user", "content": "go"}]
    for i in range(5_000):
        wire.append({"role": "assistant", "content": None, "tool_calls": [{"id": f"c{i}", "function": {}}]})
        wire.append({"role": "tool", "tool_call_id": f"c{i}", "content": "ok"})
    print(f"provider check, {len(wire)}-message wire: {best_ms(lambda: check_wire(wire)):8.1f} ms")
    corpus_tally()


if __name__ == "__main__":
    main()
