"""Open what real agents recorded: Claude Code, Codex CLI and Gemini CLI sessions, Responses API items,
OpenAI chat and Anthropic Messages payloads, and any format a plug-in adds.

`import_file(path)` detects the format (or takes `fmt`) and returns an `ImportResult`: the linnkit
messages plus an account of what was skipped, what was malformed (with line numbers) and which tool calls
or results have no partner. Nothing is written; saving is `engine.session`'s job. Each format is an
`Importer` (engine/importers/registry.py); `BUILTIN` lists ours in detection order.
"""

from __future__ import annotations

from pathlib import Path

from engine.importers._common import ImportResult, Problem, UnknownFormatError
from engine.importers.aider import detect_aider, import_aider
from engine.importers.anthropic_messages import import_anthropic
from engine.importers.archives import MAX_TRANSCRIPT_BYTES, is_zip, read_transcript
from engine.importers.atif import detect_atif, import_atif
from engine.importers.claude_code import import_claude_code
from engine.importers.codex import detect_codex, import_codex
from engine.importers.detect import (
    LINN_SESSION_KIND,
    detect_anthropic,
    detect_claude_code,
    detect_format,
    detect_openai,
    detect_sniff,
    detect_text,
    read_source,
)
from engine.importers.factory_droid import detect_factory_droid, import_factory_droid
from engine.importers.gemini_cli import detect_gemini, import_gemini
from engine.importers.inspect_ai import detect_inspect, import_inspect
from engine.importers.kimi import detect_kimi, import_kimi
from engine.importers.kimi_context import detect_kimi_context, import_kimi_context
from engine.importers.langchain import detect_langchain, import_langchain
from engine.importers.letta import detect_letta, import_letta
from engine.importers.linn_export import detect_linn_export, import_linn_export
from engine.importers.openai_chat import import_openai
from engine.importers.opencode import detect_opencode, import_opencode
from engine.importers.opencode_storage import is_storage_root
from engine.importers.openhands import detect_openhands, import_openhands
from engine.importers.otel import detect_otel, import_otel
from engine.importers.pi import detect_pi, import_pi
from engine.importers.registry import (
    ENTRY_POINT_GROUP,
    Importer,
    Sniff,
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
    "ENTRY_POINT_GROUP",
    "MAX_TRANSCRIPT_BYTES",
    "ImportResult",
    "Importer",
    "Problem",
    "Sniff",
    "UnknownFormatError",
    "detect_format",
    "detect_sniff",
    "format_names",
    "import_file",
    "import_text",
    "importers",
    "is_storage_root",
    "is_zip",
    "read_transcript",
    "unrecognised",
]

SYSTEM_PROMPT_ID = "system-prompt"

BUILTIN = [
    Importer(
        "claude-code",
        "Claude Code transcripts: text, thinking, tool uses and results, compactions; "
        "hooks and UI lines left out",
        detect_claude_code,
        import_claude_code,
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

    `fmt` is an importer's name (detected when None; `format_names()` lists them). `conversation` picks one
    conversation from a file that holds several (fine-tuning JSONL, request lists, Aider histories);
    negative counts from the end; None is the format's default. `system_prompt`, when given, becomes the
    first message (for transcripts that have none).
    """
    text, name = read_source(Path(path))
    return import_text(text, fmt, name=name, conversation=conversation, system_prompt=system_prompt)


def import_text(
    text: str,
    fmt: str | None = None,
    *,
    name: str = "<text>",
    conversation: int | None = None,
    system_prompt: str | None = None,
) -> ImportResult:
    """As `import_file`, for text already in memory; `name` is used in problem reports."""
    if fmt is None:
        fmt = detect_text(text, name)
        if fmt is None:
            raise unrecognised(name)
    if fmt == LINN_SESSION_KIND:
        raise ValueError(f"{name} is already a linn session: open it with engine.session.load_session")
    result = find(fmt).read(text, name, conversation)
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
