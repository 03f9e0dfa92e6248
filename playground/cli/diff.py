"""`linn-playground diff`: two runs side by side, step by step (see `playground.app.rundiff`). It prints.

`diff A.jsonl B.jsonl` compares two recorded runs of a task; `diff SESSION --policy-a P1 --policy-b P2` one
session under two policies; `diff run:ID run:ID2`, or `diff run:ID --policy-b today.yaml`, stored runs
(`--store PATH`), the latter replayed under today's policy; `--all` shows every aligned step, `--json`
and `--html OUT` the other forms. On two cores or more, run B replays in a forked child beside run A
(`playground.app.side_worker`; `--jobs 1`: one process).
Exit codes as the other commands: 0 fine, 1 a skipped line, a policy warning or a failed step, 2 nothing
could load.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from playground.app.diffing import RunFiles, diff_text, open_runs
from playground.app.inputs import LOAD_ERRORS, PlaygroundInputs
from playground.app.recording import StoredRuns
from playground.app.rundiff import RunDiff, diff_runs
from playground.app.side_worker import parallel_sides
from playground.cli.report import printable
from playground.web.diff import diff_page
from playground.web.report import write_page_said


def add_diff_parser(commands: Any) -> None:
    diff = commands.add_parser(
        "diff", help="two runs side by side: wire, tokens, cost, cache breaks per step"
    )
    diff.add_argument("a", metavar="A", help="session or transcript (run A), or run:ID, a stored run")
    diff.add_argument("b", metavar="B", nargs="?", help="second session or run:ID (run B); default: A again")
    diff.add_argument("--store", metavar="PATH", help="the store run:ID is read from (see `runs`)")
    diff.add_argument("--policy", help="policy YAML/JSON for both runs (replaces each header's policy)")
    diff.add_argument("--policy-a", help="policy of run A (over --policy)")
    diff.add_argument("--policy-b", help="policy of run B (over --policy)")
    diff.add_argument("--fences", help="fence descriptors YAML for both runs")
    diff.add_argument("--defaults", choices=("seed", "linnkit-0.21"), default="seed")
    diff.add_argument("--copy", choices=("zh", "en"), default="zh")
    diff.add_argument("--conversation", type=int, help="for transcripts holding several conversations")
    diff.add_argument("--wire", choices=("openai", "anthropic"), default="openai", help="wire shape cached")
    diff.add_argument("--model", help="price row when a session header names no priced modelId")
    diff.add_argument("--prices", metavar="PRICES.yaml", help="price table rows over the built-in ones")
    diff.add_argument("--all", action="store_true", help="every aligned step, not only those that differ")
    diff.add_argument("--json", action="store_true", help="the diff as one JSON object")
    diff.add_argument("--html", metavar="OUT", help="write a self-contained HTML page of the diff")
    diff.add_argument(
        "--jobs", type=int, choices=(1, 2), help="processes replaying: 2 replays B beside A (default: 2 on a"
        " machine with two cores or more)",
    )  # fmt: skip


def run_diff(args: Any) -> int:
    files = RunFiles(
        args.a, args.b, args.policy, args.policy_a, args.policy_b, args.fences, args.defaults, args.copy,
        args.conversation, args.wire, args.model, args.prices,
    )  # fmt: skip
    stored = StoredRuns(args.store)
    try:
        loaded, sources = open_runs(files, stored.inputs)
    except LOAD_ERRORS as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    finally:
        stored.close()
    for inputs in loaded:
        if not inputs.session.messages and inputs.session.errors:
            for problem in inputs.session.errors:
                print(f"error: {problem}", file=sys.stderr)
            return 2
    noticed = dict.fromkeys(  # skipped lines and policy warnings, once each (A and B may be one file)
        str(line) for inputs in loaded for line in (*inputs.session.problems, *inputs.policy_warnings)
    )
    for line in noticed:
        print(printable(line), file=sys.stderr)
    diff = diff_runs(*parallel_sides(*sources, args.jobs))
    if args.html:
        if not _write(args.html, diff, loaded):
            return 2
    elif args.json:
        print(json.dumps(diff.to_json(), ensure_ascii=False))
    else:
        for line in diff_text(diff, every_step=args.all):
            print(printable(line))
    failed = any(side is not None and side.failed for step in diff.steps for side in (step.a, step.b))
    return 1 if failed or noticed else 0


def _write(out: str, diff: RunDiff, loaded: list[PlaygroundInputs]) -> bool:
    """Write the page atomically, never over either session."""
    return write_page_said(out, diff_page(diff), [Path(i.session.path) for i in loaded], "diff")
