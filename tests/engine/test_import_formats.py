"""Codex CLI rollouts, Responses API items, Gemini CLI sessions; detection through the importer registry."""

from __future__ import annotations

import json
from importlib.metadata import EntryPoint
from pathlib import Path

import pytest

from engine.build import build_context
from engine.importers import (
    ENTRY_POINT_GROUP,
    EmptyImportError,
    Importer,
    ImportResult,
    UnknownFormatError,
    detect_format,
    format_names,
    import_file,
    import_text,
    registry,
)
from engine.invariants import check_invariants
from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.replay import replay_session

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real-sessions"
needs_real = pytest.mark.skipif(not REAL.is_dir(), reason=f"real transcripts not found at {REAL}")
# one long turn: its tool loop is must-keep, so a tight budget overflows by design (C6); use the defaults
POLICY = define_context_policy({})


def rollout(*lines: tuple[str, dict]) -> str:
    stamp = "2025-10-28T04:00:{:02d}.000Z"
    return "\n".join(
        json.dumps({"timestamp": stamp.format(n), "type": kind, "payload": payload})
        for n, (kind, payload) in enumerate(lines)
    )


def user(text: str) -> tuple[str, dict]:
    return "response_item", {
        "type": "message",
        "role": "user",
        "content": [{"type": "input_text", "text": text}],
    }


def say(text: str) -> tuple[str, dict]:
    content = [{"type": "output_text", "text": text}]
    return "response_item", {"type": "message", "role": "assistant", "content": content}


def call(call_id: str, command: str) -> tuple[str, dict]:
    arguments = json.dumps({"command": command})
    return "response_item", {
        "type": "function_call",
        "name": "shell",
        "arguments": arguments,
        "call_id": call_id,
    }


def output(call_id: str, text: str) -> tuple[str, dict]:
    wrapped = json.dumps({"output": text, "metadata": {"exit_code": 0}})  # Codex 0.40 wraps outputs
    return "response_item", {"type": "function_call_output", "call_id": call_id, "output": wrapped}


def test_codex_turns_pair_calls_and_keep_outputs_as_the_model_read_them() -> None:
    text = rollout(
        ("session_meta", {"id": "s1", "instructions": "You are Codex.", "cli_version": "0.40.0"}),
        ("turn_context", {"model": "gpt-5-codex"}),
        user("list the files"),
        ("response_item", {"type": "reasoning", "summary": [{"type": "summary_text", "text": "plan"}]}),
        say("Looking."),
        call("c1", "ls"),
        call("c2", "pwd"),
        output("c1", "a.py"),
        output("c2", "/repo"),
        ("event_msg", {"type": "token_count"}),
        ("response_item", {"type": "reasoning", "summary": [], "encrypted_content": "xyz"}),
        say("Two files."),
    )
    result = import_text(text, name="r.jsonl")
    assert result.format == "codex"
    assert [(m.id, m.type, m.content) for m in result.messages] == [
        ("cx-1", "system_prompt", "You are Codex."),
        ("cx-3", "user_input", "list the files"),
        ("cx-4", "thought", "plan"),
        ("cx-5", "tool_calls", "Looking."),
        ("cx-8", "tool_output", '{"output": "a.py", "metadata": {"exit_code": 0}}'),  # the JSON it sent
        ("cx-9", "tool_output", '{"output": "/repo", "metadata": {"exit_code": 0}}'),
        ("cx-12", "final_answer", "Two files."),
    ]
    assert [c["id"] for c in result.messages[3].tool_calls] == ["c1", "c2"]
    assert result.messages[4].meta("tool_name") == "shell"
    assert result.messages[4].meta("outputMetadata") == {"exit_code": 0}
    assert result.unpaired == []
    assert result.skipped_lines == {
        "event_msg token_count without usage (a UI echo)": [10],
        "reasoning without a readable summary (encrypted)": [11],
    }
    assert result.session == {"id": "s1", "cli_version": "0.40.0", "model": "gpt-5-codex"}


SHELL_OUTPUT = '{"output":"a.py\\n","metadata":{"exit_code":0}}'
OLDER_CODEX_ITEMS = [
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "list files"}]},
    {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "run ls"}]},
    {"type": "function_call", "name": "shell", "arguments": '{"command":["ls"]}', "call_id": "c1"},
    {"type": "function_call_output", "call_id": "c1", "output": SHELL_OUTPUT},
    {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "a.py"}]},
]


def test_codex_rollouts_before_the_envelope_and_the_typescript_clis_json_are_codex() -> None:
    # 2025: a bare meta line, bare items, state markers; the TypeScript CLI: {session, items}
    meta = {
        "id": "r1",
        "timestamp": "2025-09-02T17:17:41.762Z",
        "instructions": None,
        "git": {"branch": "main"},
    }
    state = {"record_type": "state"}
    bare = "\n".join(
        json.dumps(x) for x in [meta, state, *OLDER_CODEX_ITEMS[:3], state, *OLDER_CODEX_ITEMS[3:]]
    )
    session = {"timestamp": "2025-04-18T10:00:00Z", "id": "r2", "instructions": "Be terse."}
    typescript = json.dumps({"session": session, "items": OLDER_CODEX_ITEMS})
    expected = [("user_input", "list files"), ("thought", "run ls"), ("tool_calls", ""),
                ("tool_output", SHELL_OUTPUT), ("final_answer", "a.py")]  # fmt: skip
    result = import_text(bare, name="rollout.jsonl")
    assert result.format == "codex" and result.problems == [] and result.unpaired == []
    assert [(m.type, m.content) for m in result.messages] == expected
    assert result.skipped_lines == {"state record (Codex's bookkeeping)": [2, 6]}
    assert result.session["id"] == "r1"
    result = import_text(typescript, name="rollout.json")
    assert result.format == "codex" and result.problems == []
    assert [(m.type, m.content) for m in result.messages] == [("system_prompt", "Be terse."), *expected]


