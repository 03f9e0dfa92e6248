"""mini-swe-agent 1.x trajectories (`trajectory_format: mini-swe-agent-1`), read by the `openai` importer:
each call's usage from the LiteLLM response the agent stores beside its message, the model from it, and
the exit record written after the last call left out. Shape and counts from a real 1.13.4 run."""

from __future__ import annotations

import json

from engine.importers import detect_format, import_text


def _reply(text: str, prompt: int, completion: int) -> dict:
    usage = {"completion_tokens": completion, "prompt_tokens": prompt, "total_tokens": prompt + completion}
    response = {"id": "chatcmpl-1", "model": "claude-3-5-sonnet-20241022", "usage": usage}
    return {"role": "assistant", "content": text, "extra": {"response": response}}


TRAJECTORY = {
    "info": {
        "exit_status": "Submitted",
        "submission": "",
        "model_stats": {"instance_cost": 0.010521, "api_calls": 3},
        "mini_version": "1.13.4",
        "config": {"model": {"model_name": "anthropic/claude-3-5-sonnet-20241022"}},
    },
    "messages": [
        {"role": "system", "content": "You are a helpful assistant that can interact with a computer."},
        {"role": "user", "content": "Please solve this issue: create hello.txt"},
        _reply("THOUGHT: write it\n```bash\necho 'Hello, world!' > hello.txt\n```", 752, 69),
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\n</output>"},
        _reply("THOUGHT: check it\n```bash\ncat hello.txt\n```", 841, 53),
        {"role": "user", "content": "<returncode>0</returncode>\n<output>\nHello, world!\n</output>"},
        _reply("THOUGHT: done\n```bash\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```", 919, 77),
        {"role": "user", "content": ""},
    ],
    "trajectory_format": "mini-swe-agent-1",
}


def test_each_call_takes_the_usage_of_the_response_stored_beside_it() -> None:
    text = json.dumps(TRAJECTORY)
    assert detect_format(text) == "openai"
    result = import_text(text)
    usages = [m.metadata["usage"] for m in result.messages if m.metadata and "usage" in m.metadata]
    assert [(u["promptTokens"], u["outputTokens"]) for u in usages] == [(752, 69), (841, 53), (919, 77)]
    assert {u["model"] for u in usages} == {"claude-3-5-sonnet-20241022"}
    assert result.session["model"] == "claude-3-5-sonnet-20241022"


def test_the_exit_record_after_the_last_call_is_left_out() -> None:
    result = import_text(json.dumps(TRAJECTORY))
    assert result.messages[-1].role == "assistant"
    reason = "mini-swe-agent's exit record (after its last call, not sent to the model)"
    assert list(result.skipped_lines) == [reason] and len(result.skipped_lines[reason]) == 1
    assert result.came_in()["userTurns"] == 3


def test_a_run_without_an_exit_status_keeps_its_last_user_message() -> None:
    running = {**TRAJECTORY, "info": {**TRAJECTORY["info"], "exit_status": None}}
    result = import_text(json.dumps(running))
    assert result.messages[-1].role == "user" and result.skipped_lines == {}
