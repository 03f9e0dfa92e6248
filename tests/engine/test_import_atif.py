"""Harbor ATIF trajectories: a fixture written from the v1.4 specification (no public, licensed trajectory
file was found), counted by hand, and a trajectory shaped as Harbor's Terminus 2 writes (built inline)."""

from __future__ import annotations

import json
from pathlib import Path

from engine import build_context, effective_policy
from engine.importers import import_file, import_text
from engine.importers.detect import detect_text
from engine.importers.registry import Sniff, importers

TRAJECTORY = (
    Path(__file__).resolve().parents[1]
    / "data"
    / "real-sessions"
    / "atif"
    / "terminus-fix-tests.trajectory.json"
)


def test_steps_become_what_the_model_received_in_order() -> None:
    result = import_file(TRAJECTORY)
    assert result.format == "atif" and result.problems == [] and result.unpaired == []
    assert [(m.id, m.type) for m in result.messages] == [
        ("step-1", "system_prompt"),
        ("step-2", "user_input"),
        ("step-3", "thought"),
        ("step-3#1", "tool_calls"),
        ("step-3#2", "tool_output"),
        ("step-3#3", "tool_output"),
        ("step-4", "tool_calls"),
        ("step-4#1", "tool_output"),
        ("step-5", "user_input"),
        ("step-6", "thought"),
        ("step-6#1", "user_input"),
        ("step-7", "final_answer"),
    ]
    came = result.came_in()
    assert (came["userTurns"], came["assistantTurns"], came["toolCalls"], came["toolResults"]) == (3, 3, 3, 3)
    calls = result.messages[3].meta("tool_calls")
    assert [(c["id"], c["function"]["name"]) for c in calls] == [
        ("toolu_01A", "bash"),
        ("toolu_01B", "read_file"),
    ]
    assert (
        result.messages[5].tool_call_id == "toolu_01B" and result.messages[5].meta("tool_name") == "read_file"
    )
    # a later system step and an observation answering no call are what the model read next, user-side
    assert result.messages[8].meta("generated") and result.messages[10].meta("generated")
    assert result.title.startswith("The test suite in /app fails on test_parse_dates.")
    assert result.session["model"] == "anthropic/claude-sonnet-4-5-20250929"


def test_each_agent_steps_metrics_are_its_usage_with_the_cache_inside_the_prompt() -> None:
    result = import_file(TRAJECTORY)
    usages = [(m.id, m.meta("usage")) for m in result.messages if m.meta("usage")]
    assert [(i, u["promptTokens"], u["cacheReadTokens"], u["outputTokens"]) for i, u in usages] == [
        ("step-3#1", 2210, 0, 164),
        ("step-4", 2590, 2180, 121),
        ("step-6", 1240, 512, 58),
        ("step-7", 1371, 1240, 40),
    ]
    assert sum(u["promptTokens"] for _, u in usages) == 7411  # final_metrics.total_prompt_tokens
    assert "logprobs" not in usages[1][1]["raw"]
    assert result.skipped == {
        "metrics.completion_token_ids (by step id)": 1,
        "metrics.logprobs (by step id)": 1,
        "metrics.prompt_token_ids (by step id)": 1,
    }


def test_only_the_atif_importer_claims_a_trajectory() -> None:
    text = TRAJECTORY.read_text(encoding="utf-8")
    assert [i.name for i in importers() if i.detect(Sniff.of(text, TRAJECTORY.name))] == ["atif"]
    assert detect_text(json.dumps({"schema_version": "1.4", "steps": []})) != "atif"


def test_an_unknown_step_source_is_named() -> None:
    text = json.dumps(
        {"schema_version": "ATIF-v1.6", "steps": [{"step_id": 1, "source": "robot", "message": "x"},
                                                  {"step_id": 2, "source": "user", "message": "hi"}]}
    )  # fmt: skip
    result = import_text(text, "atif", name="t.json")
    assert [str(p) for p in result.problems] == ["t.json: steps[0]: unknown source 'robot'"]
    assert [(m.type, m.content) for m in result.messages] == [("user_input", "hi")]


