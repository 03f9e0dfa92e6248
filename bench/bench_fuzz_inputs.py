"""Mutation fuzzing of the commands that read files (counts, not pass/fail).

    .venv/bin/python bench/bench_fuzz_inputs.py [--seed 1] [--count 200] [--kind transcripts|cases|policies]
        [--sources DIR]

Takes real inputs (the transcripts in ../shared/real-sessions, or under `--sources DIR`; the cases in
../shared/conformance; the default policy), changes one to three values at random (a value replaced by
null, a number, a string, a list or an object; a key or an element removed; a file cut short or given four
random bytes), and runs each mutant through the commands that read it, in this process:
- transcripts: `validate`, `build --json`, `replay --json`, `export --to otel`, `import`;
- cases: `conformance`;
- policies: `validate` and `build` of the bad-input corpus's good session with `--policy`.
A run ends clearly when it returns 0, 1 or 2 within 30 s and prints neither a traceback nor "internal
error". Prints each run that does not (its command names the mutant, kept under --out), then the counts.
What it found is in tests/badinput: the internal errors of `c_replay_no_persisted.json` and
`c_kept_ids_number.json`; and, read in its mutants' output (an error on every line of a file),
`i_first_line_array.jsonl`, `s_not_a_session.md` and `i_cut_document.json`.
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import random
import signal
import sys
import tempfile
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from engine.policy import define_context_policy  # noqa: E402
from playground.cli.main import main as cli  # noqa: E402

SHARED = ROOT.parent / "shared"
GOOD_SESSION = ROOT / "tests" / "badinput" / "good_session.jsonl"
SECONDS = 30
ODD_VALUES: list[Any] = [None, 0, -1, 1.5, 1e300, 10**20, "", "x", True, [], {}, [None], {"a": 1}]


class Mutator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def odd(self) -> Any:
        return copy.deepcopy(self.rng.choice(ODD_VALUES))

    def value(self, value: Any) -> Any:
        """`value` with one thing changed somewhere inside it (at the top: itself replaced, one time in
        four)."""
        rng = self.rng
        if isinstance(value, dict | list) and value and rng.random() < 0.75:
            key = rng.choice(list(value)) if isinstance(value, dict) else rng.randrange(len(value))
            roll = rng.random()
            if roll < 0.6:
                value[key] = self.value(value[key])
            elif roll < 0.75:
                del value[key]
            else:
                value[key] = self.odd()
            return value
        return self.odd()

    def text(self, text: str, jsonl: bool) -> str:
        """A file's text mutated: cut short, four random bytes, or its values changed."""
        rng = self.rng
        roll = rng.random()
        if roll < 0.1:
            return text[: rng.randrange(len(text))]
        if roll < 0.15:
            at = rng.randrange(len(text))
            return text[:at] + "".join(chr(rng.randrange(32, 0x3000)) for _ in range(4)) + text[at:]
        if not jsonl:
            try:
                document = json.loads(text)
            except ValueError:  # a source that is not JSON already: cut it somewhere
                return text[: rng.randrange(len(text))]
            for _ in range(rng.randint(1, 3)):
                document = self.value(document)
            return json.dumps(document, ensure_ascii=False)
        lines = text.splitlines()
        for _ in range(rng.randint(1, 3)):
            at = rng.randrange(len(lines))
            try:
                lines[at] = json.dumps(self.value(json.loads(lines[at])), ensure_ascii=False)
            except ValueError:
                lines[at] = lines[at][::-1]
        return "\n".join(lines) + "\n"


def run(args: list[str]) -> tuple[int | None, str]:
    """The command's exit code (None: it raised or hung) and what it printed on stderr (or why)."""
    out, err = io.StringIO(), io.StringIO()

    def hung(signum: int, frame: Any) -> None:
        raise TimeoutError(f"no answer within {SECONDS} s")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(SECONDS)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            code = cli(args)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else 2
    except BaseException as error:  # noqa: BLE001 - what this script looks for
        return None, f"{type(error).__name__}: {error}"
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    return code, err.getvalue()


