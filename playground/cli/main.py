"""The `linn-playground` command: open the playground, or run one of the headless subcommands.

    linn-playground [SESSION.jsonl] [--policy P.yaml] [--fences F.yaml]     the Textual playground
    linn-playground validate SESSION ...                                   what loaded, what is wrong
    linn-playground build SESSION ... [--step N] [--wire ...] [--json]     one build, explained
    linn-playground replay SESSION ... [--json]                             the context at every step
    linn-playground conformance CASE_OR_DIR... [--json]                    compare with linnkit 0.21.0
    linn-playground import FILE [-o OUT [--force]] [--from FORMAT]         transcripts → session
    linn-playground export SESSION --to openai|anthropic|otel -o OUT       for other tools (--step N: a wire)
    linn-playground sweep SESSIONS_OR_DIRS... --vary F=V1,V2 [--out R.csv]  policies × sessions: cost
    linn-playground calibrate SESSIONS... [--test S...] [-o CAL.yaml]      fit usage: coefficient, offset
    linn-playground diff A [B] [--policy-a P1 --policy-b P2] [--json|--html] two runs, step by step
    linn-playground runs [show ID | query SQL | import DIR] [--store P]   the stored runs (--record)

Exit codes: 0 fine, 1 problems found (or a build failed / violated an invariant), 2 nothing could load.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from engine import format_names, output_kind_problem
from playground.app.inputs import read_as_part_of
from playground.app.lessons import lesson_path_for
from playground.cli import commands, runs
from playground.cli.diff import add_diff_parser, run_diff
from playground.cli.export import add_export_parser, run_export
from playground.cli.faults import run_guarded
from playground.cli.importing import run_import
from playground.cli.report import printable
from playground.cli.sweep import run_sweep

# each subcommand and the function that runs it
SUBCOMMANDS = {
    "validate": commands.run_validate,
    "build": commands.run_build,
    "replay": commands.run_replay,
    "conformance": commands.run_conformance,
    "import": run_import,
    "export": run_export,
    "serve": commands.run_serve,
    "sweep": run_sweep,
    "calibrate": commands.run_calibrate,
    "diff": run_diff,
    "runs": runs.run_runs,
}


def _inputs_arguments(parser: argparse.ArgumentParser, *, session_optional: bool = False) -> None:
    parser.add_argument("session", nargs="?" if session_optional else None, help="session JSONL file")
    parser.add_argument("--policy", help="policy YAML/JSON (replaces the session header's policy)")
    parser.add_argument("--fences", help="fence descriptors YAML (replaces the session header's fences)")
    parser.add_argument(
        "--defaults",
        choices=("seed", "linnkit-0.21"),
        default="seed",
        help="framework defaults: the seed document's (default) or linnkit 0.21.0's own",
    )
    parser.add_argument(
        "--conversation",
        type=int,
        help="for a transcript holding several conversations: which one (0 the first, -1 the last)",
    )
    _from_argument(parser)
    parser.add_argument(
        "--copy",
        choices=("zh", "en"),
        default="zh",
        help="words of tool summaries and built-in reminders: linnkit's Chinese (default) or English",
    )


def _from_argument(parser: argparse.ArgumentParser) -> None:
    help_text = "read transcripts as this format (skip detection); linn sessions load as they are"
    parser.add_argument("--from", dest="fmt", choices=format_names(), help=help_text)


def _cost_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--wire", choices=("openai", "anthropic"), default="openai", help="wire shape the prompt cache sees"
    )
    parser.add_argument("--model", help="price row when the session header names no priced modelId")
    parser.add_argument("--prices", metavar="PRICES.yaml", help="price table rows over the built-in ones")
    _record_arguments(parser)
    parser.add_argument("--record", action="store_true", help="keep each run in the audit store (runs)")
    parser.add_argument("--store", metavar="PATH", help=STORE_HELP)


STORE_HELP = "the audit store (default $LINN_PLAYGROUND_STORE or ~/.local/share/linn-playground/runs.duckdb)"


def _record_arguments(parser: argparse.ArgumentParser) -> None:
    """How a recorded session (one whose transcript kept the provider's usage) is compared with its record."""
    parser.add_argument(
        "--as-recorded", action="store_true", help="rebuild what the agent itself sent (nothing trimmed)"
    )
    _missing_context_arguments(parser)


def _missing_context_arguments(parser: argparse.ArgumentParser) -> None:
    """What a transcript lacks and how its provider counts: the files that close the gap."""
    calibration = "per-model coefficient and offset, from `calibrate`"
    parser.add_argument("--calibration", metavar="CAL.yaml", help=calibration)
    parser.add_argument("--tools", metavar="TOOLS.json", help="the tool definitions the transcript lacks")
    parser.add_argument("--system-prompt", metavar="FILE", help="the system prompt the transcript lacks")


def make_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="linn-playground", description=__doc__.split("\n\n")[0])
    commands = parser.add_subparsers(dest="command")
    validate = commands.add_parser("validate", help="report what a session holds and what is wrong")
    _inputs_arguments(validate)
    validate.add_argument(
        "--strict", action="store_true", help="unknown policy keys, keys written twice: problems (exit 1)"
    )
    build = commands.add_parser("build", help="build the context once and explain every decision")
    _inputs_arguments(build)
    build.add_argument("--step", type=int, help="build at step N (1-based LLM call of the session)")
    build.add_argument("--max-steps", type=_positive, help="maxSteps for the tick (default: header or 80)")
    build.add_argument("--wire", choices=("openai", "anthropic"), default="openai")
    build.add_argument("--json", action="store_true", help="one JSON object: wire, decisions, tokens, ...")
    build.add_argument("--html", metavar="OUT", help="write a self-contained HTML report")
    build.add_argument(
        "--as-recorded", action="store_true", help="rebuild what the agent itself sent (nothing trimmed)"
    )
    build.add_argument("--calibration", metavar="CAL.yaml", help="per-model calibration samples (calibrate)")
    build.add_argument("--system-prompt", metavar="FILE", help="the system prompt the transcript lacks")
    replay = commands.add_parser("replay", help="the context the model saw at each step")
    _inputs_arguments(replay)
    replay.add_argument("--max-steps", type=_positive, help="maxSteps for the ticks (default: header or 80)")
    replay.add_argument("--json", action="store_true")
    replay.add_argument("--html", metavar="OUT", help="write a self-contained HTML report of the replay")
    _cost_arguments(replay)
    conformance = commands.add_parser("conformance", help="run linnkit conformance cases")
    conformance.add_argument("cases", nargs="+", help="case files or folders")
    conformance.add_argument("--json", action="store_true", help="print one result line per case")
    importer = commands.add_parser("import", help="convert an agent transcript to a session file")
    importer.add_argument("file")
    importer.add_argument("-o", "--output", help="session file to write (default: print a summary only)")
    importer.add_argument("--from", dest="fmt", choices=format_names(), help="skip detection")
    importer.add_argument("--force", action="store_true", help="replace an existing output file")
    importer.add_argument("--json", action="store_true", help="the import report as one JSON object")
    importer.add_argument("--conversation", type=int, help="which conversation (0 the first, -1 the last)")
    add_export_parser(commands)
    serve = commands.add_parser("serve", help="run the playground as a web page (textual-serve)")
    _inputs_arguments(serve, session_optional=True)
    _missing_context_arguments(serve)
    serve.add_argument("--port", type=_port, help="port to listen on (default: a free one)")
    serve.add_argument("--host", default="127.0.0.1", type=_host, help="address to bind (default: 127.0.0.1)")
    _sweep_parser(commands)
    calibrate = commands.add_parser(
        "calibrate", help="fit each model's coefficient and offset on recorded sessions; report the error"
    )
    calibrate.add_argument("sessions", nargs="+", help="sessions or transcripts with usage, or folders")
    calibrate.add_argument("--test", nargs="+", help="measure on these instead (default: leave one out)")
    calibrate.add_argument("-o", "--output", help="calibration YAML to write (atomically)")
    calibrate.add_argument("--force", action="store_true", help="replace an existing --output file")
    calibrate.add_argument("--json", action="store_true", help="the report as one JSON object")
    _from_argument(calibrate)
    add_diff_parser(commands)
    _runs_parser(commands)
    return parser


