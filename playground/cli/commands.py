"""The headless subcommands of `linn-playground` (the table: `playground.cli.main`). They print; the engine
decides."""

from __future__ import annotations

import json
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from engine import (
    AiMessage,
    BuildResult,
    CostTracker,
    LoadProblem,
    Price,
    PriceTable,
    RecordedRun,
    SessionLoadError,
    StepTruth,
    available_tools,
    build_at_step,
    build_context,
    check_invariants,
    hygiene_checks,
    iter_session_steps,
    iter_step_costs,
    policy_diff,
    step_points,
    to_anthropic,
    tokenizer_from_policy,
)
from playground.app.costing import price_choice, price_table
from playground.app.explain import ordinary_warnings
from playground.app.inputs import LOAD_ERRORS, PlaygroundInputs, load_inputs, loading_points
from playground.app.lessons import LessonError, side_lesson, start_policy
from playground.app.pacing import paced_collection
from playground.app.recorded import (
    RecordSetup,
    calibration_options,
    calibration_warnings,
    record_of,
    recorded_totals,
    truths,
)
from playground.app.recording import RUN_PREFIX, stored_inputs
from playground.app.views import steps_of
from playground.cli import runs
from playground.cli.progress import INTERRUPTED, stop_between_steps, with_progress
from playground.cli.report import build_json, print_build_table, printable
from playground.web.report import build_report, replay_report, write_page_said

T = TypeVar("T")


def _load(args, *, stream: bool = False) -> PlaygroundInputs | None:
    """The inputs, or None (exit 2) when nothing could load: each reason printed on one line. `stream`:
    a linn session may come still loading (`load_inputs`)."""
    try:
        copy = getattr(args, "copy", "zh")
        conversation = getattr(args, "conversation", None)
        system_prompt = getattr(args, "system_prompt", None)
        inputs = load_inputs(
            args.session, args.policy, args.fences, args.defaults, copy, conversation, system_prompt,
            fmt=getattr(args, "fmt", None), stream=stream,
        )  # fmt: skip
        setup = RecordSetup.load(getattr(args, "calibration", None), getattr(args, "tools", None))
        inputs.calibration, inputs.given_offset = setup.calibration, setup.given_offset
    except LOAD_ERRORS as error:
        print(f"error: {error}", file=sys.stderr)
        return None
    if not inputs.session.messages and inputs.session.errors:
        _print_unreadable(args.session, inputs.session.errors)
        return None
    return inputs


SHOWN_ERRORS = 5  # a file that is no session at all (a Markdown page) fails on every line


def _print_unreadable(path: str, errors: list[LoadProblem]) -> None:
    """Why no message loaded: each problem, or the first few and what the rest mean."""
    for problem in errors[:SHOWN_ERRORS]:
        print(f"error: {problem}", file=sys.stderr)
    if len(errors) > SHOWN_ERRORS:
        print(
            f"error: {path}: {len(errors) - SHOWN_ERRORS} more problems not shown; no line is a session "
            "message: a session file (JSON Lines) or a transcript `linn-playground import` reads is expected",
            file=sys.stderr,
        )


def _load_stored(args) -> PlaygroundInputs | None:
    """A stored run (`linn-playground run:ID [--policy today.yaml] [--store PATH]`), or None (exit 2)."""
    try:
        return stored_inputs(args.session, args.policy, args.store)
    except LOAD_ERRORS as error:
        print(f"error: {error}", file=sys.stderr)
        return None


def _input_problems(inputs: PlaygroundInputs) -> list[str]:
    """What the loaders skipped or warned about, one `file:line: field: reason` line each."""
    return [str(p) for p in inputs.session.problems]


def _policy_warnings(inputs: PlaygroundInputs) -> list[str]:
    return [str(w) for w in inputs.policy_warnings]


def run_open(args) -> int:
    inputs = _load_stored(args) if str(args.session or "").startswith(RUN_PREFIX) else _load(args)
    if inputs is None:
        return 2
    from playground.tui.app import run_app  # Textual loads only when the playground opens

    return run_app(inputs, args.store)


def run_serve(args) -> int:
    inputs = _load(args)  # fail here, in the terminal, not in a browser tab
    if inputs is None:
        return 2
    from playground.web.serve import app_command, serve

    path = inputs.session.path.resolve()
    files = {
        option: getattr(args, option[2:].replace("-", "_"), None)
        for option in ("--policy", "--fences", "--calibration", "--tools", "--system-prompt")
    }
    conversation = getattr(args, "conversation", None)
    command = app_command(path, inputs.defaults, inputs.copy, files, conversation, args.fmt)
    try:
        return serve(command, host=args.host, port=args.port, title=_report_title(inputs))
    except OSError as error:  # a port in use, an address this machine does not have
        where = f"{args.host or 'localhost'}:{args.port if args.port is not None else '(a free port)'}"
        print(f"error: cannot serve on {where}: {error.strerror or error}", file=sys.stderr)
        return 2


