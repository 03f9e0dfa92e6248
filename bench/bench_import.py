"""Import speed: the largest real transcript of each format, and a 1 MB Codex rollout / 3 MB Claude Code
transcript made by tiling real ones with fresh ids (the issue's targets: a 1 MB rollout under 0.5 s).

    .venv/bin/python bench/bench_import.py [--repeat 5] [--real ../shared/real-sessions]

Prints per file: format, size, messages, calls paired, best and worst of `--repeat` runs, MB/s.
Numbers, not pass/fail.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from pathlib import Path

from engine.importers import detect_format, import_file

ROOT = Path(__file__).resolve().parents[1]
REAL = ROOT.parent / "shared" / "real-sessions"
# uuids, message ids and call ids: renamed per tile so ids stay unique and pairs stay pairs
ID_PATTERN = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?<=\")(?:msg|toolu|call)_[0-9A-Za-z]{6,}"
)
TILED = {  # name: (source under real-sessions, megabytes)
    "codex rollout, tiled": ("codex/rollout-small.jsonl", 1.0),
    "claude-code, tiled": ("claude-code/tool_heavy.jsonl", 3.0),
}


def tile(source: str, target_bytes: int) -> str:
    parts: list[str] = []
    size, n = 0, 0
    while size < target_bytes:
        part = ID_PATTERN.sub(lambda m, n=n: f"{m.group(0)}-t{n}", source)
        parts.append(part if part.endswith("\n") else part + "\n")
        size += len(parts[-1].encode())
        n += 1
    return "".join(parts)


def largest_per_format(folder: Path) -> dict[str, Path]:
    found: dict[str, Path] = {}
    for path in sorted(p for p in folder.rglob("*") if p.is_file() and not p.name.startswith("LICENSE")):
        if path.suffix == ".md" and path.name == "README.md":
            continue
        try:
            fmt = detect_format(path)
        except ValueError:
            continue
        if fmt not in found or path.stat().st_size > found[fmt].stat().st_size:
            found[fmt] = path
    return found


def measure(label: str, path: Path, repeat: int) -> None:
    timings = []
    for _ in range(repeat):
        start = time.perf_counter()
        result = import_file(path)
        timings.append(time.perf_counter() - start)
    size_mb = path.stat().st_size / 1024 / 1024
    calls = result.came_in()["toolCalls"]
    print(
        f"{label:<24} {result.format:<17} {size_mb:6.2f} MB {len(result.messages):6} msgs "
        f"{calls:5} calls {len(result.unpaired):3} unpaired  best {min(timings) * 1000:7.1f} ms "
        f"worst {max(timings) * 1000:7.1f} ms  {size_mb / min(timings):6.1f} MB/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--real", type=Path, default=REAL)
    args = parser.parse_args()
    for path in largest_per_format(args.real).values():
        measure(path.name[:24], path, args.repeat)
    with tempfile.TemporaryDirectory() as tmp:
        for label, (source, megabytes) in TILED.items():
            path = Path(tmp) / Path(source).name
            path.write_text(tile((args.real / source).read_text(encoding="utf-8"), int(megabytes * 2**20)))
            measure(label, path, args.repeat)


if __name__ == "__main__":
    main()
