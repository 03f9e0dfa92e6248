"""Resolve what a build needs from the command line: session, policy layer, fences, defaults profile.

Shared by the CLI, the TUI and the notebook so that all three read files the same way. A `--policy` file
replaces the policy in the session header; `--fences` replaces the header's fence descriptors.
"""

from __future__ import annotations

import mmap
import os
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.copyset import check_copy
from engine.errors import EngineError
from engine.fences import FenceError, FenceRegistry, load_fences_checked, parse_fences_skipping
from engine.importers import (
    LINN_SESSION_KIND,
    WHOLE_READ_BYTES,
    ImportResult,
    Problem,
    Sniff,
    UnknownFormatError,
    detect_format,
    detect_sniff,
    folder_format,
    import_file,
    import_large,
    import_text,
    read_transcript,
    unrecognised,
)
from engine.messages import AiMessage
from engine.observation import InMemoryObservationStore
from engine.policy import (
    ContextPolicy,
    PolicyFile,
    PolicyFileError,
    PolicyValidationError,
    effective_policy,
    get_defaults_profile,
    read_policy_file,
    runtime_problems,
)
from engine.policy.lint import WARNING, layer_warnings
from engine.reminders import DEFAULT_MAX_STEPS
from engine.safe_input import (
    MAX_FILE_BYTES,
    InputError,
    decode_json,
    decode_utf8,
    file_kind_problem,
    read_regular_file,
)
from engine.session import (
    REPEATED,
    LoadProblem,
    Session,
    SessionHeader,
    SessionLoadError,
    SessionReader,
    SessionSaveError,
    load_session,
)
from engine.ticks import iter_step_points
from engine.truth import Calibration
from playground.app.pacing import hold_collector, let_go_of_collector

# what loading the inputs may raise (each names file, line and field): a front end shows it and goes on
LOAD_ERRORS = (EngineError, FenceError, SessionLoadError, SessionSaveError, OSError, ValueError)

STREAM_FROM_BYTES = 1 << 20  # `load_inputs(stream=True)` reads sessions from this size as they are asked
HEAD_LINE_BYTES = 1 << 20  # a session header longer than this is read the usual way
SAMPLES_DIR = Path(__file__).resolve().parents[2] / "sample_sessions"
DEFAULT_SAMPLE = "tool_loop_runs.jsonl"


@dataclass(slots=True)
class PlaygroundInputs:
    session: Session
    policy: ContextPolicy
    fences: FenceRegistry | None
    defaults: str = "seed"
    copy: str = "zh"  # engine.copyset: the words of tool summaries and built-in reminders
    # what the policy layer (and fence file) would have lost silently: unknown keys and groups, keys
    # written twice
    policy_warnings: list[LoadProblem] = field(default_factory=list)
    # Tool outputs are governed as toolOutput.observationGovernance would have cut them at execution
    # time; the full texts land here (content-addressed), so the playground can show what was saved.
    observation_store: InMemoryObservationStore = field(default_factory=InMemoryObservationStore)
    # a recorded session's comparison: a calibration file (`--calibration`) and the tokens of the tool
    # definitions the transcript lacks (`--tools`); see `playground.app.recorded`
    calibration: Calibration | None = None
    given_offset: int | None = None
    # a session still loading (`load_inputs(stream=True)`): `session` holds what is read so far
    reader: SessionReader | None = None
    # the files besides the session it was opened with (policy, fences, system prompt): never written over
    read_paths: tuple[Path, ...] = ()

    @property
    def header(self) -> dict[str, Any]:
        return header_dict(self.session)

    @property
    def build_options(self) -> dict[str, Any]:
        """What `build_context` needs besides messages and policy, for this defaults profile."""
        profile = get_defaults_profile(self.defaults)
        return {
            "fences": self.fences,
            "honour_fence_descriptors": profile.honour_fence_descriptors,
            "observation_store": self.observation_store,
            "copy": self.copy,
            "model_id": self.session.header.model_id if self.session.header else None,
        }

    @property
    def max_steps(self) -> int:
        """The header's `maxSteps`, else linnkit's default."""
        return (self.session.header.max_steps if self.session.header else None) or DEFAULT_MAX_STEPS