def test_codex_compaction_replaces_all_but_the_user_messages_it_keeps() -> None:
    kept_user = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "second"}]}
    said = "Another language model started to solve this problem and produced a summary.\nSUMMARY"
    summary_item = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": said}]}
    text = rollout(
        user("first"),
        say("one"),
        user("second"),
        say("two"),
        ("compacted", {"message": "", "replacement_history": [kept_user, summary_item]}),
        user("third"),
    )
    result = import_text(text)
    summary = next(m for m in result.messages if m.type == "history_summary")
    assert summary.content == said
    assert summary.meta("replacedMessageIds") == ["cx-1", "cx-2", "cx-4"]  # ids name rollout lines
    assert summary.meta("source") == {"line": 5, "type": "compacted", "replacementHistoryItems": 2}
    built = build_context(result.messages, define_context_policy({}))
    assert [m.id for m in built.messages] == ["cx-5", "cx-3", "cx-6"]  # linnkit puts a summary first


def test_responses_request_body_images_custom_tools_and_web_search() -> None:
    image = {"type": "input_image", "image_url": "data:image/png;base64," + "A" * 400}
    body = {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "what is this"}, image],
            },
            {"type": "web_search_call", "id": "ws1", "status": "completed", "action": {"query": "png"}},
            {"type": "custom_tool_call", "name": "apply_patch", "input": "*** Begin Patch", "call_id": "p1"},
            {"type": "custom_tool_call_output", "call_id": "p1", "output": "Done!"},
        ],
    }
    result = import_text(json.dumps(body))
    assert result.format == "openai-responses" and result.session == {"model": "gpt-5"}
    kinds = [(m.type, m.content) for m in result.messages]
    assert kinds[0] == ("system_prompt", "Be brief.")
    assert kinds[1] == ("user_input", "what is this\n\n[image: image/png, 300 bytes]")
    assert result.messages[1].meta("images") == [{"media_type": "image/png", "base64Chars": 400}]
    calls = result.messages[2].tool_calls
    assert [(c["id"], c["function"]["name"], c["function"]["arguments"]) for c in calls] == [
        ("ws1", "web_search", '{"query":"png"}'),
        ("p1", "apply_patch", '{"input":"*** Begin Patch"}'),
    ]
    outputs = [(m.tool_call_id, m.content, m.meta("synthetic")) for m in result.messages[3:]]
    assert outputs == [
        ("ws1", "[web search run by the provider; its results are not in the transcript]", True),
        ("p1", "Done!", None),
    ]
    assert result.unpaired == []


def test_gemini_results_live_in_the_calling_message() -> None:
    session = {
        "sessionId": "g1",
        "projectHash": "abc",
        "messages": [
            {"id": "m1", "type": "user", "content": "read it", "timestamp": "2025-01-05T14:00:00Z"},
            {"id": "m2", "type": "info", "content": "Switched model"},
            {
                "id": "m3",
                "type": "gemini",
                "content": [{"text": "Reading."}],
                "thoughts": [{"subject": "Plan", "description": "read the file"}],
                "toolCalls": [
                    {
                        "id": "t1",
                        "name": "read_file",
                        "args": {"path": "a"},
                        "result": [{"functionResponse": {"id": "t1", "response": {"output": "hello"}}}],
                        "status": "success",
                    },
                    {"id": "t2", "name": "ls", "args": {}, "result": [], "resultDisplay": "a b"},
                ],
            },
            {"id": "m4", "type": "gemini", "content": "It says hello."},
        ],
    }
    result = import_text(json.dumps(session))
    assert result.format == "gemini-cli"
    assert [(m.id, m.type, m.content) for m in result.messages] == [
        ("m1", "user_input", "read it"),
        ("m3-thought-0", "thought", "Plan\nread the file"),
        ("m3", "tool_calls", "Reading."),
        ("m3-result-t1", "tool_output", "hello"),
        ("m3-result-t2", "tool_output", "a b"),
        ("m4", "final_answer", "It says hello."),
    ]
    assert result.skipped_lines == {"info notice (shown by the CLI, not sent to the model)": [2]}
    assert result.unpaired == []


@needs_real
@pytest.mark.parametrize(
    ("path", "fmt", "calls"),
    [
        ("codex/rollout-small.jsonl", "codex", 34),
        ("codex/compaction-synthetic.jsonl", "codex", 2),
        ("gemini-cli/session-synthetic.json", "gemini-cli", 1),
        ("swe-agent/function_calling_simple.traj", "swe-agent", 5),
        ("sharegpt/glaive_toolcall_excerpt.json", "sharegpt", 1),
        ("openhands/basic.json", "openhands", 1),
        ("letta/memgpt_agent_with_convo.af", "letta", 0),
        ("aider/chat-history-excerpt.md", "aider", 0),
        ("claude-code-variants/subagent-agent.jsonl", "claude-code", 0),
        ("claude-code-variants/sidechain_integrated.jsonl", "claude-code", 1),
        ("claude-code-variants/compact-boundary.jsonl", "claude-code", 3),
        ("claude-code/long_session/subagents/agent-aac57f5.jsonl", "claude-code", None),
    ],
)
def test_real_files_import_paired_and_replay_cleanly(path: str, fmt: str, calls: int | None) -> None:
    assert detect_format(REAL / path) == fmt
    result = import_file(REAL / path)
    assert result.unpaired == [] and result.problems == []
    if calls is not None:
        assert sum(len(m.tool_calls) for m in result.messages if m.type == "tool_calls") == calls
    for step in replay_session(result.messages, POLICY):
        assert step.result.error is None
        assert check_invariants(step.result).errors == ()