def clear(code: int | None, said: str) -> bool:
    return code in (0, 1, 2) and "Traceback" not in said and "internal error" not in said


def transcripts(mutator: Mutator, folder: Path, root: Path) -> Iterator[list[list[str]]]:
    sources = sorted(
        p for p in root.rglob("*") if p.is_file() and p.suffix in (".jsonl", ".json", ".traj", ".af")
    )
    for n in range(10**9):
        source = mutator.rng.choice(sources)
        path = folder / f"t{n}{source.suffix}"
        text = source.read_text(encoding="utf-8")
        path.write_text(mutator.text(text, jsonl=source.suffix == ".jsonl"), encoding="utf-8")
        yield [
            ["validate", str(path)],
            ["build", str(path), "--json"],
            ["replay", str(path), "--json"],
            ["export", str(path), "--to", "otel", "--force", "-o", str(folder / f"t{n}.otel.json")],
            ["import", str(path), "--force", "-o", str(folder / f"t{n}.imported.jsonl")],
        ]


def cases(mutator: Mutator, folder: Path, root: Path) -> Iterator[list[list[str]]]:
    sources = sorted((SHARED / "conformance").rglob("*.json"))
    for n in range(10**9):
        case = json.loads(mutator.rng.choice(sources).read_text(encoding="utf-8"))
        for _ in range(mutator.rng.randint(1, 3)):
            case = mutator.value(case)
        path = folder / f"c{n}.json"
        path.write_text(json.dumps(case, ensure_ascii=False), encoding="utf-8")
        yield [["conformance", str(path)]]


def policies(mutator: Mutator, folder: Path, root: Path) -> Iterator[list[list[str]]]:
    base = define_context_policy({}).model_dump(by_alias=True)
    for n in range(10**9):
        policy = copy.deepcopy(base)
        for _ in range(mutator.rng.randint(1, 3)):
            group = mutator.rng.choice(list(policy))
            policy[group] = mutator.value(policy[group])
        path = folder / f"p{n}.yaml"
        path.write_text(yaml.safe_dump(policy, allow_unicode=True), encoding="utf-8")
        session = str(GOOD_SESSION)
        yield [["validate", session, "--policy", str(path)], ["build", session, "--policy", str(path)]]


KINDS: dict[str, Callable[[Mutator, Path, Path], Iterator[list[list[str]]]]] = {
    "transcripts": transcripts,
    "cases": cases,
    "policies": policies,
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--count", type=int, default=200, help="mutants")
    parser.add_argument("--kind", choices=sorted(KINDS), default="transcripts")
    parser.add_argument("--out", type=Path, help="keep the mutants here (default: a temporary folder)")
    parser.add_argument("--sources", type=Path, default=SHARED / "real-sessions", help="transcripts' folder")
    args = parser.parse_args()
    folder = args.out or Path(tempfile.mkdtemp(prefix="linn-fuzz-"))
    folder.mkdir(parents=True, exist_ok=True)
    mutants = KINDS[args.kind](Mutator(args.seed), folder, args.sources)
    codes: Counter[int | None] = Counter()
    unclear = 0
    for _, commands in zip(range(args.count), mutants, strict=False):
        for command in commands:
            code, said = run(command)
            codes[code] += 1
            if not clear(code, said):
                unclear += 1
                print(f"unclear: {' '.join(command)} -> {code}: {said.strip()[-300:]}", flush=True)
    runs = sum(codes.values())
    shown = ", ".join(f"exit {code}: {n}" for code, n in sorted(codes.items(), key=lambda item: str(item[0])))
    print(f"{args.kind}, seed {args.seed}: {args.count} mutants, {runs} runs, {unclear} unclear ({shown})")
    print(f"mutants in {folder}")


if __name__ == "__main__":
    main()
