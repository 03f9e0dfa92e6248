"""Time `import_file` on a ~3 MB Claude Code transcript made by tiling a real one with fresh ids.

    .venv/bin/python bench/import_claude_code.py [--mb 3] [--source PATH] [--repeat 5]

Prints the file size, message count and the best wall time of `--repeat` runs. Numbers, not pass/fail.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from pathlib import Path

from engine.importers import import_file

DEFAULT_SOURCE = (
    Path(__file__).resolve().parents[1].parent / "shared/real-sessions/claude-code/tool_heavy.jsonl"
)
# uuids, Anthropic message ids and tool-use ids: renamed per tile so ids stay unique and pairs stay pairs.
ID_PATTERN = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?:msg|toolu)_[0-9A-Za-z]+"
)


def tile(source: str, target_bytes: int) -> str:
    parts: list[str] = []
    size, n = 0, 0
    while size < target_bytes:
        tile_text = ID_PATTERN.sub(lambda m, n=n: f"{m.group(0)}-t{n}", source)
        parts.append(tile_text if tile_text.endswith("\n") else tile_text + "\n")
        size += len(parts[-1].encode())
        n += 1
    return "".join(parts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=3.0)
    parser.add_argument("--source", type=Path, default=DEFAULT_SOURCE)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    text = tile(args.source.read_text(encoding="utf-8"), int(args.mb * 1024 * 1024))
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "tiled.jsonl"
        path.write_text(text, encoding="utf-8")
        timings = []
        for _ in range(args.repeat):
            start = time.perf_counter()
            result = import_file(path)
            timings.append(time.perf_counter() - start)
    size_mb = len(text.encode()) / 1024 / 1024
    print(
        f"{size_mb:.2f} MB, {text.count(chr(10))} lines -> {len(result.messages)} messages, "
        f"{len(result.unpaired)} unpaired, {len(result.problems)} problems"
    )
    print(f"best of {args.repeat}: {min(timings) * 1000:.0f} ms (worst {max(timings) * 1000:.0f} ms)")


if __name__ == "__main__":
    main()
