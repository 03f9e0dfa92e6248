"""Differential check against linnkit 0.21.0 itself: random cases (`cases.py`) run through linnkit's own
pipeline (`oracle.test.ts`, in a linnkit checkout with its npm dependencies) and through our engine, and
every record compared as `linn-playground conformance` compares (ids the build creates are normalised).

    python bench/linnkit_oracle/fuzz.py LINNKIT_CHECKOUT [--seed N] [--count M] [--keep DIR]

Prints one line per case that differs and `N agree, M differ`; exit 1 when some differ. Cases linnkit
itself refuses (an invalid policy) are listed as `refused` and not counted. Needs node and npm; nothing
here runs in the test suite.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from cases import generate, generate_long, generate_real  # noqa: E402

from engine.conformance import compare, run_case  # noqa: E402
from engine.importers import import_file  # noqa: E402


def run_oracle(checkout: Path, cases: list[dict], work: Path) -> dict[str, dict]:
    """linnkit's records by case name (`{"harness": …}` for a case it refused)."""
    shutil.copy(Path(__file__).with_name("oracle.test.ts"), checkout / "src" / "oracle.test.ts")
    given, out = work / "cases.json", work / "oracle.jsonl"
    given.write_text(json.dumps(cases, ensure_ascii=False), encoding="utf-8")
    env = {**os.environ, "ORACLE_IN": str(given), "ORACLE_OUT": str(out)}
    done = subprocess.run(
        ["npx", "vitest", "run", "src/oracle.test.ts", "--silent"],
        cwd=checkout,
        env=env,
        capture_output=True,
        text=True,
        timeout=3000,
    )
    if done.returncode != 0 or not out.exists():
        raise SystemExit(f"{checkout}: the oracle did not run:\n{done.stdout[-2000:]}{done.stderr[-2000:]}")
    records = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines() if line]
    return {r["name"]: r for r in records}


def _as_the_port_sends(record: Any) -> Any:
    """linnkit's record with its one documented wire deviation applied: an empty `tool_calls` list is left
    out of a wire message (spec §5.6: providers reject `tool_calls: []`; the conformance corpus avoids it,
    the generator here makes such lists on purpose)."""
    if isinstance(record, list):
        return [_as_the_port_sends(item) for item in record]
    if not isinstance(record, dict):
        return record
    out = {key: _as_the_port_sends(value) for key, value in record.items()}
    if out.get("role") == "assistant" and out.get("tool_calls") == []:
        del out["tool_calls"]
    return out


def _imported(path: Path, most: int) -> list[dict]:
    """The transcript's first `most` messages as a case holds them (`id`, `role`, `type`, `content`, ...)."""
    return [message.to_dict() for message in import_file(path).messages[:most]]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkout", type=Path, help="a linnkit 0.21.0 source checkout with node_modules")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=300)
    parser.add_argument("--keep", type=Path, help="write the cases and linnkit's records here")
    parser.add_argument("--long", action="store_true", help="replays of long sessions only (`generate_long`)")
    parser.add_argument(
        "--real", nargs="+", type=Path, metavar="TRANSCRIPT", help="replays of these transcripts, imported"
    )
    parser.add_argument("--most", type=int, default=600, help="with --real: a transcript's first N messages")
    args = parser.parse_args(argv)
    if args.real:
        cases = generate_real(args.seed, args.count, [_imported(path, args.most) for path in args.real])
    else:
        cases = (generate_long if args.long else generate)(args.seed, args.count)
    work = args.keep or Path(tempfile.mkdtemp(prefix="linnkit-oracle-"))
    work.mkdir(parents=True, exist_ok=True)
    oracle = run_oracle(args.checkout, cases, work)
    agree = differ = refused = 0
    for case in cases:
        theirs = oracle.get(case["name"])
        if theirs is None or "harness" in theirs:
            refused += 1
            print(f"refused {case['name']}: {(theirs or {}).get('harness', 'no record')[:160]!r}")
            continue
        expected = dict(case, expected=_as_the_port_sends({k: v for k, v in theirs.items() if k != "name"}))
        difference = compare(expected, run_case(expected))
        if difference:
            differ += 1
            print(f"DIFFER {case['name']}: {difference[:400]}")
        else:
            agree += 1
    print(f"{agree} agree, {differ} differ, {refused} refused (seed {args.seed}, cases in {work})")
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