def _runs_parser(commands) -> None:
    runs = commands.add_parser("runs", help="the runs recorded with --record: list, show, query, import")
    runs.add_argument("--store", metavar="PATH", help=STORE_HELP)
    runs.add_argument("--session", help="runs of this session: part of its path, or a session-hash prefix")
    runs.add_argument("--policy-hash", help="runs under this policy (a policy-hash prefix)")
    runs.add_argument("--since", help="recorded since: 7d, 12h, 30m ago, or an ISO date (UTC)")
    runs.add_argument("--json", action="store_true", help="one JSON object per run")
    actions = runs.add_subparsers(dest="runs_command")
    kept = {"default": argparse.SUPPRESS}  # given after the action, else the value given before it
    show = actions.add_parser("show", help="one run: settings, totals, each step")
    show.add_argument("run_id", help="the run's id or a unique prefix (at least 4 characters)")
    query = actions.add_parser("query", help="any SQL over the store (read-only)")
    query.add_argument("sql")
    importer = actions.add_parser("import", help="bring a sweep's Parquet runs (--parquet-runs) in")
    importer.add_argument("directory")
    export = actions.add_parser("export", help="write a run's session, policy and fences as files")
    export.add_argument("run_id", help="the run's id or a unique prefix")
    export.add_argument("directory", help="folder to write run-<id>.jsonl, .policy.yaml, .fences.yaml into")
    export.add_argument("--force", action="store_true", help="replace files already there")
    for action in (show, query, importer, export):
        action.add_argument("--store", metavar="PATH", help=STORE_HELP, **kept)
    for action in (show, query):
        action.add_argument("--json", action="store_true", help="JSON instead of a table", **kept)