def test_swe_agent_tool_messages_answer_every_call_they_name() -> None:
    call = {"type": "function", "function": {"name": "open", "arguments": "{}"}}
    traj = {
        "history": [
            {
                "role": "system",
                "content": "You are an agent.",
                "agent": "main",
                "message_type": "system_prompt",
            },
            {"role": "user", "content": [{"type": "text", "text": "fix it"}], "agent": "main"},
            {
                "role": "assistant",
                "content": "Open both.",
                "thought": "Open both.",
                "action": "open a",
                "tool_calls": [{**call, "id": "c1"}, {**call, "id": "c2"}],
            },
            {
                "role": "tool",
                "content": "a and b",
                "tool_call_ids": ["c1", "c2"],
                "message_type": "observation",
            },
        ],
        "info": {"exit_status": "submitted"},
    }
    result = import_text(json.dumps(traj), name="run.traj")
    assert result.format == "swe-agent" and result.session == {"exit_status": "submitted"}
    assert [(m.type, m.content, m.tool_call_id) for m in result.messages] == [
        ("system_prompt", "You are an agent.", None),
        ("user_input", "fix it", None),
        ("tool_calls", "Open both.", None),
        ("tool_output", "a and b", "c1"),
        ("tool_output", "[the output of call c1 answers this call too]", "c2"),
    ]
    assert result.unpaired == []


def test_sharegpt_pairs_function_calls_with_observations_and_picks_a_conversation() -> None:
    first = {"conversations": [{"from": "human", "value": "hi"}, {"from": "gpt", "value": "hello"}]}
    second = {
        "system": "Use tools.",
        "tools": '[{"name": "weather"}]',
        "conversations": [
            {"from": "human", "value": "weather?"},
            {"from": "function_call", "value": '{"name": "weather", "arguments": {"city": "Oslo"}}'},
            {"from": "observation", "value": '{"temp": 3}'},
            {"from": "gpt", "value": "3 degrees."},
        ],
    }
    text = json.dumps([first, second])
    assert [m.content for m in import_text(text).messages] == ["hi", "hello"]
    result = import_text(text, conversation=1)
    assert result.format == "sharegpt" and result.conversations == 2
    assert [(m.id, m.type) for m in result.messages] == [
        ("system", "system_prompt"),
        ("sg-0", "user_input"),
        ("sg-1", "tool_calls"),
        ("sg-2", "tool_output"),
        ("sg-3", "final_answer"),
    ]
    assert result.messages[2].tool_calls[0]["function"] == {"name": "weather", "arguments": '{"city":"Oslo"}'}
    assert (
        result.messages[3].tool_call_id == "sg-call-1" and result.messages[3].meta("tool_name") == "weather"
    )
    assert result.session == {"tools": '[{"name": "weather"}]'} and result.unpaired == []


def test_sharegpt_in_glaives_and_hermes_spellings_pairs_its_calls_too() -> None:
    glaive = {"conversations": [
        {"from": "human", "value": "add John"},
        {"from": "function-call", "value": """{"name": "create_contact", "arguments": '{"name": "John"}'}"""},
        {"from": "function-response", "value": '{"status": "ok"}'},
        {"from": "gpt", "value": "Done."},
    ]}  # fmt: skip
    asked = '<tool_call>{"name": "price", "arguments": {"s": "AAPL"}}</tool_call>'
    hermes = {"conversations": [
        {"from": "human", "value": "AAPL?"},
        {"from": "gpt", "value": f"Checking.\n{asked}"},
        {"from": "tool", "value": "<tool_response>\n{\"price\": 189}\n</tool_response>"},
        {"from": "gpt", "value": "$189."},
    ]}  # fmt: skip
    for item, call, said in (
        (glaive, {"name": "create_contact", "arguments": '{"name": "John"}'}, ""),
        (hermes, {"name": "price", "arguments": '{"s":"AAPL"}'}, "Checking."),
    ):
        result = import_text(json.dumps([item]))
        assert result.format == "sharegpt" and result.problems == [] and result.unpaired == []
        assert [m.type for m in result.messages] == [
            "user_input",
            "tool_calls",
            "tool_output",
            "final_answer",
        ]
        assert result.messages[1].tool_calls[0]["function"] == call and result.messages[1].content == said
        assert result.messages[2].tool_call_id == "sg-call-1"


def test_a_sharegpt_turn_without_its_speaker_is_that_turns_problem() -> None:
    item = {"conversations": [{"from": "human", "value": "hi"}, {"value": "who said this?"},
                              {"from": "gpt", "value": "hello"}]}  # fmt: skip
    result = import_text(json.dumps([item]), name="d.json")
    assert [m.content for m in result.messages] == ["hi", "hello"]
    assert [str(p) for p in result.problems] == [
        "d.json:1: conversations[1]: expected {from, value} with a text value"
    ]


def test_langchain_dump_reads_as_chat_messages() -> None:
    dump = [
        {"type": "system", "data": {"content": "Be brief."}},
        {"type": "human", "data": {"content": "2+2?", "id": "h1"}},
        {
            "type": "ai",
            "data": {
                "content": "",
                "id": "a1",
                "tool_calls": [{"name": "calc", "args": {"x": "2+2"}, "id": "t1"}],
            },
        },
        {"type": "tool", "data": {"content": "4", "tool_call_id": "t1", "name": "calc"}},
        {"type": "ai", "data": {"content": "4.", "id": "a2"}},
    ]
    result = import_text(json.dumps({"messages": dump}))
    assert result.format == "langchain"
    assert [(m.id, m.type, m.content) for m in result.messages] == [
        ("oa-0", "system_prompt", "Be brief."),
        ("h1", "user_input", "2+2?"),
        ("a1", "tool_calls", ""),
        ("oa-3", "tool_output", "4"),
        ("a2", "final_answer", "4."),
    ]
    assert result.messages[2].tool_calls[0]["function"] == {"name": "calc", "arguments": '{"x":"2+2"}'}
    assert result.messages[3].meta("tool_name") == "calc" and result.unpaired == []


