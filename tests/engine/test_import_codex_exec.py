"""`codex exec --json` streams: each completed item as what Codex sent and received, each turn's usage
from the running totals, problems named by line and field, the rest read."""

from __future__ import annotations

import json
from pathlib import Path

from engine.importers import detect_format, import_file, import_text

EVENTS = [
    {"type": "thread.started", "thread_id": "019a2d7a-6455-7170-a661-c6d8b94c630a"},  # 1
    {"type": "turn.started"},  # 2
    {"type": "item.completed", "item": {"id": "item_0", "type": "reasoning", "text": "**Listing files**"}},
    {
        "type": "item.started",  # 4
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": "bash -lc ls",
            "status": "in_progress",
        },
    },
    {
        "type": "item.completed",  # 5
        "item": {
            "id": "item_1",
            "type": "command_execution",
            "command": "bash -lc ls",
            "aggregated_output": "a.py\nb.py\n",
            "exit_code": 0,
            "status": "completed",
        },
    },
    {"type": "item.completed", "item": {"id": "item_2", "type": "agent_message", "text": "Two files."}},  # 6
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 6040, "cached_input_tokens": 4992, "output_tokens": 129},
    },
    {"type": "turn.started"},  # 8
    {
        "type": "item.completed",  # 9
        "item": {
            "id": "item_3",
            "type": "mcp_tool_call",
            "server": "github",
            "tool": "search_issues",
            "arguments": {"q": "is:open"},
            "result": {"content": [{"type": "text", "text": "#12 flaky test"}], "structured_content": None},
            "status": "completed",
        },
    },
    {
        "type": "item.completed",
        "item": {"id": "item_4", "type": "error", "message": "rate limited, retrying"},
    },
    {"type": "item.completed", "item": {"id": "item_5", "type": "telepathy", "text": "?"}},  # 11
    {"type": "item.completed", "item": {"id": "item_6", "type": "reasoning", "text": 7}},  # 12
    "not an event",  # 13
    {
        "type": "item.completed",
        "item": {"id": "item_7", "item_type": "assistant_message", "text": "Issue #12."},
    },
    {
        "type": "turn.completed",
        "usage": {"input_tokens": 9040, "cached_input_tokens": 7992, "output_tokens": 200},
    },
    {"type": "item.started", "item": {"id": "item_8", "type": "command_execution", "command": "make"}},  # 16
]


def _stream(tmp_path: Path, events: list) -> Path:
    path = tmp_path / "exec.jsonl"
    lines = [json.dumps(e) for e in events]
    lines.insert(12, "{not json")  # line 13 malformed; "not an event" becomes line 14
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_a_stream_reads_as_calls_outputs_and_answers_with_each_turns_usage(tmp_path: Path) -> None:
    path = _stream(tmp_path, EVENTS)
    assert detect_format(path) == "codex-exec"
    result = import_file(path)
    assert [(m.role, m.type) for m in result.messages] == [
        ("assistant", "thought"),
        ("assistant", "tool_calls"),
        ("tool", "tool_output"),
        ("assistant", "final_answer"),
        ("assistant", "tool_calls"),
        ("tool", "tool_output"),
        ("assistant", "final_answer"),
    ]
    shell, mcp = result.messages[1].tool_calls[0], result.messages[4].tool_calls[0]
    assert (shell["id"], shell["function"]["name"], json.loads(shell["function"]["arguments"])) == (
        "item_1",
        "shell",
        {"command": "bash -lc ls"},
    )
    assert result.messages[2].content == "a.py\nb.py\n" and result.messages[2].tool_call_id == "item_1"
    assert (mcp["function"]["name"], json.loads(mcp["function"]["arguments"])) == (
        "github__search_issues",
        {"q": "is:open"},
    )
    assert result.messages[5].content == "#12 flaky test"
    assert result.messages[6].content == "Issue #12."  # an older stream's item_type / assistant_message
    # each turn: two model calls (before and after the tool's output), its total kept for cost only; turn
    # 2's is the running total less turn 1's
    assert [
        (c["promptTokens"], c["cacheReadTokens"], c["outputTokens"], c["line"]) for c in result.other_calls
    ] == [
        (6040, 4992, 129, 7),
        (3000, 3000, 71, 16),
    ]
    assert not any(m.meta("usage") for m in result.messages)
    assert result.session["id"] == "019a2d7a-6455-7170-a661-c6d8b94c630a"
    assert result.session["prompt"].startswith("not in the stream")


def test_a_turn_of_one_call_gets_the_difference_of_the_running_totals_as_its_usage() -> None:
    events = [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": "hello"}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 100, "cached_input_tokens": 0, "output_tokens": 5},
        },
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i1", "type": "reasoning", "text": "think"}},
        {"type": "item.completed", "item": {"id": "i2", "type": "agent_message", "text": "again"}},
        {
            "type": "turn.completed",
            "usage": {"input_tokens": 250, "cached_input_tokens": 90, "output_tokens": 12},
        },
    ]
    result = import_text("\n".join(json.dumps(e) for e in events), name="run.jsonl")
    assert result.format == "codex-exec"
    usages = [(m.content, m.metadata["usage"]) for m in result.messages if m.meta("usage")]
    assert [(text, u["promptTokens"], u["cacheReadTokens"], u["outputTokens"]) for text, u in usages] == [
        ("hello", 100, 0, 5),
        ("again", 150, 90, 7),
    ]
    assert result.other_calls == []


