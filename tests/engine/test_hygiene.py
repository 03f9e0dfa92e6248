"""History hygiene warnings carry their kind; `validate` counts orphans by kind, not by text."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import AiMessage, hygiene_checks
from playground.cli.main import main


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


def test_going_back_and_forth_between_two_steps_rescans_neither(monkeypatch) -> None:
    from engine import hygiene
    from engine.stage_cache import forget_earlier_builds

    calls = [{"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]
    history = [
        message("u1", "user_input"),
        message("a1", "tool_calls", "", metadata={"tool_calls": calls}),
        message("u1", "user_input"),
        message("t1", "tool_output", "out", metadata={"tool_call_id": "c1"}),
        message("e1", "final_answer", " "),
    ]
    fresh = {}
    for length in (4, 5):
        forget_earlier_builds()
        fresh[length] = hygiene_checks(history[:length])
    assert [w.kind for w in fresh[4]] == ["duplicate_id"]  # the call is answered in both
    assert [w.kind for w in fresh[5]] == ["duplicate_id", "empty"]
    forget_earlier_builds()
    scanned: list[int] = []
    extended = hygiene._Scan.extended

    def counted(scan, messages):
        scanned.append(len(messages))
        return extended(scan, messages)

    monkeypatch.setattr(hygiene._Scan, "extended", counted)
    for length in (4, 5, 4, 5, 4):
        assert hygiene_checks(history[:length]) == fresh[length]
    assert scanned == [4, 5, 4]  # then both are kept


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


def test_a_step_back_from_a_long_scan_goes_on_from_its_mark(monkeypatch) -> None:
    from engine import hygiene
    from engine.lanes import memory_lane
    from engine.stage_cache import forget_earlier_builds

    calls = [
        {"id": f"c{n}", "type": "function", "function": {"name": "ls", "arguments": "{}"}} for n in range(4)
    ]
    history = [message("u1", "user_input")]
    for n in range(4):
        history += [
            message(f"a{n}", "tool_calls", "", metadata={"tool_calls": [calls[n]]}),
            message(f"t{n}", "tool_output", "out" if n != 2 else "", metadata={"tool_call_id": f"c{n}"}),
            message("u1" if n == 1 else f"u{n + 2}", "user_input"),
        ]
    fresh = {}
    for length in range(len(history) + 1):
        forget_earlier_builds()
        fresh[length] = hygiene_checks(history[:length])
    monkeypatch.setattr(hygiene, "MARK_AFTER", 4)
    monkeypatch.setattr(hygiene, "MARK_BACK", 3)
    forget_earlier_builds()
    read: list[int] = []
    extended = hygiene._Scan.extended

    def counted(scan, messages):
        read.append(len(messages) - len(scan.messages))
        return extended(scan, messages)

    monkeypatch.setattr(hygiene._Scan, "extended", counted)
    assert hygiene_checks(history) == fresh[len(history)]  # read at once: a mark 3 messages before its end
    assert read == [len(history) - 3, 3]
    with memory_lane("series"):  # a long read in another lane leaves its own mark, not this lane's
        forgotten = list(history[:7])  # other objects: no scan of this lane fits them
        assert hygiene_checks([message(m.id, m.type, m.content, metadata=m.metadata) for m in forgotten])
    for length in (len(history) - 1, len(history) - 2, len(history) - 3):  # steps back: from the mark
        read.clear()
        assert hygiene_checks(history[:length]) == fresh[length]
        assert sum(read) <= 2
    read.clear()
    assert hygiene_checks(history[:5]) == fresh[5]  # before the mark: from the start (and a new mark)
    assert sum(read) == 5
    assert hygiene_checks(history) == fresh[len(history)]
