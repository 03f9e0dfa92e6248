"""linnkit 0.21.0's own tests of checkpoint pruning (checkpointSummarizationProvider.test.ts) and edges read
from CheckpointSummarizationProvider.ts, as scenarios our engine runs (each test names what it follows)."""

from __future__ import annotations

import json

import pytest

from engine.providers.checkpoint import run_checkpoint
from engine.providers.state import KEEP_CORE, KEEP_WM, SKIP
from tests.engine.parity_helpers import checkpoint_raw, provider_ctx, states_of, text, tool_calls, tool_output


def pair(n: int, name: str | None = None, result: str | None = None, raw: str | None = None) -> list:
    tool = name or f"tool_{n}"
    return [
        tool_calls(f"call_msg_{n}", (f"call_{n}", tool, {}), content=f"call {tool}"),
        tool_output(f"out_msg_{n}", f"call_{n}", tool, result or f"{tool} result", raw_output=raw),
    ]


def cp_pair(n: int = 99, name: str = "context_checkpoint", summary: str = "Phase A done") -> list:
    return pair(n, name, "Context checkpoint created.", checkpoint_raw(summary))


SYSTEM = text("sys", "system", "system_prompt", "system prompt")


def run_cp(messages, actions=None, default=KEEP_WM, **checkpoint):
    """The checkpoint provider over states that start as linnkit's test makes them (kept by working memory
    unless `actions` says otherwise; the system prompt is core)."""
    given = {"sys": KEEP_CORE, **{m.id: default for m in messages if m.id != "sys"}, **(actions or {})}
    states = states_of(messages, {k: v for k, v in given.items() if v != SKIP}, tokens=100)
    outcome = run_checkpoint(states, 100_000, provider_ctx(checkpoint=checkpoint))
    return states, outcome.report.strategies


def action(states, message_id: str) -> str:
    return next(s.action for s in states if s.message.id == message_id)


# "没有 checkpoint 标记时直接透传" (no checkpoint marker: passed through)
def test_checkpoint_without_a_marker_changes_nothing():
    messages = [SYSTEM, text("u", "user", "user_input", "hello"), *pair(1)]
    states, strategies = run_cp(messages)
    assert strategies == []
    assert [s.action for s in states] == [KEEP_CORE, KEEP_WM, KEEP_WM, KEEP_WM]


# "检测到 checkpoint 时保留 checkpoint 工具对，并裁剪 checkpoint 之前的旧历史"
def test_checkpoint_keeps_its_pair_and_the_two_before_and_prunes_the_rest():
    messages = [
        SYSTEM,
        text("u", "user", "user_input", "task A"),
        *pair(1),
        *pair(2),
        *pair(3),
        *pair(4),
        *cp_pair(),
    ]
    states, strategies = run_cp(messages)
    assert strategies == ["checkpoint_trim_before"]
    kept = [s.message.id for s in states if s.kept]
    assert kept == ["sys", "call_msg_3", "out_msg_3", "call_msg_4", "out_msg_4", "call_msg_99", "out_msg_99"]
    assert {s.message.id: s.phase for s in states if not s.kept} == {
        "u": "CHECKPOINT_PURGED",
        "call_msg_1": "CHECKPOINT_PURGED",
        "out_msg_1": "CHECKPOINT_PURGED",
        "call_msg_2": "CHECKPOINT_PURGED",
        "out_msg_2": "CHECKPOINT_PURGED",
    }


# "按 keepPairsBefore 保留 checkpoint 前指定数量的工具对"
def test_checkpoint_keep_pairs_before_four():
    messages = [
        SYSTEM,
        text("u", "user", "user_input", "old task"),
        *(m for n in range(1, 6) for m in pair(n)),
        *cp_pair(),
    ]
    states, strategies = run_cp(messages, keepPairsBefore=4)
    assert strategies == ["checkpoint_trim_before"]
    kept_outputs = [
        s.message.content for s in states if s.action == KEEP_WM and s.message.type == "tool_output"
    ]
    assert kept_outputs == [f"tool_{n} result" for n in range(2, 6)] + ["Context checkpoint created."]


# "按 triggerToolName 识别自定义 checkpoint 工具名" and
# "未配置 triggerToolName 时不把自定义工具名当作 checkpoint"
def test_checkpoint_custom_trigger_tool_name():
    messages = [
        SYSTEM,
        text("u", "user", "user_input", "old task"),
        *pair(1),
        *cp_pair(name="phase_checkpoint"),
    ]
    actions = {"call_msg_99": SKIP, "out_msg_99": SKIP}
    states, strategies = run_cp(messages, actions, triggerToolName="phase_checkpoint")
    assert strategies == ["checkpoint_trim_before"]
    assert (action(states, "call_msg_99"), action(states, "out_msg_99")) == (KEEP_WM, KEEP_WM)
    states, strategies = run_cp([SYSTEM, *cp_pair(name="phase_checkpoint")], actions)
    assert strategies == []
    assert (action(states, "call_msg_99"), action(states, "out_msg_99")) == (SKIP, SKIP)


# "旧 history_summary 会被裁剪为 skip"
def test_checkpoint_prunes_an_old_history_summary():
    summary = text("hs", "system", "history_summary", "[旧摘要]")
    states, strategies = run_cp([SYSTEM, summary, *pair(1), *cp_pair()])
    assert strategies == ["checkpoint_trim_before"]
    assert (action(states, "hs"), next(s.phase for s in states if s.message.id == "hs")) == (
        SKIP,
        "CHECKPOINT_PURGED",
    )


