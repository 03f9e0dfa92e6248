"""The importers of newer agents' formats (issue 31), in detection order, and the folder formats among them.

Each claims a file only by the fields that define its format; they come before the older built-ins in
`BUILTIN` so that a file of theirs is not taken by a format that shares a field with it.
"""

from __future__ import annotations

from engine.importers import claude_stream, cline, codex_exec, copilot_cli, cursor_agent, qwen_code
from engine.importers.folders import FolderFormat, register_folder_format
from engine.importers.gemini_checkpoint import detect_gemini_checkpoint, import_gemini_checkpoint
from engine.importers.gemini_jsonl import detect_gemini_jsonl, import_gemini_jsonl
from engine.importers.gemini_logs import detect_gemini_logs, import_gemini_logs
from engine.importers.openhands_v1 import (
    claims_folder as claims_openhands_folder,
)
from engine.importers.openhands_v1 import (
    detect_openhands_v1,
    import_openhands_v1,
)
from engine.importers.openhands_v1 import (
    import_folder as import_openhands_folder,
)
from engine.importers.registry import Importer

NEW_FORMATS = [
    Importer(
        "claude-code-stream",
        "Claude Code --output-format stream-json runs: messages as in transcripts (thinking, tool uses "
        "and results, compactions, usage per call), sub-agents as further conversations; init's model and "
        "tools and the result's totals kept; partial stream events left out",
        claude_stream.detect_claude_stream,
        claude_stream.import_claude_stream,
    ),
    Importer(
        "codex-exec",
        "Codex CLI `codex exec --json` streams: each completed item (answers, reasoning, commands with "
        "their output, MCP calls, searches, file changes, plans), each turn's usage; no prompt in the stream",
        codex_exec.detect_codex_exec,
        codex_exec.import_codex_exec,
    ),
    Importer(
        "gemini-cli-jsonl",
        "Gemini CLI JSONL recordings (2026): records replayed as the CLI does ($set, $rewindTo, rewritten "
        "messages), then read as Gemini CLI sessions",
        detect_gemini_jsonl,
        import_gemini_jsonl,
    ),
    Importer(
        "gemini-checkpoint",
        "Gemini CLI checkpoints (/chat save): the history as sent, thoughts, function calls and their "
        "responses (paired by name when saved without ids); no times, model or usage are saved",
        detect_gemini_checkpoint,
        import_gemini_checkpoint,
    ),
    Importer(
        "gemini-logs",
        "Gemini CLI's prompt log (logs.json): what the user typed, one conversation a session (the last by "
        "default); it holds no reply, call or system prompt; commands to the CLI left out",
        detect_gemini_logs,
        import_gemini_logs,
    ),
    Importer(
        "openhands-v1",
        "OpenHands V1 (SDK) events and conversation folders: system prompt with tools, messages, each "
        "response's reasoning and tool calls, observations, condensation summaries; state updates left out",
        detect_openhands_v1,
        import_openhands_v1,
    ),
    Importer(
        "cline",
        "Cline / Roo Code / Kilo Code tasks (the task folder, or its api_conversation_history.json): "
        "messages as sent, thinking, tool uses and results, images as placeholders, condense summaries, "
        "usage from ui_messages' api_req_started; no system prompt is stored",
        cline.detect_cline,
        cline.import_cline,
    ),
    Importer(
        "copilot-cli",
        "GitHub Copilot CLI events.jsonl (or the session folder, or a -p run's JSON stream): user messages "
        "as sent, reasoning, tool requests and results, compaction summaries, assistant.usage per call when "
        "streamed, session.shutdown's per-model totals; timeline events left out",
        copilot_cli.detect_copilot_cli,
        copilot_cli.import_copilot_cli,
    ),
    Importer(
        "qwen-code",
        "Qwen Code chat records: user content, thoughts, function calls and responses, compressions as "
        "summaries, usageMetadata per call; sub-agent and CLI system records left out",
        qwen_code.detect_qwen_code,
        qwen_code.import_qwen_code,
    ),
    Importer(
        "cursor-agent",
        "Cursor agent transcripts ({role, message: {content}}): user queries, text, thinking, tool uses "
        "(ids made up); Cursor records no tool results, usage or model",
        cursor_agent.detect_cursor_agent,
        cursor_agent.import_cursor_agent,
    ),
]

register_folder_format(FolderFormat("copilot-cli", copilot_cli.claims_folder, copilot_cli.import_folder))
register_folder_format(FolderFormat("cline", cline.claims_folder, cline.import_folder))
register_folder_format(FolderFormat("openhands-v1", claims_openhands_folder, import_openhands_folder))
