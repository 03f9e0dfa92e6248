"""Benchmark: loading within bounds (numbers, not pass/fail).

    .venv/bin/python bench/bench_bad_input.py

Prints the time `load_session` takes on a generated 100,001-line session (the cost of the bounds on the
common path), how fast each hostile input is refused (a 10,000-deep line, a YAML alias bomb that would
expand to 9^10 values, a 10,000-deep policy), and the provider check on a 10,000-message wire.
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.policy import PolicyFileError, read_policy_file  # noqa: E402
from engine.provider_check import check_wire  # noqa: E402
from engine.session import load_session  # noqa: E402


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


if __name__ == "__main__":
    main()
