"""Sweep policies over many sessions: every session × every policy of a grid replayed, one row of totals
each (`engine.cost`), and a summary per policy (sum, median, p90 over the sessions). No UI import.

    jobs = plan_sweep(["sample_sessions", "real/"], vary=["budget.maxTokens=16000,32000"])
    rows = run_sweep(jobs, out="results.csv", workers=4)      # processes; or scheduler="tcp://host:8786"

Local runs use every core (processes); `scheduler=` sends the same jobs to a Dask distributed cluster (the
`scale` extra), whose workers must see the session files at the same paths. A sweep is resumable: rows are
appended to `out` as they finish (to `OUT.partial.jsonl` for Parquet), and a rerun skips the pairs already
there. The finished file is rewritten in plan order, so a run's output does not depend on worker timing.
"""

from __future__ import annotations

import csv
import io
import itertools
import json
import os
import statistics
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, wait
from dataclasses import dataclass, replace
from multiprocessing import get_all_start_methods, get_context
from pathlib import Path
from typing import Any

from engine.cache_breaks import MECHANISMS
from engine.cost import CostTracker, SessionCost, iter_step_costs
from engine.errors import EngineError
from engine.policy import (
    ContextPolicy,
    PolicyFileError,
    PolicyValidationError,
    control_for,
    read_policy_file,
    runtime_problems,
    set_value,
    write_atomic,
)
from engine.prices import BUILTIN_PRICES, PriceTable, resolve_price
from engine.recorded import recorded_cost
from engine.safe_input import MAX_TRANSCRIPT_BYTES, InputError, load_yaml, output_kind_problem, read_text_file
from engine.session_lines import available_tools
from engine.tokens import set_count_threads
from engine.truth import Calibration
from playground.app.inputs import LOAD_ERRORS, find_sessions, load_inputs
from playground.app.recorded import RecordSetup, record_of, truths

FORMATS = (".csv", ".jsonl", ".parquet")
# the totals a row carries (camelCase, as `replay --json`), then one column per cache-break mechanism
TOTALS = (
    "steps",
    "tokensSent",
    "cachedTokens",
    "newTokens",
    "cachedShare",
    "outputTokens",
    "cacheBreaks",
    "summariesMade",
    "medianStepsBetweenSummaries",
    "summarizerCalls",
    "summarizerPromptTokens",
    "summarizerSummaryTokens",
    "overBudgetSteps",
    "failedSteps",
    "userRequestsDropped",
    "priceModel",
    "costUsd",
    "costNoCacheUsd",
    "promptTokens",  # a recorded session's: the provider's counts this policy is predicted to get
    "recordedStepsCostUsd",
)
RECORDED = ("recordedCostUsd", "rebuildMedianErrorPct")  # what the record billed; the rebuild's error
BREAKS = tuple(f"breaks.{name}" for name in MECHANISMS)
SUMMARIZED = ("tokensSent", "cachedShare", "cacheBreaks", "summarizerCalls", "overBudgetSteps",
              "userRequestsDropped", "costUsd")  # fmt: skip


RUN_KEY = "_captured"  # a row's captured run, on its way from a worker to `on_run`
RETURN = "return"  # SweepJob.capture: the worker returns the run's rows to be recorded where the sweep runs


class SweepError(ValueError):
    """A sweep that cannot start: a bad --vary, no session, an unknown output format."""


@dataclass(frozen=True, slots=True)
class SweepJob:
    """One session × one grid policy: what a worker (a process or a Dask worker) needs, all picklable."""

    session: str
    policy_id: str  # `budget.maxTokens=16000 summarization.triggerThreshold=0.6`; "base" for an empty grid
    overrides: tuple[tuple[str, Any], ...]
    base_policy: str | None = None  # --policy, replacing each session header's policy
    shape: str = "openai"
    model: str | None = None
    prices: PriceTable = BUILTIN_PRICES
    calibration: Calibration | None = None  # a recorded session's (`--calibration`), and `--tools`' tokens
    given_offset: int | None = None
    as_recorded: bool = False
    fmt: str | None = None  # --from: the format transcripts are read as (None: detected)
    # the audit store: RETURN sends each run back (`sweep --record`), a folder gets its Parquet parts
    capture: str | None = None
    sweep_id: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.session, self.policy_id