def test_what_is_not_read_is_named_with_its_line(tmp_path: Path) -> None:
    result = import_file(_stream(tmp_path, EVENTS))
    assert [(p.line, p.reason) for p in result.problems] == [
        (12, "item.text: expected text, got a number; left out"),
        (13, "invalid JSON (Expecting property name enclosed in double quotes at column 2)"),
        (14, "type: expected an event type (text), got a string; left out"),
    ]
    assert result.skipped_lines["error item (a notice, not sent to the model)"] == [10]
    assert result.skipped_lines["unknown item type 'telepathy'"] == [11]
    assert result.skipped_lines["an item that started and never completed"] == [17]
    assert result.skipped_lines["item.started (the item in progress)"] == [4, 17]


def test_web_search_file_change_and_plan_items_are_calls_with_outputs() -> None:
    events = [
        {"type": "item.completed", "item": {"id": "w", "type": "web_search", "query": "tiktoken p50k"}},
        {
            "type": "item.completed",
            "item": {
                "id": "f",
                "type": "file_change",
                "changes": [{"path": "a.py", "kind": "update"}],
                "status": "completed",
            },
        },
        {
            "type": "item.completed",
            "item": {"id": "p", "type": "todo_list", "items": [{"text": "fix", "completed": True}]},
        },
        {"type": "item.completed", "item": {"id": "a", "type": "agent_message", "text": "done"}},
    ]
    result = import_text("\n".join(json.dumps(e) for e in events), name="run.jsonl")
    calls = [c["function"] for m in result.messages if m.type == "tool_calls" for c in m.tool_calls]
    assert [(c["name"], json.loads(c["arguments"])) for c in calls] == [
        ("web_search", {"type": "search", "query": "tiktoken p50k"}),
        ("apply_patch", {"changes": [{"path": "a.py", "kind": "update"}]}),
        ("update_plan", {"plan": [{"step": "fix", "status": "completed"}]}),
    ]
    outputs = [m.content for m in result.messages if m.type == "tool_output"]
    assert outputs[1:] == ["status: completed", "Plan updated"]
    assert result.unpaired == []


def test_a_second_run_appended_to_the_file_counts_from_its_own_start() -> None:
    usage = {"input_tokens": 300, "cached_input_tokens": 100, "output_tokens": 9}
    run = [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": {"id": "i0", "type": "agent_message", "text": "one"}},
        {"type": "turn.completed", "usage": usage},
    ]
    command = {"id": "i0", "type": "command_execution", "command": "ls", "aggregated_output": "x"}
    again = [
        {"type": "thread.started", "thread_id": "t"},
        {"type": "turn.started"},
        {"type": "item.completed", "item": command},
        {"type": "item.completed", "item": {"id": "i1", "type": "agent_message", "text": "two"}},
        {"type": "turn.completed", "usage": {**usage, "input_tokens": 200, "cached_input_tokens": 0}},
    ]
    result = import_text("\n".join(json.dumps(e) for e in run + again), name="runs.jsonl")
    usages = [(m.content, m.metadata["usage"]) for m in result.messages if m.meta("usage")]
    assert [(text, u["promptTokens"], u["outputTokens"]) for text, u in usages] == [("one", 300, 9)]
    # the second run's two calls (the command, then the answer): its own total (it went down), for cost
    assert [(c["promptTokens"], c["outputTokens"]) for c in result.other_calls] == [(200, 9)]
    # item ids start again at each run: the second run's are made unique
    assert [c["id"] for m in result.messages if m.type == "tool_calls" for c in m.tool_calls] == ["i0@run2"]


def test_an_mcp_result_of_the_wrong_type_is_named_and_the_rest_read() -> None:
    call = {"id": "m", "type": "mcp_tool_call", "server": "s", "tool": "t", "status": "completed"}
    events = [
        {"type": "item.completed", "item": {**call, "result": {"content": 5}}},
        {"type": "item.completed", "item": {**call, "id": "n", "error": {"message": "boom"}}},
        {"type": "item.completed", "item": {"id": "a", "type": "agent_message", "text": "done"}},
    ]
    result = import_text("\n".join(json.dumps(e) for e in events), name="run.jsonl")
    assert [(p.line, p.reason) for p in result.problems] == [
        (1, "item.result.content: expected a list of blocks, got a number; left out")
    ]
    assert [(m.type, m.content) for m in result.messages] == [
        ("tool_calls", ""),
        ("tool_output", "boom"),
        ("final_answer", "done"),
    ]


def _paths(value, prefix=()):
    """Every key or index path inside `value`."""
    children = (
        value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    )
    for key, child in children:
        yield (*prefix, key)
        yield from _paths(child, (*prefix, key))


def test_any_field_of_any_type_ends_in_messages_or_named_problems_never_an_error() -> None:
    """Each field of the fixture replaced in turn: the import never stops, and one bad field costs at most
    one item (a call and its output)."""
    base = [e for e in EVENTS if isinstance(e, dict)]
    for index, event in enumerate(base):
        for path in list(_paths(event)):
            for value in (None, 1, "s", [], {}, True):
                events = json.loads(json.dumps(base))
                target = events[index]
                for key in path[:-1]:
                    target = target[key]
                target[path[-1]] = value
                result = import_text("\n".join(json.dumps(e) for e in events), "codex-exec", name="x.jsonl")
                assert len(result.messages) >= 5, (path, value)
