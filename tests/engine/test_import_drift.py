"""Drift: types an importer does not know are carried as what they can be or left out, and named; newer
versions of known formats open with what they can read. Fixtures are written from each tool's own source
(no public transcript of these versions was found): Claude Code 2.1.8x attachment lines, Codex 0.146
response items (codex-rs `ResponseItem`), OpenHands V1 SDK events."""

from __future__ import annotations

import json

from engine.importers import import_text
from playground.app.sweep import plan_sweep, run_job
from playground.cli.main import main

TS = "2026-03-01T10:00:0{}.000Z"


def _lines(*entries: dict) -> str:
    return "".join(json.dumps(e) + "\n" for e in entries)


def _claude(kind: str, n: int, **fields) -> dict:
    return {
        "type": kind,
        "uuid": f"u{n}",
        "parentUuid": f"u{n - 1}" if n else None,
        "sessionId": "s1",
        "timestamp": TS.format(n),
        "version": "2.1.84",
        **fields,
    }


CLAUDE = _lines(
    _claude("user", 0, message={"role": "user", "content": "fix the failing test"}),
    _claude(
        "attachment",
        1,
        attachment={
            "type": "nested_memory",
            "path": "/repo/src/CLAUDE.md",
            "content": {"type": "Project", "content": "Use pytest -x."},
        },
    ),
    _claude(
        "assistant",
        2,
        message={
            "id": "m1",
            "role": "assistant",
            "model": "claude-opus-4-6",
            "content": [{"type": "tool_use", "id": "t1", "name": "Edit", "input": {"file_path": "a.py"}}],
        },
    ),
    _claude(
        "user",
        3,
        message={
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "edited"}],
        },
    ),
    _claude(
        "attachment", 4, attachment={"type": "hook_success", "hookEvent": "PostToolUse", "content": "ok"}
    ),
    _claude(
        "attachment",
        5,
        attachment={
            "type": "todo_reminder",
            "content": [
                {"content": "run the tests", "status": "in_progress", "activeForm": "Running the tests"}
            ],
        },
    ),
    _claude(
        "attachment",
        6,
        attachment={"type": "edited_text_file", "filename": "/repo/b.py", "snippet": "1\tx = 2"},
    ),
    _claude(
        "attachment",
        7,
        attachment={
            "type": "hook_additional_context",
            "hookName": "UserPromptSubmit",
            "content": ["branch: main"],
        },
    ),
    _claude("attachment", 8, attachment={"type": "brand_new_notice", "content": "a notice the model saw"}),
    _claude("attachment", 9, attachment={"type": "brand_new_marker", "enabled": True}),
    _claude("ai-summary-v2", 10, summary="x"),
    _claude(
        "assistant",
        11,
        message={
            "id": "m2",
            "role": "assistant",
            "model": "claude-opus-4-6",
            "content": [{"type": "text", "text": "Done."}],
        },
    ),
)


def test_claude_code_attachment_lines_are_context_the_model_received():
    result = import_text(CLAUDE)
    assert [(m.type, m.meta("generated"), m.meta("attachment")) for m in result.messages] == [
        ("user_input", None, None),
        ("user_input", "attachment", "nested_memory"),
        ("tool_calls", None, None),
        ("tool_output", None, None),
        ("user_input", "attachment", "todo_reminder"),
        ("user_input", "attachment", "edited_text_file"),
        ("user_input", "attachment", "hook_additional_context"),
        ("user_input", "attachment", "brand_new_notice"),
        ("final_answer", None, None),
    ]
    texts = [m.content for m in result.messages if m.meta("generated") == "attachment"]
    assert texts == [
        "/repo/src/CLAUDE.md\n\nUse pytest -x.",
        "[todo_reminder]\n- [in_progress] run the tests",
        "/repo/b.py\n\n1\tx = 2",
        "branch: main",
        "a notice the model saw",
    ]
    assert result.title == "fix the failing test"  # never taken from an attachment
    assert result.skipped_lines == {
        "attachment hook_success (not sent to the model)": [5],
        "unknown attachment type 'brand_new_marker'": [10],
        "unknown line type 'ai-summary-v2'": [11],
    }
    assert result.report()["unknownTypes"] == [
        {
            "type": "attachment type 'brand_new_notice'",
            "count": 1,
            "firstLines": [9],
            "carriedAs": "user_input",
        },
        {"type": "attachment type 'brand_new_marker'", "count": 1, "firstLines": [10], "carriedAs": None},
        {"type": "line type 'ai-summary-v2'", "count": 1, "firstLines": [11], "carriedAs": None},
    ]


