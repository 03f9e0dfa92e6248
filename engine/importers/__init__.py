"""Open what real agents recorded: Claude Code, Codex CLI and Gemini CLI sessions, Responses API items,
OpenAI chat and Anthropic Messages payloads, and any format a plug-in adds.

`import_file(path)` detects the format (or takes `fmt`) and returns an `ImportResult`: the linnkit
messages plus an account of what was skipped, what was malformed (with line numbers) and which tool calls
or results have no partner. Nothing is written; saving is `engine.session`'s job. Each format is an
`Importer` (engine/importers/registry.py); `BUILTIN` lists ours in detection order.
"""

from __future__ import annotations

from pathlib import Path

from engine.importers._common import EmptyImportError, ImportResult, Problem, UnknownFormatError
from engine.importers._json import READING_LINE
from engine.importers.aider import detect_aider, import_aider
from engine.importers.anthropic_messages import import_anthropic
from engine.importers.archives import WHOLE_READ_BYTES
from engine.importers.atif import detect_atif, import_atif
from engine.importers.bad_lines import READ_ERRORS, read_around_bad_lines, refusal, what_stopped
from engine.importers.claude_code import import_claude_code, import_claude_code_file
from engine.importers.codex import detect_codex, import_codex
from engine.importers.detect import (
    LINN_SESSION_KIND,
    detect_anthropic,
    detect_claude_code,
    detect_format,
    detect_openai,
    detect_sniff,
    detect_text,
    read_transcript,
)
from engine.importers.factory_droid import detect_factory_droid, import_factory_droid
from engine.importers.folders import FolderError, folder_format, import_folder
from engine.importers.gemini_cli import detect_gemini, import_gemini
from engine.importers.inspect_ai import detect_inspect, import_inspect
from engine.importers.kimi import detect_kimi, import_kimi
from engine.importers.kimi_context import detect_kimi_context, import_kimi_context
from engine.importers.langchain import detect_langchain, import_langchain
from engine.importers.letta import detect_letta, import_letta
from engine.importers.linn_export import detect_linn_export, import_linn_export
from engine.importers.new_formats import NEW_FORMATS
from engine.importers.openai_chat import import_openai
from engine.importers.opencode import detect_opencode, import_opencode
from engine.importers.openhands import detect_openhands, import_openhands
from engine.importers.otel import detect_otel, import_otel
from engine.importers.pi import detect_pi, import_pi
from engine.importers.registry import (
    ENTRY_POINT_GROUP,
    Claim,
    Importer,
    Sniff,
    claims,
    find,
    format_names,
    importers,
    register_builtin,
    unrecognised,
)
from engine.importers.responses import detect_responses, import_responses
from engine.importers.sharegpt import detect_sharegpt, import_sharegpt
from engine.importers.specstory import detect_specstory, import_specstory
from engine.importers.swe_agent import detect_swe_agent, import_swe_agent
from engine.messages import AiMessage

__all__ = [
    "WHOLE_READ_BYTES",
    "Claim",
    "ENTRY_POINT_GROUP",
    "EmptyImportError",
    "FolderError",
    "ImportResult",
    "Importer",
    "Problem",
    "Sniff",
    "UnknownFormatError",
    "claims",
    "detect_format",
    "detect_sniff",
    "detect_text",
    "folder_format",
    "format_names",
    "import_file",
    "import_large",
    "import_text",
    "importers",
    "read_transcript",
    "unrecognised",
]

SYSTEM_PROMPT_ID = "system-prompt"
STREAM_BYTES = 16 * 2**20  # a file this large is read a line at a time when its format can be
HEAD_BYTES = 2**20  # how much of such a file detection reads