def header_dict(session: Session) -> dict[str, Any]:
    header = session.header
    if header is None:
        return {}
    if isinstance(header, dict):
        return header
    return header.to_dict() if hasattr(header, "to_dict") else dict(vars(header))


def default_session_path() -> Path:
    return SAMPLES_DIR / DEFAULT_SAMPLE


def open_session(path: Path, conversation: int | None = None, fmt: str | None = None) -> Session:
    """A linn session file, or an agent transcript converted on the fly (any format an importer reads;
    `fmt` names the importer instead of detecting it, for any file that is not a linn session).

    A file no importer recognises raises `UnknownFormatError` (one line naming the supported formats); a
    file that is not JSON at all, or not a regular file, goes to the session loader, which says line by
    line what is wrong.
    """
    return _open(path, conversation, fmt, stream=False)[0]


def _open(
    path: Path, conversation: int | None, fmt: str | None, *, stream: bool
) -> tuple[Session, SessionReader | None]:
    """`open_session`; with `stream`, a large linn session whose messages record no usage is read only up
    to its first message, and its reader comes along to read the rest as it is needed."""
    if stream and _streamable(path):
        reader = SessionReader(path)
        while not reader.session.messages and reader.read_line():
            pass  # the header and any bad line before the first message are read and named now
        return reader.session, reader
    if path.is_dir():  # a transcript kept as a folder: the folder format that claims it reads it
        return _imported(path, import_file(path, fmt, conversation=conversation), conversation), None
    large = import_large(path, fmt, conversation)  # a 100 MB transcript is never read as one string
    if large is not None:
        return _imported(path, large, conversation), None
    sniff, unreadable = _sniff(path)
    detected = detect_sniff(sniff) if sniff is not None else LINN_SESSION_KIND
    if detected is None and fmt is None:
        if sniff.document is not None or any(True for _ in sniff.objects()):  # JSON of no format we know
            raise unrecognised(str(path))
        detected = LINN_SESSION_KIND  # not JSON at all: the session loader says, line by line, what is wrong
    if detected == LINN_SESSION_KIND:
        return load_session(path), None
    imported = import_text(
        sniff.text, fmt or detected, name=str(path), conversation=conversation, detected=fmt is None
    )
    imported.problems[:0] = unreadable
    return _imported(path, imported, conversation), None


def _streamable(path: Path) -> bool:
    """A linn session worth reading as its replay goes: a regular file of STREAM_FROM_BYTES or more (a smaller
    one loads in tens of ms, and its problems all lead the output, as always), whose first line is a session
    header (detection could then say nothing else: it claims the file first) and whose messages record no
    usage (a replay puts each recorded call beside its step: all of them are needed first)."""
    if file_kind_problem(path) is not None or path.stat().st_size < STREAM_FROM_BYTES:
        return False
    with path.open("rb") as handle:
        first = handle.readline(HEAD_LINE_BYTES).removeprefix(b"\xef\xbb\xbf")
        try:
            header = decode_json(first.decode("utf-8"))
        except ValueError:  # invalid UTF-8 or JSON: the usual path names it
            return False
        if not isinstance(header, dict) or header.get("kind") != LINN_SESSION_KIND or "role" in header:
            return False
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as content:
            return not any(content.find(key) >= 0 for key in _USAGE_KEYS)


# a "usage" key, written plainly or with a letter escaped (\u0061-\u007a are the only escapes of letters)
_USAGE_KEYS = (b'"usage"', b"\\u006", b"\\u007")


def _imported(path: Path, imported: ImportResult, conversation: int | None) -> Session:
    header = SessionHeader.from_dict(imported.header(str(path), conversation))
    problems = [LoadProblem(p.path or str(path), p.line, "import", p.reason) for p in imported.problems]
    return Session(path, header, list(imported.messages), problems)


def loading_points(inputs: PlaygroundInputs, checkpoint_tool_name: str | None) -> dict[str, Any]:
    """A session still loading: the `points` option of a replay (`engine.replay.iter_session_steps`), each
    step found as the lines it needs are read; nothing for a session loaded whole."""
    if inputs.reader is None:
        return {}
    names = {} if checkpoint_tool_name is None else {"checkpoint_tool_name": checkpoint_tool_name}
    return {"points": iter_step_points(inputs.reader.messages(), **names)}