def run_validate(args) -> int:
    inputs = _load(args)
    if inputs is None:
        return 2
    messages = inputs.session.messages
    result = build_context(messages, inputs.policy, **inputs.build_options)
    types = Counter(m.type for m in messages)
    print(f"session: {inputs.session.path}  ({len(messages)} messages)")
    print("messages by type: " + ", ".join(f"{t} {n}" for t, n in sorted(types.items())))
    calls = sum(len(m.tool_calls) for m in messages if m.type == "tool_calls")
    outputs = sum(1 for m in messages if m.type == "tool_output")
    orphans = sum(1 for w in hygiene_checks(messages) if w.kind in ("orphan_output", "orphan_call"))
    print(f"tool calls: {calls}; tool outputs: {outputs}; orphans: {orphans}")
    tokenizer = tokenizer_from_policy(inputs.policy.token_estimation)
    total = sum(tokenizer.estimate_message(m) for m in messages)
    print(f"total tokens: {total}  (tokenizer: {result.tokens.backend})")
    changed = policy_diff(inputs.policy, inputs.defaults)
    print("policy, non-default fields: " + (json.dumps(changed, ensure_ascii=False) if changed else "none"))
    ordinary = _ordinary(inputs, messages)
    problems = _input_problems(inputs) + _hygiene_problems(inputs, result, ordinary)
    if result.error:
        problems.append(f"build failed: {result.error.code}: {result.error.message}")
    problems += [f"{f.id}: {f.message}" for f in check_invariants(result).failures]
    problems += [str(p) for p in result.provider_problems]
    if inputs.session.path is not None:  # the lesson beside the session, which the playground opens
        problems += _lesson_problems(inputs)
    warnings = _policy_warnings(inputs) + [ordinary[w] for w in result.warnings if w in ordinary]
    if args.strict:
        problems, warnings = problems + warnings, []
    print(f"problems: {len(problems)}")
    for problem in problems:
        print(f"  {printable(problem)}")
    if warnings:
        print(f"warnings: {len(warnings)} (--strict makes them problems)")
        for warning in warnings:
            print(f"  {printable(warning)}")
    return 1 if problems else 0


def _lesson_problems(inputs: PlaygroundInputs) -> list[str]:
    """What the playground would say of the lesson beside the session: a file it cannot read, or a start
    the engine refuses over the session's own policy."""
    lesson, problem = side_lesson(inputs.session.path)
    if problem:
        return [problem]
    try:
        if lesson is not None:
            start_policy(lesson, inputs.policy, inputs.defaults)
    except LessonError as error:
        return [str(error)]
    return []


def _ordinary(inputs: PlaygroundInputs, messages: list[AiMessage]) -> dict[str, str]:
    """The hygiene warnings real sessions show in normal use (an empty tool result, a call the session
    ends on, calls of an agent that records no results), each with its warning line."""
    recorded = inputs.header.get("toolResultsRecorded") is not False
    return ordinary_warnings(messages, results_recorded=recorded)


def _hygiene_problems(inputs: PlaygroundInputs, result: Any, ordinary: dict[str, str]) -> list[str]:
    """A build's warnings that are problems: not a policy warning said already, not ordinary."""
    said = {f"{w.field.removeprefix('contextPolicy.')}: {w.reason}" for w in inputs.policy_warnings}
    return [w for w in result.warnings if w not in said and w not in ordinary]