def _sweep_parser(commands) -> None:
    sweep = commands.add_parser("sweep", help="every session under every policy of a grid: cost, losses")
    sweep.add_argument("sessions", nargs="+", help="session or transcript files, or folders of them")
    sweep.add_argument("--policy", help="base policy YAML/JSON (replaces each session header's policy)")
    axis = "a grid axis, e.g. budget.maxTokens=16000,32000 (repeat for more axes)"
    sweep.add_argument("--vary", action="append", default=[], metavar="FIELD=V1,V2", help=axis)
    sweep.add_argument("--out", help="results file: .csv, .jsonl or .parquet (resumed when it exists)")
    sweep.add_argument("--jobs", type=int, help="local processes (default: every core)")
    sweep.add_argument("--scheduler", metavar="ADDRESS", help="a Dask distributed scheduler (scale extra)")
    _from_argument(sweep)
    parts = "write each run as Parquet parts under DIR, from the workers (runs import DIR reads them)"
    sweep.add_argument("--parquet-runs", metavar="DIR", help=parts)
    _cost_arguments(sweep)


# every argument that names a file or folder: an empty one is refused (Path("") is the current folder, and an
# empty session meant the bundled sample)
PATH_ARGUMENTS = frozenset(
    {"a", "b", "calibration", "cases", "directory", "fences", "file", "html", "out", "output", "parquet_runs",
     "policy", "policy_a", "policy_b", "prices", "session", "sessions", "store", "system_prompt", "test",
     "tools"}
)  # fmt: skip


def _html_refused(path: str) -> str | None:
    """Why a page cannot be written at `path` (a device, a folder, a missing folder), or None."""
    target = Path(path)
    problem = output_kind_problem(target)
    if problem is None and not target.parent.is_dir():
        problem = f"its folder {target.parent} does not exist"
    return problem


# the arguments naming files a command reads, and those naming files it writes
READ_ARGS = ("session", "sessions", "a", "b", "file", "cases", "test", "policy", "policy_a", "policy_b",
             "fences", "prices", "calibration", "tools", "system_prompt")  # fmt: skip
WRITE_ARGS = ("html", "output", "out")


def _writes_over_an_input(args: argparse.Namespace) -> str | None:
    """Why an output of the command would replace a file the same command reads (a policy given as
    `--policy` and as `--html`, a sweep's summary named like its session) or one it should not (a file a
    sweep's summary would replace), or None."""
    reads = [Path(value) for name in READ_ARGS for value in _listed(getattr(args, name, None))]
    reads += [lesson_path_for(path) for path in reads if path.suffix == ".jsonl"]  # a session's side lesson
    writes = [Path(value) for name in WRITE_ARGS for value in _listed(getattr(args, name, None))]
    writes = [path for path in writes if str(path) != "-"]
    summary = _sweep_summary(args)
    for written in [*writes, *([summary] if summary else [])]:
        for read in reads:
            if written.is_file() and read.exists() and os.path.samefile(written, read):
                return f"{written}: refusing to write over {read}, which this command reads"
            if written.is_file() and read.is_dir() and read_as_part_of(read, written):
                return f"{written}: refusing to write over a file of {read}, which this command reads"
    if summary is not None:  # written after the whole sweep: said before it
        from playground.app.sweep import holds_other_than_a_summary

        problem = output_kind_problem(summary)
        if problem is None and holds_other_than_a_summary(summary):
            problem = "holds something else than a sweep's summary; move it or choose another --out"
        if problem is not None:
            return f"{summary} (the sweep's summary): {problem}"
    if args.command == "calibrate" and args.output and Path(args.output).exists() and not args.force:
        return f"{args.output}: already exists; pass --force to replace it"
    single = getattr(args, "out", None) if args.command == "sweep" else getattr(args, "output", None)
    if args.command in ("calibrate", "sweep") and single and not Path(single).parent.is_dir():
        return f"{single}: its folder {Path(single).parent} does not exist"  # found after the work, else
    return None