BUILTIN = [
    *NEW_FORMATS,  # newer agents' formats (engine/importers/new_formats.py): each claims by its own fields
    Importer(
        "claude-code",
        "Claude Code transcripts: text, thinking, tool uses and results, compactions; "
        "hooks and UI lines left out",
        detect_claude_code,
        import_claude_code,
        read_file=import_claude_code_file,
    ),
    Importer(
        "codex",
        "Codex CLI rollouts: instructions, messages, reasoning summaries, tool calls and outputs, "
        "compactions; "
        "UI echoes (event_msg) and encrypted reasoning left out",
        detect_codex,
        import_codex,
    ),
    Importer(
        "gemini-cli",
        "Gemini CLI sessions: messages, thoughts, tool calls with their results; "
        "the CLI's own notices left out",
        detect_gemini,
        import_gemini,
    ),
    Importer(
        "openai-responses",
        "OpenAI Responses API items, request bodies or responses: as Codex rollouts",
        detect_responses,
        import_responses,
    ),
    Importer(
        "openhands",
        "OpenHands event streams: user messages, each model response's text and tool calls, the "
        "observations answering them, finish; state changes and recalls left out",
        detect_openhands,
        import_openhands,
    ),
    Importer(
        "swe-agent",
        "SWE-agent trajectories (.traj): the history sent to the model, tool results paired by "
        "tool_call_ids; the per-step trajectory left out",
        detect_swe_agent,
        import_swe_agent,
    ),
    Importer(
        "letta",
        "Letta agent files (.af, also as a JSON string): the first agent's messages with their tool calls "
        "and returns, user messages unwrapped; memory blocks stay in the system message",
        detect_letta,
        import_letta,
    ),
    Importer(
        "sharegpt",
        "ShareGPT conversations: system, human, gpt, function_call/observation turns (call ids made up); "
        "one conversation of the file",
        detect_sharegpt,
        import_sharegpt,
    ),
    Importer(
        "langchain",
        "LangChain messages_to_dict dumps: human, ai (with tool calls), tool, system messages",
        detect_langchain,
        import_langchain,
    ),
    Importer(
        "specstory",
        "SpecStory Markdown exports (Cursor and others): user turns, thoughts, answers, each tool use as a "
        "call with its exported result (arguments and often results are not in the export)",
        detect_specstory,
        import_specstory,
    ),
    Importer(
        "aider",
        "Aider chat histories (Markdown): the user's #### lines and the model's replies of one session "
        "(default the last); console output and edits' results left out, no structured tool calls",
        detect_aider,
        import_aider,
    ),
    Importer(
        "atif",
        "Harbor ATIF trajectories (v1.x): system, user and agent steps, reasoning, tool calls with their "
        "observations, each agent step's metrics as its usage; token ids and logprobs left out",
        detect_atif,
        import_atif,
    ),
    Importer(
        "pi",
        "pi coding agent sessions: the live branch's messages, thinking, tool calls and results, user bash "
        "commands, compactions and branch summaries, each call's usage; model changes and labels left out",
        detect_pi,
        import_pi,
    ),
    Importer(
        "kimi",
        "Kimi CLI and Kimi Code wire.jsonl logs: user turns, streamed text and thinking, tool calls with "
        "their results as sent, compactions, each call's usage; approvals, hooks and status left out",
        detect_kimi,
        import_kimi,
    ),
    Importer(
        "kimi-context",
        "kimi-cli context.jsonl files: the saved context as sent (system prompt, thinking, tool calls and "
        "results); checkpoints and context sizes left out",
        detect_kimi_context,
        import_kimi_context,
    ),
    Importer(
        "factory-droid",
        "Factory Droid sessions: user queries with their reminders, thinking, text, tool uses and results; "
        "todo states and other bookkeeping left out",
        detect_factory_droid,
        import_factory_droid,
    ),
    Importer(
        "opencode",
        "OpenCode storage folders (session/, message/, part/): one session's messages as OpenCode sends "
        "them, step by step with each call's usage; snapshots and patches left out",
        detect_opencode,
        import_opencode,
    ),
    Importer(
        "inspect-ai",
        "Inspect AI eval logs (.json, .eval): each sample's messages with tool calls, results and "
        "reasoning, each model call's usage; scores, store and other events left out",
        detect_inspect,
        import_inspect,
    ),
    Importer(
        "linn-export",
        "Sessions exported by linn-playground (export --to openai|anthropic): every message as it was",
        detect_linn_export,
        import_linn_export,
    ),
    Importer(
        "otel",
        "OpenTelemetry GenAI and OpenInference traces (OTLP JSON): what the last model call received and "
        "answered, each call's usage; agent and tool spans left out",
        detect_otel,
        import_otel,
    ),
    Importer(
        "anthropic",
        "Anthropic Messages requests/responses: text, thinking, tool uses and results; "
        "images as placeholders",
        detect_anthropic,
        lambda text, name, conversation: import_anthropic(text, name, conversation=conversation or 0),
        generic=True,
    ),
    Importer(
        "openai",
        "OpenAI chat messages, requests and fine-tuning JSONL: messages, tool calls, reasoning text",
        detect_openai,
        lambda text, name, conversation: import_openai(text, name, conversation=conversation or 0),
        generic=True,
    ),
]
for _importer in BUILTIN:
    register_builtin(_importer)


