"""The losses issue 31 measured, fixed: real public samples where they exist, fixtures from each tool's own
source where they do not (said on each)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

from engine.importers import import_file, import_text

DATA = Path(__file__).resolve().parents[1] / "data" / "real-sessions"


def _types(result) -> dict[str, int]:
    return dict(Counter(m.type for m in result.messages))


def _lines(*entries: dict) -> str:
    return "".join(json.dumps(e) + "\n" for e in entries)


# -- Letta: every agent of a multi-agent file is a conversation ----------------------------------------


def test_a_letta_file_with_two_agents_offers_each_as_a_conversation():
    path = DATA / "letta" / "lettabot-builder.af"
    first = import_file(path)
    assert (first.conversations, first.session["agent"], _types(first)) == (
        2,
        "lettabot-builder",
        {"system_prompt": 1, "user_input": 1, "thought": 1, "final_answer": 1},
    )
    # the 188-message sleeptime agent: counted in the file as 1 system, 61 user, 64 assistant (62 with one
    # tool call each, 64 with a reasoning part), 62 tool returns
    second = import_file(path, conversation=1)
    assert second.session == {"agent": "Nameless Agent-sleeptime", "model": "claude-sonnet-4-5-20250929"}
    assert _types(second) == {
        "system_prompt": 1,
        "user_input": 61,
        "thought": 64,
        "tool_calls": 62,
        "tool_output": 62,
        "final_answer": 2,
    }
    assert sum(len(m.tool_calls) for m in second.messages) == 62
    assert (second.unpaired, second.problems) == ([], [])


# -- ShareGPT preference items, side images ----------------------------------------------------------


def test_sharegpt_preference_items_import_chosen_then_rejected_as_the_next_conversation():
    path = DATA / "sharegpt" / "dpo_en_demo-first10.json"
    chosen = import_file(path)
    assert chosen.conversations == 20  # 10 items, each with a chosen and a rejected answer
    assert [(m.id, m.type) for m in chosen.messages] == [("sg-0", "user_input"), ("sg-1", "final_answer")]
    assert chosen.messages[1].content.startswith("That sounds like a fun and engaging idea!")
    assert chosen.session["preference"] == "chosen"
    # named on the line its item starts on
    assert chosen.skipped_lines == {"rejected answer: conversation 1 of the file (--conversation 1)": [2]}
    rejected = import_file(path, conversation=1)
    assert rejected.session["preference"] == "rejected"
    assert rejected.messages[1].content.startswith("Hello! I'd be happy to help you create a language game")
    assert rejected.skipped_lines == {}
    # item 4 has five turns (human, gpt, human, gpt, human) before its answers
    fifth = import_file(path, conversation=8)
    assert [m.type for m in fifth.messages] == ["user_input", "final_answer"] * 3


def test_a_side_images_list_fills_the_image_tags_in_order():
    result = import_file(DATA / "openai" / "llamafactory-mllm_demo.json")
    assert result.conversations == 6
    assert [m.content for m in result.messages if m.type == "user_input"] == [
        "[image: mllm_demo_data/1.jpg]Who are they?",
        "What are they doing?[image: mllm_demo_data/1.jpg]",
    ]
    assert result.came_in()["images"] == 2


def test_side_images_without_tags_go_before_the_first_message_as_llama_factory_puts_them():
    text = json.dumps(
        [{"conversations": [{"from": "human", "value": "Who?"}, {"from": "gpt", "value": "Kane."}],
          "images": ["a.jpg", "b.jpg"]}]
    )  # fmt: skip
    result = import_text(text)
    assert result.messages[0].content == "[image: a.jpg][image: b.jpg]Who?"
    assert result.messages[0].meta("images") == [{"url": "a.jpg"}, {"url": "b.jpg"}]


def test_side_listed_videos_sounds_and_llavas_one_image_fill_their_tags():
    messages = [{"role": "user", "content": "<video><audio>What happens?"},
                {"role": "assistant", "content": "A cat jumps."}]  # fmt: skip
    result = import_text(json.dumps([{"messages": messages, "videos": ["v/1.mp4"], "audios": ["a/1.mp3"]}]))
    first = result.messages[0]
    assert first.content == "[video: v/1.mp4][audio: a/1.mp3]What happens?"
    assert (first.meta("videos"), first.meta("audios")) == ([{"url": "v/1.mp4"}], [{"url": "a/1.mp3"}])
    llava = {"image": "coco/1.jpg", "conversations": [{"from": "human", "value": "<image>\nColour?"},
                                                      {"from": "gpt", "value": "Red."}]}  # fmt: skip
    result = import_text(json.dumps([llava]))
    assert result.format == "sharegpt" and result.messages[0].content == "[image: coco/1.jpg]\nColour?"
    assert result.came_in()["images"] == 1


def test_an_ultrafeedback_items_rejected_answer_is_the_next_conversation():
    asked = {"role": "user", "content": "how?"}
    good, bad = {"role": "assistant", "content": "Like this."}, {"role": "assistant", "content": "No idea."}
    item = {"prompt": "how?", "messages": [asked, good], "chosen": [asked, good], "rejected": [asked, bad]}
    text = json.dumps(item)
    chosen, rejected = import_text(text), import_text(text, conversation=1)
    assert chosen.conversations == 2 and [m.content for m in chosen.messages] == ["how?", "Like this."]
    assert [m.content for m in rejected.messages] == ["how?", "No idea."]
    assert rejected.session["preference"] == "rejected"


# -- LLaMA-Factory {type, value} parts ---------------------------------------------------------------


def test_llama_factory_value_parts_keep_text_reasoning_and_tool_calls():
    # conversation 1 of the file, read by hand: system, user, (reasoning + tool_call), tool, (reasoning +
    # text), user, (reasoning + tool_call), tool, (reasoning + text)
    result = import_file(DATA / "openai" / "llamafactory-reason_tool_use_demo_50.jsonl", conversation=1)
    assert result.conversations == 50
    assert [m.type for m in result.messages] == [
        "system_prompt", "user_input",
        "thought", "tool_calls", "tool_output", "thought", "final_answer",
        "user_input",
        "thought", "tool_calls", "tool_output", "thought", "final_answer",
    ]  # fmt: skip
    calls = [m.tool_calls[0] for m in result.messages if m.type == "tool_calls"]
    assert calls == [
        {"id": "lf-call-1", "type": "function",
         "function": {"name": "get_movie_details", "arguments": '{"title":"Inception"}'}},
        {"id": "lf-call-2", "type": "function",
         "function": {"name": "get_movie_details", "arguments": '{"title":"The Dark Knight"}'}},
    ]  # fmt: skip
    outputs = [m for m in result.messages if m.type == "tool_output"]
    assert [(m.tool_call_id, m.meta("tool_name")) for m in outputs] == [
        ("lf-call-1", "get_movie_details"),
        ("lf-call-2", "get_movie_details"),
    ]
    assert result.unpaired == []
    assert result.messages[2].content.startswith("Alright, the user wants information about the movie")


def test_one_llama_factory_tool_message_with_a_json_array_answers_the_parallel_calls_in_order():
    # conversation 2 of the file: two calls answered by one tool message holding two results, then three
    result = import_file(DATA / "openai" / "llamafactory-reason_tool_use_demo_50.jsonl", conversation=2)
    calls = [c["id"] for m in result.messages if m.type == "tool_calls" for c in m.tool_calls]
    outputs = [m for m in result.messages if m.type == "tool_output"]
    assert calls == ["lf-call-1", "lf-call-2", "lf-call-3", "lf-call-4", "lf-call-5"]
    assert [m.tool_call_id for m in outputs] == calls and result.unpaired == []
    assert [m.content for m in outputs[:2]] == [
        "{'area': 7.0686, 'radius': 1.5, 'unit':'square meters'}",
        "{'area': 28.2743, 'radius': 3, 'unit':'square meters'}",
    ]


def test_a_logged_call_brings_the_response_message_and_its_usage():
    call = {"id": "t9", "type": "function", "function": {"name": "finish", "arguments": "{}"}}
    log = {
        "messages": [{"role": "system", "content": "be brief"}, {"role": "user", "content": "hi"}],
        "kwargs": {"temperature": 0},
        "response": {
            "model": "claude-sonnet-4",
            "choices": [{"message": {"role": "assistant", "content": "Hello.", "tool_calls": [call]}}],
            "usage": {
                "prompt_tokens": 120,
                "completion_tokens": 9,
                "prompt_tokens_details": {"cached_tokens": 100},
            },
        },
        "cost": 0.001,
    }
    result = import_text(json.dumps(log), name="log.json")
    assert result.format == "openai"
    assert [(m.type, m.content) for m in result.messages] == [
        ("system_prompt", "be brief"),
        ("user_input", "hi"),
        ("tool_calls", "Hello."),
    ]
    usage = result.messages[-1].metadata["usage"]
    assert (usage["promptTokens"], usage["cacheReadTokens"], usage["outputTokens"]) == (120, 100, 9)
    assert usage["model"] == "claude-sonnet-4"


# -- final bookkeeping roles, Hermes sessions -----------------------------------------------------------


def test_mini_swe_agent_final_exit_is_bookkeeping_not_a_problem():
    path = DATA / "openai" / "mini-swe-agent-astropy__astropy-12907.traj.json"
    result = import_file(path)
    # counted in the file: system 1, user 1, assistant 64 (each with one call), tool 63, then role exit
    assert _types(result) == {"system_prompt": 1, "user_input": 1, "tool_calls": 64, "tool_output": 63}
    assert (result.problems, result.unknown) == ([], {})
    assert result.skipped_lines == {"role exit (mini-swe-agent's exit record, not sent to the model)": [5139]}
    assert result.unpaired == ["call_00_0yKPVZ7Jm6cEwsBTs4Lx0555"]  # the submit call: its output is the exit


# fixture, from Hermes Agent's session files (`~/.hermes/sessions/session_*.json`): top-level system_prompt
HERMES = {
    "session_id": "20250901_101500_ab12cd",
    "model": "anthropic/claude-sonnet-4",
    "platform": "cli",
    "system_prompt": "You are Hermes, an agent that helps with the terminal.",
    "messages": [
        {"role": "user", "content": "list the files"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "terminal", "arguments": '{"command": "ls"}'}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "a.py\nb.py"},
        {"role": "assistant", "content": "Two files: a.py and b.py."},
        {"role": "session_meta", "timestamp": "2025-09-01T10:16:00", "message_count": 4},
    ],
}  # fmt: skip


def test_hermes_sessions_read_the_top_level_system_prompt_and_leave_out_session_meta():
    result = import_text(json.dumps(HERMES))
    assert [(m.id, m.type) for m in result.messages] == [
        ("system-prompt", "system_prompt"),
        ("oa-0", "user_input"),
        ("oa-1", "tool_calls"),
        ("oa-2", "tool_output"),
        ("oa-3", "final_answer"),
    ]
    assert result.messages[0].content == "You are Hermes, an agent that helps with the terminal."
    assert (result.problems, result.unknown) == ([], {})
    assert result.skipped_lines == {
        "role session_meta (Hermes Agent's session record, not sent to the model)": [1]
    }


def test_hermes_jsonl_opens_with_its_session_record_first():
    # fixture, from Hermes Agent's gateway (`store.append_to_transcript`): the first line is session_meta
    lines = [
        {"role": "session_meta", "tools": [], "model": "deepseek-v4-pro", "platform": "cli", "content": "{}"},
        {"role": "user", "content": "hello", "timestamp": "2026-04-26T13:47:43Z"},
        {"role": "assistant", "content": "", "reasoning": "say hi", "finish_reason": "stop"},
        {"role": "assistant", "content": "hi", "timestamp": "2026-04-26T13:47:44Z"},
    ]
    result = import_text("".join(json.dumps(line) + "\n" for line in lines))
    assert [m.type for m in result.messages] == ["user_input", "thought", "final_answer"]
    assert result.header("s.jsonl")["modelId"] == "deepseek-v4-pro"
    assert result.skipped_lines[
        "role session_meta (Hermes Agent's session record, not sent to the model)"
    ] == [1]


def test_an_unknown_role_the_model_saw_is_carried_as_a_user_side_message():
    messages = [
        {"role": "user", "content": "hi"},
        {"role": "memory", "content": "the user likes tea"},
        {"role": "assistant", "content": "Tea, then."},
    ]
    result = import_text(json.dumps(messages))
    assert [(m.role, m.type, m.meta("generated")) for m in result.messages] == [
        ("user", "user_input", None),
        ("user", "user_input", "memory"),
        ("assistant", "final_answer", None),
    ]
    assert result.unknown == {"role 'memory'": ("user_input", [1])}


# -- Aider -------------------------------------------------------------------------------------------

# fixture, from aider/io.py: a confirmation answered through a group preference is echoed with user_input
# ("#### " lines); a prompt answer with --yes is a "> " line
AIDER = """# aider chat started at 2025-06-01 10:00:00