def run_build(args) -> int:
    inputs = _load(args)
    if inputs is None:
        return 2
    messages = inputs.session.messages
    header = inputs.header
    try:
        setup = RecordSetup.of(inputs, args.as_recorded)
        policy = setup.policy(inputs.policy)
        options = {**inputs.build_options, **calibration_options(setup, record_of(inputs), None)}
        if args.step is not None:
            max_steps = args.max_steps or inputs.max_steps
            tools = available_tools(header)
            _, _, result = build_at_step(
                messages,
                args.step,
                policy,
                max_steps=max_steps,
                available_tools=tools,
                checkpoint_tool_name=inputs.policy.checkpoint.trigger_tool_name,
                **options,
            )
        else:
            result = build_context(messages, policy, **options)
    except (IndexError, *LOAD_ERRORS) as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    invariants = check_invariants(result)
    noticed = _input_problems(inputs) + _policy_warnings(inputs)
    if args.html:
        if not _write_html(args.html, _build_page(args, inputs, result), inputs):
            return 2
    elif args.json:
        payload = build_json(result, invariants)
        payload["inputProblems"] = noticed
        payload["warnings"] += noticed  # a skipped line is never silent, even to a reader of `warnings` only
        if args.wire == "anthropic":
            payload["wire"] = to_anthropic(list(result.wire))
        print(json.dumps(payload, ensure_ascii=False, indent=1))
    else:
        print_build_table(result, invariants, args.wire)
    for line in noticed:
        print(printable(line), file=sys.stderr)
    if result.error:
        print(f"build failed: {result.error.code}: {result.error.message}", file=sys.stderr)
        return 1
    hygiene = _hygiene_problems(inputs, result, _ordinary(inputs, messages))  # as `validate` counts them
    return 1 if invariants.errors or result.provider_problems or noticed or hygiene else 0


def run_replay(args) -> int:
    # streamed (each step built once its messages are read, while the rest loads) unless the whole session
    # is needed first: a report, a recorded run, a progress bar's step count
    inputs = _load(args, stream=not (args.html or args.record or sys.stderr.isatty()))
    if inputs is None:
        return 2
    noticed = _input_problems(inputs) + _policy_warnings(inputs)
    for line in noticed:
        print(line, file=sys.stderr)
    if args.html:
        return _replay_html(args, inputs, noticed)
    run = record_of(inputs)
    priced = _replay_price(args, inputs, run)
    if priced is None:
        return 2
    table, price = priced
    setup = RecordSetup.of(inputs, args.as_recorded)
    policy = setup.policy(inputs.policy)
    for warning in calibration_warnings(inputs, run, policy.token_estimation.encoding):
        print(warning, file=sys.stderr)
    options = _replay_options(args, inputs)
    seen: list[StepTruth] = []
    stream = None
    if run.own_calls:
        stream = _recording(truths(inputs, run, setup, **_truth_options(options)), seen)
    tracker = CostTracker(
        inputs.session.messages, policy=policy, model_id=inputs.build_options["model_id"],
        shape=args.wire, price=price, prices=table if run.own_calls else None,
    )  # fmt: skip
    samples = setup.calibration.samples() if setup.calibration else ()
    # streamed: one step is held at a time (and the one before, for its cached prefix)
    steps = iter_step_costs(
        inputs.session.messages, policy, tracker=tracker, truths=stream, samples=samples,
        **options, **loading_points(inputs, options.get("checkpoint_tool_name")),
    )  # fmt: skip
    if inputs.reader is not None:
        steps = _telling(steps, inputs.session.problems, len(inputs.session.problems))  # those said so far
    capture = runs.replay_capture(args, inputs, policy, table, options) if args.record else None
    try:
        totals, interrupted = _write_steps(steps, seen if stream is not None else None, args.json,
                                           lambda: _step_count(inputs, options), capture)  # fmt: skip
    except SessionLoadError as error:  # the file stopped reading on the way: what was written stays whole
        print(f"error: {error}", file=sys.stderr)
        return 2
    names = ("steps", "summariesMade", "overBudgetSteps", "reminderSteps", "failedSteps")
    session_totals = tracker.totals()
    summary = {name: totals[name] for name in names} | session_totals.to_json()
    if run:
        summary |= recorded_totals(run, table, session_totals)
    if interrupted:  # the totals of the steps written, said to be partial
        summary["interrupted"] = True
        print(f"replay: interrupted after step {totals['steps']}; every record written is whole",
              file=sys.stderr)  # fmt: skip
    if args.json:
        print(json.dumps({"totals": summary}, ensure_ascii=False))
    else:
        print("totals: " + ", ".join(f"{name} {value}" for name, value in summary.items()))
    failed = bool(totals["failedSteps"] or noticed or inputs.session.problems)  # the lines read since too
    return _replay_end(args, inputs, run, capture, summary, failed=failed, interrupted=interrupted)


def _replay_end(args, inputs: PlaygroundInputs, run: RecordedRun, capture: Any, summary: dict[str, Any],
                *, failed: bool, interrupted: bool) -> int:  # fmt: skip
    """The record's warnings, the run recorded (`--record`; not a run Ctrl-C cut short), the exit code."""
    for problem, line in zip(run.problems, run.problem_lines, strict=True):
        where = f"{inputs.session.path}:{line}" if line else inputs.session.path
        print(f"warning: {where}: {problem}", file=sys.stderr)
    if interrupted:  # a partial run is not the run: nothing recorded
        return INTERRUPTED
    if capture is not None and not runs.record_runs(args.store, [capture.finish(summary)]):
        return 1
    return 1 if failed else 0