def test_a_claude_code_attachment_with_its_rendered_text_is_that_text_and_one_without_sent_nothing():
    # Claude Code 2.1.23x+ writes `rendered`: the <system-reminder> text it sent for the attachment
    reminder = "<system-reminder>\nThe user hasn't heard from you in a while.\n</system-reminder>"
    text = _lines(
        _claude("user", 0, message={"role": "user", "content": "go on"}),
        _claude("attachment", 1, attachment={"type": "silent_turn"}, rendered=[{"content": reminder}]),
        _claude("attachment", 2, attachment={"type": "todo_reminder", "content": [{"content": "x"}]}),
        _claude("attachment", 3, attachment={"type": "date_change"}, rendered=[]),
        _claude("assistant", 4, message={"id": "m1", "role": "assistant", "model": "claude-opus-4-6",
                                         "content": [{"type": "text", "text": "Still on it."}]}),
    )  # fmt: skip
    result = import_text(text)
    assert [(m.type, m.content) for m in result.messages] == [
        ("user_input", "go on"),
        ("user_input", reminder),
        ("final_answer", "Still on it."),
    ]
    assert result.skipped_lines == {
        "attachment todo_reminder (not sent to the model)": [3],
        "attachment date_change (not sent to the model)": [4],
    }
    assert result.unknown == {}


def _codex(kind: str, payload: dict, n: int) -> dict:
    return {"timestamp": f"2026-06-01T10:00:{n:02d}.000Z", "type": kind, "payload": payload}


def _item(n: int, **payload) -> dict:
    return _codex("response_item", payload, n)


def _text(role: str, text: str) -> list[dict]:
    return [{"type": "output_text" if role == "assistant" else "input_text", "text": text}]


CODEX = _lines(
    _codex(
        "session_meta",
        {"id": "r1", "cli_version": "0.146.0", "base_instructions": {"text": "You are Codex."}},
        1,
    ),
    _item(
        2,
        type="message",
        role="developer",
        content=_text("developer", "<permissions>workspace-write</permissions>"),
    ),
    _item(3, type="message", role="user", content=_text("user", "find the calendar tool and draw a logo")),
    _item(4, type="tool_search_call", call_id="ts1", execution="client", arguments={"query": "calendar"}),
    _item(
        5,
        type="tool_search_output",
        call_id="ts1",
        execution="client",
        status="completed",
        tools=[{"name": "calendar_create"}],
    ),
    _item(
        6,
        type="message",
        role="developer",
        content=_text("developer", "<collaboration_mode>plan</collaboration_mode>"),
    ),
    _item(
        7,
        type="image_generation_call",
        id="ig1",
        status="completed",
        revised_prompt="a logo",
        result="QUJD" * 10,
    ),
    _item(8, type="agent_message", content=[{"type": "output_text", "text": "Here is the logo."}]),
    _item(9, type="ghost_snapshot", ghost_commit={"id": "abc"}),
    _item(10, type="future_context", role="developer", content=_text("developer", "a newer context item")),
    _item(11, type="future_marker", flag=True),
    _codex("turn_summary", {"text": "a line type of a newer Codex"}, 12),
)


