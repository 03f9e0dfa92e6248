"""Tick state and step points: linnkit's node-step counting over a recorded session."""

import pytest

from engine.messages import AiMessage
from engine.reminders import apply_reminders
from engine.ticks import StepPoint, TickState, count_tool_call_streak, iter_step_points, step_points, tick_at


def msg(mid, mtype, role=None, calls=()):
    roles = {"user_input": "user", "tool_output": "tool", "system_prompt": "system"}
    metadata = {
        "tool_calls": [{"id": f"id_{mid}_{n}", "function": {"name": n, "arguments": "{}"}} for n in calls]
    }
    return AiMessage(mid, role or roles.get(mtype, "assistant"), mtype, "", 0, metadata if calls else None)


def session():
    return [
        msg("sys", "system_prompt"),
        msg("u1", "user_input"),
        msg("th1", "thought"),
        msg("a1", "tool_calls", calls=["search"]),
        msg("o1", "tool_output"),
        msg("a2", "tool_calls", calls=["read", "grep"]),
        msg("o2", "tool_output"),
        msg("o3", "tool_output"),
        msg("f1", "final_answer"),
        msg("u2", "user_input"),
        msg("a3", "tool_calls", calls=["search"]),
        msg("o4", "tool_output"),
    ]


def test_from_case_and_derived_values():
    tick = TickState.from_case(
        {"stepCount": 72, "maxSteps": 80, "availableTools": ["a", "context_checkpoint"]}
    )
    assert tick == TickState(72, 80, ("a", "context_checkpoint"))
    assert (tick.remaining_steps, tick.phase) == (8, "running")
    assert (
        TickState.from_case({"stepCount": 80, "maxSteps": 80, "availableTools": []}).phase
        == "force_final_answer"
    )
    forced = {"stepCount": 79, "maxSteps": 80, "availableTools": [], "finalStepPolicy": "force_tools"}
    assert TickState.from_case({**forced, "finalStepForcedTools": ["submit"]}).final_step_forced_tools == (
        "submit",
    )
    assert [TickState(s, 80, final_step_policy="force_tools").phase for s in (78, 79, 80)] == [
        "running",
        "force_tools",
        "running",
    ]


def test_registered_checkpoint_tool_joins_the_available_tools():
    assert TickState(1, available_tools=("a",), checkpoint_tool_registered=True).tools() == (
        "a",
        "context_checkpoint",
    )
    assert TickState(1, available_tools=("cp",), checkpoint_tool_registered=True).tools("cp") == ("cp",)
    assert TickState(1, available_tools=("a",)).tools() == ("a",)


def test_streak_counts_tool_calls_messages_after_the_last_user_input():
    assert count_tool_call_streak(session()) == 1
    assert count_tool_call_streak(session()[:9]) == 2
    assert (
        count_tool_call_streak([{"type": "tool_calls"}, {"type": "tool_output"}, {"type": "tool_calls"}]) == 2
    )
    assert count_tool_call_streak([]) == 0


def test_step_points_count_node_steps_like_linnkits_executor():
    assert step_points(session()) == [
        StepPoint(message_count=2, run_index=1, step_in_run=1, node_step=2, action_id="a1"),
        StepPoint(message_count=5, run_index=1, step_in_run=2, node_step=4, action_id="a2"),
        # a2's two parallel calls are two tool nodes: 4 (llm) + 2 (tools) + 1 (llm) = 7
        StepPoint(message_count=8, run_index=1, step_in_run=3, node_step=7, action_id="f1"),
        StepPoint(message_count=10, run_index=2, step_in_run=1, node_step=2, action_id="a3"),
        StepPoint(message_count=12, run_index=2, step_in_run=2, node_step=4, action_id=None),
    ]


def test_no_pending_point_after_an_answer_and_one_right_after_a_user_input():
    assert step_points(session()[:9])[-1].action_id == "f1"
    assert step_points(session()[:10])[-1] == StepPoint(10, 2, 1, 2, None)
    assert step_points([msg("sys", "system_prompt")]) == []


def test_checkpoint_call_resets_the_cycle():
    messages = [
        msg("u", "user_input"),
        msg("a1", "tool_calls", calls=["search"]),
        msg("o1", "tool_output"),
        msg("cp", "tool_calls", calls=["context_checkpoint"]),
        msg("o2", "tool_output"),
        msg("a3", "tool_calls", calls=["search"]),
        msg("o3", "tool_output"),
    ]
    assert [p.node_step for p in step_points(messages)] == [2, 4, 1, 3]
    assert [p.node_step for p in step_points(messages, checkpoint_tool_name="other")] == [2, 4, 6, 8]