def test_openhands_groups_a_response_s_parallel_calls_and_pairs_observations() -> None:
    calls = [
        {"id": "t1", "type": "function", "function": {"name": "run", "arguments": '{"command": "ls"}'}},
        {"id": "t2", "type": "function", "function": {"name": "run", "arguments": '{"command": "pwd"}'}},
    ]
    response = {"id": "r1", "model": "m", "choices": [{"message": {"content": "Both.", "tool_calls": calls}}]}

    def meta(call_id: str) -> dict:
        return {"tool_call_id": call_id, "function_name": "run", "model_response": response}

    events = [
        {"id": 1, "source": "user", "action": "message", "args": {"content": "look"}},
        {
            "id": 2,
            "source": "agent",
            "action": "run",
            "args": {"command": "ls"},
            "tool_call_metadata": meta("t1"),
        },
        {
            "id": 3,
            "source": "agent",
            "action": "run",
            "args": {"command": "pwd"},
            "tool_call_metadata": meta("t2"),
        },
        {
            "id": 4,
            "source": "agent",
            "observation": "run",
            "content": "a.py",
            "tool_call_metadata": meta("t1"),
        },
        {"id": 5, "source": "agent", "observation": "run", "content": "/w", "tool_call_metadata": meta("t2")},
        {"id": 6, "source": "environment", "observation": "agent_state_changed", "content": ""},
        {"id": 7, "source": "agent", "action": "finish", "message": "Done.", "args": {}},
    ]
    result = import_text(json.dumps(events))
    assert result.format == "openhands" and result.session == {"model": "m"}
    assert [(m.id, m.type, m.content) for m in result.messages] == [
        ("oh-1", "user_input", "look"),
        ("oh-2", "tool_calls", "Both."),
        ("oh-4-out", "tool_output", "a.py"),
        ("oh-5-out", "tool_output", "/w"),
        ("oh-7", "final_answer", "Done."),
    ]
    assert [c["id"] for c in result.messages[1].tool_calls] == ["t1", "t2"]
    assert result.skipped == {"observation agent_state_changed without a call": 1}
    assert result.unpaired == []


def test_openhands_takes_each_model_responses_usage_once_with_anthropics_cache_writes() -> None:
    usage = {"prompt_tokens": 4646, "completion_tokens": 177, "cache_creation_input_tokens": 1158,
             "prompt_tokens_details": {"cached_tokens": 3482}}  # fmt: skip
    call = {"id": "t1", "type": "function", "function": {"name": "run", "arguments": "{}"}}
    response = {"id": "r1", "model": "claude-x", "usage": usage,
                "choices": [{"message": {"content": "", "tool_calls": [call]}}]}  # fmt: skip
    meta = {"tool_call_id": "t1", "function_name": "run", "model_response": response}
    events = [
        {"id": 1, "source": "user", "action": "message", "args": {"content": "go"}},
        {"id": 2, "source": "agent", "action": "run", "args": {}, "tool_call_metadata": meta},
        {"id": 3, "source": "agent", "observation": "run", "content": "ok", "tool_call_metadata": meta},
    ]
    result = import_text(json.dumps(events))
    recorded = [m.meta("usage") for m in result.messages if m.meta("usage")]
    assert [(u["promptTokens"], u["cacheReadTokens"], u["cacheWriteTokens"], u["outputTokens"])
            for u in recorded] == [(4646, 3482, 1158, 177)]  # fmt: skip


def test_an_openhands_evaluation_output_is_a_conversation_a_record_and_opendevins_pairs_read_too() -> None:
    # output.jsonl: one {instance_id, instruction, history} record a line; OpenDevin (2024) wrote history as
    # [action, observation] pairs without source, id or cause
    events = [
        {"id": 1, "source": "user", "action": "message", "args": {"content": "fix it"}},
        {"id": 2, "source": "agent", "action": "run", "args": {"command": "ls", "thought": "look"}},
        {"id": 3, "source": "environment", "observation": "run", "content": "a.py", "cause": 2},
    ]
    pairs = [
        [{"action": "run", "args": {"command": "ls", "thought": "look"}, "message": "Running command: ls"},
         {"observation": "run", "content": "a.py", "extras": {"exit_code": 0}, "message": "Command output"}],
        [{"action": "finish", "args": {"outputs": {}, "thought": ""}, "message": "All done."},
         {"observation": "null", "content": "", "extras": {}, "message": "No observation"}],
    ]  # fmt: skip
    records = [
        {"instance_id": "a__a-1", "instruction": "fix it", "history": events, "metrics": {}},
        {"instance_id": "b__b-2", "instruction": "Solve issue 2.", "history": pairs},
    ]
    text = "\n".join(json.dumps(r) for r in records)
    first = import_text(text, name="output.jsonl")
    assert (first.format, first.conversations, first.session) == ("openhands", 2, {"instanceId": "a__a-1"})
    assert [(m.type, m.content) for m in first.messages] == [
        ("user_input", "fix it"), ("tool_calls", "look"), ("tool_output", "a.py")
    ]  # fmt: skip
    second = import_text(text, name="output.jsonl", conversation=1)
    assert [(m.type, m.content) for m in second.messages] == [
        ("user_input", "Solve issue 2."),  # the task: the pairs hold no user message
        ("tool_calls", "look"),
        ("tool_output", "a.py"),
        ("final_answer", "All done."),
    ]
    assert second.unpaired == [] and second.skipped == {"observation null without a call": 1}


def test_letta_agent_file_even_as_a_json_string() -> None:
    wrapped = json.dumps({"type": "user_message", "message": "hi Sam", "time": "now"})
    call = {
        "id": "c1",
        "type": "function",
        "function": {"name": "send_message", "arguments": '{"message":"hi"}'},
    }
    agent = {
        "name": "sam",
        "system": "You are Sam.",
        "llm_config": {"model": "gpt-4o-mini"},
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": wrapped}], "id": "message-1"},
            {"role": "assistant", "content": [], "tool_calls": [call], "id": "message-2"},
            {"role": "tool", "content": [{"type": "text", "text": '{"status": "OK"}'}], "tool_call_id": "c1"},
        ],
    }
    result = import_text(json.dumps(json.dumps({"agents": [agent]})))  # a JSON string holding the JSON
    assert result.format == "letta" and result.session == {"agent": "sam", "model": "gpt-4o-mini"}
    assert [(m.type, m.content) for m in result.messages] == [
        ("system_prompt", "You are Sam."),
        ("user_input", "hi Sam"),
        ("tool_calls", ""),
        ("tool_output", '{"status": "OK"}'),
    ]
    assert result.unpaired == []