def test_codex_0146_items_and_mid_history_developer_messages_are_imported():
    result = import_text(CODEX)
    assert result.format == "codex"
    assert [(m.role, m.type, m.meta("generated")) for m in result.messages] == [
        ("system", "system_prompt", None),  # base_instructions
        ("system", "system_prompt", None),  # the developer message before the first user message
        ("user", "user_input", None),
        ("assistant", "tool_calls", None),
        ("tool", "tool_output", None),
        ("user", "user_input", "developer"),  # mid-history: kept by linnkit's working memory, sent as user
        ("assistant", "tool_calls", None),
        ("tool", "tool_output", None),
        ("user", "user_input", "future_context"),
    ]
    search, image = (m for m in result.messages if m.type == "tool_calls")
    assert search.tool_calls == [
        {
            "id": "ts1",
            "type": "function",
            "sourceType": "tool_search_call",
            "function": {"name": "tool_search", "arguments": '{"query":"calendar"}'},
        }
    ]
    assert result.messages[4].content == '[{"name":"calendar_create"}]'
    assert image.content == "Here is the logo."  # the agent_message, text of the same turn
    assert image.tool_calls[0]["function"]["name"] == "image_generation"
    assert result.messages[7].content == "[image generated by the provider] [image: unknown type, 30 bytes]"
    assert result.unpaired == []
    assert result.skipped_lines["item ghost_snapshot (Codex bookkeeping)"] == [9]
    assert result.unknown == {
        "item type 'future_context'": ("user_input", [10]),
        "item type 'future_marker'": (None, [11]),
        "line type 'turn_summary'": (None, [12]),
    }


OPENHANDS_V1 = [
    {
        "kind": "SystemPromptEvent",
        "id": "e0",
        "source": "agent",
        "timestamp": "2026-01-01T10:00:00",
        "system_prompt": {"type": "text", "text": "You are OpenHands."},
        "tools": [],
    },
    {
        "kind": "MessageEvent",
        "id": "e1",
        "source": "user",
        "timestamp": "2026-01-01T10:00:01",
        "llm_message": {"role": "user", "content": [{"type": "text", "text": "count the files"}]},
    },
    {
        "kind": "ActionEvent",
        "id": "e2",
        "source": "agent",
        "timestamp": "2026-01-01T10:00:02",
        "thought": [{"type": "text", "text": "I will list them."}],
        "tool_name": "terminal",
        "tool_call_id": "c1",
        "tool_call": {
            "id": "c1",
            "name": "terminal",
            "arguments": '{"command": "ls | wc -l"}',
            "origin": "completion",
        },
        "llm_response_id": "r1",
        "action": {"kind": "TerminalAction", "command": "ls | wc -l"},
    },
    {
        "kind": "ActionEvent",
        "id": "e3",
        "source": "agent",
        "timestamp": "2026-01-01T10:00:02",
        "thought": [],
        "tool_name": "terminal",
        "tool_call_id": "c2",
        "tool_call": {
            "id": "c2",
            "name": "terminal",
            "arguments": '{"command": "pwd"}',
            "origin": "completion",
        },
        "llm_response_id": "r1",
        "action": {"kind": "TerminalAction", "command": "pwd"},
    },
    {
        "kind": "ObservationEvent",
        "id": "e4",
        "source": "environment",
        "timestamp": "2026-01-01T10:00:03",
        "tool_name": "terminal",
        "tool_call_id": "c1",
        "action_id": "e2",
        "observation": {"kind": "TerminalObservation", "content": [{"type": "text", "text": "7"}]},
    },
    {
        "kind": "ObservationEvent",
        "id": "e5",
        "source": "environment",
        "timestamp": "2026-01-01T10:00:03",
        "tool_name": "terminal",
        "tool_call_id": "c2",
        "action_id": "e3",
        "observation": {"kind": "TerminalObservation", "content": [{"type": "text", "text": "/work"}]},
    },
    {"kind": "ConversationStateUpdateEvent", "id": "e6", "source": "environment", "key": "execution_status"},
    {
        "kind": "MessageEvent",
        "id": "e7",
        "source": "agent",
        "timestamp": "2026-01-01T10:00:04",
        "llm_message": {"role": "assistant", "content": [{"type": "text", "text": "7 files in /work."}]},
    },
]


