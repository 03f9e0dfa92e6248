"""A transcript line holding a value of a type its format never writes: left out by name, the rest read."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import engine.importers as importers
from engine.importers import import_file, import_text

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions"
PI = DATA / "pi" / "v3-branch-compaction.jsonl"


def _spoiled(path: Path, spoil: dict[int, tuple[str, object]]) -> str:
    """The file with, on each given line (1-based), one message field set to a value of the wrong type."""
    lines = path.read_text(encoding="utf-8").splitlines()
    for number, (key, value) in spoil.items():
        entry = json.loads(lines[number - 1])
        entry["message"][key] = value
        lines[number - 1] = json.dumps(entry)
    return "\n".join(lines) + "\n"


def test_each_bad_line_is_named_and_the_others_load() -> None:
    clean = import_text(PI.read_text(encoding="utf-8"), name="pi.jsonl")
    result = import_text(_spoiled(PI, {4: ("content", 12345), 16: ("content", 678)}), name="pi.jsonl")
    assert [(p.line, p.reason.split(" (")[0]) for p in result.problems] == [
        (4, "a value of a type the pi format does not have"),
        (16, "a value of a type the pi format does not have"),
    ]
    # the two entries are gone, and with line 4 the live branch's link to what came before it (pi reads the
    # branch from the last entry up through `parentId`)
    assert [m.id for m in clean.messages][:4] == ["a0000002", "a0000003", "a0000003#1", "a0000004"]
    assert [m.id for m in result.messages] == [
        "a0000004", "a0000005", "a0000007", "a0000009", "a0000010", "a0000011", "a0000012",
    ]  # fmt: skip


def test_a_large_file_read_a_line_at_a_time_names_the_line(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(importers, "STREAM_BYTES", 1)  # read as a file of 16 MB or more would be
    path = tmp_path / "session.jsonl"
    lines = (DATA / "claude-code" / "session-3fe1b6bc.jsonl").read_text(encoding="utf-8").splitlines()
    number = next(i for i, line in enumerate(lines, 1) if '"type": "user"' in line or '"type":"user"' in line)
    entry = json.loads(lines[number - 1])
    # a value the reader stops at (a text that is a list, inside a tool result: the line's own blocks are
    # checked before reading, and a wrong one left out without stopping)
    result = {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": ["x"]}]}
    entry["message"]["content"] = [result]
    lines[number - 1] = json.dumps(entry)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(ValueError) as refused:
        import_file(path)
    assert str(refused.value).startswith(f"{path}:{number}: read as claude-code, a value has a type")
    assert str(refused.value).endswith("fix or remove that line)")


def test_a_link_that_cannot_name_an_entry_is_said() -> None:
    # a value of the wrong type that stops no importer but cuts a tree: pi read 12 messages as 1, "another
    # branch", and said nothing
    lines = PI.read_text(encoding="utf-8").splitlines()
    last = json.loads(lines[-1])
    last["parentId"] = 12345
    result = import_text("\n".join([*lines[:-1], json.dumps(last)]) + "\n", name="pi.jsonl")
    reason = "parentId: must be an entry id (a string), got a number; the branch is cut here"
    assert [(p.line, p.reason) for p in result.problems] == [(len(lines), reason)]
    claude = (DATA / "claude-code" / "session-3fe1b6bc.jsonl").read_text(encoding="utf-8").splitlines()
    entry = json.loads(claude[5])
    entry["parentUuid"] = 12345
    spoiled = import_text("\n".join([*claude[:5], json.dumps(entry), *claude[6:]]) + "\n", name="cc.jsonl")
    assert [(p.line, p.reason) for p in spoiled.problems] == [
        (6, "parentUuid: must be a line's uuid (a string), got a number")
    ]


SUBAGENT = Path(__file__).resolve().parents[2].parent / "shared" / "real-sessions" / "claude-code"
SUBAGENT = SUBAGENT / "long_session" / "subagents" / "agent-aac57f5.jsonl"
CLAUDE = DATA / "claude-code" / "session-3fe1b6bc.jsonl"


def _changed(path: Path, number: int, change) -> tuple[str, str]:
    """The file with line `number` (1-based) changed in place, and with that line blank instead."""
    lines = path.read_text(encoding="utf-8").splitlines()
    entry = json.loads(lines[number - 1])
    change(entry)
    spoiled = [*lines[: number - 1], json.dumps(entry), *lines[number:]]
    blank = [*lines[: number - 1], "", *lines[number:]]
    return "\n".join(spoiled) + "\n", "\n".join(blank) + "\n"


def _read(result) -> list[tuple[str, str, str]]:
    return [(m.role, m.type, m.content) for m in result.messages]


@pytest.mark.skipif(not SUBAGENT.is_file(), reason=f"real transcripts not found at {SUBAGENT}")
def test_a_sidechain_mark_that_is_not_a_boolean_is_said_and_its_line_left_out() -> None:
    # a sub-agent file's `isSidechain: null` read as false made that line the main conversation: 18
    # messages read as 1, the rest "another branch", and nothing said
    spoiled, blank = _changed(SUBAGENT, 20, lambda entry: entry.update(isSidechain=None))
    result = import_text(spoiled, name="agent.jsonl")
    assert [(p.line, p.reason) for p in result.problems] == [
        (20, "isSidechain: must be true or false, got null; left out")
    ]
    assert len(result.messages) == 17
    assert _read(result) == _read(import_text(blank, name="agent.jsonl"))


@pytest.mark.parametrize(
    ("change", "reason"),
    [
        (lambda entry: entry["message"].pop("content"), "message: no content (text or a list of blocks)"),
        (lambda entry: entry["message"].update(content=None), "message.content: must be text or a list of "
         "blocks, got null"),
        (lambda entry: entry["message"]["content"].__setitem__(0, 7), "message.content[0]: must be a content "
         "block (an object), got a number"),
        (lambda entry: entry["message"]["content"][0].update(type=["tool_result"]),
         "message.content[0].type: must be a block type (a string), got an array"),
    ],
    ids=["no content", "null content", "block a number", "block type a list"],
)  # fmt: skip
def test_a_claude_code_message_content_of_a_wrong_type_is_said_and_its_line_left_out(change, reason) -> None:
    # line 11 answers a tool call: without content it was "empty" (its result gone, unsaid); a block that is
    # not one was kept as an unmapped note in a user turn made up of nothing
    spoiled, blank = _changed(CLAUDE, 11, change)
    result = import_text(spoiled, name="cc.jsonl")
    assert [(p.line, p.reason) for p in result.problems] == [(11, f"{reason}; left out")]
    assert len(result.messages) == 243
    assert _read(result) == _read(import_text(blank, name="cc.jsonl"))