# -- planning ----------------------------------------------------------------------------------------


def parse_vary(spec: str) -> tuple[str, list[Any]]:
    """`budget.maxTokens=16000,32000` → ("budget.maxTokens", [16000, 32000]); values read as YAML scalars."""
    field, sep, values = spec.partition("=")
    field = field.strip()
    if not sep or not field or not values.strip():
        example = "budget.maxTokens=16000,32000"
        raise SweepError(f"--vary {spec!r}: expected FIELD=VALUE[,VALUE...], e.g. {example}")
    try:
        control_for(tuple(field.split(".")))
    except KeyError as error:
        raise SweepError(f"--vary {spec!r}: {error.args[0]}") from None
    parsed = []
    for raw in values.split(","):
        if not raw.strip():  # `a=1,` would sweep the default (null) as one more policy
            raise SweepError(f"--vary {spec!r}: an empty value (a comma too many?)")
        try:  # read as a policy file's values are (YAML 1.2 numbers: 020000 is 20000)
            value = load_yaml(raw.strip(), "--vary").data
        except InputError:
            raise SweepError(f"--vary {spec!r}: {raw.strip()!r} is not a plain value") from None
        if value in parsed:  # the same policy twice would count its sessions twice in the summary
            raise SweepError(f"--vary {spec!r}: {raw.strip()} given twice")
        parsed.append(value)
    return field, parsed


def policy_grid(varies: Sequence[str]) -> list[tuple[str, tuple[tuple[str, Any], ...]]]:
    """Every combination of the --vary values, as (policy id, overrides), in the order given."""
    axes = [parse_vary(spec) for spec in varies]
    fields = [field for field, _ in axes]
    if len(set(fields)) != len(fields):
        twice = sorted({f for f in fields if fields.count(f) > 1})
        raise SweepError("--vary names a field twice: " + ", ".join(twice))
    grid = []
    for values in itertools.product(*(values for _, values in axes)):
        overrides = tuple(zip(fields, values, strict=True))
        grid.append((" ".join(f"{f}={json.dumps(v)}" for f, v in overrides) or "base", overrides))
    return grid


def plan_sweep(
    paths: Iterable[str | Path],
    vary: Sequence[str] = (),
    *,
    base_policy: str | Path | None = None,
    shape: str = "openai",
    model: str | None = None,
    prices: PriceTable = BUILTIN_PRICES,
    record: RecordSetup | None = None,
    fmt: str | None = None,
) -> list[SweepJob]:
    """The jobs of a sweep: sessions (outer) × grid policies (inner). Raises `SweepError` when the grid or
    the session list is unusable; a grid value the engine refuses is named with its field."""
    sessions, _ = find_sessions(paths)
    if not sessions:
        raise SweepError("no session files found")
    grid = policy_grid(vary)
    for policy_id, overrides in grid:  # fail before any replay: the engine's own checks of each value
        try:
            varied = _apply(ContextPolicy(), overrides)
        except PolicyValidationError as error:
            raise SweepError(f"--vary {policy_id}: {'; '.join(str(i) for i in error.issues)}") from None
        problems = runtime_problems(varied)  # across fields, on the defaults: reservedForResponse < maxTokens
        if problems:
            said = "; ".join(f"{'.'.join(p.path)}: {p.message}" for p in problems)
            raise SweepError(f"--vary {policy_id}: {said}")
    base = str(base_policy) if base_policy is not None else None
    if base is not None:  # one bad file, named once before any replay (not once a session)
        try:
            read_policy_file(base)
        except PolicyFileError as error:
            raise SweepError(f"--policy {error}") from None
    record = record or RecordSetup()
    return [
        SweepJob(str(session), policy_id, overrides, base, shape, model, prices,
                 record.calibration, record.given_offset, record.as_recorded, fmt)  # fmt: skip
        for session in sessions
        for policy_id, overrides in grid
    ]