def test_openhands_v1_sdk_events_open_without_a_crash():
    result = import_text(_lines(*OPENHANDS_V1), "openhands")
    assert [(m.id, m.type) for m in result.messages] == [
        ("oh-e0", "system_prompt"),
        ("oh-e1", "user_input"),
        ("oh-e2", "tool_calls"),  # the parallel call c2 of the same response joins it
        ("oh-e4-out", "tool_output"),
        ("oh-e5-out", "tool_output"),
        ("oh-e7", "final_answer"),
    ]
    assert [c["id"] for c in result.messages[2].tool_calls] == ["c1", "c2"]
    assert result.messages[2].content == "I will list them."
    assert (result.messages[3].content, result.unpaired) == ("7", [])
    assert result.skipped_lines == {"V1 event ConversationStateUpdateEvent (not read)": [7]}


def test_import_prints_one_line_per_unknown_type(tmp_path, capsys):
    source = tmp_path / "session.jsonl"
    source.write_text(CLAUDE, encoding="utf-8")
    assert main(["import", str(source)]) == 0
    out = capsys.readouterr().out
    assert "  unknown attachment type 'brand_new_notice': 1 (lines 9), carried as user_input\n" in out
    assert "  unknown attachment type 'brand_new_marker': 1 (lines 10), left out\n" in out
    assert "  unknown line type 'ai-summary-v2': 1 (lines 11), left out\n" in out
    assert "left out 1: unknown" not in out  # said once, on its own line


def test_an_unknown_final_role_no_longer_fails_the_command(tmp_path, capsys):
    source = tmp_path / "traj.json"
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "done"},
        {"role": "verdict", "content": "Submitted", "extra": {"exit_status": "Submitted"}},
    ]
    source.write_text(json.dumps({"messages": messages}), encoding="utf-8")
    assert main(["import", str(source)]) == 0
    assert "  unknown role 'verdict': 1 (lines 1), left out\n" in capsys.readouterr().out
    assert main(["validate", str(source)]) == 0


