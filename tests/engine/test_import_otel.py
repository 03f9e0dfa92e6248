"""OpenTelemetry GenAI and OpenInference traces (OTLP JSON): the last call's history, each call's usage.

The three traces in tests/data/real-sessions/otel are fixtures built from the conventions' own schemas
(see that folder's README): counted by hand from the files."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.importers import EmptyImportError, detect_format, import_file, import_text
from engine.importers.detect import detect_text
from engine.importers.otel import import_otel
from engine.importers.registry import Sniff, importers

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "otel"
WEATHER = DATA / "genai-weather-agent.otlp.json"
TRAVEL = DATA / "openinference-travel-agent.otlp.jsonl"
SQL = DATA / "openllmetry-sql-review.otlp.json"


def test_genai_trace_is_the_last_calls_history_with_parallel_calls_paired() -> None:
    result = import_file(WEATHER)
    assert result.format == "otel" and result.problems == [] and result.unpaired == []
    assert [(m.id, m.type) for m in result.messages] == [
        ("ot-0", "system_prompt"),
        ("ot-1", "user_input"),
        ("ot-2", "thought"),
        ("ot-2#1", "tool_calls"),
        ("ot-3", "tool_output"),
        ("ot-3#1", "tool_output"),
        ("ot-4", "final_answer"),
    ]
    calls = result.messages[3].meta("tool_calls")
    assert [(c["id"], c["function"]["arguments"]) for c in calls] == [
        ("call_VSPygqKTWdrhaFErNvMV18Yl", '{"location":"Paris"}'),
        ("call_0Hx7pRBgWc2VmBd3Ys1tNhL9", '{"location":"Berlin"}'),
    ]
    assert [(m.tool_call_id, m.content, m.meta("tool_name")) for m in result.messages[4:6]] == [
        ("call_VSPygqKTWdrhaFErNvMV18Yl", "rainy, 57°F", "get_weather"),
        ("call_0Hx7pRBgWc2VmBd3Ys1tNhL9", "sunny, 66°F", "get_weather"),
    ]
    assert result.messages[0].content.startswith("You are a weather assistant.")
    assert result.session["model"] == "gpt-4.1-2025-04-14"


def test_genai_usage_goes_on_the_message_that_answered_each_call() -> None:
    messages = import_file(WEATHER).messages
    first, last = messages[3].meta("usage"), messages[6].meta("usage")
    assert (first["promptTokens"], first["outputTokens"], first["cacheReadTokens"]) == (96, 58, 0)
    assert (last["promptTokens"], last["outputTokens"], last["cacheReadTokens"]) == (181, 19, 128)
    assert last["provider"] == "otel" and last["callId"] == "chatcmpl-a1b2c3d4e5f60005"
    assert last["raw"]["gen_ai.usage.cache_read.input_tokens"] == 128


def test_openinference_flattened_messages_and_token_counts() -> None:
    result = import_file(TRAVEL)
    assert result.came_in() | {"images": 0} == {
        "systemPrompts": 1,
        "userTurns": 1,
        "assistantTurns": 2,
        "toolCalls": 1,
        "toolResults": 1,
        "thoughts": 0,
        "summaries": 0,
        "images": 0,
        "callsWithUsage": 2,
        "otherBilledCalls": 0,
    }
    call = result.messages[2].meta("tool_calls")[0]
    assert call["function"] == {
        "name": "search_flights",
        "arguments": '{"from": "LIS", "to": "OSL", "date": "2026-03-03"}',
    }
    assert result.messages[3].tool_call_id == call["id"] == "call_pLAYAi1gVQzKmbxQ2ZpW7T0e"
    usage = result.messages[4].meta("usage")  # the OpenAI span's, not the LangChain wrapper's (none)
    assert (usage["promptTokens"], usage["outputTokens"], usage["cacheReadTokens"]) == (219, 24, 128)
    assert usage["model"] == "gpt-4o-mini-2024-07-18"


def test_older_flattened_genai_prompt_form_with_prompt_and_completion_token_names() -> None:
    result = import_file(SQL)
    assert [m.type for m in result.messages] == ["system_prompt", "user_input", "final_answer"]
    assert result.messages[2].content.startswith("No: the id is pasted into the SQL text")
    usage = result.messages[2].meta("usage")
    assert (usage["promptTokens"], usage["outputTokens"]) == (41, 22)


@pytest.mark.parametrize("path", [WEATHER, TRAVEL, SQL], ids=lambda p: p.name)
def test_only_the_otel_importer_claims_a_trace(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    sniff = Sniff.of(text, path.name)
    assert [i.name for i in importers() if i.detect(sniff)] == ["otel"]
    assert detect_text(text) == "otel"


def test_a_trace_without_llm_messages_is_not_claimed() -> None:
    document = {"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "GET /", "attributes": []}]}]}]}
    assert detect_text(json.dumps(document)) is None


def test_messages_that_are_not_json_are_read_as_text_and_named() -> None:
    attributes = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.input.messages", "value": {"stringValue": "hello?"}},
        {"key": "gen_ai.output.messages", "value": {"stringValue": '[{"role": "assistant", "parts": 3}]'}},
    ]
    span = {"traceId": "t", "spanId": "s1", "attributes": attributes}
    text = json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})
    result = import_text(text, "otel", name="trace.json")
    assert [(m.type, m.content) for m in result.messages] == [("user_input", "hello?")]
    assert [str(p) for p in result.problems] == [
        "trace.json: span s1: gen_ai.input.messages: not JSON; read as one text message",
        "trace.json: span s1: message 1: parts is not a list",
    ]


def test_each_trace_is_a_conversation() -> None:
    weather = json.loads(WEATHER.read_text(encoding="utf-8"))
    sql = json.loads(SQL.read_text(encoding="utf-8"))
    text = json.dumps(weather) + "\n" + json.dumps(sql) + "\n"
    assert import_text(text, "otel").conversations == 2
    second = import_text(text, "otel", conversation=1)
    assert [m.type for m in second.messages] == ["system_prompt", "user_input", "final_answer"]


def test_system_instruction_parts_are_one_system_prompt() -> None:
    instructions = [
        {"type": "text", "content": "Be brief."},
        {"type": "text", "content": "Answer in French."},
    ]
    attributes = [
        {"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}},
        {"key": "gen_ai.system_instructions", "value": {"stringValue": json.dumps(instructions)}},
        {
            "key": "gen_ai.input.messages",
            "value": {"stringValue": '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]'},
        },
    ]
    span = {"traceId": "t", "spanId": "s1", "attributes": attributes}
    result = import_text(json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}), "otel")
    assert [(m.type, m.content) for m in result.messages] == [
        ("system_prompt", "Be brief.\n\nAnswer in French."),
        ("user_input", "hi"),
    ]


COPILOT = DATA / "copilot-cli-phase2-otel-20260803-1550-2169.jsonl"  # real: Copilot CLI's own span file


def test_a_real_span_file_without_message_content_says_why_nothing_came_in() -> None:
    # 144 lines, counted by hand: 102 metric lines, 1 invoke_agent, 21 chat and 20 execute_tool spans
    # (OpenTelemetry JS's form, a span a line); no span records gen_ai.input/output.messages
    assert detect_format(COPILOT) == "otel"
    with pytest.raises(EmptyImportError) as raised:
        import_file(COPILOT)
    assert str(raised.value).startswith(
        f"{COPILOT}: read as otel, no message came in; 1 problem(s), the first: {COPILOT}: 21 model-call "
        "span(s) and none records its messages: the trace was exported without message content"
    )
    result = import_otel(COPILOT.read_text(encoding="utf-8"), str(COPILOT))
    lines = result.skipped_lines["model-call span without its messages"]
    assert len(lines) == 21 and lines[:3] == [2, 4, 6] and lines[-1] == 132


def test_js_span_lines_with_messages_are_calls_in_the_order_of_their_hrtime_start() -> None:
    def span(second: int, asked: str, answer: str) -> str:
        attributes = {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": asked}]}]
            ),
            "gen_ai.output.messages": json.dumps(
                [{"role": "assistant", "parts": [{"type": "text", "content": answer}]}]
            ),
        }
        return json.dumps({"type": "span", "traceId": "t", "spanId": f"s{second}", "name": "chat auto",
                           "startTime": [second, 5], "attributes": attributes})  # fmt: skip

    result = import_text(span(20, "again?", "yes") + "\n" + span(10, "first?", "no"), name="spans.jsonl")
    assert result.format == "otel"
    assert [(m.type, m.content) for m in result.messages] == [
        ("user_input", "again?"),
        ("final_answer", "yes"),
    ]