def import_file(
    path: str | Path,
    fmt: str | None = None,
    *,
    conversation: int | None = None,
    system_prompt: str | None = None,
) -> ImportResult:
    """Import a recorded session file.

    `path` may be a transcript folder (an OpenHands V1 conversation, a Cline task, a Copilot CLI session):
    the folder format that claims it reads it. `fmt` is an importer's name (detected when None;
    `format_names()` lists them). `conversation` picks one
    conversation from a file that holds several (fine-tuning JSONL, request lists, Aider histories);
    negative counts from the end; None is the format's default. `system_prompt`, when given, becomes the
    first message (for transcripts that have none).
    """
    # a transcript kept as a folder (engine/importers/folders.py), or one too large to read as one string
    try:
        whole = import_folder(Path(path), fmt, conversation) if Path(path).is_dir() else None
    except READ_ERRORS as error:
        claimed = folder_format(Path(path))
        kind = fmt or (claimed.name if claimed is not None else "a folder")
        raise ValueError(refusal(str(path), kind, error, "nothing was read")) from None
    whole = whole or import_large(Path(path), fmt, conversation)
    if whole is not None:
        if system_prompt is not None:
            _prepend_system_prompt(whole, system_prompt, str(path))
        return whole
    text, unreadable = read_transcript(Path(path))
    result = import_text(text, fmt, name=str(path), conversation=conversation, system_prompt=system_prompt)
    result.problems[:0] = unreadable
    return result


def import_large(path: Path, fmt: str | None, conversation: int | None) -> ImportResult | None:
    """A large file (16 MB or more) in a format that reads it a line at a time (detected on its first MB),
    read so; None for any other file (read its text as usual)."""
    if not path.is_file() or path.stat().st_size < STREAM_BYTES:
        return None
    with path.open("rb") as file:
        head = file.read(HEAD_BYTES)
    text = head[: head.rfind(b"\n") + 1].decode("utf-8-sig", errors="replace")
    sniff = Sniff.of(text, str(path))
    if detect_sniff(sniff) == LINN_SESSION_KIND:
        return None
    found = None if fmt is not None else claims(sniff)
    chosen = fmt or (found[0].importer.name if found else None)
    importer = find(chosen) if chosen else None
    if importer is None or importer.read_file is None:
        return None
    READING_LINE.set(None)
    try:
        result = importer.read_file(path, conversation)
    except READ_ERRORS as error:  # read a line at a time, it is not read again without the line
        line = READING_LINE.get()
        what = "nothing was read (a file this large is read a line at a time: fix or remove that line)"
        where = f"{path}:{line}" if line is not None else str(path)
        raise ValueError(refusal(where, importer.name, error, what)) from None
    others = [c.importer.name for c in (found or []) if c.importer.name != importer.name]
    result.runner_up = others[0] if others else None
    if not result.messages:
        raise _opened_empty(result, text, str(path), importer.name, found)
    return result


