"""`linn-playground import`: a transcript read, its account printed, and the session written with `-o`."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from engine import output_kind_problem
from playground.app.inputs import LOAD_ERRORS
from playground.cli.report import print_import_report


def run_import(args) -> int:
    from engine import import_file, save_session

    try:
        imported = import_file(args.file, args.fmt, conversation=args.conversation)
    except LOAD_ERRORS as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(imported.report(), ensure_ascii=False))
    else:
        print_import_report(imported)
    if args.output:
        output = _import_target(Path(args.file), Path(args.output))
        refusal = _output_refusal(Path(args.file), output, force=args.force)
        if args.output.endswith(("/", os.sep)) and not Path(args.output).is_dir():
            refusal = f"{args.output}: no such folder"
        if refusal:
            print(f"error: {refusal}", file=sys.stderr)
            return 2
        header = imported.header(str(args.file), args.conversation)
        try:
            save_session(imported.messages, output, header=header, overwrite=args.force)
        except LOAD_ERRORS as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        print(f"wrote {output}")
    return 1 if imported.problems else 0


def _import_target(source: Path, output: Path) -> Path:
    """`-o DIR` writes into the folder, named after the transcript (`DIR/<name>.jsonl`), as `cp` does."""
    return output / f"{source.stem}.jsonl" if output.is_dir() else output


def _output_refusal(source: Path, output: Path, *, force: bool) -> str | None:
    """Why `import -o` must not write: never over the transcript, over another file only with --force."""
    if output.exists() and output.resolve() == source.resolve():
        return f"{output}: is the transcript being imported; write the session elsewhere"
    problem = output_kind_problem(output)
    if problem is not None:
        return f"{output}: {problem}"
    if output.exists() and not force:
        return f"{output}: already exists; pass --force to replace it"
    return None
