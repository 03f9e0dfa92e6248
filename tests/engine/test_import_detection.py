"""Detection: every sample of every format is claimed by its own importer only; nothing opens empty.

Samples are discovered from the sample folders, so a new one joins by being added there (and, when its
folder is not yet named below, by a row in FOLDER_FORMAT or FILE_FORMAT).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.importers import (
    EmptyImportError,
    Sniff,
    UnknownFormatError,
    claims,
    format_names,
    import_file,
    import_text,
)
from engine.importers.detect import LINN_SESSION_KIND, detect_sniff, read_transcript

REPO = Path(__file__).resolve().parents[2]
ROOTS = (
    REPO / "tests" / "data" / "real-sessions",
    REPO.parent / "shared" / "real-sessions",
    REPO / "sample_sessions",
)
# a sample folder → the format of its files (`sample_sessions` holds linn sessions)
FOLDER_FORMAT = {
    "aider": "aider",
    "claude-code": "claude-code",
    "claude-code-variants": "claude-code",
    "codex": "codex",
    "gemini-cli": "gemini-cli",
    "letta": "letta",
    "openhands": "openhands",
    "openai": "openai",
    "sharegpt": "sharegpt",
    "swe-agent": "swe-agent",
    "sample_sessions": LINN_SESSION_KIND,
    "claude-code-stream": "claude-code-stream",
    "cline": "cline",
    "copilot-cli": "copilot-cli",
    "cursor-agent": "cursor-agent",
    "openhands-v1": "openhands-v1",
    "qwen-code": "qwen-code",
    "atif": "atif",
    "factory-droid": "factory-droid",
    "inspect-ai": "inspect-ai",
    "kimi": "kimi",
    "opencode": None,  # a storage folder's parts: the folder opens by its root, no part on its own
    "otel": "otel",
    "pi": "pi",
    "specstory": "specstory",
}
# files whose format is not their folder's; None: not a transcript at all (no importer may claim it)
FILE_FORMAT = {
    "gemini-cli/gemini.jsonl": "gemini-cli-jsonl",  # Gemini CLI's newer JSONL recording
    "claude-code/entire-0e053674f90a-0-metadata.json": None,  # Entire's own checkpoint metadata
    "claude-code/entire-6beaf3327136-0-metadata.json": None,
    # the parts of a transcript folder that are not its messages (the folder opens by its root)
    "cline/ui_messages.json": None,
    "cline/task_metadata.json": None,
    "openhands-v1/v1_11_5_cli_default-base_state.json": None,
    "kimi/kimi-cli-with-thinking.context.jsonl": "kimi-context",  # kimi-cli's saved context, beside its wire
    "kimi/kimi-cli-with-image.context.jsonl": "kimi-context",
    "kimi/kimi-cli-large-100msgs.context.jsonl": "kimi-context",
}
NOT_SAMPLES = (".yaml", ".py", ".ipynb")
# real files a format claims that hold no conversation: the import says why (tested in their own tests)
NO_MESSAGES = {"otel/copilot-cli-phase2-otel-20260803-1550-2169.jsonl"}  # spans without message content


def _samples() -> list[tuple[str, Path]]:
    found = []
    for root in ROOTS:
        if not root.is_dir():
            continue
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            if path.name.startswith("LICENSE") or path.name == "README.md" or path.suffix in NOT_SAMPLES:
                continue
            relative = path.relative_to(root)
            folder = relative.parts[0] if len(relative.parts) > 1 else root.name
            found.append((f"{folder}/{path.name}", path))
    return found


SAMPLES = _samples()


def _expected(key: str) -> str | None:
    if key in FILE_FORMAT:
        return FILE_FORMAT[key]
    return FOLDER_FORMAT[key.split("/")[0]]


def test_every_sample_folder_has_a_format():
    assert len(SAMPLES) >= 24
    unmapped = sorted({key.split("/")[0] for key, _ in SAMPLES if key.split("/")[0] not in FOLDER_FORMAT})
    assert unmapped == [], "add these folders to FOLDER_FORMAT"


@pytest.mark.parametrize(("key", "path"), SAMPLES, ids=[key for key, _ in SAMPLES])
def test_only_its_own_importer_claims_a_sample(key, path):
    expected = _expected(key)
    sniff = Sniff.of(read_transcript(path)[0], str(path))  # a zip (Inspect AI's .eval) as its document
    claimed = [claim.importer.name for claim in claims(sniff)]
    if expected == LINN_SESSION_KIND:
        assert (detect_sniff(sniff), claimed) == (LINN_SESSION_KIND, [])
    elif expected in format_names():
        assert claimed == [expected]
    else:  # a format no importer reads yet (or not a transcript): unrecognised, never opened empty
        assert claimed == []


@pytest.mark.parametrize(
    ("key", "path"),
    [(k, p) for k, p in SAMPLES if _expected(k) in format_names() and k not in NO_MESSAGES],
    ids=[k for k, _ in SAMPLES if _expected(k) in format_names() and k not in NO_MESSAGES],
)
def test_every_claimed_sample_opens_with_messages(key, path):
    result = import_file(path)
    assert (result.format, result.runner_up) == (_expected(key), None)
    assert len(result.messages) > 0


def test_two_claims_are_scored_and_the_runner_up_named():
    # a chat message list that also carries Anthropic blocks: both generic importers claim it
    text = '[{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "ok"}]}]'
    found = claims(Sniff.of(text))
    assert [(c.importer.name, c.score) for c in found] == [("anthropic", 1.0), ("openai", 1.0)]
    assert import_text(text).runner_up == "openai"  # a tie: detection order decides, the other is named
    # a specific format's claim puts the generic shapes aside: a Cline task is Anthropic messages too
    cline = (
        '[{"role": "user", "ts": 1767225601000, "content": [{"type": "text", "text": "<task>go</task>"}]},'
        ' {"role": "assistant", "ts": 1767225602000, "content": [{"type": "text", "text": "ok"}]}]'
    )
    assert [(c.importer.name, c.score) for c in claims(Sniff.of(cline))] == [("cline", 1.0)]
    assert import_text(cline).runner_up is None


def test_a_non_empty_file_that_yields_no_message_is_an_error_naming_the_next_format(tmp_path):
    # only bookkeeping lines: the Claude Code importer claims the file and reads nothing
    path = tmp_path / "bookkeeping.jsonl"
    path.write_text('{"type": "file-history-snapshot", "messageId": "m1", "snapshot": {}}\n')
    with pytest.raises(EmptyImportError) as caught:
        import_file(path)
    assert str(caught.value) == (
        f"{path}: read as claude-code, no message came in; left out: 1 file-history-snapshot; "
        f"no other format claims it (--from NAME to force one of {', '.join(format_names())})"
    )


def test_forcing_a_format_that_reads_nothing_names_the_detected_one(tmp_path):
    path = tmp_path / "chat.json"
    path.write_text('[{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]')
    with pytest.raises(EmptyImportError) as caught:
        import_file(path, "codex")
    assert str(caught.value) == (
        f"{path}: read as codex, no message came in; 1 problem(s), the first: "
        f"{path}:1: expected {{timestamp, type, payload}} with an object payload; "
        "next format that claims it: openai (--from openai)"
    )


def test_blank_text_is_no_error():
    assert import_text("   \n", "openai").messages == []


CURSOR = (
    '{"role": "user", "message": {"content": [{"type": "text", "text": "fix the bug"}]}}\n'
    '{"role": "assistant", "message": {"content": [{"type": "text", "text": "Looking."},'
    ' {"type": "tool_use", "name": "Read", "input": {"path": "a.py"}}]}}\n'
)
OPENCODE_MESSAGE = (
    '{"id": "msg_01", "sessionID": "ses_01", "role": "assistant", "time": {"created": 1750000000000},'
    ' "modelID": "claude-sonnet-4", "providerID": "anthropic", "tokens": {"input": 10, "output": 5}}'
)
QWEN_CODE = (
    '{"uuid": "u1", "parentUuid": null, "sessionId": "s1", "timestamp": "2025-09-01T10:00:00.000Z",'
    ' "type": "user", "cwd": "/w", "version": "0.0.9",'
    ' "message": {"role": "user", "parts": [{"text": "hi"}]}}\n'
    '{"uuid": "u2", "parentUuid": "u1", "sessionId": "s1", "timestamp": "2025-09-01T10:00:01.000Z",'
    ' "type": "assistant", "model": "qwen3-coder-plus",'
    ' "message": {"role": "model", "parts": [{"text": "hello"}]}}\n'
)


@pytest.mark.parametrize(
    ("text", "owner"),
    [(CURSOR, "cursor-agent"), (OPENCODE_MESSAGE, None), (QWEN_CODE, "qwen-code")],
    ids=["cursor-agent", "opencode-message", "qwen-code"],
)
def test_look_alike_formats_are_taken_by_their_own_importer_or_refused(text, owner):
    # Cursor and OpenCode were taken as OpenAI chat, Qwen Code as Claude Code: all opened empty
    assert [c.importer.name for c in claims(Sniff.of(text))] == ([owner] if owner else [])
    if owner is None:
        with pytest.raises(UnknownFormatError, match="unrecognised transcript format"):
            import_text(text)
    else:
        assert import_text(text).messages