def import_text(
    text: str,
    fmt: str | None = None,
    *,
    name: str = "<text>",
    conversation: int | None = None,
    system_prompt: str | None = None,
    detected: bool = False,
) -> ImportResult:
    """As `import_file`, for text already in memory; `name` is used in problem reports. `detected`: `fmt`
    is the format detection found (a caller that sniffed the text), not one the user named.

    A detected format names its runner-up (`ImportResult.runner_up`) when another importer claims the text
    too. Non-blank text from which no message comes in raises `EmptyImportError`, naming the format tried
    and the one to try next, rather than opening an empty session."""
    found: list[Claim] | None = None
    if fmt is None:
        sniff = Sniff.of(text, name)
        if detect_sniff(sniff) == LINN_SESSION_KIND:
            fmt = LINN_SESSION_KIND
        else:
            found = claims(sniff)
            if not found:
                raise unrecognised(name)
            fmt = found[0].importer.name
    if fmt == LINN_SESSION_KIND:
        raise ValueError(
            f"{name} is already a linn session: open it as it is (linn-playground FILE, validate, build, "
            "replay; in Python engine.load_session), no import needed"
        )
    importer = find(fmt)
    READING_LINE.set(None)  # where a JSON Lines reader stops, should it stop on a value (bad_lines)
    try:
        result = importer.read(text, name, conversation)
    except READ_ERRORS as error:
        if found is None and not detected:  # `--from` named a format whose shape the text does not have
            what = what_stopped(error)
            raise ValueError(
                f"{name}: not in the {fmt} format (read as {fmt}, it stopped at {what})"
            ) from None

        # the format claimed the text: a line holds a value of a type the format never writes
        def read(part: str) -> ImportResult:
            return importer.read(part, name, conversation)

        result = read_around_bad_lines(read, text, name, fmt, error)
    others = [c.importer.name for c in (found or []) if c.importer.name != fmt]
    result.runner_up = others[0] if others else None
    if not result.messages and text.strip():
        raise _opened_empty(result, text, name, fmt, found)
    if system_prompt is not None:
        _prepend_system_prompt(result, system_prompt, name)
    return result


def _opened_empty(
    result: ImportResult, text: str, name: str, fmt: str, found: list[Claim] | None
) -> EmptyImportError:
    """The one line for a non-blank file that gave no message: what was tried, what to try next."""
    if found is None:
        found = claims(Sniff.of(text, name))
    others = [c.importer.name for c in found if c.importer.name != fmt]
    why = f"; {len(result.problems)} problem(s), the first: {result.problems[0]}" if result.problems else ""
    skipped = result.skipped
    if skipped and not why:
        why = "; left out: " + ", ".join(f"{n} {reason}" for reason, n in sorted(skipped.items())[:3])
    then = (
        f"next format that claims it: {others[0]} (--from {others[0]})"
        if others
        else f"no other format claims it (--from NAME to force one of {', '.join(format_names())})"
    )
    return EmptyImportError(f"{name}: read as {fmt}, no message came in{why}; {then}")


def _prepend_system_prompt(result: ImportResult, text: str, name: str) -> None:
    if any(m.type == "system_prompt" for m in result.messages):
        raise ValueError(f"{name} has its own system prompt; leave out system_prompt")
    taken = {m.id for m in result.messages}
    message_id, n = SYSTEM_PROMPT_ID, 0
    while message_id in taken:
        n += 1
        message_id = f"{SYSTEM_PROMPT_ID}#{n}"
    timestamp = result.messages[0].timestamp if result.messages else 0
    result.messages.insert(0, AiMessage(message_id, "system", "system_prompt", text, timestamp))
