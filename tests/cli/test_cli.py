"""The headless `linn-playground` subcommands: output, exit codes, bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from engine.importers import format_names
from engine.prices import CATALOGUE
from playground.cli.main import main

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
CASES = SHARED / "conformance" / "cases"
needs_shared = pytest.mark.skipif(not CASES.is_dir(), reason=f"shared conformance cases not found at {CASES}")

HEADER = {
    "kind": "linn-session",
    "version": 1,
    "title": "tiny",
    "contextPolicy": {"budget": {"maxTokens": 4000}},
}
MESSAGES = [
    {"id": "s", "role": "system", "type": "system_prompt", "content": "You are terse.", "timestamp": 1},
    {"id": "u1", "role": "user", "type": "user_input", "content": "List the files.", "timestamp": 2},
    {
        "id": "a1",
        "role": "assistant",
        "type": "tool_calls",
        "content": "",
        "timestamp": 3,
        "metadata": {
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": '{"path": "."}'}}
            ]
        },
    },
    {
        "id": "t1",
        "role": "tool",
        "type": "tool_output",
        "content": "README.md\nsrc",
        "timestamp": 4,
        "metadata": {"tool_call_id": "c1", "tool_name": "ls"},
    },
    {
        "id": "f1",
        "role": "assistant",
        "type": "final_answer",
        "content": "README.md and src.",
        "timestamp": 5,
    },
]


def write_session(path: Path, messages=MESSAGES, header=HEADER, extra_lines=()) -> Path:
    lines = [json.dumps(header)] + [json.dumps(m) for m in messages] + list(extra_lines)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_validate_clean_session_exits_0(tmp_path, capsys):
    session = write_session(tmp_path / "s.jsonl")
    assert main(["validate", str(session)]) == 0
    out = capsys.readouterr().out
    assert "(5 messages)" in out
    assert "tool calls: 1; tool outputs: 1; orphans: 0" in out
    assert '"budget": {"maxTokens": 4000}' in out
    assert "problems: 0" in out
    assert "tokenizer: tiktoken" in out


def test_validate_reports_bad_lines_and_orphans_with_exit_1(tmp_path, capsys):
    orphan = {
        "id": "t9",
        "role": "tool",
        "type": "tool_output",
        "content": "x",
        "timestamp": 6,
        "metadata": {"tool_call_id": "nope"},
    }
    session = write_session(tmp_path / "s.jsonl", MESSAGES + [orphan], extra_lines=["{not json"])
    assert main(["validate", str(session)]) == 1
    out = capsys.readouterr().out
    assert f"{session}:8" in out  # the bad line, by number
    assert "t9: orphan tool output: no earlier call declares nope" in out


def test_validate_missing_file_exits_2(tmp_path, capsys):
    assert main(["validate", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err


def test_build_json_has_the_documented_keys(tmp_path, capsys):
    session = write_session(tmp_path / "s.jsonl")
    assert main(["build", str(session), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert {"wire", "decisions", "tokens", "events", "trace"} <= set(payload)
    assert [d["message_id"] for d in payload["decisions"]] == ["s", "u1", "a1", "t1", "f1"]
    assert all(d["kept"] for d in payload["decisions"])
    assert payload["tokens"]["totalBudget"] == 4000 - 2400
    assert payload["wire"][2] == {
        "role": "assistant",
        "content": None,
        "tool_calls": MESSAGES[2]["metadata"]["tool_calls"],
    }


def test_build_anthropic_wire_shape(tmp_path, capsys):
    session = write_session(tmp_path / "s.jsonl")
    assert main(["build", str(session), "--json", "--wire", "anthropic"]) == 0
    wire = json.loads(capsys.readouterr().out)["wire"]
    assert wire["system"] == "You are terse."
    assert [m["role"] for m in wire["messages"]] == ["user", "assistant", "user", "assistant"]
    assert wire["messages"][1]["content"][0] == {
        "type": "tool_use",
        "id": "c1",
        "name": "ls",
        "input": {"path": "."},
    }


def test_build_table_lists_every_message(tmp_path, capsys):
    session = write_session(tmp_path / "s.jsonl")
    assert main(["build", str(session)]) == 0
    out = capsys.readouterr().out
    for message_id in ("s", "u1", "a1", "t1", "f1"):
        assert f" {message_id} " in out
    assert "budget: " in out and "/ 1600 tokens" in out


def tool_group(n: int) -> list[dict]:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "grep", "arguments": '{"q": "x"}'}}
    return [
        {
            "id": f"a{n}",
            "role": "assistant",
            "type": "tool_calls",
            "content": "",
            "timestamp": n,
            "metadata": {"tool_calls": [call]},
        },
        {
            "id": f"t{n}",
            "role": "tool",
            "type": "tool_output",
            "content": f"hit {n}",
            "timestamp": n,
            "metadata": {"tool_call_id": f"c{n}", "tool_name": "grep"},
        },
    ]


def test_build_failure_exits_1_with_the_error_code(tmp_path, capsys):
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "toolHistory: {strategy: none, maxInteractionGroups: 2, overflowStrategy: fail-fast}\n",
        encoding="utf-8",
    )
    history = (
        MESSAGES[:2]
        + tool_group(11)
        + tool_group(12)
        + tool_group(13)
        + [{"id": "u2", "role": "user", "type": "user_input", "content": "And now?", "timestamp": 20}]
    )
    session = write_session(tmp_path / "s.jsonl", history)
    assert main(["build", str(session), "--policy", str(policy)]) == 1
    err = capsys.readouterr().err
    assert "build failed: TOOL_HISTORY_OVERFLOW: 3 tool interaction groups exceed" in err


def test_build_at_a_step_outside_the_session_exits_2(tmp_path, capsys):
    session = write_session(tmp_path / "s.jsonl")
    assert main(["build", str(session), "--step", "9"]) == 2
    assert "step 9 is outside 1..2" in capsys.readouterr().err


def test_replay_prints_one_line_per_step(tmp_path, capsys):
    session = write_session(tmp_path / "s.jsonl")
    assert main(["replay", str(session), "--json"]) == 0
    out, err = capsys.readouterr()
    *lines, last = [json.loads(line) for line in out.splitlines()]
    assert [line["step"] for line in lines] == [1, 2]
    assert [line["messages"] for line in lines] == [2, 4]
    assert [line["nodeStep"] for line in lines] == [2, 4]
    assert [line["summaryMade"] for line in lines] == [None, None]
    # step 2 re-sends step 1's wire (s, u1: 18 tokens) as its cached prefix
    assert [(line["tokensSent"], line["cachedTokens"], line["newTokens"]) for line in lines] == [
        (18, 0, 18),
        (90, 18, 72),
    ]
    assert [line["cacheBreakBy"] for line in lines] == [None, None]
    assert [line["outputTokens"] for line in lines] == [61, 10]  # the recorded a1 and f1
    totals = last["totals"]
    assert {k: totals[k] for k in ("steps", "summariesMade", "overBudgetSteps", "reminderSteps")} == {
        "steps": 2, "summariesMade": 0, "overBudgetSteps": 0, "reminderSteps": 0,
    }  # fmt: skip
    assert (totals["tokensSent"], totals["cachedTokens"], totals["cachedShare"]) == (108, 18, 0.1667)
    assert (totals["cacheBreaks"], totals["priceModel"]) == (0, "claude-sonnet-4-5")
    # 18 cached × $0.30 + 90 written × $3.75 + 71 output × $15 per million; without a cache 108 × $3
    assert (totals["costUsd"], totals["costNoCacheUsd"]) == (0.001408, 0.001389)
    assert "prices: claude-sonnet-4-5 (default: the session names no priced model)" in err


def test_replay_prices_from_a_file_and_the_anthropic_shape(tmp_path, capsys):
    session = write_session(tmp_path / "s.jsonl")
    prices = tmp_path / "p.yaml"
    prices.write_text("date: 2027-01-01\nmodels:\n  house: {input: 1, cachedInput: 0.5, output: 2}\n")
    assert main(["replay", str(session), "--json", "--prices", str(prices), "--model", "house", "--wire",
                 "anthropic"]) == 0  # fmt: skip
    out, err = capsys.readouterr()
    totals = json.loads(out.splitlines()[-1])["totals"]
    assert (totals["priceModel"], totals["wireShape"]) == ("house", "anthropic")
    assert totals["costUsd"] == round((18 * 0.5 + 90 * 1 + 71 * 2) / 1e6, 6)
    assert "prices: house (the chosen model); from price file of 2027-01-01 over genai-prices" in err
    prices.write_text("models: [1]\n")
    assert main(["replay", str(session), "--prices", str(prices)]) == 2
    assert "p.yaml: a price file is a mapping with `models:`" in capsys.readouterr().err


@needs_shared
def test_conformance_all_shared_cases_pass(capsys):
    assert main(["conformance", str(CASES)]) == 0
    assert capsys.readouterr().out.splitlines()[-1] == f"{len(list(CASES.glob('*.json')))} passed, 0 failed"


@needs_shared
def test_conformance_json_prints_the_comparison_fields(capsys):
    assert main(["conformance", str(CASES / "mx_tiny_three_messages.json"), "--json"]) == 0
    record = json.loads(capsys.readouterr().out)
    assert record == {
        "name": "mx_tiny_three_messages",
        "error": None,
        "wire": [
            {"role": "system", "content": "You are a helpful assistant for the billing team."},
            {"role": "user", "content": "What VAT rate do we apply to customers in the Netherlands?"},
            {"role": "assistant", "content": "21% (NL), from billing/tax.py."},
        ],
        "keptIds": ["m001", "m002", "m003"],
        "preprocessedIds": ["m001", "m002", "m003"],
        "summarizationFired": False,
        "checkpointFired": False,
        "reminderHitRuleIds": [],
        "reminderText": None,
        "finalTokens": 30,
    }


def test_conformance_reports_a_failing_case(tmp_path, capsys):
    case = {
        "name": "broken",
        "messages": MESSAGES[:2],
        "contextPolicy": {"budget": {"maxTokens": 1000, "reservedForResponse": 100}},
        "fences": [],
        "tokenizer": {"kind": "mock", "tokensPerMessage": 10, "tokensPerText": 10},
        "summary": {"text": "x"},
        "tick": None,
        "options": {"now": 1},
        "expected": {
            "error": None,
            "wire": [],
            "keptIds": [],
            "preprocessedIds": [],
            "summarizationFired": False,
            "checkpointFired": False,
            "reminderHitRuleIds": [],
            "reminderText": None,
            "finalTokens": 20,
        },
    }
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(case), encoding="utf-8")
    assert main(["conformance", str(path)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == f"FAIL broken ({path}): wire: expected 0 items | actual 2 items"
    assert out[-1] == "0 passed, 1 failed"


@needs_shared
def test_import_writes_a_session_that_loads_and_validates(tmp_path, capsys):
    target = tmp_path / "imported.jsonl"
    source = SHARED / "real-sessions" / "claude-code" / "tool_heavy.jsonl"
    assert main(["import", str(source), "-o", str(target)]) == 0
    out = capsys.readouterr().out
    assert "detected format: claude-code" in out
    assert main(["validate", str(target)]) in (0, 1)
    assert "orphans: 0" in capsys.readouterr().out


def test_import_refuses_to_overwrite_the_source(tmp_path, capsys):
    source = tmp_path / "chat.json"
    source.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    assert main(["import", str(source), "-o", str(source)]) == 2
    assert "chat.json" in capsys.readouterr().err
    assert json.loads(source.read_text(encoding="utf-8")) == [{"role": "user", "content": "hi"}]


@needs_shared
def test_import_report_says_what_came_in_and_what_did_not(capsys):
    rollout = SHARED / "real-sessions" / "codex" / "rollout-small.jsonl"
    assert main(["import", str(rollout), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert report["format"] == "codex" and report["messages"] == 103
    assert report["cameIn"] == {
        "systemPrompts": 0,
        "userTurns": 2,
        "assistantTurns": 35,
        "toolCalls": 34,
        "toolResults": 34,
        "thoughts": 32,
        "summaries": 0,
        "images": 0,
        "callsWithUsage": 35,  # each token_count event: one model call's usage
        "otherBilledCalls": 0,
    }
    assert report["leftOut"][-1] == {
        "reason": "reasoning without a readable summary (encrypted)",
        "count": 1,
        "firstLines": [177],
    }
    assert not any("token_count" in left["reason"] for left in report["leftOut"])
    assert report["problems"] == [] and report["unpaired"] == []
    assert main(["import", str(rollout)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[1] == (
        "  came in: 0 system prompts, 2 user turns, 35 assistant turns, 34 tool calls, 34 tool results, "
        "32 thoughts, 0 summaries, 0 images, 35 calls with usage, 0 other billed calls"
    )


def test_conversation_picks_one_of_several(tmp_path, capsys):
    data = tmp_path / "data.json"
    convs = [
        {"conversations": [{"from": "human", "value": f"q{n}"}, {"from": "gpt", "value": "a"}]}
        for n in range(3)
    ]
    data.write_text(json.dumps(convs), encoding="utf-8")
    assert main(["build", str(data), "--conversation", "-1", "--json"]) == 0
    assert [m["content"] for m in json.loads(capsys.readouterr().out)["wire"]][0] == "q2"
    assert main(["import", str(data), "--conversation", "1"]) == 0
    assert capsys.readouterr().out.splitlines()[1] == (
        "  one of 3 conversations in the file (choose with --conversation N)"
    )
    assert main(["replay", str(data), "--conversation", "5"]) == 2
    assert (
        capsys.readouterr().err == f"error: conversation 5 is out of range: {data} holds 3 conversation(s)\n"
    )


def test_import_onto_an_existing_file_needs_force(tmp_path, capsys):
    source = tmp_path / "chat.json"
    source.write_text(json.dumps([{"role": "user", "content": "hi"}]), encoding="utf-8")
    target = tmp_path / "out.jsonl"
    target.write_text("keep me", encoding="utf-8")
    assert main(["import", str(source), "-o", str(target)]) == 2
    assert capsys.readouterr().err == f"error: {target}: already exists; pass --force to replace it\n"
    assert target.read_text(encoding="utf-8") == "keep me"
    assert main(["import", str(source), "-o", str(target), "--force"]) == 0
    assert [json.loads(line)["content"] for line in target.read_text(encoding="utf-8").split("\n")[1:-1]] == [
        "hi"
    ]
    assert main(["import", str(source), "-o", str(source), "--force"]) == 2  # never over the transcript
    assert capsys.readouterr().err.endswith(f"refusing to write over {source}, which this command reads\n")


def test_skipped_lines_are_never_silent_in_build_and_replay(tmp_path, capsys):
    session = tmp_path / "s.jsonl"
    good = {"id": "u1", "role": "user", "type": "user_input", "content": "hi", "timestamp": 1}
    session.write_text(json.dumps(good) + "\ngarbage\n", encoding="utf-8")
    skipped = f"{session}:2: json: not valid JSON: Expecting value at column 1"
    assert main(["build", str(session), "--json"]) == 1
    captured = capsys.readouterr()
    assert json.loads(captured.out)["warnings"] == [skipped] and captured.err == skipped + "\n"
    assert main(["replay", str(session), "--json"]) == 1
    captured = capsys.readouterr()
    totals = json.loads(captured.out.splitlines()[-1])["totals"]
    counts = ("steps", "summariesMade", "overBudgetSteps", "reminderSteps", "failedSteps")
    assert {name: totals[name] for name in counts} == {
        "steps": 1,
        "summariesMade": 0,
        "overBudgetSteps": 0,
        "reminderSteps": 0,
        "failedSteps": 0,
    }
    prices = "prices: claude-sonnet-4-5 (default: the session names no priced model); from " + CATALOGUE
    assert captured.err == skipped + "\n" + prices + "\n"


@pytest.mark.parametrize("command", [["validate"], ["build"], ["replay"], ["import"], []])
@pytest.mark.parametrize(
    "text", ['{"a": 1}\n{"b": 2}\n', "[\n  [\n    1\n  ],\n  [2]\n]\n"], ids=["lines", "array"]
)
def test_an_unknown_format_is_one_line_and_exit_2(tmp_path, capsys, command, text):
    # an indented JSON array of arrays is one valid document: no line-by-line JSON errors for it
    path = tmp_path / "notes.jsonl"
    path.write_text(text, encoding="utf-8")
    assert main([*command, str(path)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    supported = ", ".join(format_names())
    assert captured.err == f"error: {path}: unrecognised transcript format; supported: {supported}\n"
    newer = "claude-code-stream, codex-exec, gemini-cli-jsonl, gemini-checkpoint, gemini-logs, openhands-v1"
    newer += ", cline"
    newer += ", copilot-cli, qwen-code, cursor-agent"
    assert supported.startswith(f"{newer}, claude-code, codex, gemini-cli, openai-responses")


def test_validate_opens_a_transcript_directly_by_importing_it(tmp_path, capsys):
    chat = tmp_path / "chat.json"
    chat.write_text(
        json.dumps(
            [
                {"role": "system", "content": "Be brief."},
                {"role": "user", "content": "Hi"},
                {"role": "assistant", "content": "Hello."},
            ]
        ),
        encoding="utf-8",
    )
    assert main(["validate", str(chat)]) == 0
    out = capsys.readouterr().out
    assert "(3 messages)" in out
    assert "final_answer 1, system_prompt 1, user_input 1" in out


SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


@pytest.mark.parametrize(("defaults", "truncated"), [("seed", True), ("linnkit-0.21", False)])
def test_defaults_profile_decides_whether_fence_descriptors_count(defaults, truncated, capsys):
    # memory-context is mustKeep with maxBudgetFraction 0.05: honoured under the seed, ignored by linnkit 0.21
    session = SAMPLES / "fences_showcase.jsonl"
    assert main(["build", str(session), "--json", "--defaults", defaults]) in (0, 1)
    payload = json.loads(capsys.readouterr().out)
    kinds = [e["kind"] for e in payload["events"]]
    assert ("fence_truncation" in kinds) is truncated


def test_the_installed_command_runs_the_cli_main():
    """The `linn-playground` script pip writes calls `playground.cli:run`, which imports and runs
    `playground.cli.main:main` (a function: an older install's `playground.cli:main` named the module `main`
    once it was imported, and the script then failed)."""
    from importlib.metadata import entry_points

    from playground.cli import run

    (script,) = [e for e in entry_points(group="console_scripts") if e.name == "linn-playground"]
    assert script.value == "playground.cli:run"
    assert script.load() is run and callable(main)
