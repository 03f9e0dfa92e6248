"""`linn-playground runs …` (list, show, query, import the stored runs) and the recording behind
`replay --record` and `sweep --record`. Exit codes as the README's table: 0 fine, 1 a problem (a query
that fails, a run that could not be recorded), 2 nothing could load (no store, a store that cannot be
opened, no such run, no Parquet runs to import)."""

from __future__ import annotations

import json
import math
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from playground.cli.report import printable

INSTALL_HINT = "the audit store needs duckdb and pyarrow: pip install 'linn-playground[store]'"
CELL = 40  # widest table cell; --json has every value whole
SHOWN = ("recorded_at", "source", "title", "session_hash", "policy_hash", "defaults", "engine_version",
         "settings", "sweep", "sweep_policy", "policy_changes")  # fmt: skip


def _store_module() -> Any:
    """playground.app.store, or None (one line said) when its extra is not installed."""
    try:
        import duckdb  # noqa: F401
    except ImportError:
        print(f"error: {INSTALL_HINT}", file=sys.stderr)
        return None
    import playground.app.store as store

    return store


def replay_capture(args, inputs: Any, policy: Any, table: Any, options: dict[str, Any]) -> Any:
    """`replay --record`: the replay's rows for the audit store, with the settings that made it."""
    from playground.app.store.capture import RunCapture, replay_settings

    settings = replay_settings(
        wire=args.wire, model=args.model, prices=table, copy=inputs.copy, as_recorded=args.as_recorded,
        conversation=args.conversation, max_steps=options["max_steps"], calibration=inputs.calibration,
        given_offset=inputs.given_offset,
    )  # fmt: skip
    return RunCapture(inputs, policy, settings)


def record_runs(path: str | None, runs: list[Any]) -> bool:
    """Record captured runs (each its own transaction); one line each on stderr. False on a failure."""
    store = _store_module()
    if store is None:
        return False
    try:
        with store.open_store(path) as opened:
            for run in runs:
                new = not opened.has(run.run_id)
                opened.record(run)
                said = "recorded" if new else "already recorded"
                print(f"{said}: run {run.run_id[:12]} in {opened.path}", file=sys.stderr)
    except store.StoreError as error:
        print(f"error: not recorded: {error}", file=sys.stderr)
        return False
    return True


@contextmanager
def sweep_capture(args, jobs: list[Any]) -> Iterator[tuple[list[Any], Callable[[Any], None] | None]]:
    """The sweep's jobs and what takes each finished run: `--record` records it in the store (kept open
    for the sweep), `--parquet-runs DIR` has the workers write it. Raises SweepError with one line."""
    from playground.app.sweep import RETURN, SweepError, with_capture

    if args.record and args.parquet_runs:
        raise SweepError("choose --record or --parquet-runs (runs import DIR records the parts)")
    if not (args.record or args.parquet_runs):
        yield jobs, None
        return
    try:
        import duckdb  # noqa: F401
        import pyarrow  # noqa: F401  (the workers write Parquet with it)
    except ImportError:
        raise SweepError(INSTALL_HINT) from None
    if args.parquet_runs:
        yield with_capture(jobs, str(Path(args.parquet_runs).resolve())), None
        print(f"runs written as Parquet parts under {args.parquet_runs}", file=sys.stderr)
        return
    from playground.app.store import StoreError, open_store

    counts = Counter()
    try:
        with open_store(args.store) as store:

            def record(run: Any) -> None:
                counts[store.has(run.run_id)] += 1
                store.record(run)

            yield with_capture(jobs, RETURN), record
            print(f"recorded {counts[False]} runs ({counts[True]} already there) in {store.path}",
                  file=sys.stderr)  # fmt: skip
    except StoreError as error:
        raise SweepError(f"not recorded: {error}") from None


def _since(text: str) -> datetime:
    """`7d`, `12h`, `30m` ago, or an ISO date/time (UTC)."""
    relative = re.fullmatch(r"(\d+)([dhm])", text.strip())
    if relative:
        amount, unit = int(relative.group(1)), relative.group(2)
        units = {"d": "days", "h": "hours", "m": "minutes"}
        try:
            return datetime.now(UTC).replace(tzinfo=None) - timedelta(**{units[unit]: amount})
        except OverflowError:  # further back than year 1
            raise ValueError(f"--since {text!r}: further back than any date") from None
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        expected = "expected 7d, 12h, 30m or an ISO date such as 2026-12-01"
        raise ValueError(f"--since {text!r}: {expected}") from None
    return moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment


def run_runs(args) -> int:
    store = _store_module()
    if store is None:
        return 2
    action = getattr(args, "runs_command", None) or "list"
    try:
        if action == "import":
            with store.open_store(args.store) as opened:
                return _import(opened, args)
        with store.open_store(args.store, read_only=True) as opened:
            if action == "show":
                return _show(opened, args)
            if action == "list":
                return _list(opened, args)
            if action == "export":
                return _export(opened.get(args.run_id), args)
    except ValueError as error:  # a bad --since
        print(f"error: {error}", file=sys.stderr)
        return 2
    except store.StoreError as error:
        print(f"error: {printable(str(error))}", file=sys.stderr)
        return 2
    return _query(store, args)


def _list(opened: Any, args) -> int:
    since = _since(args.since) if args.since else None
    rows = opened.runs(session=args.session, policy_hash=args.policy_hash, since=since)
    if args.json:
        for row in rows:
            print(json.dumps(row, default=str, ensure_ascii=False))
        return 0
    shown = [{**row, "run_id": row["run_id"][:12], "policy_hash": row["policy_hash"][:12]} for row in rows]
    names = ["run_id", "recorded_at", "steps", "tokens_sent", "cache_breaks", "summaries_made",
             "user_requests_dropped", "cost_usd", "policy_hash", "source"]  # fmt: skip
    _print_table(names, [tuple(row[n] for n in names) for row in shown])
    print(f"{len(rows)} runs in {opened.path}", file=sys.stderr)
    return 0


