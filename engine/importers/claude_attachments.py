"""Claude Code `attachment` lines (2.1.x): context the harness added to the model's next request.

Claude Code records what it injects — todo and task reminders, nested CLAUDE.md memory, notices that a file
was edited, the contents of @-mentioned files, hook context, plan-mode notices, skill and tool listings — as
`{"type": "attachment", "attachment": {"type": …, …}}` lines, and renders each as a `<system-reminder>` user
message only when it sends the request (the rendering is never written). So each becomes a `user_input`
marked `metadata.generated: "attachment"` (`metadata.attachment` names its type) holding the text the line
carries; the few words of Claude Code's own wrapping are not in the file and are not counted.

Types that never reach the model (a hook that succeeded quietly, effort markers, permission bookkeeping) are
left out by type. A type not listed here is drift: carried when it holds text, else left out, and named in
the import report either way.
"""

from __future__ import annotations

import json
from typing import Any

from engine.importers._common import Names, compact_json

# attachment types whose content is never sent to the model
BOOKKEEPING = Names(
    {
        "hook_non_blocking_error",
        "hook_error_during_execution",
        "hook_cancelled",
        "hook_stopped_continuation",
        "hook_permission_decision",
        "hook_system_message",
        "already_read_file",
        "command_permissions",
        "structured_output",
        "ultra_effort_enter",
        "ultra_effort_exit",
        "async_hook_response",
    }
)
# hooks whose output Claude Code adds to the context when they succeed
CONTEXT_HOOKS = Names({"SessionStart", "UserPromptSubmit"})
TEXT_KEYS = ("content", "prompt", "text", "snippet", "message")


def attachment_text(attachment: dict[str, Any]) -> tuple[str | None, bool]:
    """(the text the model received, whether the type is known); text None: nothing was sent."""
    kind = attachment.get("type")
    if kind in BOOKKEEPING:
        return None, True
    if kind == "hook_success":
        return _hook_context(attachment), True
    render = RENDER.get(kind) if isinstance(kind, str) else None
    if render is not None:
        return render(attachment), True
    found = [_text(attachment.get(key)) for key in TEXT_KEYS if attachment.get(key) is not None]
    return ("\n\n".join(t for t in found if t) or None), False


def _hook_context(attachment: dict[str, Any]) -> str | None:
    """What a successful hook added to the context: SessionStart and UserPromptSubmit hooks' output (its
    `additionalContext` when the hook answered in JSON); other hooks' output is not sent."""
    event = attachment.get("hookEvent") or str(attachment.get("hookName") or "").split(":")[0]
    if event not in CONTEXT_HOOKS:
        return None
    # `content` is what Claude Code added (empty when the hook's JSON answer added nothing); files written
    # before it had the field hold only the hook's `stdout`
    output = attachment["content"] if "content" in attachment else attachment.get("stdout")
    if isinstance(output, str) and output.lstrip().startswith("{"):
        try:
            answer = json.loads(output)
        except ValueError:
            answer = None
        if isinstance(answer, dict):  # it adds its additionalContext only: a systemMessage is the user's
            specific = answer.get("hookSpecificOutput")
            return (_text(specific.get("additionalContext")) or None) if isinstance(specific, dict) else None
    return _text(output) or None


def _text(value: Any) -> str:
    """Text of a field: a string, a list of strings or text parts, or `{content}`; other values as JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_text(v) for v in value if v is not None)
    if isinstance(value, dict):
        for key in ("content", "text"):
            if isinstance(value.get(key), str | list | dict):
                return _text(value[key])
        if isinstance(value.get("file"), dict):
            return _text(value["file"])
    return compact_json(value)


def _todos(attachment: dict[str, Any]) -> str:
    items = attachment.get("content")
    if not isinstance(items, list) or not items:
        return f"[{attachment.get('type')}: the list is empty]"
    lines = []
    for item in items:
        if isinstance(item, dict):
            label = item.get("content") or item.get("subject") or item.get("description") or ""
            lines.append(f"- [{item.get('status', '')}] {label}")
        else:
            lines.append(f"- {item}")
    return f"[{attachment.get('type')}]\n" + "\n".join(lines)


def _titled(title_key: str, body_key: str) -> Any:
    def render(attachment: dict[str, Any]) -> str:
        title = attachment.get(title_key) or attachment.get("displayPath") or attachment.get("path") or ""
        body = _text(attachment.get(body_key))
        return f"{title}\n\n{body}".strip() if title else body

    return render


def _fields(*keys: str) -> Any:
    def render(attachment: dict[str, Any]) -> str:
        kind = attachment.get("type")
        shown = {k: attachment[k] for k in keys if attachment.get(k) not in (None, "", [], {})}
        return f"[{kind}] " + (compact_json(shown) if shown else "")

    return render


RENDER = {
    "todo_reminder": _todos,
    "task_reminder": _todos,
    "todo": _todos,
    "nested_memory": _titled("path", "content"),
    "file": _titled("filename", "content"),
    "directory": _titled("path", "content"),
    "edited_text_file": _titled("filename", "snippet"),
    "selected_lines_in_ide": _titled("filename", "content"),
    "invoked_skills": lambda a: _text(
        [s.get("content") for s in a.get("skills") or [] if isinstance(s, dict)]
    ),
    "skill_listing": lambda a: _text(a.get("content")),
    "critical_system_reminder": lambda a: _text(a.get("content")),
    "hook_additional_context": lambda a: _text(a.get("content")),
    "hook_blocking_error": lambda a: (
        _text((a.get("blockingError") or {}).get("blockingError"))
        if isinstance(a.get("blockingError"), dict)
        else _text(a.get("blockingError"))
    ),
    "queued_command": lambda a: _text(a.get("prompt")),
    "mcp_instructions_delta": lambda a: _text(a.get("addedBlocks")),
    "agent_listing_delta": lambda a: _text(a.get("addedLines")),
    "deferred_tools_delta": _fields("addedNames", "removedNames"),
    "compact_file_reference": _fields("filename"),
    "opened_file_in_ide": _fields("filename"),
    "edited_image_file": _fields("filename"),
    "plan_mode": _fields("reminderType", "planFilePath", "planExists", "isSubAgent"),
    "plan_mode_exit": _fields("planFilePath", "planExists"),
    "plan_mode_reentry": _fields("planFilePath"),
    "diagnostics": _fields("files"),
    "output_style": _fields("style"),
    "date_change": _fields("newDate"),
    "token_usage": _fields("used", "total", "remaining"),
    "budget_usd": _fields("used", "total", "remaining"),
}
