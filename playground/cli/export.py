"""`linn-playground export`: a session (or a transcript, imported on the fly) written as OpenAI chat JSONL,
an Anthropic Messages request or OTel GenAI spans; with `--step N`, the wire the policy builds at that step.

The whole session is written losslessly (`engine.export`): importing the file gives back the same messages.
The file is written atomically, never over the session it came from, over another file only with --force.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from engine import (
    EXPORT_FORMATS,
    PolicyFileError,
    available_tools,
    build_at_step,
    export_session,
    export_wire,
    output_kind_problem,
    write_atomic,
)
from playground.app.inputs import LOAD_ERRORS, load_inputs
from playground.cli.report import printable


def add_export_parser(commands) -> None:
    export = commands.add_parser("export", help="write a session or a step's wire for other tools")
    export.add_argument("session", help="session JSONL file or agent transcript")
    export.add_argument("--to", required=True, choices=EXPORT_FORMATS, help="the shape to write")
    export.add_argument("-o", "--output", required=True, help="file to write (atomically)")
    export.add_argument("--force", action="store_true", help="replace an existing output file")
    export.add_argument("--step", type=int, help="write the wire built at step N (1-based; -1 the last)")
    export.add_argument("--policy", help="policy YAML/JSON for --step (replaces the header's policy)")
    export.add_argument("--fences", help="fence descriptors YAML for --step")
    export.add_argument("--defaults", choices=("seed", "linnkit-0.21"), default="seed")
    export.add_argument("--conversation", type=int, help="which conversation of a transcript")


def run_export(args: argparse.Namespace) -> int:
    try:
        inputs = load_inputs(
            args.session, args.policy, args.fences, args.defaults, conversation=args.conversation
        )
    except LOAD_ERRORS as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    messages = inputs.session.messages
    if not messages:
        print(f"error: {args.session}: no message to export", file=sys.stderr)
        return 2
    output = Path(args.output)
    to_stdout = args.output == "-"  # `-o -`: the export on stdout, the report on stderr
    problem = None if to_stdout else output_kind_problem(output)
    if problem is not None:
        print(f"error: {printable(str(output))}: {problem}", file=sys.stderr)
        return 2
    if not to_stdout and output.exists() and not args.force:
        print(f"error: {output}: already exists; pass --force to replace it", file=sys.stderr)
        return 2
    model = inputs.header.get("modelId")
    try:
        if args.step is None:
            text, what = export_session(messages, inputs.header, args.to), f"{len(messages)} messages"
        else:
            _, _, result = build_at_step(
                messages,
                args.step,
                inputs.policy,
                max_steps=inputs.max_steps,
                available_tools=available_tools(inputs.header),
                checkpoint_tool_name=inputs.policy.checkpoint.trigger_tool_name,
                **inputs.build_options,
            )
            model = model if isinstance(model, str) else None
            text, what = (
                export_wire(result.wire, args.to, model),
                f"step {args.step}: {len(result.wire)} wire messages",
            )
        if not to_stdout:
            write_atomic(output, text, protected=[Path(args.session)])
    except (IndexError, PolicyFileError, *LOAD_ERRORS) as error:
        print(f"error: {printable(str(error))}", file=sys.stderr)
        return 2
    if to_stdout:
        sys.stdout.write(text)
    report = sys.stderr if to_stdout else sys.stdout
    print(f"wrote {'stdout' if to_stdout else output} ({args.to}, {what})", file=report)
    for problem in inputs.session.problems:
        print(printable(str(problem)), file=sys.stderr)
    return 1 if inputs.session.problems else 0