def test_every_command_that_reads_a_session_takes_from(tmp_path, capsys):
    source = tmp_path / "chat.json"
    # a thinking block makes it Anthropic's; a chat message list, OpenAI's too
    chat = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "text", "text": "hello"},
            ],
        },
    ]
    source.write_text(json.dumps(chat), encoding="utf-8")
    assert main(["import", str(source)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "detected format: anthropic; 3 messages\n  also claimed by openai (read it that way"
    )
    assert main(["validate", str(source), "--from", "openai"]) == 0
    assert (
        "messages by type: final_answer 1, user_input 1\n" in capsys.readouterr().out
    )  # no thought: OpenAI's
    for command in ("build", "replay"):
        assert main([command, str(source), "--from", "openai"]) == 0, command
    capsys.readouterr()
    assert main(["build", str(source), "--from", "codex"]) == 2
    err = capsys.readouterr().err
    assert err == (
        f"error: {source}: read as codex, no message came in; 1 problem(s), the first: {source}:1: expected "
        "{timestamp, type, payload} with an object payload; next format that claims it: anthropic "
        "(--from anthropic)\n"
    )


def test_a_newer_gemini_message_type_is_named_and_left_out():
    session = {
        "sessionId": "s1",
        "projectHash": "p",
        "startTime": "2026-01-01T10:00:00Z",
        "lastUpdated": "2026-01-01T10:01:00Z",
        "messages": [
            {"id": "m1", "timestamp": "2026-01-01T10:00:00Z", "type": "user", "content": "hi"},
            {"id": "m2", "timestamp": "2026-01-01T10:00:01Z", "type": "info", "content": "Switched model"},
            {"id": "m3", "timestamp": "2026-01-01T10:00:02Z", "type": "checkpoint", "content": "saved"},
            {"id": "m4", "timestamp": "2026-01-01T10:00:03Z", "type": "gemini", "content": "hello"},
        ],
    }
    result = import_text(json.dumps(session))
    assert [(m.id, m.type) for m in result.messages] == [("m1", "user_input"), ("m4", "final_answer")]
    assert result.unknown == {"message type 'checkpoint'": (None, [3])}
    assert result.skipped_lines["info notice (shown by the CLI, not sent to the model)"] == [2]


def test_an_unknown_sharegpt_speaker_is_carried_not_a_problem():
    data = [
        {
            "conversations": [
                {"from": "human", "value": "hi"},
                {"from": "memory", "value": "likes tea"},
                {"from": "gpt", "value": "Tea, then."},
            ]
        }
    ]
    result = import_text(json.dumps(data))
    assert [(m.role, m.type, m.meta("generated")) for m in result.messages] == [
        ("user", "user_input", None),
        ("user", "user_input", "memory"),
        ("assistant", "final_answer", None),
    ]
    assert (result.problems, result.unknown) == ([], {"speaker 'memory'": ("user_input", [1])})


def test_session_start_hook_output_is_context_the_model_received():
    answer = json.dumps(
        {"hookSpecificOutput": {"hookEventName": "SessionStart", "additionalContext": "on main"}}
    )
    start = {"type": "hook_success", "hookName": "SessionStart:clear", "stdout": answer}
    quiet = {"type": "hook_success", "hookName": "PreToolUse:Bash", "stdout": "ok"}
    file = {"filePath": "/repo/a.txt", "content": "alpha"}
    mention = {"type": "file", "filename": "/repo/a.txt", "content": {"type": "text", "file": file}}
    lines = _lines(
        _claude("attachment", 0, attachment=start),
        _claude("attachment", 1, attachment=quiet),
        _claude("user", 2, message={"role": "user", "content": "go"}),
        _claude("attachment", 3, attachment=mention),
    )
    result = import_text(lines)
    assert [(m.type, m.content) for m in result.messages] == [
        ("user_input", "on main"),
        ("user_input", "go"),
        ("user_input", "/repo/a.txt\n\nalpha"),
    ]
    assert result.skipped_lines == {"attachment hook_success (not sent to the model)": [2]}


def test_a_hooks_json_answer_for_the_user_only_adds_nothing_to_the_context():
    # Claude Code 2.1.181+: a SessionStart hook answering `{"systemMessage": ...}` shows it to the user;
    # `content` (what entered the context) is empty, while `stdout` holds the JSON
    said = json.dumps({"systemMessage": "Entire CLI will link this conversation to your next commit."})
    shown = {"type": "hook_success", "hookName": "SessionStart:startup", "hookEvent": "SessionStart",
             "content": "", "stdout": said + "\n"}  # fmt: skip
    plain = {"type": "hook_success", "hookName": "SessionStart:startup", "hookEvent": "SessionStart",
             "content": "caveman mode on", "stdout": "caveman mode on\n"}  # fmt: skip
    lines = _lines(
        _claude("attachment", 0, attachment=shown),
        _claude("attachment", 1, attachment=plain),
        _claude("user", 2, message={"role": "user", "content": "go"}),
    )
    result = import_text(lines)
    assert [(m.type, m.content) for m in result.messages] == [
        ("user_input", "caveman mode on"),
        ("user_input", "go"),
    ]


def test_the_name_a_session_was_given_is_its_title():
    # Claude Code 2.1.2xx: `/rename` writes custom-title lines (the latest wins), Claude Code ai-title ones
    lines = [
        _claude("user", 0, message={"role": "user", "content": "Investigate this using fable"}),
        {"type": "ai-title", "aiTitle": "Fable investigation", "sessionId": "s1"},
        {"type": "custom-title", "customTitle": "Template injection", "sessionId": "s1"},
        {"type": "custom-title", "customTitle": "Oh My Posh template injection", "sessionId": "s1"},
    ]
    assert import_text(_lines(*lines)).title == "Oh My Posh template injection"
    assert import_text(_lines(*lines[:2])).title == "Fable investigation"
    assert import_text(_lines(lines[0])).title == "Investigate this using fable"


def test_a_model_fallbacks_refused_run_is_billed_apart():
    # Claude Code 2.1.217: the API refused on claude-fable-5 and ran the request again on claude-opus-4-8;
    # the top-level usage is the second run's, `iterations` lists both (counts from the real line)
    keys = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
    first = {**dict(zip(keys, (2, 2, 32238, 21874), strict=True)), "model": "claude-fable-5"}
    second = {**dict(zip(keys, (2, 136, 54112, 0), strict=True)), "model": "claude-opus-4-8"}
    usage = {**{k: second[k] for k in keys}, "iterations": [first, second]}
    text = [{"type": "text", "text": "done"}]
    reply = {"role": "assistant", "id": "msg_1", "model": "claude-opus-4-8", "content": text, "usage": usage}
    asked = _claude("user", 0, message={"role": "user", "content": "go"})
    result = import_text(_lines(asked, _claude("assistant", 1, message=reply)))
    assert result.messages[-1].meta("usage")["cacheReadTokens"] == 54112
    (other,) = result.other_calls
    assert (other["model"], other["cacheWriteTokens"], other["cacheReadTokens"]) == (
        "claude-fable-5", 21874, 32238,
    )  # fmt: skip
    assert other["why"] == "an earlier run of the same request (a model fallback)"


def test_a_tool_search_result_names_the_tool_it_loaded():
    # Claude Code 2.1.2xx ToolSearch: the result is `tool_reference` blocks, which the API expands into the
    # tool's definition (not in the file): a named placeholder, not an empty result
    call = {"type": "tool_use", "id": "t1", "name": "ToolSearch", "input": {"query": "select:SendMessage"}}
    found = {"type": "tool_result", "tool_use_id": "t1",
             "content": [{"type": "tool_reference", "tool_name": "SendMessage"}]}  # fmt: skip
    lines = _lines(
        _claude("user", 0, message={"role": "user", "content": "message the team"}),
        _claude("assistant", 1, message={"role": "assistant", "id": "m1", "content": [call]}),
        _claude("user", 2, message={"role": "user", "content": [found]}),
    )
    result = import_text(lines)
    assert result.messages[-1].content == "[tool definition loaded: SendMessage]"
    reference = {"type": "tool_reference", "tool_name": "SendMessage"}
    assert result.messages[-1].meta("unmappedBlocks") == [reference]


def test_sweep_jobs_carry_from_to_their_worker(tmp_path):
    source = tmp_path / "chat.json"
    chat = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "hm", "signature": "s"},
                {"type": "text", "text": "hello"},
            ],
        },
    ]
    source.write_text(json.dumps(chat), encoding="utf-8")
    (job,) = plan_sweep([source], fmt="codex")
    assert job.fmt == "codex"
    assert run_job(job)["error"].startswith(f"{source}: read as codex, no message came in")
    (job,) = plan_sweep([source], fmt="openai")
    assert run_job(job)["error"] is None


def test_a_role_that_is_not_a_name_is_a_problem_not_a_newer_role():
    # read as drift, the model's answer (role 7, before the model's last message) was carried as the user's
    # words, and only counted as an unknown role
    messages = [
        {"role": "user", "content": "count the files"},
        {"role": 7, "content": "There are 3 files."},
        {"role": "user", "content": "and the folders?"},
        {"role": "assistant", "content": "2 folders."},
    ]
    result = import_text(json.dumps({"messages": messages}), name="chat.json")
    assert [str(p) for p in result.problems] == [
        "chat.json:1: messages[1]: role: must be a role name (a string), got a number; left out"
    ]
    assert result.unknown == {}
    assert [(m.role, m.type, m.content) for m in result.messages] == [
        ("user", "user_input", "count the files"),
        ("user", "user_input", "and the folders?"),
        ("assistant", "final_answer", "2 folders."),
    ]
