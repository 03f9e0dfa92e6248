"""Import speed and memory: every sample of every format, and a 100 MB Claude Code transcript.

    .venv/bin/python bench/bench_import.py [--repeat 3] [--big-mb 100] [--skip-big]

Prints, per format, the files read from the sample folders (tests/data/real-sessions and
../shared/real-sessions), their messages, the seconds the imports took (best of `--repeat` per file,
summed) and MB/s; then a Claude Code transcript of `--big-mb` MB made by tiling the real long session end
to end (fresh ids per tile, each tile's root chained to the previous tile's last line, so it is one
conversation), imported in a child process: seconds, messages and its peak RSS (the issue's target: 100 MB
in <= 10 s and <= 500 MB).
Numbers, not pass/fail.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.importers import detect_format, import_file  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = (ROOT / "tests" / "data" / "real-sessions", ROOT.parent / "shared" / "real-sessions")
LONG_SESSION = ROOT.parent / "shared" / "real-sessions" / "claude-code" / "long_session.jsonl"
# uuids, message ids and call ids: renamed per tile so ids stay unique and pairs stay pairs
ID_PATTERN = re.compile(
    r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|(?<=\")(?:msg|toolu|call)_[0-9A-Za-z]{6,}"
)
ROOT_LINK = '"parentUuid":null'
CHILD = """
import json, resource, sys, time
sys.path.insert(0, sys.argv[2])
from engine.importers import import_file
start = time.perf_counter()
result = import_file(sys.argv[1])
seconds = time.perf_counter() - start
peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps({"seconds": seconds, "messages": len(result.messages), "peakMb": peak_mb,
                  "format": result.format, "unpaired": len(result.unpaired)}))
"""


def samples(folders: tuple[Path, ...]) -> dict[str, list[Path]]:
    """Every file of the sample folders that an importer claims, by format."""
    found: dict[str, list[Path]] = defaultdict(list)
    for folder in folders:
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            if path.name.startswith("LICENSE") or path.name == "README.md":
                continue
            try:
                found[detect_format(path)].append(path)
            except ValueError:
                continue
    return found


def per_format(found: dict[str, list[Path]], repeat: int) -> None:
    print(f"{'format':<18} {'files':>5} {'MB':>7} {'messages':>9} {'seconds':>8} {'MB/s':>7}")
    for fmt, paths in sorted(found.items()):
        seconds, messages, size = 0.0, 0, 0
        for path in paths:
            best = float("inf")
            for _ in range(repeat):
                start = time.perf_counter()
                result = import_file(path)
                best = min(best, time.perf_counter() - start)
            seconds += best
            messages += len(result.messages)
            size += path.stat().st_size
        mb = size / 2**20
        print(f"{fmt:<18} {len(paths):5} {mb:7.2f} {messages:9} {seconds:8.3f} {mb / seconds:7.1f}")


def chained_tiles(source: str, target_bytes: int, out: Path) -> int:
    """Write tiles of a Claude Code transcript, one conversation end to end; returns the tiles written."""
    last_uuid: str | None = None
    written, n = 0, 0
    with out.open("w", encoding="utf-8") as file:
        while written < target_bytes:
            part = ID_PATTERN.sub(lambda m, n=n: f"{m.group(0)}-t{n}", source)
            if last_uuid is not None:
                part = part.replace(ROOT_LINK, f'"parentUuid":"{last_uuid}"', 1)
            part = part if part.endswith("\n") else part + "\n"
            file.write(part)
            written += len(part.encode())
            last_uuid = _last_uuid(part)
            n += 1
    return n


def _last_uuid(part: str) -> str | None:
    for line in reversed(part.splitlines()):
        if '"uuid"' in line:
            uuid = json.loads(line).get("uuid")
            if isinstance(uuid, str):
                return uuid
    return None


def big_claude(megabytes: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "big-claude-code.jsonl"
        tiles = chained_tiles(LONG_SESSION.read_text(encoding="utf-8"), megabytes * 2**20, path)
        size_mb = path.stat().st_size / 2**20
        child = subprocess.run(
            [sys.executable, "-c", CHILD, str(path), str(ROOT)], capture_output=True, text=True, check=True
        )
        report = json.loads(child.stdout)
        seconds = report["seconds"]
        print(
            f"claude-code, {tiles} tiles of {LONG_SESSION.name}: {size_mb:.1f} MB, {report['messages']} "
            f"messages, {seconds:.2f} s ({size_mb / seconds:.1f} MB/s), peak RSS {report['peakMb']:.0f} MB, "
            f"{report['unpaired']} unpaired"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--big-mb", type=int, default=100)
    parser.add_argument("--skip-big", action="store_true")
    args = parser.parse_args()
    per_format(samples(FOLDERS), args.repeat)
    if not args.skip_big:
        big_claude(args.big_mb)


if __name__ == "__main__":
    main()