def test_checkpoint_resets_stop_after_ten():
    messages = [msg("u", "user_input")]
    for n in range(12):
        messages += [msg(f"cp{n}", "tool_calls", calls=["context_checkpoint"]), msg(f"o{n}", "tool_output")]
    steps = [p.node_step for p in step_points(messages)]
    assert steps[:11] == [2] + [1] * 10
    assert steps[11:] == [3, 5]


def test_tick_at_returns_the_prefix_and_its_tick():
    prefix, tick = tick_at(session(), 1, 80, ["search"])
    assert [m.id for m in prefix] == ["sys", "u1", "th1", "a1", "o1"]
    assert tick == TickState(step_count=4, max_steps=80, available_tools=("search",))
    prefix, tick = tick_at(session(), -1, 10)
    assert (len(prefix), tick.step_count, tick.remaining_steps) == (12, 4, 6)
    with pytest.raises(IndexError):
        tick_at(session(), 9)


def test_a_long_run_reaches_the_budget_warning_at_its_36th_call():
    messages = [msg("u", "user_input")]
    for n in range(40):
        messages += [msg(f"a{n}", "tool_calls", calls=["grep"]), msg(f"o{n}", "tool_output")]
    point = step_points(messages)[35]
    assert (point.step_in_run, point.node_step) == (36, 72)
    prefix, tick = tick_at(messages, point, 80, ["grep", "context_checkpoint"])
    ctx = tick.reminder_context(prefix)
    assert ctx.streak == 35
    _, outcome = apply_reminders([{"role": "tool", "content": "x"}], {}, ctx)
    assert outcome.hit_rule_ids == ("context_budget_warning",)
    assert "36/40" in outcome.texts["context_budget_warning"]


def test_a_block_of_assistant_messages_is_one_call_and_a_session_waiting_for_tools_has_no_pending_call():
    messages = [
        msg("u", "user_input"),
        msg("t0", "thought"),  # a call that only thought
        msg("x", "context_injection", role="user"),
        msg("th", "thought"),
        msg("a", "tool_calls", calls=["search", "context_checkpoint", "grep"]),
    ]
    assert step_points(messages) == [StepPoint(1, 1, 1, 2, None), StepPoint(3, 1, 2, 3, "a")]
    # the checkpoint's node restarts the count at 0 and the grep node after it makes 1
    answered = [*messages, msg("o1", "tool_output"), msg("o2", "tool_output"), msg("o3", "tool_output")]
    assert step_points(answered)[-1] == StepPoint(8, 1, 3, 2, None)


def test_step_points_of_every_replay_case_are_the_corpus_steps():
    import json
    from pathlib import Path

    from engine.policy import effective_policy

    folder = Path(__file__).resolve().parents[2].parent / "shared" / "conformance" / "replay"
    cases = sorted(folder.glob("*.json"))
    if not cases:
        pytest.skip(f"no replay cases in {folder}")
    for path in cases:
        case = json.loads(path.read_text(encoding="utf-8"))
        messages = [AiMessage.from_dict(m) for m in case["messages"]]
        name = effective_policy(case["contextPolicy"]).checkpoint.trigger_tool_name
        got = [(p.message_count, p.node_step) for p in step_points(messages, name)]
        assert got == [(s["upto"], s["tick"]["stepCount"]) for s in case["steps"]], case["name"]


def test_points_come_as_the_messages_are_read():
    """`iter_step_points` over a stream: each point once its block and the message after it are read (the
    last at the end), the same points as `step_points`; a recorded call ends its block at once."""
    messages = session()
    messages[2] = messages[2].with_metadata(usage={"prompt_tokens": 9})  # th1 and a1: two recorded calls
    read: list[AiMessage] = []

    def stream():
        for message in messages:
            read.append(message)
            yield message

    seen = [(point.message_count, point.node_step, len(read)) for point in iter_step_points(stream())]
    assert seen == [(2, 2, 4), (3, 3, 5), (5, 5, 7), (8, 8, 10), (10, 2, 12), (12, 4, 12)]
    assert [(c, s) for c, s, _ in seen] == [(p.message_count, p.node_step) for p in step_points(messages)]
