"""pi coding agent sessions: a real session from pi's own test fixtures (MIT, version 1, counted by hand)
and a version 3 fixture written from pi's session-manager.ts (tree, compaction, branch summary)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.importers import import_file
from engine.importers.detect import detect_text
from engine.importers.registry import Sniff, importers

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "pi"
REAL = DATA / "large-session.jsonl"
TREE = DATA / "v3-branch-compaction.jsonl"


def test_a_real_session_opens_with_the_turns_pi_sends_again() -> None:
    result = import_file(REAL)
    assert result.format == "pi" and result.problems == [] and result.unpaired == []
    came = result.came_in()
    assert (came["userTurns"], came["assistantTurns"], came["toolCalls"], came["toolResults"]) == (
        88,
        431,
        373,
        373,
    )
    assert came["thoughts"] == 1 and came["callsWithUsage"] == 431
    # 22 of the 453 assistant entries were aborted or failed: pi never sends them again; 8 of them billed
    assert result.skipped == {
        "assistant turn aborted": 21,
        "assistant turn error": 1,
        "model_change": 1,
        "thinking_level_change": 103,
    }
    assert came["otherBilledCalls"] == 8
    assert result.session["model"] == "claude-sonnet-4-5"


def test_a_tree_session_is_its_live_branch_with_compaction_and_no_result_answers() -> None:
    result = import_file(TREE)
    assert result.problems == [] and result.unpaired == []
    assert [(m.id, m.type) for m in result.messages] == [
        ("a0000002", "user_input"),
        ("a0000003", "thought"),
        ("a0000003#1", "tool_calls"),
        ("a0000004", "tool_output"),
        ("toolu_01Pb-no-result", "tool_output"),
        ("a0000005", "user_input"),
        ("a0000007", "user_input"),
        ("a0000009", "user_input"),
        ("a0000010", "history_summary"),
        ("a0000011", "tool_calls"),
        ("a0000012", "tool_output"),
        ("a0000014", "final_answer"),
    ]
    no_result = result.messages[4]
    assert (no_result.content, no_result.tool_call_id, no_result.meta("is_error")) == (
        "No result provided",
        "toolu_01Pb",
        True,
    )
    assert result.messages[5].content.startswith("Ran `git log --oneline -3`\n```\n4e1f0a2")
    assert result.messages[6].content.endswith("[image: image/png, 72 bytes]")
    summary = result.messages[8]
    assert summary.meta("replacedMessageIds") == [
        "a0000002",
        "a0000003",
        "a0000003#1",
        "a0000004",
        "toolu_01Pb-no-result",
        "a0000005",
    ]
    assert "<summary>\nThe cart total is computed with floats" in summary.content
    assert result.skipped_lines == {
        "another branch": [10],
        "assistant turn aborted": [9],
        "bashExecution excluded from context": [7],
        "label": [15],
        "model_change": [2],
    }


def test_usage_in_anthropic_units_and_an_abandoned_branch_billed_apart() -> None:
    result = import_file(TREE)
    usage = result.messages[2].meta("usage")
    assert (usage["promptTokens"], usage["cacheWriteTokens"], usage["outputTokens"]) == (4213, 4210, 151)
    (branch,) = result.other_calls
    assert (branch["promptTokens"], branch["cacheReadTokens"], branch["why"]) == (
        4525,
        4210,
        "a call on another branch",
    )


@pytest.mark.parametrize("path", [REAL, TREE], ids=lambda p: p.name)
def test_only_the_pi_importer_claims_a_session(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert [i.name for i in importers() if i.detect(Sniff.of(text, path.name))] == ["pi"]
    assert detect_text(text) == "pi"


def test_a_version_1_compaction_keeps_the_entries_from_its_first_kept_index(tmp_path: Path) -> None:
    import json

    def message(role: str, text: str, stamp: int) -> dict:
        said = {"role": role, "content": [{"type": "text", "text": text}]}
        return {"type": "message", "timestamp": f"2025-12-08T23:0{stamp}:00Z", "message": said}

    entries = [
        {"type": "session", "id": "s1", "timestamp": "2025-12-08T23:00:00Z", "cwd": "/w"},  # no version: 1
        message("user", "first ask", 1),
        message("assistant", "first answer", 2),
        message("user", "second ask", 3),  # entry 3, line 4: the first kept
        message("assistant", "second answer", 4),
        {"type": "compaction", "timestamp": "2025-12-08T23:05:00Z", "summary": "asked twice",
         "firstKeptEntryIndex": 3, "tokensBefore": 900},  # fmt: skip
        message("user", "third ask", 6),
    ]
    path = tmp_path / "v1.jsonl"
    path.write_text("\n".join(json.dumps(e) for e in entries) + "\n", encoding="utf-8")
    result = import_file(path, "pi")
    summary = next(m for m in result.messages if m.type == "history_summary")
    assert summary.meta("replacedMessageIds") == ["pi-2", "pi-3"]


def test_the_name_given_to_the_session_is_its_title(tmp_path: Path) -> None:
    # pi's `/name`: a session_info entry; the latest one naming the session is its name (getSessionName)
    lines = TREE.read_text(encoding="utf-8").splitlines()
    leaf = json.loads(lines[-1])["id"]  # pi appends an entry as a child of the current leaf
    infos = [("n1", leaf, "first name"), ("n2", "n1", "agent-history pi smoke"), ("n3", "n2", None)]
    entries = [{"type": "session_info", "id": i, "parentId": p, "name": n} for i, p, n in infos]
    named = lines + [json.dumps(entry) for entry in entries]
    path = tmp_path / "named.jsonl"
    path.write_text("\n".join(named) + "\n", encoding="utf-8")
    assert import_file(path).title == "agent-history pi smoke"