def test_a_step_whose_results_name_no_call_made_its_calls_in_text_and_builds_with_its_reply() -> None:
    # shaped as Harbor's own Terminus 2 writes (ATIF-v1.5, its tests' golden trajectories): the commands
    # parsed from the reply are tool_calls, and the terminal's output answers them without a source_call_id
    def step(number: int, calls: list[dict], screen: str) -> dict:
        return {"step_id": number, "source": "agent", "model_name": "openai/gpt-4o",
                "message": f"Analysis: step {number}.\nPlan: go on.", "tool_calls": calls,
                "observation": {"results": [{"content": screen}]},
                "metrics": {"prompt_tokens": 600 + number, "completion_tokens": 40}}  # fmt: skip

    mkdir = {"tool_call_id": "call_0_1", "function_name": "bash_command",
             "arguments": {"keystrokes": "mkdir out\n", "duration": 0.1}}  # fmt: skip
    done = {"tool_call_id": "call_1_task_complete", "function_name": "mark_task_complete", "arguments": {}}
    document = {
        "schema_version": "ATIF-v1.5",
        "session_id": "s",
        "agent": {"name": "terminus-2", "version": "2.0.0", "model_name": "openai/gpt-4o"},
        "steps": [
            {"step_id": 1, "source": "user", "message": "Task Description:\nMake a folder called out."},
            step(2, [mkdir], "New Terminal Output:\n\nroot@box:/app# mkdir out\n"),
            step(3, [done], "Current terminal state:\nroot@box:/app#\n"),
        ],
    }
    result = import_text(json.dumps(document), name="trajectory.json")
    assert result.unpaired == [] and result.problems == []
    assert [(m.role, m.type) for m in result.messages] == [
        ("user", "user_input"),
        ("assistant", "final_answer"),
        ("user", "user_input"),
        ("assistant", "final_answer"),
        ("user", "user_input"),
    ]
    reply = result.messages[1]
    assert reply.content == (
        'Analysis: step 2.\nPlan: go on.\nbash_command {"keystrokes":"mkdir out\\n","duration":0.1}'
    )
    assert [c["id"] for c in reply.meta("text_actions")] == ["call_0_1"]
    assert reply.meta("usage")["promptTokens"] == 602
    assert result.messages[4].meta("generated") is True
    built = build_context(result.messages, effective_policy({}))
    assert [w["role"] for w in built.wire] == ["user", "assistant", "user", "assistant", "user"]


def test_a_step_value_of_a_wrong_type_is_said_and_the_step_left_out() -> None:
    # a `step_id` that is text stopped the import with a bare ValueError (int() of it, outside the errors a
    # reader may raise); a `message` that is an object was read as no message, the step's text gone unsaid
    clean = [m.id for m in import_file(TRAJECTORY).messages]
    for index, key, value, reason, gone in [
        (3, "step_id", "4", "step_id: must be a step number (an integer), got a string", "step-4"),
        (2, "step_id", 3.5, "step_id: must be a step number (an integer), got a fraction", "step-3"),
        (1, "message", {"text": "hi"}, "message: must be text (or a list of content parts), got an object",
         "step-2"),
    ]:  # fmt: skip
        document = json.loads(TRAJECTORY.read_text(encoding="utf-8"))
        document["steps"][index][key] = value
        result = import_text(json.dumps(document), name="t.json")
        assert [str(p) for p in result.problems] == [f"t.json: steps[{index}].{reason}; left out"], key
        assert [m.id for m in result.messages] == [i for i in clean if i.split("#")[0] != gone]


def test_atif_1_6_content_parts_are_read_as_their_text_and_images() -> None:
    # ATIF-v1.6 lets a message or a result's content be a list of text and image parts; a list was read as
    # no message (the user's words gone) and a result's parts as their JSON
    document = {
        "schema_version": "ATIF-v1.6",
        "session_id": "s",
        "agent": {"name": "a", "version": "1", "model_name": "m"},
        "steps": [
            {"step_id": 1, "source": "user", "message": [
                {"type": "text", "text": "What is on this chart?"},
                {"type": "image", "source": {"media_type": "image/png", "path": "images/chart.png"}},
            ]},
            {"step_id": 2, "source": "agent", "message": "Looking.", "tool_calls": [
                {"tool_call_id": "c1", "function_name": "view", "arguments": {"path": "chart.png"}},
            ], "observation": {"results": [{"source_call_id": "c1", "content": [
                {"type": "text", "text": "a bar chart"},
                {"type": "image", "source": {"media_type": "image/jpeg", "path": "https://x.test/c.jpg"}},
            ]}]}},
        ],
    }  # fmt: skip
    result = import_text(json.dumps(document), name="t.json")
    assert result.problems == []
    user, call, output = result.messages
    assert (user.type, user.content) == ("user_input", "What is on this chart?\n\n[image: images/chart.png]")
    assert user.metadata == {"images": [{"path": "images/chart.png", "media_type": "image/png"}]}
    assert (call.type, call.content) == ("tool_calls", "Looking.")
    assert (output.type, output.content) == ("tool_output", "a bar chart\n\n[image: https://x.test/c.jpg]")
    assert output.metadata["images"] == [{"path": "https://x.test/c.jpg", "media_type": "image/jpeg"}]


def test_an_atif_message_list_of_other_things_is_said_and_the_step_left_out() -> None:
    document = json.loads(TRAJECTORY.read_text(encoding="utf-8"))
    document["steps"][1]["message"] = ["hi"]
    result = import_text(json.dumps(document), name="t.json")
    assert [str(p) for p in result.problems] == [
        "t.json: steps[1].message: must be text (or a list of content parts), got a list that is not content "
        "parts; left out"
    ]
