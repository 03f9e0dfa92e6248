"""History hygiene warnings carry their kind; `validate` counts orphans by kind, not by text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import AiMessage, hygiene_checks
from playground.cli import main


def message(mid: str, type_: str, content: str = "x", **extra: object) -> AiMessage:
    role = {"user_input": "user", "tool_output": "tool"}.get(type_, "assistant")
    return AiMessage.from_dict({"id": mid, "role": role, "type": type_, "content": content, **extra})


def test_each_warning_has_its_kind_and_its_line() -> None:
    calls = [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]
    messages = [
        message("orphan-note", "user_input"),
        message("orphan-note", "user_input"),
        message("a1", "tool_calls", "", metadata={"tool_calls": calls}),
        message("t9", "tool_output", "out", metadata={"tool_call_id": "c9"}),
        message("e1", "final_answer", " "),
    ]
    found = hygiene_checks(messages)
    assert [(w.kind, w.message_id) for w in found] == [
        ("duplicate_id", "orphan-note"),
        ("orphan_output", "t9"),
        ("empty", "e1"),
        ("orphan_call", "a1"),
    ]
    assert str(found[1]) == "t9: orphan tool output: no earlier call declares c9"


def test_validate_does_not_count_an_id_that_says_orphan(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = [
        {"id": "orphan-note", "role": "user", "type": "user_input", "content": "hi", "timestamp": 1},
        {"id": "orphan-note", "role": "user", "type": "user_input", "content": "again", "timestamp": 2},
    ]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    assert main(["validate", str(path)]) == 1
    out = capsys.readouterr().out
    assert "tool calls: 0; tool outputs: 0; orphans: 0" in out
    assert "orphan-note: message id used 2 times" in out
