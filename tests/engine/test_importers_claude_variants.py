"""Claude Code variants: rewinds, sub-agents (inline and interleaved, files beside the transcript),
compact_boundary with and without its summary, images."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.build import build_context
from engine.importers import import_file, import_text
from engine.invariants import check_invariants
from engine.policy import define_context_policy
from engine.replay import replay_session

SHARED = Path(__file__).resolve().parents[2].parent / "shared" / "real-sessions"
CC, VARIANTS = SHARED / "claude-code", SHARED / "claude-code-variants"
needs_real = pytest.mark.skipif(not VARIANTS.is_dir(), reason=f"real sessions not found at {VARIANTS}")
TIGHT = {"budget": {"maxTokens": 6000, "reservedForResponse": 1000}, "contextTrace": {"enabled": True}}


def jsonl(*entries: dict) -> str:
    return "".join(json.dumps(e) + "\n" for e in entries)


def user(uuid: str, parent: str | None, content: object, **extra: object) -> dict:
    message = {"role": "user", "content": content}
    return {"type": "user", "uuid": uuid, "parentUuid": parent, "message": message, **extra}


def assistant(uuid: str, parent: str | None, msg_id: str, *blocks: dict, **extra: object) -> dict:
    message = {"id": msg_id, "role": "assistant", "model": "claude-x", "content": list(blocks)}
    return {"type": "assistant", "uuid": uuid, "parentUuid": parent, "message": message, **extra}


def text(value: str) -> dict:
    return {"type": "text", "text": value}


def use(call_id: str) -> dict:
    return {"type": "tool_use", "id": call_id, "name": "Bash", "input": {"command": call_id}}


def result(call_id: str, content: object = "ok") -> list[dict]:
    return [{"type": "tool_result", "tool_use_id": call_id, "content": content}]


def shape(messages: list) -> list[tuple[str, str, str]]:
    return [(m.id, m.type, m.content) for m in messages]


# -- rewinds -----------------------------------------------------------------------------------------
REWOUND = jsonl(
    user("u1", None, "fix it"),  # 1
    assistant("a1", "u1", "msg_1", use("t1")),  # 2
    user("r1", "a1", result("t1")),  # 3
    assistant("a2", "r1", "msg_2", text("first answer")),  # 4
    user("u2", "a2", "now do X"),  # 5: abandoned by the rewind below
    assistant("a3", "u2", "msg_3", use("t9")),  # 6: abandoned
    user("r9", "a3", result("t9")),  # 7: abandoned
    {"type": "progress", "uuid": "p1", "parentUuid": "a3", "data": {"type": "hook_progress"}},  # 8
    user("u3", "a2", "do Y instead"),  # 9: the rewind: forks off a2
    assistant("a4", "u3", "msg_4", use("t2")),  # 10
    assistant("a4b", "a4", "msg_4", use("t3")),  # 11: a parallel call hangs off the first
    user("r3", "a4b", result("t3")),  # 12
    user("r2", "a4", result("t2")),  # 13: off the chain of the last line, yet the live turn's result
    assistant("a5", "r3", "msg_5", text("Y done")),  # 14
)


def test_a_rewind_keeps_the_live_branch_and_reports_the_abandoned_lines() -> None:
    imported = import_text(REWOUND)
    assert shape(imported.messages) == [
        ("u1", "user_input", "fix it"),
        ("a1", "tool_calls", ""),
        ("r1", "tool_output", "ok"),
        ("a2", "final_answer", "first answer"),
        ("u3", "user_input", "do Y instead"),
        ("a4", "tool_calls", ""),
        ("r3", "tool_output", "ok"),
        ("r2", "tool_output", "ok"),
        ("a5", "final_answer", "Y done"),
    ]
    assert [c["id"] for c in imported.messages[5].tool_calls] == ["t2", "t3"]
    assert imported.unpaired == []
    assert imported.skipped_lines == {"abandoned branch (rewound)": [5, 6, 7, 8]}
    left_out = imported.report()["leftOut"]
    assert {"reason": "abandoned branch (rewound)", "count": 4, "firstLines": [5, 6, 7, 8]} in left_out


def test_lines_whose_chain_never_meets_the_live_one_are_kept() -> None:
    # a cut file: the first lines' parents are not in it; a second root (no parent) follows
    cut = jsonl(
        assistant("a0", "gone", "msg_0", text("before the cut")),
        user("u1", None, "a fresh start"),
        assistant("a1", "u1", "msg_1", text("hello")),
    )
    assert [m.id for m in import_text(cut).messages] == ["a0", "u1", "a1"]
    assert import_text(cut).skipped_lines == {}


def test_a_rewind_to_the_start_and_a_reply_written_twice_beside_itself_keep_the_last_written() -> None:
    # a second root (no parent) sends the prompt again; later a reply is written a second time beside the
    # first (the same message id, the same parent: Claude Code rewrote it whole), and the live line follows it
    rewound = jsonl(
        user("u1", None, "commit it"),  # 1: abandoned: the second root below starts over
        assistant("a1", "u1", "msg_1", text("first try")),  # 2: abandoned
        user("u2", None, "commit it"),  # 3
        assistant("a2", "u2", "msg_2", text("on it")),  # 4: written again as line 5
        assistant("a2-again", "u2", "msg_2", text("on it")),  # 5
        user("u3", "a2-again", "thanks"),  # 6
    )
    imported = import_text(rewound)
    assert shape(imported.messages) == [
        ("u2", "user_input", "commit it"),
        ("a2-again", "final_answer", "on it"),
        ("u3", "user_input", "thanks"),
    ]
    assert imported.skipped_lines == {"abandoned branch (rewound)": [1, 2, 4]}


def test_a_parent_cycle_ends_the_walk() -> None:
    looped = jsonl(user("u1", "a1", "hi"), assistant("a1", "u1", "msg_1", text("hello")))
    assert [m.id for m in import_text(looped).messages] == ["u1", "a1"]


# -- compactions -------------------------------------------------------------------------------------
def boundary(uuid: str, logical_parent: str) -> dict:
    return {
        "type": "system",
        "subtype": "compact_boundary",
        "uuid": uuid,
        "parentUuid": None,
        "logicalParentUuid": logical_parent,
        "content": "Conversation compacted",
        "compactMetadata": {"trigger": "auto", "preTokens": 155116},
    }


def test_a_compact_boundary_followed_by_a_summary_line_is_a_compaction() -> None:
    text_ = jsonl(
        user("u1", None, "start"),
        assistant("a1", "u1", "msg_1", text("working")),
        boundary("b1", "a1"),
        {
            "type": "summary",
            "uuid": "s1",
            "parentUuid": "b1",
            "message": {"role": "user", "content": "Did X."},
        },
        user("u2", "s1", "go on"),
    )
    imported = import_text(text_)
    assert shape(imported.messages) == [
        ("u1", "user_input", "start"),
        ("a1", "final_answer", "working"),
        ("s1", "history_summary", "Did X."),
        ("u2", "user_input", "go on"),
    ]
    summary = imported.messages[2].metadata
    assert summary["replacedMessageIds"] == ["u1", "a1"]
    assert summary["source"] == {"line": 4, "compactMetadata": {"trigger": "auto", "preTokens": 155116}}
    assert imported.skipped_lines == {"system:compact_boundary": [3]}
    assert imported.came_in()["summaries"] == 1


def test_a_compact_boundary_without_a_summary_still_replaces_what_came_before() -> None:
    text_ = jsonl(
        user("u1", None, "start"),
        assistant("a1", "u1", "msg_1", text("working")),
        boundary("b1", "a1"),
        user("u2", "b1", "go on"),
    )
    messages = import_text(text_).messages
    assert shape(messages) == [
        ("u1", "user_input", "start"),
        ("a1", "final_answer", "working"),
        ("b1", "history_summary", "Conversation compacted"),
        ("u2", "user_input", "go on"),
    ]
    assert messages[2].meta("summaryMissing") is True
    assert messages[2].meta("replacedMessageIds") == ["u1", "a1"]


def test_a_title_line_after_a_boundary_is_still_a_title() -> None:
    text_ = jsonl(
        user("u1", None, "start"),
        boundary("b1", "u1"),
        {"type": "summary", "summary": "Starting", "leafUuid": "u1"},
        user("s1", "b1", "Summary: started.", isCompactSummary=True),
    )
    imported = import_text(text_)
    assert shape(imported.messages) == [
        ("u1", "user_input", "start"),
        ("s1", "history_summary", "Summary: started."),
    ]
    assert imported.title == "Starting"


# -- images ------------------------------------------------------------------------------------------
def test_an_image_only_tool_result_is_a_placeholder_with_its_size() -> None:
    png = {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "A" * 4000}}
    text_ = jsonl(
        user("u1", None, [text("look"), png]),
        assistant("a1", "u1", "msg_1", use("shot")),
        user("r1", "a1", result("shot", [png])),
    )
    messages = import_text(text_).messages
    assert shape(messages) == [
        ("u1", "user_input", "look\n\n[image: image/png, 3,000 bytes]"),
        ("a1", "tool_calls", ""),
        ("r1", "tool_output", "[image: image/png, 3,000 bytes]"),
    ]
    assert messages[2].meta("images") == [{"media_type": "image/png", "base64Chars": 4000}]
    assert import_text(text_).came_in()["images"] == 2


# -- sub-agents --------------------------------------------------------------------------------------
SUBAGENT = jsonl(
    user("s-u1", "main-a7", "Survey src/", isSidechain=True, agentId="abc"),
    assistant("s-a1", "s-u1", "msg_s1", use("s-t1"), isSidechain=True, agentId="abc"),
    user("s-r1", "s-a1", result("s-t1", "a.py b.py"), isSidechain=True, agentId="abc"),
    assistant("s-a2", "s-r1", "msg_s2", text("two files"), isSidechain=True, agentId="abc"),
)


def test_a_subagent_file_opens_on_its_own() -> None:
    imported = import_text(SUBAGENT)
    assert shape(imported.messages) == [
        ("s-u1", "user_input", "Survey src/"),
        ("s-a1", "tool_calls", ""),
        ("s-r1", "tool_output", "a.py b.py"),
        ("s-a2", "final_answer", "two files"),
    ]
    assert imported.skipped_lines == {} and imported.unpaired == [] and imported.conversations == 1


MAIN_WITH_SIDECHAINS = jsonl(
    user("u1", None, "research two things"),  # 1
    assistant("a1", "u1", "msg_1", use("task1"), use("task2")),  # 2
    user("x1", None, "find A", isSidechain=True),  # 3: first sub-agent (no agentId: an old version)
    user("y1", None, "find B", isSidechain=True, agentId="bbb"),  # 4: second sub-agent
    assistant("x2", "x1", "msg_x", text("A is here"), isSidechain=True),  # 5
    assistant("y2", "y1", "msg_y", text("B is there"), isSidechain=True, agentId="bbb"),  # 6
    user("r1", "a1", result("task1", "A is here") + result("task2", "B is there")),  # 7
    assistant("a2", "r1", "msg_2", text("both found")),  # 8
)


def test_a_main_transcript_opens_one_of_its_sidechains() -> None:
    main = import_text(MAIN_WITH_SIDECHAINS)
    assert [m.id for m in main.messages] == ["u1", "a1", "r1", "r1#1", "a2"]
    assert main.skipped_lines == {"sidechain (a sub-agent's own conversation)": [3, 4, 5, 6]}
    assert main.conversations == 3
    first = import_text(MAIN_WITH_SIDECHAINS, conversation=1)  # parallel sub-agents interleave
    assert shape(first.messages) == [("x1", "user_input", "find A"), ("x2", "final_answer", "A is here")]
    assert first.skipped_lines == {"not in the chosen sidechain": [1, 2, 4, 6, 7, 8]}
    last = import_text(MAIN_WITH_SIDECHAINS, conversation=-1)
    assert [m.id for m in last.messages] == ["y1", "y2"]
    with pytest.raises(ValueError, match="conversation 3 is out of range: <text> holds 3 conversation"):
        import_text(MAIN_WITH_SIDECHAINS, conversation=3)


def test_the_subagent_files_beside_a_transcript_are_its_further_conversations(tmp_path: Path) -> None:
    main = tmp_path / "sess.jsonl"
    main.write_text(jsonl(user("u1", None, "go"), assistant("a1", "u1", "msg_1", text("went"))))
    (tmp_path / "sess" / "subagents").mkdir(parents=True)
    (tmp_path / "sess" / "subagents" / "agent-abc.jsonl").write_text(SUBAGENT)
    assert import_file(main).conversations == 2
    sub = import_file(main, conversation=1)
    assert [m.id for m in sub.messages] == ["s-u1", "s-a1", "s-r1", "s-a2"]
    assert sub.conversations == 2
    assert sub.problems == [] and sub.unpaired == []


# -- the real files ----------------------------------------------------------------------------------
@needs_real
def test_real_variants_import_as_their_tools_wrote_them() -> None:
    sub = import_file(VARIANTS / "subagent-agent.jsonl")
    assert [m.type for m in sub.messages] == ["user_input", "final_answer"]
    assert sub.messages[0].content == "Survey src/web and report its layout, with a screenshot."
    compacted = import_file(VARIANTS / "compact-boundary.jsonl")
    summary = next(m for m in compacted.messages if m.type == "history_summary")
    assert summary.id == "summary-001" and summary.content.startswith("Previous conversation summary:")
    assert len(summary.meta("replacedMessageIds")) == 10
    side = import_file(VARIANTS / "sidechain_integrated.jsonl", conversation=1)
    assert [m.type for m in side.messages] == ["final_answer", "tool_calls", "tool_output"]
    assert side.skipped_lines == {"not in the chosen sidechain": [1, 2, 6]}


@needs_real
def test_the_long_real_session_has_no_rewind_and_two_subagent_files() -> None:
    imported = import_file(CC / "long_session.jsonl")
    assert "abandoned branch (rewound)" not in imported.skipped_lines
    assert imported.unpaired == [] and imported.conversations == 3
    compaction_agent = import_file(CC / "long_session.jsonl", conversation=2)
    assert [m.type for m in compaction_agent.messages] == ["user_input", "final_answer"]
    assert compaction_agent.messages[0].content.startswith("Your task is to create a detailed summary")
    researcher = import_file(CC / "long_session" / "subagents" / "agent-aac57f5.jsonl")
    assert researcher.came_in()["toolCalls"] == researcher.came_in()["toolResults"] == 12
    progress = [9, 11, 13, 15, 17, 19, 25, 27, 32, 34, 36, 38]
    assert researcher.unpaired == [] and researcher.skipped_lines == {"progress": progress}


@needs_real
@pytest.mark.parametrize(
    "path",
    [
        VARIANTS / "compact-boundary.jsonl",
        VARIANTS / "sidechain_integrated.jsonl",
        VARIANTS / "subagent-agent.jsonl",
        CC / "long_session" / "subagents" / "agent-aac57f5.jsonl",
    ],
    ids=lambda p: p.name,
)
def test_real_variants_build_and_replay_without_invariant_violations(path: Path) -> None:
    messages = import_file(path).messages
    policy = define_context_policy(TIGHT)
    built = build_context(messages, policy)
    assert built.error is None and check_invariants(built).errors == ()
    steps = replay_session(messages, policy)
    assert steps and all(s.result.error is None and check_invariants(s.result).errors == () for s in steps)


def test_a_sidechain_does_not_take_the_main_conversations_compaction() -> None:
    text_ = jsonl(
        user("u1", None, "start"),
        user("x1", None, "sub task", isSidechain=True, agentId="x"),
        assistant("x2", "x1", "msg_x", text("sub done"), isSidechain=True, agentId="x"),
        boundary("b1", "u1") | {"isSidechain": False},
        user("u2", "b1", "go on"),
    )
    main = import_text(text_)
    assert shape(main.messages) == [
        ("u1", "user_input", "start"),
        ("b1", "history_summary", "Conversation compacted"),
        ("u2", "user_input", "go on"),
    ]
    side = import_text(text_, conversation=1)
    assert shape(side.messages) == [("x1", "user_input", "sub task"), ("x2", "final_answer", "sub done")]


def test_a_web_sessions_loglines_document_is_a_transcript_of_its_elements(tmp_path: Path) -> None:
    lines = [
        user("u1", None, "add two numbers"),
        assistant(
            "a1", "u1", "m1", text("Here:"), {"type": "tool_use", "id": "t1", "name": "Write", "input": {}}
        ),
        user("u2", "a1", [{"type": "tool_result", "tool_use_id": "t1", "content": "written"}]),
        assistant("a2", "u2", "m2", text("Done.")),
        ["not a line"],
    ]
    document = json.dumps({"loglines": lines}, indent=2)
    result = import_text(document, name="web.json")
    assert result.format == "claude-code"
    assert [(m.type, m.content) for m in result.messages] == [
        ("user_input", "add two numbers"),
        ("final_answer", "Here:"),  # a text block and a tool use are two messages, as in any transcript
        ("tool_calls", ""),
        ("tool_output", "written"),
        ("final_answer", "Done."),
    ]
    assert [str(p) for p in result.problems] == ["web.json:5: expected a JSON object, found list"]
    path = tmp_path / "web.json"
    path.write_text(document, encoding="utf-8")
    assert [m.content for m in import_file(path).messages] == [m.content for m in result.messages]