def with_capture(jobs: Sequence[SweepJob], capture: str) -> list[SweepJob]:
    """The jobs capturing their runs for the audit store: `RETURN`, or a folder for Parquet parts. The
    sweep's id is the hash of its plan, so a resumed sweep writes into the same partitions."""
    from playground.app.store.capture import content_hash

    plan = json.dumps([[job.session, job.policy_id, job.base_policy, job.shape, job.model] for job in jobs])
    sweep_id = content_hash(plan)[:12]
    return [replace(job, capture=capture, sweep_id=sweep_id) for job in jobs]


def _apply(policy: ContextPolicy, overrides: Iterable[tuple[str, Any]]) -> ContextPolicy:
    for field, value in overrides:
        policy = set_value(policy, tuple(field.split(".")), value)
    return policy


# -- one job -----------------------------------------------------------------------------------------


def run_job(job: SweepJob) -> dict[str, Any]:
    """Replay one session under one grid policy: a row of totals (or `error`). Runs in a worker."""
    row: dict[str, Any] = {"session": job.session, "policy": job.policy_id, **dict(job.overrides)}
    try:
        inputs = load_inputs(job.session, job.base_policy, fmt=job.fmt)
        if not inputs.session.messages:
            return {**row, "error": "no messages"}
        setup = RecordSetup(job.calibration, job.given_offset, job.as_recorded)
        policy = _apply(setup.policy(inputs.policy), job.overrides)
        capture = _capture(job, inputs, policy) if job.capture else None
        totals, billed = _replay(job, inputs, policy, setup, capture)
    except (*LOAD_ERRORS, EngineError) as error:
        return {**row, "error": " ".join(str(error).split())[:300]}
    summary = totals.to_json()
    row.update({name: summary[name] for name in TOTALS})
    row.update(recordedCostUsd=billed, rebuildMedianErrorPct=totals.as_recorded_error.get("medianErrorPct"))
    row.update({f"breaks.{name}": totals.cache_breaks.get(name, 0) for name in MECHANISMS})
    if capture is not None:
        run = capture.finish(summary, sweep=job.sweep_id, sweep_policy=job.policy_id)
        row["run"] = run.run_id
        if job.capture == RETURN:
            row[RUN_KEY] = run  # taken off by run_sweep before the row is written anywhere
        else:
            from playground.app.store.parquet import write_run_parts

            write_run_parts(job.capture, run, job.sweep_id or "")
    return {**row, "error": None}


def capture_run(inputs: Any, policy: ContextPolicy, *, shape: str = "openai", model: str | None = None,
                prices: PriceTable = BUILTIN_PRICES) -> Any:  # fmt: skip
    """One replay of `inputs` (`PlaygroundInputs`) under `policy`, captured for the audit store as a sweep's
    worker does it (the notebook's `pg.record()`); a `CapturedRun`."""
    job = SweepJob(str(inputs.session.path), "", (), None, shape, model, prices, inputs.calibration,
                   inputs.given_offset)  # fmt: skip
    capture = _capture(job, inputs, policy)
    totals, _ = _replay(job, inputs, policy, RecordSetup(inputs.calibration, inputs.given_offset), capture)
    return capture.finish(totals.to_json())


def _capture(job: SweepJob, inputs: Any, policy: ContextPolicy) -> Any:
    from playground.app.store.capture import RunCapture, replay_settings

    settings = replay_settings(
        wire=job.shape, model=job.model, prices=job.prices, copy=inputs.copy, as_recorded=job.as_recorded,
        conversation=None, max_steps=inputs.max_steps, calibration=job.calibration,
        given_offset=job.given_offset,
    )  # fmt: skip
    return RunCapture(inputs, policy, settings)