def test_an_older_letta_file_is_read_by_time_with_its_latest_system_message() -> None:
    # Letta 0.6 (no in_context_message_ids) stores its rows in no set order, and keeps each version of the
    # system message it rewrote as memory changed
    call = {"id": "c1", "type": "function", "function": {"name": "send_message", "arguments": "{}"}}

    def row(role: str, at: str, text: str, **more: object) -> dict:
        return {"role": role, "created_at": f"2025-03-24T03:0{at}+00:00", "text": text, **more}

    agent = {
        "name": "sam",
        "llm_config": {"model": "gpt-4o-mini"},
        "messages": [
            row("tool", "3:00", '{"status": "OK"}', tool_call_id="c1", id="m4"),
            row("system", "4:00", "You are Sam (v2).", id="m5"),
            row("user", "1:00", "hi", id="m2"),
            row("system", "0:00", "You are Sam.", id="m1"),
            row("assistant", "2:00", "greeting", tool_calls=[call], id="m3"),
        ],
    }
    result = import_text(json.dumps(agent))
    assert [(m.id, m.type, m.content) for m in result.messages] == [
        ("m5", "system_prompt", "You are Sam (v2)."),
        ("m2", "user_input", "hi"),
        ("m3", "tool_calls", "greeting"),
        ("m4", "tool_output", '{"status": "OK"}'),
    ]
    assert result.unpaired == []
    assert result.skipped_lines == {
        "an earlier version of the system message (Letta rewrites it as memory changes)": [4]
    }
    newer = {**agent, "in_context_message_ids": ["m1"]}  # a newer file's array is its order
    assert [m.id for m in import_text(json.dumps(newer)).messages][:2] == ["m4", "m5"]


def test_letta_calls_held_for_approval_and_their_tool_returns_are_calls_and_results() -> None:
    def call(n: int) -> dict:
        return {"id": f"c{n}", "type": "function", "function": {"name": "Bash", "arguments": "{}"}}

    def returned(n: int, said: str) -> dict:
        return {"tool_call_id": f"c{n}", "status": "success", "func_response": said}

    agent = {
        "name": "coder",
        "llm_config": {"model": "claude"},
        "in_context_message_ids": [],
        "messages": [
            {"role": "system", "content": [{"type": "text", "text": "You code."}]},
            {"role": "user", "content": [{"type": "text", "text": "run both"}]},
            {"role": "approval", "content": [], "tool_calls": [call(1), call(2)]},
            {"role": "approval", "approvals": [{"tool_call_id": "c1", "approve": True}], "tool_calls": None},
            {"role": "tool", "content": [], "tool_call_id": "c1",
             "tool_returns": [returned(1, "one"), returned(2, "denied: stop")]},
        ],
    }  # fmt: skip
    result = import_text(json.dumps({"agents": [agent]}))
    assert result.format == "letta" and result.unpaired == []
    assert [(m.type, m.content) for m in result.messages] == [
        ("system_prompt", "You code."),
        ("user_input", "run both"),
        ("tool_calls", ""),
        ("tool_output", "one"),
        ("tool_output", "denied: stop"),
    ]
    assert result.skipped_lines == {"approval decision (the tool returns after it carry its results)": [4]}


def test_a_letta_0_6_tool_message_with_status_only_returns_is_its_own_result() -> None:
    call = {"id": "c1", "type": "function", "function": {"name": "send_email", "arguments": "{}"}}
    agent = {
        "name": "outreach",
        "llm_config": {"model": "gpt-4o"},
        "in_context_message_ids": [],
        "messages": [
            {"role": "system", "text": "You reach out."},
            {"role": "user", "text": "email Charles"},
            {"role": "assistant", "text": "Sending.", "tool_calls": [call]},
            {"role": "tool", "text": '{"status": "OK", "message": "sent"}', "tool_call_id": "c1",
             "tool_returns": [{"status": "success", "stdout": [], "stderr": []}]},
        ],
    }  # fmt: skip
    result = import_text(json.dumps({"agents": [agent]}))
    assert result.problems == [] and result.unpaired == []
    output = result.messages[-1]
    assert (output.type, output.tool_call_id, output.content) == (
        "tool_output", "c1", '{"status": "OK", "message": "sent"}'
    )


def test_letta_login_and_heartbeat_turns_are_marked_automated_and_never_the_title() -> None:
    login = json.dumps({"type": "login", "last_login": "Never (first login)", "time": "2024-11-15"})
    beat = json.dumps({"type": "heartbeat", "reason": "[This is an automated system message]", "time": "x"})
    said = json.dumps({"type": "user_message", "message": "hi, I am Sarah", "time": "x"})
    agent = {
        "name": "memgpt",
        "llm_config": {"model": "gpt-4"},
        "in_context_message_ids": [],
        "messages": [{"role": "system", "text": "You are MemGPT."}]
        + [{"role": "user", "text": text} for text in (login, said, beat)],
    }
    result = import_text(json.dumps({"agents": [agent]}))
    assert [(m.content, m.meta("generated")) for m in result.messages[1:]] == [
        (login, "login"),
        ("hi, I am Sarah", None),
        (beat, "heartbeat"),
    ]
    assert result.title == "hi, I am Sarah"


