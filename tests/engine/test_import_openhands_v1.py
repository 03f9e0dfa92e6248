"""OpenHands V1 (software-agent-sdk) events and conversation folders, and a folder's bad parts."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from engine.importers import FolderError, detect_format, import_file, import_text

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "openhands-v1"
EVENTS = DATA / "goal-events.jsonl"
BASE_STATE = DATA / "v1_11_5_cli_default-base_state.json"
SYSTEM = {
    "id": "sys-1",
    "timestamp": "2026-06-16T05:39:10.000000",
    "source": "agent",
    "kind": "SystemPromptEvent",
    "system_prompt": {"type": "text", "text": "You are OpenHands agent."},
    "dynamic_context": {"type": "text", "text": "Repo: demo"},
    "tools": [{"name": "terminal", "description": "Run a command", "parameters": {"type": "object"}}],
}
USER = {
    "id": "msg-1",
    "timestamp": "2026-06-16T05:39:11.000000",
    "source": "user",
    "kind": "MessageEvent",
    "llm_message": {"role": "user", "content": [{"type": "text", "text": "Post a progress comment"}]},
}


def conversation(root: Path, events: list[dict], base_state: bool = True) -> Path:
    """A conversation folder as the SDK writes it: base_state.json and events/event-NNNNN-<id>.json."""
    (root / "events").mkdir(parents=True)
    if base_state:
        (root / "base_state.json").write_text(BASE_STATE.read_text())
    for index, event in enumerate(events):
        (root / "events" / f"event-{index:05d}-{event['id']}.json").write_text(json.dumps(event))
    return root


def real_events() -> list[dict]:
    return [json.loads(line) for line in EVENTS.read_text().splitlines() if line.strip()]


def test_the_sdk_event_stream_imports_calls_results_and_reasoning() -> None:
    assert detect_format(EVENTS) == "openhands-v1"
    result = import_file(EVENTS)
    # counted by hand: 10 events; 2 ActionEvents (one call each, each with reasoning_content), 3
    # ObservationEvents (one answers a call whose action is not in the file), 5 state updates
    assert result.came_in()["assistantTurns"] == 2
    assert result.came_in()["toolCalls"] == 2
    assert result.came_in()["toolResults"] == 3
    assert result.came_in()["thoughts"] == 2
    assert result.came_in()["userTurns"] == 0
    assert result.skipped_lines["ConversationStateUpdateEvent (bookkeeping)"] == [1, 2, 3, 6, 8]
    assert result.unpaired == ["chatcmpl-tool-9051d3d10f914188"]
    calls = [m for m in result.messages if m.type == "tool_calls"]
    assert [c.tool_calls[0]["id"] for c in calls] == [
        "chatcmpl-tool-9d0341c7a033ae28",
        "chatcmpl-tool-9fa678118a57807d",
    ]
    assert calls[0].tool_calls[0]["function"]["name"] == "terminal"
    assert result.session["usageTotals"]["default"]["prompt_tokens"] == 107458  # the last stats update
    assert result.session["model"] == "litellm_proxy/minimax-m2.7"


def test_a_conversation_folder_opens_by_its_root(tmp_path: Path) -> None:
    root = conversation(tmp_path / "conv", [SYSTEM, USER, *real_events()])
    result = import_file(root)
    assert result.format == "openhands-v1"
    assert [m.type for m in result.messages[:2]] == ["system_prompt", "user_input"]
    assert result.messages[0].content == "You are OpenHands agent.\n\nRepo: demo"
    assert result.messages[0].meta("tools")[0]["name"] == "terminal"
    assert result.session["model"] == "gpt-4o-mini"  # base_state.json: agent.llm.model
    assert result.session["tools"] == ["terminal", "file_editor", "task_tracker"]
    assert result.came_in()["toolResults"] == 3 and result.problems == []


def test_parallel_calls_of_one_response_become_one_message() -> None:
    def action(n: int) -> dict:
        call = {"id": f"c{n}", "name": "terminal", "arguments": json.dumps({"command": f"ls {n}"})}
        return {
            "id": f"a{n}",
            "source": "agent",
            "kind": "ActionEvent",
            "thought": [],
            "tool_name": "terminal",
            "tool_call_id": f"c{n}",
            "tool_call": call,
            "llm_response_id": "r1",
            "action": {"command": "ls"},
        }

    def observation(n: int) -> dict:
        content = [{"type": "text", "text": f"out {n}"}]
        return {
            "id": f"o{n}",
            "source": "environment",
            "kind": "ObservationEvent",
            "tool_name": "terminal",
            "tool_call_id": f"c{n}",
            "action_id": f"a{n}",
            "observation": {"content": content},
        }

    summary = {
        "id": "k1",
        "source": "environment",
        "kind": "Condensation",
        "forgotten_event_ids": ["a1", "o1"],
        "summary": "Listed two folders.",
        "summary_offset": 0,
        "llm_response_id": "r2",
    }
    result = import_text(json.dumps([USER, action(1), action(2), observation(1), observation(2), summary]))
    assert [m.type for m in result.messages] == [
        "user_input", "tool_calls", "tool_output", "tool_output", "history_summary"
    ]  # fmt: skip
    assert [c["id"] for c in result.messages[1].tool_calls] == ["c1", "c2"]
    assert result.messages[-1].meta("replacedMessageIds") == ["a1", "o1-out"]


def test_a_folder_without_its_events_names_the_missing_part(tmp_path: Path) -> None:
    (tmp_path / "conv").mkdir()
    (tmp_path / "conv" / "base_state.json").write_text(BASE_STATE.read_text())
    with pytest.raises(FolderError, match=r"conv/events: missing part folder; no event can be read$"):
        import_file(tmp_path / "conv")


def test_a_missing_base_state_is_one_problem_and_the_events_still_come_in(tmp_path: Path) -> None:
    root = conversation(tmp_path / "conv", [USER], base_state=False)
    result = import_file(root)
    assert [str(p) for p in result.problems] == [
        f"{root / 'base_state.json'}: missing part file; model and tool names not read"
    ]
    assert [m.content for m in result.messages] == ["Post a progress comment"]


def test_an_event_of_a_newer_schema_opens_with_what_can_be_read(tmp_path: Path) -> None:
    newer = {"id": "n1", "source": "agent", "kind": "PlanningEvent", "plan": ["a", "b"]}
    root = conversation(tmp_path / "conv", [USER, newer, {**USER, "id": "msg-2"}])
    result = import_file(root)
    assert [m.id for m in result.messages] == ["msg-1", "msg-2"]
    assert result.skipped_lines == {"unknown event kind PlanningEvent": [2]}
    assert [str(p) for p in result.problems] == [
        f"{root}: 1 event(s) of kind PlanningEvent not read (a newer OpenHands SDK?)"
    ]


def test_symlinks_in_a_folder_are_named_and_never_followed(tmp_path: Path) -> None:
    root = conversation(tmp_path / "conv", [USER])
    events = root / "events"
    os.symlink(events / "event-00001-loop.json", events / "event-00001-loop.json")  # points at itself
    os.symlink(events, events / "sub")  # a folder loop: never entered
    (tmp_path / "secret.json").write_text(json.dumps({**USER, "id": "outside"}))
    os.symlink(tmp_path / "secret.json", events / "event-00002-out.json")
    result = import_file(root)
    assert [m.id for m in result.messages] == ["msg-1"]
    assert sorted(str(p) for p in result.problems) == [
        f"{events / 'event-00001-loop.json'}: a symlink loop; not followed",
        f"{events / 'event-00002-out.json'}: a symlink out of the folder (to {tmp_path / 'secret.json'}); "
        "not followed",
    ]


def test_a_condensation_whose_summary_is_not_in_view_is_counted() -> None:
    condensation = {"id": "k1", "source": "environment", "kind": "Condensation",
                    "forgotten_event_ids": ["msg-1"], "summary": "gone", "llm_response_id": "r"}  # fmt: skip
    result = import_text(f"{json.dumps(USER)}\n{json.dumps(condensation)}")
    assert [m.type for m in result.messages] == ["user_input"]
    assert result.skipped_lines == {"Condensation without a summary in view (forgets 1 events)": [2]}


def test_base_state_token_usages_go_on_their_responses(tmp_path: Path) -> None:
    root = conversation(tmp_path / "conv", [SYSTEM, USER, *real_events()])
    state = json.loads((root / "base_state.json").read_text())

    def usage(response: str, prompt: int, cached: int, output: int) -> dict:
        return {"model": "litellm_proxy/minimax-m2.7", "prompt_tokens": prompt, "completion_tokens": output,
                "cache_read_tokens": cached, "cache_write_tokens": 0, "reasoning_tokens": 0,
                "context_window": 0, "per_turn_token": prompt + output, "response_id": response}  # fmt: skip

    calls = [
        usage("0680149d625114e6a97f54b158714212", 35299, 1115, 185),
        usage("068014ab9c72170b40bca7fa74f68a89", 35580, 33460, 190),
    ]
    condenser = [usage("c-1", 900, 0, 40)]
    state["stats"] = {
        "usage_to_metrics": {"default": {"token_usages": calls}, "condenser": {"token_usages": condenser}}
    }
    (root / "base_state.json").write_text(json.dumps(state))
    result = import_file(root)
    on_messages = [(m.type, m.meta("usage")["promptTokens"], m.meta("usage")["cacheReadTokens"])
                   for m in result.messages if m.meta("usage")]  # fmt: skip
    assert on_messages == [("tool_calls", 35299, 1115), ("tool_calls", 35580, 33460)]
    assert [(c["why"], c["promptTokens"]) for c in result.other_calls] == [
        ("a condenser call no event answers to", 900)
    ]


def test_reasoning_comes_from_thinking_blocks_or_a_responses_reasoning_summary() -> None:
    answer = {"id": "m2", "source": "agent", "kind": "MessageEvent", "llm_response_id": "r9",
              "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "Done."}],
                              "responses_reasoning_item": {"id": "rs_1", "summary": ["Checked the diff."],
                                                           "encrypted_content": "gAAA"}}}  # fmt: skip
    action = {"id": "a1", "source": "agent", "kind": "ActionEvent", "thought": [], "tool_name": "terminal",
              "tool_call_id": "c1", "llm_response_id": "r1", "reasoning_content": "ignored: blocks win",
              "thinking_blocks": [{"type": "thinking", "thinking": "List first.", "signature": "s"}],
              "tool_call": {"id": "c1", "name": "terminal", "arguments": "{}"}}  # fmt: skip
    result = import_text(json.dumps([USER, action, answer]))
    assert [(m.type, m.content) for m in result.messages if m.role == "assistant"] == [
        ("thought", "List first."),
        ("tool_calls", ""),
        ("thought", "Checked the diff."),
        ("final_answer", "Done."),
    ]


@pytest.mark.parametrize(
    ("target", "reason"),
    [("events", "a symlink loop; not followed"), (".", "a symlinked folder; not entered")],
)
def test_a_symlinked_events_folder_is_never_entered(tmp_path: Path, target: str, reason: str) -> None:
    root = tmp_path / "conv"
    root.mkdir()
    (root / "base_state.json").write_text(BASE_STATE.read_text())
    os.symlink(root / target if target != "." else root, root / "events")
    with pytest.raises(FolderError) as caught:
        import_file(root)
    assert str(caught.value) == f"{root / 'events'}: {reason}; no event can be read"


def _sdk10_call(n: int) -> list[dict]:
    """An SDK 1.0 call and its observation: the text sits in `output` (a command) or `message` (a finish)."""
    call_id = f"call_{n}"
    bash = {"kind": "ExecuteBashObservation", "output": f"out {n}", "exit_code": 0, "error": n == 2}
    finish = {"kind": "FinishObservation", "message": "all done"}
    name, observation = ("execute_bash", bash) if n < 3 else ("finish", finish)
    action = {
        "id": f"act-{n}",
        "kind": "ActionEvent",
        "source": "agent",
        "thought": [],
        "action": {"kind": "ExecuteBashAction", "command": f"echo {n}"},
        "tool_name": name,
        "tool_call_id": call_id,
        "tool_call": {"id": call_id, "type": "function", "function": {"name": name, "arguments": "{}"}},
        "llm_response_id": f"resp-{n}",
    }
    result = {
        "id": f"obs-{n}",
        "kind": "ObservationEvent",
        "source": "environment",
        "tool_name": name,
        "tool_call_id": call_id,
        "observation": observation,
    }
    return [action, result]


def test_an_evaluation_output_jsonl_of_sdk_events_is_one_conversation_a_record() -> None:
    history = [*_sdk10_call(1), *_sdk10_call(2)]
    records = [
        {"instance_id": f"task-{r}", "instruction": f"Do task {r}", "history": list(history)} for r in (0, 1)
    ]
    records[1]["history"] += _sdk10_call(3)
    text = "\n".join(json.dumps(r) for r in records)
    assert detect_format(text) == "openhands-v1"
    first = import_text(text, "openhands-v1", name="output.jsonl")
    assert first.conversations == 2
    assert [(m.type, m.content) for m in first.messages] == [
        ("user_input", "Do task 0"),
        ("tool_calls", ""),
        ("tool_output", "out 1"),
        ("tool_calls", ""),
        ("tool_output", "out 2"),
    ]
    assert first.messages[4].meta("is_error") is True and first.messages[2].meta("is_error") is None
    assert first.session["instanceId"] == "task-0"
    last = import_text(text, "openhands-v1", name="output.jsonl", conversation=-1)
    assert last.messages[0].content == "Do task 1"
    assert last.messages[-1].content == "all done"
    assert last.problems == []
