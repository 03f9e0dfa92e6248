"""`linn-playground sweep`: sessions × a policy grid, with a progress bar, and one summary line a policy."""

from __future__ import annotations

import sys
from typing import Any

from playground.app.costing import price_table
from playground.app.inputs import LOAD_ERRORS
from playground.app.recorded import RecordSetup
from playground.cli import runs
from playground.cli.report import printable


def run_sweep(args) -> int:
    from playground.app import sweep

    try:
        table = price_table(args.prices)
        record = RecordSetup.load(args.calibration, args.tools, args.as_recorded)
        jobs = sweep.plan_sweep(
            args.sessions, args.vary, base_policy=args.policy, shape=args.wire, model=args.model,
            prices=table, record=record, fmt=args.fmt,
        )  # fmt: skip
        store_check = sweep.ResultStore(args.out, []) if args.out else None  # a bad suffix fails here
        del store_check
    except (sweep.SweepError, *LOAD_ERRORS) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    _, skipped = sweep.find_sessions(args.sessions)
    sessions = len({job.session for job in jobs})
    note = f"; {len(skipped)} files skipped (not a session or transcript)" if skipped else ""
    policies = len(jobs) // sessions
    print(f"sweep: {sessions} sessions × {policies} policies = {len(jobs)} replays{note}", file=sys.stderr)
    try:
        with runs.sweep_capture(args, jobs) as (jobs, on_run):
            rows = _with_progress(lambda on_row: sweep.run_sweep(
                jobs, out=args.out, workers=args.jobs, scheduler=args.scheduler, on_row=on_row, on_run=on_run
            ), len(jobs))  # fmt: skip
    except (sweep.SweepError, OSError) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    summary = sweep.summarize(rows)
    _print_sweep_summary(summary)
    failed = dict.fromkeys((row["session"], row["error"]) for row in rows if row.get("error"))
    for session, error in failed:  # one line a session (its error is the same under every policy)
        print(f"{printable(session)}: {printable(error)}", file=sys.stderr)
    if args.out:
        print(f"rows written to {args.out}; per-policy summary to {sweep.write_summary(args.out, summary)}")
    if not any(not row.get("error") for row in rows):
        return 2  # nothing could load: the README's code for it
    return 1 if failed else 0  # a session that failed is a problem found, as in every other command


def _with_progress(run, total: int):
    """Run with a progress bar and ETA on stderr (rich)."""
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn, TimeRemainingColumn

    columns = ("[progress.description]{task.description}", BarColumn(), MofNCompleteColumn(),
               TimeElapsedColumn(), "eta", TimeRemainingColumn())  # fmt: skip
    with Progress(*columns, console=Console(stderr=True)) as progress:
        task = progress.add_task("replaying", total=total)
        return run(lambda _row, done, _total: progress.update(task, completed=done))


SUMMARY_COLUMNS = (  # header, summary key, format, width
    ("cost $ sum", "costUsd.sum", ".4f", 11),
    ("median", "costUsd.median", ".4f", 9),
    ("p90", "costUsd.p90", ".4f", 9),
    ("sent sum", "tokensSent.sum", ",.0f", 12),
    ("cached med", "cachedShare.median", ".1%", 10),
    ("breaks", "cacheBreaks.sum", ".0f", 7),
    ("lost", "userRequestsDropped.sum", ".0f", 5),
)


def _print_sweep_summary(summary: list[dict[str, Any]]) -> None:
    """One line per policy: sessions, cost (sum, median, p90 over sessions), tokens, cache, losses."""
    width = min(max([len(line["policy"]) for line in summary] + [6]), 100)
    print(f"{'policy':<{width}} {'sessions':>8} " + " ".join(f"{h:>{w}}" for h, _, _, w in SUMMARY_COLUMNS))
    for line in summary:
        cells = ["-" if line[key] is None else format(line[key], fmt) for _, key, fmt, _ in SUMMARY_COLUMNS]
        widths = [w for *_, w in SUMMARY_COLUMNS]
        print(f"{printable(line['policy'])[:width]:<{width}} {line['sessions']:>8} "
              + " ".join(f"{c:>{w}}" for c, w in zip(cells, widths, strict=True)))  # fmt: skip