def with_system_prompt(session: Session, path: Path) -> Session:
    """The session with the file's text as its first message, a `system_prompt` (never written back)."""
    source = str(path)
    text = decode_utf8(read_regular_file(path, max_bytes=MAX_FILE_BYTES), source)
    if any(m.type == "system_prompt" for m in session.messages):
        raise InputError(source, f"{session.path} has its own system prompt; leave out --system-prompt")
    taken = {m.id for m in session.messages}
    message_id, n = "system-prompt", 0
    while message_id in taken:
        n += 1
        message_id = f"system-prompt#{n}"
    first = session.messages[0].timestamp if session.messages else 0
    prompt = AiMessage(message_id, "system", "system_prompt", text, first, {"source": {"file": source}})
    lines = [0, *session.message_lines] if session.message_lines else []
    return Session(session.path, session.header, [prompt, *session.messages], session.problems, lines)


def _sniff(path: Path) -> tuple[Sniff | None, list[Problem]]:
    """The file read once and sniffed, with its lines of invalid UTF-8; None when it is not a regular file or
    is too large to read whole (the session loader then names the problem: a FIFO, a directory, a missing
    file, or each line that is wrong)."""
    if file_kind_problem(path) is not None or path.stat().st_size > WHOLE_READ_BYTES:
        return None, []  # too large to read whole: the session loader streams it, line by line
    text, unreadable = read_transcript(path)
    return Sniff.of(text, str(path)), unreadable


def _header_policy_error(path: Path, err: PolicyValidationError) -> PolicyFileError:
    """The session header's policy is invalid: name the session file and the field."""
    lines = [f"{path}:1: contextPolicy.{issue}" for issue in err.issues]
    first = str(err.issues[0]) if err.issues else "invalid policy"
    return PolicyFileError(str(path), first, line=1, issues=err.issues, text="\n".join(lines))


def _runtime_error(
    problem: Any, policy_path: str | Path | None, session_path: Path, policy_file: PolicyFile | None = None
) -> PolicyFileError:
    if policy_path:
        line = policy_file.line_of(problem.path) if policy_file is not None else None
        source, field_name = str(policy_path), ".".join(problem.path)
        where = f"{source}:{line}" if line else source
    else:
        where, source, line = f"{session_path}:1", str(session_path), 1
        field_name = "contextPolicy." + ".".join(problem.path)
    text = f"{where}: {field_name}: {problem.message}"
    return PolicyFileError(source, problem.message, line=line, text=text)


def load_inputs(
    session_path: str | Path | None,
    policy_path: str | Path | None = None,
    fences_path: str | Path | None = None,
    defaults: str = "seed",
    copy: str = "zh",
    conversation: int | None = None,
    system_prompt: str | Path | None = None,
    *,
    fmt: str | None = None,
    stream: bool = False,
) -> PlaygroundInputs:
    """Load everything; raises the loaders' own errors (they name file, line and field).

    `conversation` picks one conversation of a transcript that holds several (None: the format's default).
    `system_prompt` is a text file with the system prompt a transcript did not record: it becomes the first
    message (refused when the session has one). `fmt` reads a transcript as that importer's format.
    `stream` reads a linn session only up to its first message when its messages record no usage, the
    rest as `reader` is asked (a replay's steps as the file loads); without a system prompt only."""
    path = Path(session_path) if session_path else default_session_path()
    hold_collector()  # a load makes only live objects: the collector's scans of them would be a third of it
    try:
        session, reader = _open(path, conversation, fmt, stream=stream and system_prompt is None)
    finally:
        let_go_of_collector()
    try:
        return _settled(session, reader, path, policy_path, fences_path, defaults, copy, system_prompt)
    except BaseException:
        if reader is not None:  # a session still loading is not read on
            reader.close()
        raise