def _replay_html(args, inputs: PlaygroundInputs, noticed: list[str]) -> int:
    try:
        price_table(args.prices)  # the page shows no cost, but a file given is read: a bad one is said
    except LOAD_ERRORS as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    series = iter_session_steps(inputs.session.messages, inputs.policy, **_replay_options(args, inputs))
    rows, last = steps_of(series)
    policy = policy_diff(inputs.policy, inputs.defaults)
    page = replay_report(rows, last, title=_report_title(inputs), policy=policy)
    if not _write_html(args.html, page, inputs):
        return 2
    return 1 if any("!" in row.markers for row in rows) or noticed else 0


def _write_steps(
    steps: Iterator[tuple[Any, Any]],
    seen: list[StepTruth] | None,
    as_json: bool,
    count: Callable[[], int],
    capture: Any = None,
) -> tuple[Counter, bool]:
    """Print each step as it is made (a progress bar on a terminal), count them and hand each to `capture`
    (`--record`); whether Ctrl-C stopped the loop (between two steps: every record written is whole)."""
    totals: Counter = Counter()
    with stop_between_steps() as stop:
        for step, cost in with_progress(paced_collection(steps), count, "replay"):
            line = step.summary()
            if capture is not None:
                capture.add(step, cost, line)
            totals.update(
                steps=1,
                summariesMade=int(line["summaryMade"] is not None),
                overBudgetSteps=int(step.result.tokens.over_budget),
                failedSteps=int(step.result.error is not None),
                reminderSteps=int(bool(line["reminders"])),
            )
            _print_step(line, cost, seen[-1] if seen is not None else None, as_json=as_json)
            if stop.requested:
                break
    return totals, stop.requested


def _telling(steps: Iterator[T], problems: list[Any], told: int) -> Iterator[T]:
    """The steps of a session still loading, each line's problem printed as the loader finds it (as those
    of the lines read before the first step were)."""
    for step in steps:
        for problem in problems[told:]:
            print(problem, file=sys.stderr)
        told = len(problems)
        yield step
    for problem in problems[told:]:
        print(problem, file=sys.stderr)


def _step_count(inputs: PlaygroundInputs, options: dict[str, Any]) -> int:
    """The replay's step count, for its progress bar (counted only when a bar shows)."""
    names = {k: v for k, v in options.items() if k == "checkpoint_tool_name" and v is not None}
    return len(step_points(inputs.session.messages, **names))


def _print_step(line: dict[str, Any], cost: Any, truth: StepTruth | None, *, as_json: bool) -> None:
    if as_json:
        record = truth.to_json() if truth is not None else {}
        print(json.dumps({**line, **cost.to_json(), **record}, ensure_ascii=False), flush=True)
        return
    reminders = ",".join(line["reminders"]) or "-"
    broke = f"{cost.mechanism}@{cost.break_at}" if cost.mechanism else "-"
    print(
        f"step {line['step']:>4}  msgs {line['messages']:>5}  tokens {line['finalTokens']:>7}/"
        f"{line['totalBudget']:<7} kept {line['kept']:>5}  {line['markers'] or '-':<3} "
        f"carried {line['summariesCarried']:>2}  cached {cost.cached_tokens:>7}  break {broke}  "
        f"events {','.join(sorted(set(line['events']))) or '-'}  reminders {reminders}"
        + (_recorded_column(truth, cost) if truth is not None else "")
    )


def _recording(stream: Iterator[StepTruth], seen: list[StepTruth]) -> Iterator[StepTruth]:
    """The stream, each item kept in `seen` as it passes (the replay reads the truth of its step)."""
    for truth in stream:
        seen.append(truth)
        yield truth


def _truth_options(options: dict[str, Any]) -> dict[str, Any]:
    return {k: options[k] for k in ("max_steps", "available_tools", "checkpoint_tool_name") if k in options}


def _recorded_column(truth: StepTruth, cost: Any) -> str:
    if truth.recorded is None:
        return "  recorded -"
    error = truth.error
    shown = "-" if error is None else f"{100 * error:+.1f}%"
    return (
        f"  recorded {truth.recorded.usage.prompt_tokens:>7} ({truth.model})  as-recorded "
        f"{truth.as_recorded_prompt if truth.as_recorded_prompt is not None else '-':>7} {shown}"
        f"  this policy {cost.predicted_prompt_tokens if cost.predicted_prompt_tokens is not None else '-'}"
    )


