"""Open what real agents recorded: Claude Code transcripts, OpenAI chat and Anthropic Messages payloads.

`import_file(path)` detects the format (or takes `fmt`) and returns an `ImportResult`: the linnkit
messages plus an account of what was skipped, what was malformed (with line numbers) and which tool calls
or results have no partner. Nothing is written; saving is `engine.session`'s job.
"""

from __future__ import annotations

from pathlib import Path

from engine.importers._common import ImportResult, Problem, UnknownFormatError
from engine.importers.anthropic_messages import import_anthropic
from engine.importers.claude_code import import_claude_code
from engine.importers.detect import FORMATS, detect_format, detect_text, read_source
from engine.importers.openai_chat import import_openai
from engine.messages import AiMessage

__all__ = [
    "FORMATS",
    "ImportResult",
    "Problem",
    "UnknownFormatError",
    "detect_format",
    "import_file",
    "import_text",
]

SYSTEM_PROMPT_ID = "system-prompt"


def import_file(
    path: str | Path, fmt: str | None = None, *, conversation: int = 0, system_prompt: str | None = None
) -> ImportResult:
    """Import a recorded session file.

    `fmt` is one of 'claude-code', 'openai', 'anthropic' (detected when None). `conversation` picks one
    conversation from a file that holds several (fine-tuning JSONL, request lists); negative counts from
    the end. `system_prompt`, when given, becomes the first message (for transcripts that have none).
    """
    text, name = read_source(Path(path))
    return import_text(text, fmt, name=name, conversation=conversation, system_prompt=system_prompt)


def import_text(
    text: str,
    fmt: str | None = None,
    *,
    name: str = "<text>",
    conversation: int = 0,
    system_prompt: str | None = None,
) -> ImportResult:
    """As `import_file`, for text already in memory; `name` is used in problem reports."""
    if fmt is None:
        fmt = detect_text(text)
        if fmt is None:
            raise UnknownFormatError(f"{name}: not a Claude Code transcript, OpenAI or Anthropic messages")
    if fmt == "claude-code":
        result = import_claude_code(text, name)
    elif fmt == "openai":
        result = import_openai(text, name, conversation=conversation)
    elif fmt == "anthropic":
        result = import_anthropic(text, name, conversation=conversation)
    elif fmt == "linn-session":
        raise ValueError(f"{name} is already a linn session: open it with engine.session.load_session")
    else:
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS[:3])}")
    if system_prompt is not None:
        _prepend_system_prompt(result, system_prompt, name)
    return result


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