def _settled(
    session: Session,
    reader: SessionReader | None,
    path: Path,
    policy_path: str | Path | None,
    fences_path: str | Path | None,
    defaults: str,
    copy: str,
    system_prompt: str | Path | None,
) -> PlaygroundInputs:
    """`load_inputs` once the session is open: its policy layer, fences and system prompt."""
    if system_prompt is not None:
        session = with_system_prompt(session, Path(system_prompt))
    header = header_dict(session)
    policy_file = None
    if policy_path:
        policy_file = read_policy_file(policy_path)
        layer, warnings = policy_file.layer, list(policy_file.warnings)
    else:
        written = header.get("contextPolicy")
        layer = dict(written) if isinstance(written, dict) else {}  # a non-object is a header warning
        warnings = layer_warnings(layer, str(path), line=1, prefix="contextPolicy.")
        warnings += [
            LoadProblem(str(path), 1, key, REPEATED, WARNING)
            for key in getattr(session.header, "repeated", ())
            if key.startswith("contextPolicy.")
        ]
    try:
        policy = effective_policy(layer, None, defaults=defaults)
    except PolicyValidationError as err:
        raise _header_policy_error(path, err) if not policy_path else err from None
    problems = runtime_problems(policy)  # schema-valid but not runnable: say where it was set
    if problems:
        raise _runtime_error(problems[0], policy_path, path, policy_file)
    if fences_path:
        fences, fence_warnings = load_fences_checked(fences_path)
        warnings += fence_warnings
    else:
        fences = header_fences(header.get("fences"), f"{path}:1")
    return PlaygroundInputs(
        session=session,
        policy=policy,
        fences=fences,
        defaults=defaults,
        copy=check_copy(copy),
        policy_warnings=warnings,
        reader=reader,
        read_paths=tuple(Path(p) for p in (policy_path, fences_path, system_prompt) if p),
    )


def with_policy_file(inputs: PlaygroundInputs, policy_path: str | Path) -> PlaygroundInputs:
    """The same inputs under the policy file's policy (over its defaults profile), checked as `load_inputs`
    checks one: e.g. a stored run replayed under today's policy."""
    policy_file = read_policy_file(policy_path)
    policy = effective_policy(policy_file.layer, None, defaults=inputs.defaults)
    problems = runtime_problems(policy)
    if problems:
        raise _runtime_error(problems[0], policy_path, inputs.session.path, policy_file)
    return replace(inputs, policy=policy, policy_warnings=list(policy_file.warnings))


def header_fences(data: Any, source: str = "<header>") -> FenceRegistry | None:
    """A session header's fences; a bad one is left out (the loader named it: `file:1: fences[i]...`),
    and fences that are no list at all are ignored (named too)."""
    if not data:
        return None
    try:
        return parse_fences_skipping(data, source)[0]
    except FenceError:
        return None


def read_as_part_of(folder: Path, file: Path) -> bool:
    """`file` is read as part of `folder`: any file of a transcript folder (a Copilot or Cline session, an
    OpenCode root), or one of the sessions a folder of sessions holds."""
    if not file.resolve().is_relative_to(folder.resolve()):
        return False
    if folder_format(folder) is not None:
        return True
    return any(os.path.samefile(file, found) for found in find_sessions([folder])[0] if found.is_file())


def find_sessions(paths: Iterable[str | Path]) -> tuple[list[Path], list[Path]]:
    """Session files: each file as given, and each folder's files (recursively) that are a session or a
    transcript the importers read (an OpenCode storage root given as such is one transcript). Returns
    (sessions, files of a folder that were not)."""
    sessions: list[Path] = []
    skipped: list[Path] = []
    for given in paths:
        path = Path(given)
        if not path.is_dir() or folder_format(path) is not None:  # a file, or a transcript folder
            sessions.append(path)
            continue
        for candidate in _walk(path):
            if candidate.is_dir():  # a transcript folder inside: one session
                sessions.append(candidate)
                continue
            try:
                detect_format(candidate)
            except (UnknownFormatError, *LOAD_ERRORS, RecursionError):
                skipped.append(candidate)
                continue
            sessions.append(candidate)
    return list(dict.fromkeys(sessions)), skipped


def _walk(folder: Path) -> list[Path]:
    """The files under a folder, sorted, with each transcript folder inside it in place of its files.
    Symlinked folders are not entered."""
    found: list[Path] = []
    for current, dirs, files in os.walk(folder):
        base = Path(current)
        claimed = sorted(d for d in dirs if folder_format(base / d) is not None)
        found += [base / d for d in claimed]
        dirs[:] = sorted(d for d in dirs if d not in claimed)
        found += [base / f for f in files if (base / f).is_file()]
    return sorted(found)