def _replay(
    job: SweepJob, inputs: Any, policy: ContextPolicy, setup: RecordSetup, capture: Any = None
) -> tuple[SessionCost, float | None]:
    """The session's totals under `policy`, and what its record billed (None without one): a recorded
    session is priced per call and its prompts predicted as the provider counts them. `capture` (a
    `RunCapture`) is given every step."""
    options = inputs.build_options
    price, _ = resolve_price(job.prices, options["model_id"], job.model)
    steps_of = {"max_steps": inputs.max_steps, "available_tools": available_tools(inputs.header),
                "checkpoint_tool_name": policy.checkpoint.trigger_tool_name}  # fmt: skip
    run = record_of(inputs)
    recorded = bool(run.own_calls)
    tracker = CostTracker(inputs.session.messages, policy=policy, model_id=options["model_id"],
                          shape=job.shape, price=price, prices=job.prices if recorded else None)  # fmt: skip
    samples = setup.calibration.samples() if setup.calibration and recorded else ()
    stream = truths(inputs, run, setup, **steps_of) if recorded else None
    for step, cost in iter_step_costs(inputs.session.messages, policy, tracker=tracker, truths=stream,
                                      samples=samples, **steps_of, **options):  # fmt: skip
        if capture is not None:
            capture.add(step, cost)
    return tracker.totals(), round(recorded_cost(run, job.prices).cost_usd, 6) if recorded else None


# -- running -----------------------------------------------------------------------------------------

Progress = Callable[[dict[str, Any], int, int], None]  # a finished row, rows done, rows in all


def run_sweep(
    jobs: Sequence[SweepJob],
    *,
    out: str | Path | None = None,
    workers: int | None = None,
    scheduler: str | Any | None = None,
    on_row: Progress | None = None,
    on_run: Callable[[Any], None] | None = None,
) -> list[dict[str, Any]]:
    """Run the jobs not already in `out` and return every row of the plan in plan order (`out` keeps the
    rows it held of other jobs too). `workers` processes
    (default: every core; 1 runs here), or the Dask cluster at `scheduler`. Jobs capturing with `RETURN`
    give each finished run (a `CapturedRun`) to `on_run`, as it comes (`sweep --record` records it)."""
    store = ResultStore(out, [field for field, _ in jobs[0].overrides] if jobs else []) if out else None
    done = store.read() if store else {}
    todo = [job for job in jobs if job.key not in done]
    rows = dict(done)
    planned = {job.key for job in jobs}
    count = len(planned & done.keys())
    if on_row is not None and count:
        on_row({}, count, len(jobs))
    for row in _execute(todo, workers, scheduler):
        captured = row.pop(RUN_KEY, None)
        if captured is not None and on_run is not None:
            on_run(captured)
        rows[(row["session"], row["policy"])] = row
        count += 1
        if store:
            store.append(row)
        if on_row is not None:
            on_row(row, count, len(jobs))
    ordered = [rows[job.key] for job in jobs]
    if store:  # an earlier sweep's rows of other sessions or policies stay in the file, after this plan's
        store.finish(ordered + [row for key, row in done.items() if key not in planned])
    return ordered


def _execute(
    jobs: Sequence[SweepJob], workers: int | None, scheduler: str | Any | None
) -> Iterator[dict[str, Any]]:
    if not jobs:
        return
    if scheduler is not None:
        yield from _on_dask(jobs, scheduler)
        return
    workers = min(workers or os.cpu_count() or 1, len(jobs))
    if workers <= 1:
        yield from map(run_job, jobs)
        return
    # forkserver: workers fork from a clean server (no threads of ours, e.g. a progress bar, are copied)
    method = "forkserver" if "forkserver" in get_all_start_methods() else "spawn"
    context = get_context(method)  # each worker counts tokens on one thread: the workers fill the cores
    with ProcessPoolExecutor(workers, context, initializer=set_count_threads, initargs=(1,)) as pool:
        pending: set[Future[dict[str, Any]]] = set()
        queue = iter(jobs)
        for job in itertools.islice(queue, workers * 2):  # a bounded queue: an interrupt loses little
            pending.add(pool.submit(run_job, job))
        while pending:
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in finished:
                yield future.result()
                for job in itertools.islice(queue, 1):
                    pending.add(pool.submit(run_job, job))


