"""Export: a session as OpenAI chat JSONL, an Anthropic Messages request and OTel GenAI spans, read back to
the same messages; a step's wire as plain provider requests the plain importers read back; the CLI."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine import AiMessage, build_at_step, effective_policy, export_session, export_wire, load_session
from engine.importers import import_file, import_text
from engine.importers._common import find_unpaired
from playground.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SAMPLES = sorted((ROOT / "sample_sessions").glob("*.jsonl"))
CLAUDE = ROOT / "tests" / "data" / "real-sessions" / "claude-code" / "session-3fe1b6bc.jsonl"
FORMATS = ("openai", "anthropic", "otel")


def test_an_otel_span_leaves_out_times_its_nanoseconds_cannot_hold() -> None:
    answer = AiMessage("a", "assistant", "final_answer", "hello", 2)
    for first in (1e308, -5):
        messages = [AiMessage("u", "user", "user_input", "hi", first), answer]
        document = json.loads(export_session(messages, {}, "otel"))
        (span,) = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
        assert "startTimeUnixNano" not in span and "endTimeUnixNano" not in span


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("sample", SAMPLES, ids=lambda p: p.stem)
def test_every_sample_session_comes_back_exactly(sample: Path, fmt: str) -> None:
    session = load_session(sample)
    text = export_session(session.messages, session.header.to_dict(), fmt)
    back = import_text(text, name=f"export.{fmt}")
    assert back.format == ("otel" if fmt == "otel" else "linn-export")
    assert [m.to_dict() for m in back.messages] == [m.to_dict() for m in session.messages]
    assert back.problems == [] and back.skipped_lines == {}
    assert back.unpaired == find_unpaired(session.messages)  # a damaged history stays as damaged
    assert back.title == session.header.title


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_real_transcript_keeps_its_usage_and_thought_signatures(fmt: str) -> None:
    source = import_file(CLAUDE)
    back = import_text(export_session(source.messages, source.header(str(CLAUDE)), fmt))
    assert [m.to_dict() for m in back.messages] == [m.to_dict() for m in source.messages]
    assert back.came_in()["callsWithUsage"] == source.came_in()["callsWithUsage"] == 67
    assert back.session["model"] == "claude-sonnet-4-5-20250929"


def test_the_openai_export_reads_as_plain_openai_chat_with_the_same_ids_and_pairs() -> None:
    session = load_session(ROOT / "sample_sessions" / "tool_loop_runs.jsonl")
    plain = import_text(export_session(session.messages, None, "openai"), "openai")
    # plain OpenAI chat reads a reasoning-only message as the thought alone (no empty answer beside it)
    assert [(m.id, m.type, m.content) for m in plain.messages] == [
        (m.id, m.type, m.content) for m in session.messages
    ]
    assert plain.came_in()["toolCalls"] == 68 and plain.came_in()["toolResults"] == 68
    assert plain.unpaired == []


def test_the_anthropic_export_is_a_request_the_plain_importer_pairs() -> None:
    session = load_session(ROOT / "sample_sessions" / "tool_loop_runs.jsonl")
    request = json.loads(export_session(session.messages, {"modelId": "claude-sonnet-4-5"}, "anthropic"))
    assert request["model"] == "claude-sonnet-4-5"
    assert [b["type"] for b in request["system"]] == ["text"]
    assert {m["role"] for m in request["messages"]} == {"user", "assistant"}
    plain = import_text(json.dumps(request), "anthropic")
    assert plain.came_in()["toolCalls"] == 68 and plain.came_in()["toolResults"] == 68
    assert plain.came_in()["thoughts"] == 6 and plain.unpaired == []


def test_the_otel_export_follows_the_genai_conventions() -> None:
    session = load_session(ROOT / "sample_sessions" / "short_chat.jsonl")
    document = json.loads(export_session(session.messages, {"modelId": "gpt-4o"}, "otel"))
    (span,) = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    attributes = {a["key"]: a["value"]["stringValue"] for a in span["attributes"]}
    assert attributes["gen_ai.operation.name"] == "chat" and attributes["gen_ai.request.model"] == "gpt-4o"
    inputs = json.loads(attributes["gen_ai.input.messages"])
    outputs = json.loads(attributes["gen_ai.output.messages"])
    assert len(inputs) + len(outputs) == 9
    assert outputs[-1]["role"] == "assistant" and outputs[-1]["finish_reason"] == "stop"
    first, last = session.messages[0].timestamp, session.messages[-1].timestamp
    assert (span["startTimeUnixNano"], span["endTimeUnixNano"]) == (
        str(first * 1_000_000),
        str(last * 1_000_000),
    )
    kinds = {p["type"] for m in inputs for p in m["parts"]}
    assert kinds == {"text", "tool_call", "tool_call_response"}


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_step_wire_is_written_plain_and_reads_back_with_its_pairs(fmt: str) -> None:
    session = load_session(ROOT / "sample_sessions" / "tool_loop_runs.jsonl")
    _, _, result = build_at_step(session.messages, 5, effective_policy({}))
    wire = list(result.wire)
    text = export_wire(wire, fmt, "gpt-4o")
    assert '"linn"' not in text  # a request a provider takes as it is
    back = import_text(text, name=f"wire.{fmt}")
    assert back.format == fmt
    calls = [c["id"] for m in wire for c in m.get("tool_calls") or []]
    assert [c["id"] for m in back.messages for c in m.meta("tool_calls") or []] == calls
    results = [(m["tool_call_id"], m["content"]) for m in wire if m["role"] == "tool"]
    assert [(m.tool_call_id, m.content) for m in back.messages if m.type == "tool_output"] == results
    assert back.unpaired == [] and len(calls) == 6


def test_cli_export_writes_atomically_and_refuses_to_overwrite(tmp_path: Path, capsys) -> None:
    sample = ROOT / "sample_sessions" / "short_chat.jsonl"
    out = tmp_path / "short.jsonl"
    assert main(["export", str(sample), "--to", "openai", "-o", str(out)]) == 0
    assert capsys.readouterr().out == f"wrote {out} (openai, 9 messages)\n"
    assert [p.name for p in tmp_path.iterdir()] == ["short.jsonl"]  # no temporary file left
    assert main(["export", str(sample), "--to", "openai", "-o", str(out)]) == 2
    assert capsys.readouterr().err == f"error: {out}: already exists; pass --force to replace it\n"
    before = sample.read_bytes()
    assert main(["export", str(sample), "--to", "otel", "-o", str(sample), "--force"]) == 2
    assert "which this command reads" in capsys.readouterr().err
    assert sample.read_bytes() == before
    step = tmp_path / "step.json"
    assert main(["export", str(sample), "--to", "anthropic", "--step", "99", "-o", str(step)]) == 2
    assert capsys.readouterr().err.startswith("error: step 99 is outside 1..")
    assert not step.exists()


def test_export_to_dash_writes_stdout_and_reports_on_stderr(tmp_path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    session = ROOT / "sample_sessions" / "short_chat.jsonl"
    assert main(["export", str(session), "--to", "openai", "-o", "-"]) == 0
    out, err = capsys.readouterr()
    assert len(json.loads(out)["messages"]) == 9 and err == "wrote stdout (openai, 9 messages)\n"
    assert list(tmp_path.iterdir()) == []  # no file named "-"