# "只有 system_prompt 和 checkpoint 时也能正常工作",
# "content 为 observation 文本时，可从 metadata.raw_output 识别 checkpoint" and
# "会将 checkpoint 保留的工具交互从 skip 提升为 keep_working_memory":
# nothing to prune is no pruning (no strategy), but the kept groups are still promoted
def test_checkpoint_with_nothing_to_prune_reports_nothing_but_promotes():
    assert run_cp([SYSTEM, *cp_pair()])[1] == []
    after = text("u2", "user", "user_input", "next question")
    assert run_cp([SYSTEM, *pair(1), *cp_pair(), after], {"u2": KEEP_CORE})[1] == []
    states, strategies = run_cp([SYSTEM, *pair(1), *pair(2), *cp_pair()], default=SKIP)
    assert strategies == []
    assert [s.action for s in states] == [KEEP_CORE] + [KEEP_WM] * 6
    assert {s.phase for s in states[1:]} == {"CHECKPOINT"}


# "raw_output 缺失时，即使 content 是 checkpoint JSON 也不触发（严格协议）"
def test_checkpoint_content_is_never_parsed():
    call, out = pair(1, "context_checkpoint", checkpoint_raw("not without raw_output"))
    states, strategies = run_cp([SYSTEM, text("u", "user", "user_input", "old"), call, out])
    assert strategies == []


# "同一组中混合 checkpoint 与普通工具时，整组按 checkpoint 组保留"
def test_checkpoint_mixed_group_is_kept_whole():
    mixed = tool_calls("mixed", ("call_cp", "context_checkpoint", {}), ("call_normal", "tool_normal", {}))
    messages = [
        SYSTEM,
        *pair(1),
        mixed,
        tool_output(
            "mixed_cp",
            "call_cp",
            "context_checkpoint",
            "Context checkpoint created.",
            raw_output=checkpoint_raw("Mixed"),
        ),
        tool_output("mixed_normal", "call_normal", "tool_normal", "tool_normal result"),
    ]
    states, _ = run_cp(messages, default=SKIP)
    assert [action(states, i) for i in ("mixed", "mixed_cp", "mixed_normal")] == [KEEP_WM] * 3


# "重复 tool_calls（同 tool_call_id）时，checkpoint 必须选择最近一条配对，避免协议 400"
def test_checkpoint_pairs_a_reused_call_id_with_the_latest_declaration():
    first = tool_calls("tc1", ("call_dup_1", "context_checkpoint", {}))
    second = tool_calls("tc2", ("call_dup_1", "context_checkpoint", {}))
    out = tool_output(
        "out",
        "call_dup_1",
        "context_checkpoint",
        "✅ Context checkpoint created.",
        raw_output=checkpoint_raw("dup checkpoint"),
    )
    messages = [
        SYSTEM,
        text("old", "user", "user_input", "old user"),
        first,
        text("between", "assistant", "final_answer", "中间插入了一条assistant文本"),
        second,
        out,
        text("new", "user", "user_input", "new user"),
    ]
    states, _ = run_cp(messages, {"new": KEEP_CORE}, default=SKIP)
    assert (action(states, "tc2"), action(states, "out"), action(states, "tc1")) == (KEEP_WM, KEEP_WM, SKIP)


# CheckpointSummarizationProvider.ts, extractCheckpointSummary: a blank summary is no checkpoint (`if
# (summary)`), and a `data` object that is no marker falls back to the top-level keys
@pytest.mark.parametrize(
    ("raw", "detected"),
    [
        (checkpoint_raw(""), False),
        (json.dumps({"data": {"x": 1}, "_type": "context_checkpoint", "summary": "top"}), True),
        (json.dumps({"data": "text", "_type": "context_checkpoint", "summary": "top"}), True),
        (json.dumps({"_type": "context_checkpoint", "summary": 3}), False),
    ],
)
def test_checkpoint_marker_edges(raw, detected):
    messages = [SYSTEM, text("u", "user", "user_input", "old"), *pair(99, "context_checkpoint", "saved", raw)]
    _, strategies = run_cp(messages)
    assert strategies == (["checkpoint_trim_before"] if detected else [])


# toolInteractionGroup.ts: an output answering a `context_checkpoint` call marks its group a checkpoint
# group even under another trigger name, so the checkpoint provider does not count it among the groups
# kept before the checkpoint
def test_a_context_checkpoint_call_is_no_pair_before_a_custom_checkpoint():
    builtin = [
        tool_calls("a_ctx", ("tc_ctx", "context_checkpoint", {})),
        tool_output("t_ctx", "tc_ctx", "context_checkpoint", "saved"),
    ]
    messages = [SYSTEM, *pair(1), *pair(2), *builtin, *cp_pair(name="phase_checkpoint")]
    states, _ = run_cp(messages, triggerToolName="phase_checkpoint")
    assert [s.message.id for s in states if s.kept] == [
        "sys",
        "call_msg_1",
        "out_msg_1",
        "call_msg_2",
        "out_msg_2",
        "call_msg_99",
        "out_msg_99",
    ]


# CheckpointSummarizationProvider.ts normalizeTriggerToolName: the name is trimmed, and a blank one is the
# default `context_checkpoint`
def test_checkpoint_trigger_tool_name_is_trimmed():
    messages = [SYSTEM, text("u", "user", "user_input", "old"), *pair(1), *cp_pair(name="phase_checkpoint")]
    assert run_cp(messages, triggerToolName="  phase_checkpoint ")[1] == ["checkpoint_trim_before"]
    assert run_cp([SYSTEM, text("u", "user", "user_input", "old"), *cp_pair()], triggerToolName=" ")[1] == [
        "checkpoint_trim_before"
    ]
