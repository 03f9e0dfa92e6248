"""Qwen Code chat records and Cursor agent transcripts: each claimed by its own importer, counted by hand."""

from __future__ import annotations

import json
from pathlib import Path

from engine.importers import detect_format, import_file, import_text

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions"
QWEN = DATA / "qwen-code" / "5d0c1b2a-3e4f-4a5b-8c6d-7e8f9a0b1c2d.jsonl"
CURSOR = DATA / "cursor-agent" / "8f14e45f-ceea-467f-a0e6-0d6f2d1c3b4a.jsonl"


def test_qwen_code_records_import_calls_results_usage_and_the_compression() -> None:
    assert detect_format(QWEN) == "qwen-code"
    result = import_file(QWEN)
    # counted by hand (fixture built from Qwen Code's ChatRecord): 13 records; 2 user, 5 assistant (4
    # functionCalls, 1 thought part, 5 usageMetadata), 3 tool_result records with 4 functionResponses
    assert result.came_in() == {
        "systemPrompts": 0,
        "userTurns": 2,
        "assistantTurns": 5,
        "toolCalls": 4,
        "toolResults": 4,
        "thoughts": 1,
        "summaries": 1,
        "images": 0,
        "callsWithUsage": 5,
        "otherBilledCalls": 0,
    }
    assert result.skipped_lines == {"system:session_model": [1], "system:ui_telemetry": [7]}
    assert result.problems == [] and result.unpaired == []
    summary = next(m for m in result.messages if m.type == "history_summary")
    # the compressed history keeps the last answer: it is not among the replaced messages
    assert "a0000000-0000-4000-8000-000000000008" not in summary.meta("replacedMessageIds")
    assert len(summary.meta("replacedMessageIds")) == 7
    errors = [m.content for m in result.messages if m.meta("is_error")]
    assert errors == ["No files found"]
    usage = [m.meta("usage") for m in result.messages if m.meta("usage")]
    assert [(u["promptTokens"], u["cacheReadTokens"], u["outputTokens"]) for u in usage][:2] == [
        (11840, 0, 52 + 31),
        (12010, 11776, 61),
    ]


def test_a_qwen_sub_agent_record_is_left_out_and_its_call_counted() -> None:
    side = {
        "uuid": "s1",
        "sessionId": "x",
        "type": "assistant",
        "isSidechain": True,
        "message": {"role": "model", "parts": [{"text": "sub"}]},
        "usageMetadata": {"promptTokenCount": 9, "candidatesTokenCount": 1},
    }
    result = import_text(QWEN.read_text() + json.dumps(side) + "\n", name="q.jsonl")
    assert result.skipped_lines["sub-agent record (isSidechain)"] == [14]
    assert result.other_calls[0]["why"] == "a sub-agent's call" and result.other_calls[0]["promptTokens"] == 9


def test_cursor_transcripts_keep_the_query_and_calls_without_results() -> None:
    assert detect_format(CURSOR) == "cursor-agent"
    result = import_file(CURSOR)
    # counted by hand: 9 lines; 2 user queries, 5 assistant lines (3 texts, 4 tool_use blocks), 2 turn_ended
    assert result.came_in()["userTurns"] == 2
    assert result.came_in()["assistantTurns"] == 6  # 3 answers + 3 tool_calls messages
    assert result.came_in()["toolCalls"] == 4
    assert result.came_in()["toolResults"] == 0
    assert result.unpaired == ["cursor-2-0", "cursor-2-1", "cursor-3-0", "cursor-7-0"]
    assert result.session == {"toolResultsRecorded": False}
    assert result.title == "Where is the retry logic for uploads?"
    assert result.skipped_lines == {"turn_ended": [5, 9]}


def test_an_openai_chat_file_is_not_taken_for_cursor() -> None:
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert detect_format(json.dumps(chat)) == "openai"


def test_a_cursor_line_of_an_unknown_type_is_counted_not_a_problem() -> None:
    lines = CURSOR.read_text().splitlines()
    text = "\n".join([lines[0], json.dumps({"type": "checkpoint", "id": 3}), *lines[1:]])
    result = import_text(text, name="t.jsonl")
    assert result.format == "cursor-agent" and result.problems == []
    assert result.skipped_lines == {"checkpoint": [2], "turn_ended": [6, 10]}


def test_validate_counts_a_cursor_calls_missing_results_as_warnings(tmp_path, capsys) -> None:
    from playground.cli.main import main

    path = DATA / "cursor-agent" / "8f14e45f-ceea-467f-a0e6-0d6f2d1c3b4a.jsonl"
    session = tmp_path / "cursor.jsonl"
    assert main(["import", str(path), "-o", str(session)]) == 0
    assert '"toolResultsRecorded":false' in session.read_text(encoding="utf-8").splitlines()[0]
    capsys.readouterr()
    assert main(["validate", str(session)]) == 0
    out = capsys.readouterr().out
    assert "problems: 0" in out
    assert "  cursor-3: call cursor-3-0 has no result: the transcript records none (Cursor's)" in out