def _replay_price(args, inputs: PlaygroundInputs, run: RecordedRun) -> tuple[PriceTable, Price | None] | None:
    """The price table and the replay's row (header modelId, else --model); None when the file is bad."""
    try:
        table = price_table(args.prices)
    except LOAD_ERRORS as error:
        print(f"error: {error}", file=sys.stderr)
        return None
    price, note = price_choice(table, inputs.build_options["model_id"], args.model)
    if run.own_calls:
        note = f"each recorded call by the model it names, else {note}"
    print(f"prices: {note}; from {table.describe()}", file=sys.stderr)
    return table, price


def _replay_options(args, inputs: PlaygroundInputs) -> dict[str, Any]:
    header = inputs.header
    return {
        **inputs.build_options,
        "max_steps": args.max_steps or inputs.max_steps,
        "available_tools": available_tools(header),
        "checkpoint_tool_name": inputs.policy.checkpoint.trigger_tool_name,
    }


def _build_page(args, inputs: PlaygroundInputs, result: BuildResult) -> str:
    """The build's report, with the chart of every step of the session (the built one highlighted)."""
    series = iter_session_steps(inputs.session.messages, inputs.policy, **_replay_options(args, inputs))
    steps, _ = steps_of(series)
    current = args.step if args.step is not None else (steps[-1].step if steps else None)
    policy = policy_diff(inputs.policy, inputs.defaults)
    return build_report(result, title=_report_title(inputs), policy=policy, steps=steps, current_step=current)


def _report_title(inputs: PlaygroundInputs) -> str:
    title = inputs.header.get("title")
    return title if isinstance(title, str) and title else str(inputs.session.path)


def _write_html(out: str, page: str, inputs: PlaygroundInputs) -> bool:
    return write_page_said(out, page, [inputs.session.path], "report")


def run_conformance(args) -> int:
    from engine import case_files, read_case, run_all

    files, cases, unreadable = case_files(args.cases), [], 0
    if not files:
        print(f"error: {', '.join(args.cases)}: no conformance case (a .json file) in it", file=sys.stderr)
        return 2
    for path in files:  # a malformed case file is named; the other cases still run
        try:
            cases.append((path, read_case(path)))
        except (OSError, ValueError) as error:
            print(f"error: {error}", file=sys.stderr)
            unreadable += 1
    if not cases:
        return 2
    outcomes = run_all([case for _, case in cases])
    for (path, _), outcome in zip(cases, outcomes, strict=True):
        if args.json:
            print(json.dumps(outcome.actual, ensure_ascii=False))
        elif not outcome.passed:
            print(f"FAIL {outcome.name} ({path}): {outcome.difference}")
    passed = sum(o.passed for o in outcomes)
    if not args.json:
        unread = f", {unreadable} not read" if unreadable else ""
        print(f"{passed} passed, {len(outcomes) - passed} failed{unread}")
    return 0 if passed == len(outcomes) and not unreadable else 1


def run_calibrate(args) -> int:
    from engine import write_atomic
    from playground.app.recorded import calibrate

    try:
        report = calibrate(args.sessions, args.test or (), fmt=args.fmt)
    except LOAD_ERRORS as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.to_json(), ensure_ascii=False))
    else:
        _print_calibration(report)
    if args.output:
        try:
            write_atomic(args.output, report.calibration.to_yaml(), protected=report.inputs)
        except LOAD_ERRORS as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(f"wrote {args.output}", file=sys.stderr)
    return 0


def _print_calibration(report) -> None:
    def pct(summary: dict[str, Any], key: str) -> str:
        return "—" if summary.get(key) is None else f"{summary[key]:.2f}%"

    for name, fit in report.calibration.models.items():
        print(f"model {name}: coefficient {fit.coefficient:.4f}, offset {fit.offset} ({fit.calls} calls)")
    print(f"error of the as-recorded rebuild against the record ({report.method}):")
    for row in report.sessions:
        before = f"median {pct(row.before, 'medianErrorPct')} p90 {pct(row.before, 'p90ErrorPct')}"
        after = f"median {pct(row.after, 'medianErrorPct')} p90 {pct(row.after, 'p90ErrorPct')}"
        print(f"  {printable(row.path)}: {row.after['calls']} calls; before {before}; after {after}")
    held = report.calibration.held_out
    before = f"median {pct(held['before'], 'medianErrorPct')} p90 {pct(held['before'], 'p90ErrorPct')}"
    after = f"median {pct(held['after'], 'medianErrorPct')} p90 {pct(held['after'], 'p90ErrorPct')}"
    print(f"  all: before {before}; after {after} ({held['after']['calls']} calls)")
    for path in report.skipped:
        print(f"  skipped {printable(path)}: no recorded usage")