#### add a greeting to hello.py

Here is the change.

hello.py
```python
print("hello")
```

#### Add hello.py to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a
> Applied edit to hello.py

#### thanks

You're welcome.
"""


def test_aider_echoes_of_its_own_prompts_are_console_output_not_user_turns():
    result = import_text(AIDER)
    assert [(m.type, m.content.splitlines()[0]) for m in result.messages] == [
        ("user_input", "add a greeting to hello.py"),
        ("final_answer", "Here is the change."),
        ("user_input", "thanks"),
        ("final_answer", "You're welcome."),
    ]
    echo = "aider console output: answer to its own prompt (not sent to the model)"
    assert result.skipped_lines[echo] == [12]


def test_files_aider_was_let_add_give_the_turn_it_sent_by_itself_before_the_next_reply():
    lines = ["# aider chat started at 2026-04-22 23:13:03", "#### which files?  ", "", "Maybe a.py and b.py.",
             "", "> Tokens: 1.8k sent, 40 received.  ", "> a.py  ",
             "> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a  ", "> b.py  ",
             "", "#### Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: all  ",
             "> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: a  ", "> c.py  ",
             "> Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]: n  ", "",
             "Thanks, both are here.", "", "#### good  ", "", "Done."]  # fmt: skip
    result = import_text("\n".join(lines), name="chat.md")
    assert [(m.type, m.content) for m in result.messages] == [
        ("user_input", "which files?"),
        ("final_answer", "Maybe a.py and b.py."),
        ("user_input", "I added these files to the chat: a.py, b.py\nLet me know if there are others we should add."),  # noqa: E501
        ("final_answer", "Thanks, both are here."),
        ("user_input", "good"),
        ("final_answer", "Done."),
    ]
    assert result.messages[2].meta("generated") == "aider"


def test_llama_factory_v1_preference_pairs_are_chosen_then_rejected_conversations():
    path = DATA / "openai" / "llamafactory-v1_dpo_demo.jsonl"
    chosen, rejected = import_file(path), import_file(path, conversation=1)
    assert chosen.conversations == 20  # 10 lines, each a chosen and a rejected conversation
    assert [m.type for m in chosen.messages] == ["system_prompt", "user_input", "final_answer"]
    assert (chosen.session["preference"], rejected.session["preference"]) == ("chosen", "rejected")
    assert chosen.messages[1].content == rejected.messages[1].content
    assert chosen.messages[2].content.startswith("Abdulah Hasanagic is the proud owner of AS Company in")
    assert rejected.messages[2].content.startswith(" Abdulah Hasanagic is the proud owner of AS Company, a")
