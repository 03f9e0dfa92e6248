"""Factory Droid sessions: a fixture written from the shape Droid's files have (Droid is closed source and
no public session file was found), counted by hand."""

from __future__ import annotations

from pathlib import Path

from engine.importers import import_file
from engine.importers.detect import detect_text
from engine.importers.registry import Sniff, importers

SESSION = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "real-sessions"
    / "factory-droid"
    / "droid-deploy-dry-run.jsonl"
)


def test_a_droid_session_with_reminders_thinking_calls_and_results() -> None:
    result = import_file(SESSION)
    assert result.format == "factory-droid" and result.problems == [] and result.unpaired == []
    assert [(m.id, m.type) for m in result.messages] == [
        ("m1", "user_input"),
        ("m2", "thought"),
        ("m2#1", "final_answer"),
        ("m2#2", "tool_calls"),
        ("m3", "tool_output"),
        ("m4", "tool_calls"),
        ("m5", "tool_output"),
        ("m6", "final_answer"),
    ]
    # the query and the reminder are both what the model received
    assert "<user_query>" in result.messages[0].content and "<system-reminder>" in result.messages[0].content
    assert result.messages[4].meta("tool_name") == "Read"
    assert result.title == "Add a --dry-run flag to the deploy script"
    assert result.skipped_lines == {"todo_state": [5]}


def test_each_reply_keeps_its_usage_in_anthropic_units() -> None:
    usages = [m.meta("usage") for m in import_file(SESSION).messages if m.meta("usage")]
    assert [
        (u["promptTokens"], u["cacheReadTokens"], u["cacheWriteTokens"], u["outputTokens"]) for u in usages
    ] == [
        (5222, 0, 5210, 88),
        (5524, 5210, 310, 140),
        (5673, 5520, 150, 22),
    ]


def test_only_the_droid_importer_claims_it() -> None:
    text = SESSION.read_text(encoding="utf-8")
    assert [i.name for i in importers() if i.detect(Sniff.of(text, SESSION.name))] == ["factory-droid"]
    assert detect_text(text) == "factory-droid"