def test_aider_sessions_default_to_the_last_and_skip_console_and_commands() -> None:
    text = "\n".join(
        [
            "# aider chat started at 2024-08-05 19:33:02",
            "> Model: gpt-4o-mini with whole edit format  ",
            "#### first question  ",
            "first answer",
            "# aider chat started at 2024-08-05 20:00:00",
            "> Models: claude-3-5-sonnet with diff edit format  ",
            "#### fix the bug  ",
            "#### in utils.py  ",
            "",
            "Here is the fix:",
            "```python",
            "x = 1",
            "```",
            "> Applied edit to utils.py  ",
            "#### /diff  ",
        ]
    )
    result = import_text(text, name="chat.md")
    assert result.format == "aider" and result.conversations == 2
    assert [(m.id, m.type, m.content) for m in result.messages] == [
        ("ad-7", "user_input", "fix the bug\nin utils.py"),
        ("ad-9", "final_answer", "Here is the fix:\n```python\nx = 1\n```"),
    ]
    assert result.skipped_lines == {
        "aider console output (not sent to the model)": [6, 14],
        "aider command (not sent to the model)": [15],
    }
    assert result.session == {"model": "claude-3-5-sonnet", "startedAt": "2024-08-05 20:00:00"}
    assert [m.content for m in import_text(text, conversation=0).messages] == [
        "first question",
        "first answer",
    ]


def test_aider_token_reports_are_the_usage_of_the_reply_before_them() -> None:
    # aider 0.86: one `> Tokens:` line after each call (`show_usage_report`), counts as `format_tokens`
    # prints them; an empty Enter is written `#### <blank>` and sends nothing
    lines = ["# aider chat started at 2026-06-09 11:48:00", "> Model: openrouter/openai/gpt-oss-120b  ",
             "#### make a button  ", "", "Here it is.", "",
             "> Tokens: 617 sent, 648 received. Cost: $0.00063 message, $0.00063 session.  ",
             "#### <blank>  ", "", "#### now blue  ", "", "Done, blue.", "",
             "> Tokens: 12k sent, 2.5k cache write, 8.1k cache hit, 1.1k received. Cost: $0.01 message.  ",
             "#### thanks  "]  # fmt: skip
    result = import_text("\n".join(lines), name="chat.md")
    assert [(m.id, m.type) for m in result.messages] == [
        ("ad-3", "user_input"), ("ad-4", "final_answer"), ("ad-10", "user_input"), ("ad-11", "final_answer"),
        ("ad-15", "user_input"),
    ]  # fmt: skip
    first, second = (m.metadata["usage"] for m in result.messages if m.metadata and "usage" in m.metadata)
    assert (first["promptTokens"], first["outputTokens"], first["raw"]["rounded"]) == (617, 648, False)
    counts = ("promptTokens", "cacheWriteTokens", "cacheReadTokens", "outputTokens")
    assert [second[k] for k in counts] == [12000, 2500, 8100, 1100] and second["raw"]["rounded"]
    assert first["model"] == "openrouter/openai/gpt-oss-120b"
    assert result.skipped_lines["aider: an empty input (not sent to the model)"] == [8]


def test_an_aider_reply_may_hold_a_heading_that_looks_like_a_user_line() -> None:
    # aider ends each user line with a hard break (two spaces); the model's `#### ` heading has none
    lines = ["# aider chat started at 2025-05-01 10:00:00", "#### fix it  ", "", "Install it:", "",
             "#### With npm:", "npm i x", "", "#### thanks  ", ""]  # fmt: skip
    result = import_text("\n".join(lines), name="chat.md")
    assert [(m.type, m.content) for m in result.messages] == [
        ("user_input", "fix it"),
        ("final_answer", "Install it:\n\n#### With npm:\nnpm i x"),
        ("user_input", "thanks"),
    ]
    stripped = import_text("\n".join(line.rstrip() for line in lines), name="chat.md")  # no hard breaks
    assert [m.type for m in stripped.messages] == ["user_input", "final_answer", "user_input", "final_answer",
                                                   "user_input"]  # fmt: skip


def test_reasoning_opening_a_reply_is_a_thought_in_aider_and_sharegpt() -> None:
    tag = "thinking-content-7bbeb8e1441453ad999a0bbba8a46d4b"  # aider's wrapper of a reasoning model's output
    lines = ["# aider chat started at 2026-04-01 10:00:00", "#### hi  ", "", f"<{tag}>",
             "The user greets me.", f"</{tag}>", "", "Hello!", "", "#### bye  ", "", "Bye."]  # fmt: skip
    aider = import_text("\n".join(lines), name="chat.md")
    assert [(m.type, m.content) for m in aider.messages] == [
        ("user_input", "hi"),
        ("thought", "The user greets me."),
        ("final_answer", "Hello!"),
        ("user_input", "bye"),
        ("final_answer", "Bye."),
    ]
    item = {"conversations": [
        {"from": "human", "value": "Say hi"},
        {"from": "gpt", "value": "<think>\nThey want a greeting.\n</think>\nHi!"},
        {"from": "human", "value": "Why <think>?"},
        {"from": "gpt", "value": "It is a tag: <think> opens reasoning."},
    ]}  # fmt: skip
    sharegpt = import_text(json.dumps([item]))
    assert [(m.type, m.content) for m in sharegpt.messages] == [
        ("user_input", "Say hi"),
        ("thought", "They want a greeting."),
        ("final_answer", "Hi!"),
        ("user_input", "Why <think>?"),
        ("final_answer", "It is a tag: <think> opens reasoning."),
    ]


def test_aider_opens_the_last_session_that_holds_a_turn() -> None:
    lines = ["# aider chat started at 2024-08-05 19:33:02", "#### first question  ", "", "first answer", "",
             "# aider chat started at 2024-08-06 09:00:00", "> Aider v0.49.1", "> Model: gpt-4o  ",
             "#### /run make lint  "]  # fmt: skip
    result = import_text("\n".join(lines), name="chat.md")
    assert result.conversations == 2 and [m.content for m in result.messages] == [
        "first question",
        "first answer",
    ]


def test_an_unknown_file_names_the_supported_formats(tmp_path: Path) -> None:
    path = tmp_path / "notes.json"
    path.write_text('{"hello": "world"}', encoding="utf-8")
    with pytest.raises(UnknownFormatError) as caught:
        import_file(path)
    assert str(caught.value) == f"{path}: unrecognised transcript format; supported: " + ", ".join(
        format_names()
    )