def _on_dask(jobs: Sequence[SweepJob], scheduler: str | Any) -> Iterator[dict[str, Any]]:
    """The same jobs on a Dask distributed cluster (`scheduler`: an address, or a running Client)."""
    try:
        from distributed import Client, as_completed
    except ImportError:
        raise SweepError("--scheduler needs Dask distributed: pip install 'linn-playground[scale]'") from None
    try:
        client = scheduler if isinstance(scheduler, Client) else Client(scheduler, timeout="10s")
    except (OSError, ValueError, TimeoutError) as error:  # a bad address, a cluster that does not answer
        raise SweepError(f"--scheduler {scheduler}: cannot reach a Dask scheduler ({error})") from None
    try:
        futures = client.map(run_job, list(jobs), pure=False)
        for future in as_completed(futures):
            yield future.result()
    finally:
        if client is not scheduler:
            client.close()


# -- files ------------------------------------------------------------------------------------------


def columns(fields: Sequence[str]) -> list[str]:
    return ["session", "policy", *fields, *TOTALS, *RECORDED, *BREAKS, "error"]


class ResultStore:
    """A sweep's output: appended row by row while running (the resume journal), rewritten in plan order
    at the end. CSV and JSONL append to the file itself, Parquet to `OUT.partial.jsonl`."""

    def __init__(self, path: str | Path, fields: Sequence[str]) -> None:
        self.path = Path(path)
        if self.path.suffix not in FORMATS:
            raise SweepError(f"{self.path}: output must end in {', '.join(FORMATS)}")
        self.columns = columns(fields)
        parquet = self.path.suffix == ".parquet"
        self.journal = self.path.with_name(self.path.name + ".partial.jsonl") if parquet else self.path

    def read(self) -> dict[tuple[str, str], dict[str, Any]]:
        """The rows already written (a finished Parquet file, and any journal)."""
        rows: list[dict[str, Any]] = []
        if self.path.suffix == ".parquet" and self.path.exists():
            rows += _read_parquet(self.path)
        if self.journal.exists():
            rows += list(self._read_journal())
        return {(str(r["session"]), str(r["policy"])): r for r in rows}

    def _read_journal(self) -> Iterator[dict[str, Any]]:
        try:
            text = read_text_file(self.journal, max_bytes=MAX_TRANSCRIPT_BYTES)
        except InputError as exc:
            raise SweepError(str(exc)) from None
        if self.journal.suffix == ".csv":
            reader = csv.DictReader(io.StringIO(text))
            if reader.fieldnames and list(reader.fieldnames) != self.columns:
                raise SweepError(f"{self.journal}: written by a sweep of other fields; choose another --out")
            for row in reader:
                if None not in row and all(k in row for k in ("session", "policy")):  # a cut last line
                    yield {k: _from_csv(v) for k, v in row.items()}
            return
        for number, line in enumerate(text.splitlines(), 1):
            try:
                row = json.loads(line)
            except ValueError:
                continue  # the last line of an interrupted run may be cut short
            if not isinstance(row, dict) or not all(k in row for k in ("session", "policy")):
                # a session, or any other JSON lines: never resumed from, never appended to
                raise SweepError(f"{self.journal}:{number}: not a sweep's results row; choose another --out")
            yield row

    def append(self, row: dict[str, Any]) -> None:
        new = not self.journal.exists() or self.journal.stat().st_size == 0
        self.journal.parent.mkdir(parents=True, exist_ok=True)
        with self.journal.open("a", encoding="utf-8", newline="") as handle:
            if self.journal.suffix == ".csv":
                writer = csv.DictWriter(handle, self.columns, extrasaction="ignore")
                if new:
                    writer.writeheader()
                writer.writerow({k: _to_csv(row.get(k)) for k in self.columns})
            else:
                handle.write(json.dumps(row, ensure_ascii=False) + "\n")

    def finish(self, rows: list[dict[str, Any]]) -> None:
        if self.path.suffix == ".parquet":
            _write_parquet(self.path, rows, self.columns)
            self.journal.unlink(missing_ok=True)
            return
        write_atomic(self.path, render(rows, self.columns, self.path.suffix))