def _show(opened: Any, args) -> int:
    stored = opened.get(args.run_id)
    run = stored.run
    if args.json:
        payload = {"run": run, "steps": stored.steps, "decisions": stored.decisions, "events": stored.events}
        print(json.dumps(payload, default=str, ensure_ascii=False))
        return 0
    print(f"run {run['run_id']}")
    for name in SHOWN:
        if run.get(name) is not None:
            print(f"{name}: {printable(str(run[name]))}")
    figures = {k: v for k, v in stored.totals.items() if not isinstance(v, (dict, list))}
    print("totals: " + ", ".join(f"{k} {v}" for k, v in figures.items()))
    names = ["step", "messages", "final_tokens", "tokens_sent", "cached_tokens", "cache_break_by",
             "summary_made", "reminders", "markers", "cost_usd"]  # fmt: skip
    _print_table(names, [tuple(step[n] for n in names) for step in stored.steps])
    lost = [d for d in stored.decisions if not d["final"] and d["action"] != "kept"]
    print(f"decisions stored: {len(stored.decisions)} (watched messages not kept at some step: "
          f"{len({d['message_id'] for d in lost})}); events: {len(stored.events)}")  # fmt: skip
    return 0


def _query(store: Any, args) -> int:
    # read-only, and no file or network access from SQL: the store's own tables only
    config = {"enable_external_access": False}
    try:
        with store.open_store(args.store, read_only=True, config=config) as opened:
            names, rows = opened.query(args.sql)
    except store.StoreError as error:
        print(f"error: {printable(str(error))}", file=sys.stderr)
        return 1 if str(error).startswith("query failed") else 2
    if args.json:
        keys = _distinct(names)
        if keys != names:
            renamed = ", ".join(f"{k}" for k, n in zip(keys, names, strict=True) if k != n)
            print(f"note: columns sharing a name are keyed {renamed} in --json", file=sys.stderr)
        for row in rows:
            values = [_finite(value) for value in row]
            print(json.dumps(dict(zip(keys, values, strict=True)), default=str, ensure_ascii=False))
    else:
        _print_table(names, rows)
    return 0


def _distinct(names: list[str]) -> list[str]:
    """Column names as JSON keys: a name given again takes `_2`, `_3`… (a join's `tokens_sent` of runs
    and of steps were one key, and the first was silently gone)."""
    seen: dict[str, int] = {}
    keys = []
    for name in names:
        seen[name] = seen.get(name, 0) + 1
        key = name if seen[name] == 1 else f"{name}_{seen[name]}"
        while key in names and seen[name] > 1:
            seen[name] += 1
            key = f"{name}_{seen[name]}"
        keys.append(key)
    return keys


def _finite(value: Any) -> Any:
    """NaN and infinity as null: strict JSON readers (jq, JSON.parse) refuse Python's bare words."""
    return None if isinstance(value, float) and not math.isfinite(value) else value


def _export(stored: Any, args) -> int:
    """The run's session, policy and fences as files the other commands open: replay it again, open it
    in the playground, diff it. Written atomically; an existing file only with --force."""
    from engine import PolicyFileError, write_atomic

    folder = Path(args.directory)
    stem = f"run-{stored.run_id[:12]}"
    files = {folder / f"{stem}.jsonl": stored.session_jsonl}
    files[folder / f"{stem}.policy.yaml"] = stored.policy_yaml
    if stored.fences_yaml:
        files[folder / f"{stem}.fences.yaml"] = stored.fences_yaml
    there = [str(path) for path in files if path.exists()]
    if there and not args.force:
        print(f"error: {there[0]}: already exists; pass --force to replace it", file=sys.stderr)
        return 2
    if folder.exists() and not folder.is_dir():
        print(f"error: {folder}: not a folder (the run's files are written into one)", file=sys.stderr)
        return 2
    try:
        folder.mkdir(parents=True, exist_ok=True)
        for path, text in files.items():
            write_atomic(path, text)
    except PolicyFileError as error:  # names the file it could not write
        print(f"error: {error}", file=sys.stderr)
        return 2
    except OSError as error:
        print(f"error: {folder}: {error.strerror or error}", file=sys.stderr)
        return 2
    paths = list(files)
    fences = f" --fences {paths[2]}" if len(paths) > 2 else ""
    print(f"wrote {', '.join(map(str, paths))}")
    defaults = stored.run["defaults"]
    print(f"open it: linn-playground {paths[0]} --policy {paths[1]}{fences} --defaults {defaults}")
    return 0


def _import(opened: Any, args) -> int:
    from playground.app.store.parquet import import_parquet

    added, present = import_parquet(opened, args.directory)
    print(f"imported {added} runs from {args.directory} into {opened.path} ({present} already there)")
    return 0


def _cell(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.6g}"
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%d %H:%M:%S")
    text = printable(" ".join(str(value).split()))
    return text if len(text) <= CELL else text[: CELL - 1] + "…"


def _print_table(names: list[str], rows: list[tuple[Any, ...]]) -> None:
    cells = [[_cell(v) for v in row] for row in rows]
    widths = [max([len(n), *(len(r[i]) for r in cells)]) for i, n in enumerate(names)]
    print("  ".join(n.ljust(w) for n, w in zip(names, widths, strict=True)).rstrip())
    for row in cells:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip())