def test_a_plugin_registered_by_entry_point_imports_its_format(monkeypatch: pytest.MonkeyPatch) -> None:
    def read(text: str, name: str, conversation: int | None) -> ImportResult:
        words = text.split(":", 1)[1].strip()
        return ImportResult([AiMessage("p1", "user", "user_input", words)], "shout")

    plugin = Importer("shout", "SHOUT: lines", lambda sniff: sniff.text.startswith("SHOUT:"), read)
    point = EntryPoint("shout", "tests.engine.test_import_formats:PLUGIN", ENTRY_POINT_GROUP)
    monkeypatch.setitem(globals(), "PLUGIN", plugin)
    monkeypatch.setattr(registry, "entry_points", lambda group: [point] if group == ENTRY_POINT_GROUP else [])
    registry.plugins.cache_clear()
    try:
        assert format_names()[-3:] == ["shout", "anthropic", "openai"]
        assert [m.content for m in import_text("SHOUT: hello").messages] == ["hello"]
    finally:
        registry.plugins.cache_clear()


def claude_line(uuid: str, parent: str | None, kind: str, content, **extra) -> str:
    message = {"role": kind, "content": content}
    if kind == "assistant":
        message["id"] = extra.pop("message_id", f"msg-{uuid}")
    return json.dumps({"type": kind, "uuid": uuid, "parentUuid": parent, "message": message, **extra})


def test_claude_code_rewind_keeps_the_live_branch_and_counts_the_abandoned_one() -> None:
    use = [{"type": "tool_use", "id": "t1", "name": "Read", "input": {}}]
    use2 = [{"type": "tool_use", "id": "t2", "name": "Read", "input": {}}]
    result1 = [{"type": "tool_result", "tool_use_id": "t1", "content": "a"}]
    result2 = [{"type": "tool_result", "tool_use_id": "t2", "content": "b"}]
    text = "\n".join(
        [
            claude_line("u1", None, "user", "read both files"),
            claude_line("a1", "u1", "assistant", use, message_id="m1"),
            claude_line("a2", "a1", "assistant", use2, message_id="m1"),  # a parallel call, same message
            claude_line("r1", "a1", "user", result1),  # parallel results share a parent: not a branch
            claude_line("r2", "a2", "user", result2),
            claude_line("a3", "r2", "assistant", [{"type": "text", "text": "old answer"}]),
            claude_line("u2", "a3", "user", "make it shorter"),
            claude_line("a4", "u2", "assistant", [{"type": "text", "text": "short"}]),
            claude_line("u3", "a3", "user", "make it longer"),  # rewound to a3: u2 and a4 are abandoned
            claude_line("a5", "u3", "assistant", [{"type": "text", "text": "long"}]),
        ]
    )
    result = import_text(text)
    assert [m.id for m in result.messages] == ["u1", "a1", "r1", "r2", "a3", "u3", "a5"]
    assert result.skipped_lines == {"abandoned branch (rewound)": [7, 8]}
    assert [c["id"] for c in result.messages[1].tool_calls] == ["t1", "t2"]


def test_claude_code_sidechains_open_on_their_own() -> None:
    lines = [
        claude_line("u1", None, "user", "research it"),
        claude_line("s1", None, "user", "sub-agent prompt", isSidechain=True),
        claude_line("s2", "s1", "assistant", [{"type": "text", "text": "found it"}], isSidechain=True),
        claude_line("a1", "u1", "assistant", [{"type": "text", "text": "done"}]),
    ]
    main = import_text("\n".join(lines))
    assert [m.id for m in main.messages] == ["u1", "a1"] and main.conversations == 2
    assert main.skipped_lines == {"sidechain (a sub-agent's own conversation)": [2, 3]}
    side = import_text("\n".join(lines), conversation=1)
    assert [(m.id, m.type) for m in side.messages] == [("s1", "user_input"), ("s2", "final_answer")]
    assert side.skipped_lines == {"not in the chosen sidechain": [1, 4]}
    subagent_file = import_text("\n".join(lines[1:3]))  # <session>/subagents/agent-*.jsonl
    assert [m.id for m in subagent_file.messages] == ["s1", "s2"] and subagent_file.skipped_lines == {}


@needs_real
def test_claude_code_variants_from_real_files() -> None:
    variants = REAL / "claude-code-variants"
    subagent = import_file(variants / "subagent-agent.jsonl")
    assert [m.type for m in subagent.messages] == ["user_input", "final_answer"]
    compacted = import_file(variants / "compact-boundary.jsonl")
    summary = next(m for m in compacted.messages if m.type == "history_summary")
    assert summary.content.startswith("Previous conversation summary: Working on authentication module.")
    assert summary.meta("source")["compactMetadata"] == {"trigger": "auto", "preTokens": 155116}
    assert len(summary.meta("replacedMessageIds")) == 10  # every message before it
    built = build_context(compacted.messages, POLICY)
    assert built.messages[0].id == summary.id and "cu1-comp" not in {m.id for m in built.messages}
    sidechain = import_file(variants / "sidechain_integrated.jsonl", conversation=1)
    assert [m.type for m in sidechain.messages] == ["final_answer", "tool_calls", "tool_output"]


def test_a_name_set_answers_for_any_json_value():
    """Malformed records put lists and objects where importers look up names (a record's type, a role)."""
    from engine.importers._common import Names

    kinds = Names({"user", "assistant"})
    assert "user" in kinds and "tool" not in kinds
    assert {"kind": "user"} not in kinds and ["user"] not in kinds and None not in kinds


def test_a_message_list_inside_the_documents_array_is_a_conversation() -> None:
    # AutoCodeRover's agent_proxy files: [[{role, content}, ...]]
    chat = [{"role": "system", "content": "Be exact."}, {"role": "user", "content": "why?"},
            {"role": "assistant", "content": "Because."}]  # fmt: skip
    result = import_text(json.dumps([chat]), name="agent_proxy_1.json")
    assert result.format == "openai" and result.problems == []
    assert [(m.type, m.content) for m in result.messages] == [
        ("system_prompt", "Be exact."), ("user_input", "why?"), ("final_answer", "Because.")
    ]  # fmt: skip