def render(rows: list[dict[str, Any]], names: Sequence[str], suffix: str) -> str:
    if suffix == ".jsonl":
        return "".join(json.dumps({k: row.get(k) for k in names}, ensure_ascii=False) + "\n" for row in rows)
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, names, extrasaction="ignore", lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: _to_csv(row.get(k)) for k in names})
    return buffer.getvalue()


def _to_csv(value: Any) -> Any:
    return "" if value is None else json.dumps(value) if isinstance(value, (list, dict, bool)) else value


def _from_csv(text: str) -> Any:
    if text == "":
        return None
    try:
        return json.loads(text)
    except ValueError:
        return text


def _write_parquet(path: Path, rows: list[dict[str, Any]], names: Sequence[str]) -> None:
    try:
        import pandas as pd
    except ImportError:
        hint = "pip install 'linn-playground[pandas]'"
        raise SweepError(f"a .parquet output needs pandas and pyarrow: {hint}") from None
    problem = output_kind_problem(path)
    if problem is not None:
        raise SweepError(f"{path}: {problem}")
    frame = pd.DataFrame([{k: row.get(k) for k in names} for row in rows], columns=list(names))
    temporary = path.with_name(path.name + ".tmp")
    frame.to_parquet(temporary, index=False)
    os.replace(temporary, path)


def _read_parquet(path: Path) -> list[dict[str, Any]]:
    import pandas as pd

    frame = pd.read_parquet(path)
    return [{k: (None if pd.isna(v) else v) for k, v in row.items()} for row in frame.to_dict("records")]


# -- summary -----------------------------------------------------------------------------------------


def _p90(values: list[float]) -> float:
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=10, method="inclusive")[8]


def summarize(rows: Iterable[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per policy, in first-seen order: sessions, failed rows, and sum / median / p90 over sessions of
    each summarized total."""
    by_policy: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by_policy.setdefault(row["policy"], []).append(row)
    summary = []
    for policy, group in by_policy.items():
        ok = [row for row in group if not row.get("error")]
        line: dict[str, Any] = {"policy": policy, "sessions": len(ok), "errors": len(group) - len(ok)}
        for name in SUMMARIZED:
            values = [float(row[name]) for row in ok if row.get(name) is not None]
            line[f"{name}.sum"] = round(sum(values), 6) if values else None
            line[f"{name}.median"] = round(statistics.median(values), 6) if values else None
            line[f"{name}.p90"] = round(_p90(values), 6) if values else None
        summary.append(line)
    return summary


def summary_path(out: str | Path) -> Path:
    """Where the per-policy summary goes: `results.summary.csv` beside `results.csv` (CSV for Parquet)."""
    path = Path(out)
    suffix = ".csv" if path.suffix == ".parquet" else path.suffix
    return path.with_name(f"{path.stem}.summary{suffix}")


SUMMARY_HEAD = ("policy", "sessions", "errors")  # the first columns of every summary `summarize` makes


def holds_other_than_a_summary(path: Path) -> bool:
    """`path` is a file whose first line is not a sweep summary's (CSV header or JSON line): a summary
    written there would replace something else."""
    if not path.is_file() or path.stat().st_size == 0:
        return False
    with path.open("rb") as file:
        first = file.readline(65536).decode("utf-8", errors="replace").strip()
    if first.startswith(",".join(SUMMARY_HEAD)):
        return False
    try:
        line = json.loads(first)
    except ValueError:
        return True
    return not (isinstance(line, dict) and list(line)[: len(SUMMARY_HEAD)] == list(SUMMARY_HEAD))


def write_summary(out: str | Path, summary: list[dict[str, Any]]) -> Path:
    path = summary_path(out)
    names = list(summary[0]) if summary else ["policy"]
    return write_atomic(path, render(summary, names, path.suffix))