def _sweep_summary(args: argparse.Namespace) -> Path | None:
    if args.command != "sweep" or not getattr(args, "out", None):
        return None
    from playground.app.sweep import summary_path

    return summary_path(args.out)


def _listed(value: object) -> list[str]:
    if isinstance(value, str) and value:
        return [value]
    return [v for v in value if isinstance(v, str) and v] if isinstance(value, list) else []


def _whole(low: int, high: int | None, reason: str) -> Callable[[str], int]:
    """An argparse type: a whole number from `low` to `high`, else `reason` and the number given."""

    def parse(text: str) -> int:
        try:
            number = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
        if number < low or (high is not None and number > high):
            raise argparse.ArgumentTypeError(f"{reason}, got {number}")
        return number

    return parse


_positive = _whole(1, None, "must be 1 or more")  # a step count: a header's `maxSteps` is refused below 1 too
_port = _whole(0, 65535, "a port is 0 to 65535")


def _path(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("an empty path")
    return text


def _host(text: str) -> str:
    """An address to bind; an empty one (a script's unset variable) would bind every interface."""
    if not text.strip():
        raise argparse.ArgumentTypeError("an empty host (give 0.0.0.0 to listen on every interface)")
    return text


def _refuse_empty_paths(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    for action in parser._actions:  # argparse keeps them here; it has no public walk
        if isinstance(action, argparse._SubParsersAction):
            for sub in action.choices.values():
                _refuse_empty_paths(sub)
        elif action.dest in PATH_ARGUMENTS and action.type is None:
            action.type = _path
    return parser


def make_open_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="linn-playground", description="Open the Textual playground.")
    _inputs_arguments(parser, session_optional=True)
    _missing_context_arguments(parser)
    parser.add_argument("--store", metavar="PATH", help="where Record this replay (ctrl+p) keeps runs")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    # What is imported by now lives as long as the process: keep it out of the collector's full scans (one
    # scanned ~60,000 import-time objects, about 18 ms, in the middle of a build or a keypress).
    gc.freeze()
    # linnkit cuts text in UTF-16 units, so a cut can leave half an emoji; print it escaped, never crash
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")
    args_list = list(sys.argv[1:] if argv is None else argv)
    if args_list and args_list[0] in SUBCOMMANDS:
        parser = _refuse_empty_paths(make_parser())
        args = parser.parse_args(args_list)
        if getattr(args, "record", False) and getattr(args, "html", None):
            parser.error("--record keeps a text or --json replay; leave out --html")
        if getattr(args, "json", False) and getattr(args, "html", None):
            parser.error("--json prints to the terminal and --html writes a page: give one of them")
        refused = _html_refused(args.html) if getattr(args, "html", None) else None
        if refused is not None:  # the page is written after the whole build, replay or diff: say it first
            print(f"error: {printable(args.html)}: {refused}", file=sys.stderr)
            return 2
        over = _writes_over_an_input(args)
        if over is not None:  # an output is written after the work: say it before, and never over an input
            print(f"error: {printable(over)}", file=sys.stderr)
            return 2
        return run_guarded(SUBCOMMANDS[args.command], args)
    if args_list and args_list[0] in ("-h", "--help"):
        make_parser().print_help()
        print(
            "\nWith no subcommand: linn-playground [SESSION] [--policy P] [--fences F] opens the playground."
        )
        return 0
    args = _refuse_empty_paths(make_open_parser()).parse_args(args_list)
    return commands.run_open(args)



if __name__ == "__main__":  # `python -m playground.cli.main`, as `python -m playground.cli`
    from playground.cli import run

    run()