def test_a_name_map_answers_for_any_json_value():
    from engine.importers._common import NameMap

    roles = NameMap({"human": "user"})
    assert "human" in roles and roles.get("human") == "user" and roles.get("ai", "?") == "?"
    assert ["human"] not in roles and roles.get({"k": 1}) is None


@pytest.mark.parametrize(
    ("fmt", "record", "kept"),
    [
        ("openai", {"role": ["exit"], "content": "x"}, ["hi"]),
        ("sharegpt", {"conversations": [{"from": ["gpt"], "value": "x"}, {"from": "human", "value": "hi"}]},
         ["x", "hi"]),
        ("kimi-context", {"role": ["_usage"], "content": "x"}, ["hi"]),
        ("langchain", {"type": ["ai"], "data": {"content": "x"}}, None),
        ("openai-responses", {"type": ["local_shell_call"], "call_id": "c"}, None),
    ],
)  # fmt: skip
def test_a_list_where_a_role_or_type_belongs_is_no_internal_error(fmt: str, record: dict, kept) -> None:
    """Each importer looks such names up in a `NameMap`: the record is its own problem or left out, and
    the rest comes in (`None`: nothing else to read, said as such)."""
    lines = [record, {"role": "user", "content": "hi"}] if fmt in ("openai", "kimi-context") else [record]
    text = "\n".join(json.dumps(x) for x in lines)
    if kept is None:
        with pytest.raises(EmptyImportError):
            import_text(text, fmt, name="m.jsonl")
        return
    result = import_text(text, fmt, name="m.jsonl")
    assert [m.content for m in result.messages] == kept


@pytest.mark.parametrize("fmt, key", [("atif", "'steps'"), ("opencode", "'opencodeStorage'")])
def test_a_format_named_for_text_of_another_shape_is_refused_by_name(fmt, key) -> None:
    with pytest.raises(ValueError) as refused:
        import_text('{"info": {"id": "ses_1"}, "messages": []}', fmt, name="export.json")
    assert str(refused.value) == (
        f"export.json: not in the {fmt} format (read as {fmt}, it stopped at KeyError: {key})"
    )


def test_codex_window_compaction_ending_on_the_users_prompt_keeps_it() -> None:
    # Codex 0.140-0.142 (a real 0.142.3 rollout): `message` empty, no compaction item, and the history's last
    # user message is the user's own prompt (echoed before, no summary prefix): it stays in the context
    prompt = {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "second"}]}
    compacted = {"message": "", "replacement_history": [prompt], "window_number": 1, "window_id": "w1"}
    lines = (user("first"), say("one"), user("second"), ("compacted", compacted), say("two"))
    result = import_text(rollout(*lines))
    summary = next(m for m in result.messages if m.type == "history_summary")
    assert summary.content == "[compaction: no summary in the transcript]"
    built = build_context(result.messages, define_context_policy({}))
    assert [m.content for m in built.messages if m.type == "user_input"] == ["second"]


def test_codex_desktop_session_meta_repeated_each_turn_is_not_a_message() -> None:
    # Codex Desktop writes session_meta (same id, same instructions) again after every prompt
    meta = ("session_meta", {"id": "r1", "instructions": "You are Codex."})
    result = import_text(rollout(meta, user("first"), say("one"), meta, user("second"), say("two")))
    assert [m.type for m in result.messages] == [
        "system_prompt", "user_input", "final_answer", "user_input", "final_answer",
    ]  # fmt: skip
    assert result.skipped_lines["session_meta repeating the session's instructions (not sent again)"] == [4]


@needs_real
def test_an_openhands_call_metadata_of_a_wrong_type_is_said_and_its_event_left_out() -> None:
    # metadata that is no object made the edit a call of an older stream under an id of ours (its result
    # then answered nothing), unsaid; a call id that is a list stopped the reader and refused the whole file
    source = (REAL / "openhands" / "basic.json").read_text(encoding="utf-8")
    for index, change, reason, kept in [
        (1, lambda meta: 7, "tool_call_metadata: must be an object, got a number",
         ["oh-0", "oh-4-out", "oh-5"]),
        (2, lambda meta: {**meta, "tool_call_id": ["x"]},
         "tool_call_metadata.tool_call_id: must be a call id (a string), got an array",
         ["oh-0", "oh-3", "oh-5"]),
    ]:  # fmt: skip
        events = json.loads(source)
        events[index]["tool_call_metadata"] = change(events[index]["tool_call_metadata"])
        result = import_text(json.dumps(events), name="basic.json")
        assert [str(p) for p in result.problems] == [f"basic.json:1: event {index}: {reason}; left out"]
        assert [m.id for m in result.messages] == kept
        assert result.unpaired == ["toolu_017nBp7UfiGqyrA7j77HgtFP"]  # the edit's call or its result, alone


def test_codex_instructions_of_a_wrong_type_are_said_and_the_session_meta_left_out() -> None:
    # read as no instructions, the rollout's system prompt was gone without a word
    data = Path(__file__).resolve().parents[1] / "data" / "real-sessions" / "codex"
    path = data / "rollout-2026-05-11T11-26-55-019e1625-789d-76c0-80ab-3724b5ddb799.jsonl"
    lines = path.read_text(encoding="utf-8").split("\n")
    clean = import_file(path)
    assert clean.messages[0].type == "system_prompt"
    for key, value, reason in [
        ("base_instructions", ["You are Codex"], "payload.base_instructions: must be text or an object with "
         "its text, got an array"),
        ("instructions", {"text": "You are Codex"}, "payload.instructions: must be text, got an object"),
    ]:  # fmt: skip
        meta = json.loads(lines[0])
        meta["payload"][key] = value
        result = import_text("\n".join([json.dumps(meta), *lines[1:]]), name="rollout.jsonl")
        assert [str(p) for p in result.problems] == [f"rollout.jsonl:1: {reason}; left out"]
        assert [m.id for m in result.messages] == [m.id for m in clean.messages[1:]]
