"""linnkit 0.21.0's own tests of tool-history compression and checkpoint pruning, as scenarios our engine
runs (each test names the linnkit test it follows; the assertions are linnkit's, written anew)."""

from __future__ import annotations

import json

import pytest

from engine.groups import build_groups
from engine.providers.checkpoint import run_checkpoint
from engine.providers.state import KEEP_CORE, KEEP_WM, SKIP
from tests.engine.parity_helpers import (
    checkpoint_raw,
    ids,
    preprocess,
    provider_ctx,
    states_of,
    text,
    tool_calls,
    tool_output,
    user_input,
)

DROP = {"retentionMode": "drop"}


def read_group(n: int, content: str | None = None) -> list:
    """`a_tc_n` calls workspace_read(document_id=doc-n), answered by `t_out_n`."""
    return [
        tool_calls(f"a_tc_{n}", (f"tc_{n}", "workspace_read", {"document_id": f"doc-{n}"})),
        tool_output(
            f"t_out_{n}", f"tc_{n}", "workspace_read", content or f'{{"observation":"已读取文档 doc-{n}"}}'
        ),
    ]


def run_group(run: str, n: int) -> list:
    """toolHistoryCompressor.strategy.test.ts's createToolGroup."""
    call = f"tc_{run}_{n}"
    return [
        tool_calls(f"a_{run}_{n}", (call, "workspace_read", {"path": f"{run}-{n}.md"})),
        tool_output(f"t_{run}_{n}", call, "workspace_read", f"工具结果 {run}-{n}"),
    ]


def compressed(result) -> list:
    return [m for m in result.preprocessed if (m.metadata or {}).get("isCompressedToolHistory") is True]


THREE_READS = [user_input("u_old", "旧问题"), *read_group(1), *read_group(2), *read_group(3)]


# toolHistoryCompressor.test.ts: "drops older tool groups by default and keeps the latest two raw groups"
def test_per_pair_drop_keeps_the_latest_two_groups():
    messages = [*THREE_READS, text("a_old", "assistant", "final_answer", "旧回答"), user_input("u_current")]
    result = preprocess(messages, toolHistory={"strategy": "per-pair", "keepLatestToolPairs": 2, **DROP})
    assert ids(result.preprocessed) == [
        "u_old",
        "a_tc_2",
        "t_out_2",
        "a_tc_3",
        "t_out_3",
        "a_old",
        "u_current",
    ]
    assert compressed(result) == []
    assert "tool_history_drop" in result.strategies_applied


# toolHistoryCompressor.test.ts: "compresses only older tool groups when retentionMode is compress"
def test_per_pair_compress_replaces_the_oldest_group():
    messages = [*THREE_READS, user_input("u_current")]
    result = preprocess(
        messages, toolHistory={"strategy": "per-pair", "keepLatestToolPairs": 2, "retentionMode": "compress"}
    )
    (message,) = compressed(result)
    assert message.metadata["replacementSourceIds"] == ["a_tc_1", "t_out_1"]
    assert message.content == (
        '我已经调用了工具「workspace_read」（参数：document_id="doc-1"），'
        '并得到了结果：{"observation":"已读取文档 doc-1"}，我需要思考下一步行动'
    )
    assert "[观察]" not in message.content
    assert "tool_history_compression" in result.strategies_applied


# toolHistoryCompressor.test.ts: "keeps the latest checkpoint group while still compressing older
# non-checkpoint groups"
def test_per_pair_keeps_the_latest_checkpoint_group_besides_the_latest_pairs():
    checkpoint = [
        tool_calls("a_tc_cp", ("tc_cp", "context_checkpoint", {"summary": "phase done"})),
        tool_output(
            "t_out_cp",
            "tc_cp",
            "context_checkpoint",
            "Context checkpoint created.",
            raw_output=checkpoint_raw("phase done"),
        ),
    ]
    messages = [
        *THREE_READS,
        *checkpoint,
        text("a_old", "assistant", "final_answer", "旧回答"),
        user_input("u_current"),
    ]
    result = preprocess(
        messages, toolHistory={"strategy": "per-pair", "keepLatestToolPairs": 2, "retentionMode": "compress"}
    )
    out = ids(result.preprocessed)
    assert out[:2] == ["u_old", compressed(result)[0].id]
    assert out[2:] == ["a_tc_2", "t_out_2", "a_tc_3", "t_out_3", "a_tc_cp", "t_out_cp", "a_old", "u_current"]
    assert compressed(result)[0].metadata["replacementSourceIds"] == ["a_tc_1", "t_out_1"]
    assert compressed(result)[0].metadata["containsCheckpoint"] is False


# toolHistoryCompressor.test.ts: "compresses a multi-tool assistant group as one atomic replacement and
# summarizes long outputs"
def test_a_multi_tool_group_is_compressed_as_one_message():
    long_observation = json.dumps({"observation": "A" * 520})
    messages = [
        user_input("u_old", "旧问题"),
        tool_calls(
            "a_tc_multi",
            ("tc_multi_1", "resource_list", {"source": "workspace"}),
            ("tc_multi_2", "resource_read", {"uri": "kb://doc-1"}),
        ),
        tool_output("t_out_multi_1", "tc_multi_1", "resource_list", '{"observation":"列出了 5 个资源"}'),
        tool_output("t_out_multi_2", "tc_multi_2", "resource_read", long_observation),
        *read_group(9, '{"observation":"保留最近工具组"}'),
        user_input("u_current"),
    ]
    result = preprocess(
        messages, toolHistory={"strategy": "per-pair", "keepLatestToolPairs": 1, "retentionMode": "compress"}
    )
    (message,) = compressed(result)
    assert ids(result.preprocessed) == ["u_old", message.id, "a_tc_9", "t_out_9", "u_current"]
    assert message.metadata["replacementSourceIds"] == ["a_tc_multi", "t_out_multi_1", "t_out_multi_2"]
    assert message.metadata["compressedToolCallIds"] == ["tc_multi_1", "tc_multi_2"]
    assert message.metadata["toolInteractionGroupSize"] == 2
    first, second = message.content.split("；我已经调用了工具")
    listed = '{"observation":"列出了 5 个资源"}'
    assert first == f'我已经调用了工具「resource_list」（参数：source="workspace"），并得到了结果：{listed}'
    assert second.startswith(
        '「resource_read」（参数：uri="kb://doc-1"），并得到了结果：返回了520字符的文本, 开头是: "AAA'
    )
    assert second.endswith('AAA"，我需要思考下一步行动')


# toolHistoryCompressor.test.ts: "keeps provider sidecar on retained tool groups and drops structured
# sidecar from compressed groups"
def test_sidecars_stay_on_kept_groups_and_leave_compressed_ones():
    old_reasoning = [
        {"provider": "deepseek", "type": "reasoning_content", "reasoning_content": "Old reason."}
    ]
    kept_reasoning = [
        {"provider": "deepseek", "type": "reasoning_content", "reasoning_content": "Kept reason."}
    ]
    extra = {"google": {"thought_signature": "<sig>"}, "deepseek": {"replay_marker": "opaque"}}
    kept_call = tool_calls(
        "a_tc_kept", ("tc_kept", "workspace_read", {"path": "kept.md"}), reasoning_details=kept_reasoning
    )
    kept_call.metadata["tool_calls"][0]["extra_content"] = extra
    messages = [
        user_input("u_old", "旧问题"),
        tool_calls(
            "a_tc_old", ("tc_old", "workspace_read", {"path": "old.md"}), reasoning_details=old_reasoning
        ),
        tool_output("t_out_old", "tc_old", "workspace_read", "old output"),
        kept_call,
        tool_output("t_out_kept", "tc_kept", "workspace_read", "kept output"),
        user_input("u_current"),
    ]
    result = preprocess(
        messages, toolHistory={"strategy": "per-pair", "keepLatestToolPairs": 1, "retentionMode": "compress"}
    )
    kept = next(m for m in result.preprocessed if m.id == "a_tc_kept")
    assert kept.metadata["reasoning_details"] == kept_reasoning
    assert kept.metadata["tool_calls"][0]["extra_content"] == extra
    (message,) = compressed(result)
    assert "reasoning_details" not in message.metadata and "tool_calls" not in message.metadata


ONE_RUN = [user_input("u_1"), *run_group("r1", 1), *run_group("r1", 2), *run_group("r1", 3)]
FIVE_IN_ONE_RUN = [user_input("u_1"), *(m for n in range(1, 6) for m in run_group("r1", n))]


# toolHistoryCompressor.strategy.test.ts: "defaults to strategy: 'per-run'" and "strategy: 'none' keeps tool
# groups unchanged when the safety cap is not exceeded"
@pytest.mark.parametrize("tool_history", [DROP, {"strategy": "none", **DROP}])
def test_per_run_default_and_none_keep_the_one_run(tool_history):
    messages = [*ONE_RUN, user_input("u_current")]
    result = preprocess(messages, toolHistory=tool_history)
    assert ids(result.preprocessed) == ids(messages)
    assert result.strategies_applied.count("tool_history_drop") == 0


# toolHistoryCompressor.strategy.test.ts: "strategy: 'per-pair' keeps the latest two global tool groups" and
# "retentionMode: 'compress' keeps the previous summary replacement behavior"
@pytest.mark.parametrize(
    ("mode", "strategy", "count"),
    [("drop", "tool_history_drop", 0), ("compress", "tool_history_compression", 1)],
)
def test_per_pair_two_of_one_run(mode, strategy, count):
    messages = [*ONE_RUN, user_input("u_current")]
    result = preprocess(
        messages, toolHistory={"strategy": "per-pair", "keepLatestToolPairs": 2, "retentionMode": mode}
    )
    out = ids(result.preprocessed)
    assert "a_r1_1" not in out and "t_r1_1" not in out
    assert out[-5:] == ["a_r1_2", "t_r1_2", "a_r1_3", "t_r1_3", "u_current"]
    assert len(compressed(result)) == count
    assert strategy in result.strategies_applied


# toolHistoryCompressor.strategy.test.ts: "strategy: 'per-run' with keepLatestRuns: 1 keeps every group in the
# latest historical run" and "... keepLatestRuns: 2 keeps the latest two historical runs"
def test_per_run_keeps_whole_runs():
    messages = [*FIVE_IN_ONE_RUN, user_input("u_current")]
    result = preprocess(messages, toolHistory={"strategy": "per-run", "keepLatestRuns": 1, **DROP})
    assert ids(result.preprocessed) == ids(messages)
    two_runs = [
        user_input("u_1"),
        *run_group("r1", 1),
        *run_group("r1", 2),
        user_input("u_2"),
        *run_group("r2", 1),
        *run_group("r2", 2),
        *run_group("r2", 3),
        user_input("u_current"),
    ]
    result = preprocess(two_runs, toolHistory={"strategy": "per-run", "keepLatestRuns": 2, **DROP})
    assert ids(result.preprocessed) == ids(two_runs)
    assert compressed(result) == []


# toolHistoryCompressor.strategy.test.ts: "overflowStrategy: 'keep-latest' keeps the latest groups when
# per-run exceeds maxInteractionGroups"
def test_keep_latest_overflow_keeps_the_newest_groups():
    messages = [*FIVE_IN_ONE_RUN, user_input("u_current")]
    result = preprocess(
        messages,
        toolHistory={
            "strategy": "per-run",
            "keepLatestRuns": 1,
            "maxInteractionGroups": 3,
            "overflowStrategy": "keep-latest",
            **DROP,
        },
        workingMemory={"maxRecentToolInteractions": 2},
    )
    assert ids(result.preprocessed) == [
        "u_1",
        "a_r1_3",
        "t_r1_3",
        "a_r1_4",
        "t_r1_4",
        "a_r1_5",
        "t_r1_5",
        "u_current",
    ]
    assert "tool_history_drop" in result.strategies_applied


# toolHistoryCompressor.strategy.test.ts: "overflowStrategy: 'fail-fast' throws a typed ContextProviderError"
def test_fail_fast_overflow_is_a_fatal_typed_error():
    messages = [*FIVE_IN_ONE_RUN, user_input("u_current")]
    result = preprocess(
        messages,
        toolHistory={
            "strategy": "per-run",
            "keepLatestRuns": 1,
            "maxInteractionGroups": 3,
            "overflowStrategy": "fail-fast",
        },
        workingMemory={"maxRecentToolInteractions": 2},
    )
    assert result.error is not None
    assert (result.error.code, result.error.provider_name) == (
        "TOOL_HISTORY_OVERFLOW",
        "ToolHistoryCompressorPreprocessor",
    )


# -- CheckpointSummarizationProvider (checkpointSummarizationProvider.test.ts) ----------------------------


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


# -- Read from linnkit 0.21.0's source (no linnkit test covers these edges) -------------------------------


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


# toolHistoryCompressor.ts builds its groups without a checkpoint tool name: a group calling
# `context_checkpoint` is the compressor's checkpoint group whatever checkpoint.triggerToolName says, and
# one calling the trigger tool is not
def test_the_compressor_knows_only_context_checkpoint():
    custom = [
        tool_calls("a_cp", ("tc_cp", "phase_checkpoint", {})),
        tool_output("t_cp", "tc_cp", "phase_checkpoint", "saved"),
    ]
    builtin = [
        tool_calls("a_ctx", ("tc_ctx", "context_checkpoint", {})),
        tool_output("t_ctx", "tc_ctx", "context_checkpoint", "saved"),
    ]
    layer = {
        "toolHistory": {"strategy": "per-pair", "keepLatestToolPairs": 1, **DROP},
        "checkpoint": {"triggerToolName": "phase_checkpoint"},
    }
    messages = [user_input("u_1"), *builtin, *read_group(1), *custom, *read_group(2), user_input("u_now")]
    result = preprocess(messages, **layer)
    assert ids(result.preprocessed) == ["u_1", "a_ctx", "t_ctx", "a_tc_2", "t_out_2", "u_now"]


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


# toolInteractionGroup.ts: an anchor that declares one call id twice gives the output to the first call
# only, so the group is never complete: the compressor leaves it alone
def test_a_call_id_declared_twice_in_one_anchor_makes_an_incomplete_group():
    twice = tool_calls("a_dup", ("tc_dup", "search", {"q": 1}), ("tc_dup", "search", {"q": 2}))
    messages = [
        user_input("u_1"),
        twice,
        tool_output("t_dup", "tc_dup", "search", "one"),
        *read_group(1),
        user_input("u_2"),
        *read_group(2),
        user_input("u_now"),
    ]
    result = preprocess(messages, toolHistory={"strategy": "per-pair", "keepLatestToolPairs": 1, **DROP})
    assert ids(result.preprocessed) == ["u_1", "a_dup", "t_dup", "u_2", "a_tc_2", "t_out_2", "u_now"]


# toolInteractionGroup.ts: a tool name that JavaScript's trim() leaves non-empty is kept ("\x1c" is no JS
# whitespace), one it empties becomes unknown_tool ("\ufeff" is)
def test_blank_tool_names_by_javascript_trim():
    messages = [
        user_input("u_1"),
        tool_calls("a_1", ("c_1", "\x1c", {})),
        tool_output("t_1", "c_1", "x", "one"),
        tool_calls("a_2", ("c_2", "\ufeff", {})),
        tool_output("t_2", "c_2", "x", "two"),
        user_input("u_2"),
        *read_group(3),
        user_input("u_now"),
    ]
    result = preprocess(
        messages, toolHistory={"strategy": "per-run", "keepLatestRuns": 1, "retentionMode": "compress"}
    )
    names = [m.metadata["compressedToolNames"] for m in compressed(result)]
    assert names == [["\x1c"], ["unknown_tool"]]


# toolInteractionGroup.runOrdinal.test.ts: "assigns runOrdinal 0 to tool groups before any user_input" and
# "increments runOrdinal by user_input boundaries and keeps the current run as max ordinal"
def test_run_ordinals_count_user_inputs_before_the_anchor():
    messages = [
        *run_group("before_user", 1),
        user_input("u_1"),
        *run_group("run_1_a", 1),
        *run_group("run_1_b", 1),
        user_input("u_2"),
        *run_group("run_2", 1),
    ]
    groups = build_groups(messages)
    assert [(g.anchor_id, g.run_ordinal) for g in groups] == [
        ("a_before_user_1", 0),
        ("a_run_1_a_1", 1),
        ("a_run_1_b_1", 1),
        ("a_run_2_1", 2),
    ]


# ToolPairMatcher.test.ts: "finds full tool groups from either tool_calls or tool_output members" and
# "returns null when no matching pair exists"
def test_a_group_holds_every_output_of_its_calls():
    messages = [
        tool_calls("tc1", ("call_1", "t", {}), ("call_2", "t", {})),
        tool_output("to1", "call_1", "t", "a"),
        tool_output("to2", "call_2", "t", "b"),
    ]
    (group,) = build_groups(messages)
    assert (group.indices, group.complete) == ([0, 1, 2], True)
    assert build_groups([tool_output("to1", "call_nonexistent", "t", "a")]) == []


# toolHistoryCompressor.ts keeps groups by anchor id (keepAnchorIds): with a repeated message id, an older
# group whose anchor shares the id of a kept anchor stays too, and the cap counts distinct anchor ids
def test_the_compressor_keeps_groups_by_anchor_id():
    old = [tool_calls("a_dup", ("c_old", "search", {})), tool_output("t_old", "c_old", "search", "old")]
    new = [tool_calls("a_dup", ("c_new", "search", {})), tool_output("t_new", "c_new", "search", "new")]
    messages = [user_input("u_1"), *old, *read_group(1), *new, user_input("u_now")]
    result = preprocess(messages, toolHistory={"strategy": "per-pair", "keepLatestToolPairs": 1, **DROP})
    assert ids(result.preprocessed) == ["u_1", "a_dup", "t_old", "a_dup", "t_new", "u_now"]
    capped = {"strategy": "none", "maxInteractionGroups": 1, "overflowStrategy": "keep-latest", **DROP}
    result = preprocess(messages, toolHistory=capped, workingMemory={"maxRecentToolInteractions": 1})
    assert ids(result.preprocessed) == ["u_1", "a_dup", "t_old", "a_dup", "t_new", "u_now"]


# CheckpointSummarizationProvider.ts normalizeTriggerToolName: the name is trimmed, and a blank one is the
# default `context_checkpoint`
def test_checkpoint_trigger_tool_name_is_trimmed():
    messages = [SYSTEM, text("u", "user", "user_input", "old"), *pair(1), *cp_pair(name="phase_checkpoint")]
    assert run_cp(messages, triggerToolName="  phase_checkpoint ")[1] == ["checkpoint_trim_before"]
    assert run_cp([SYSTEM, text("u", "user", "user_input", "old"), *cp_pair()], triggerToolName=" ")[1] == [
        "checkpoint_trim_before"
    ]


# toolHistoryCompressor.ts per-pair: `nonCheckpointGroups.slice(-keepLatestToolPairs)` keeps every group
# when there are fewer than keepLatestToolPairs (found by running linnkit 0.21.0 on random cases)
def test_per_pair_keeps_all_groups_when_there_are_fewer_than_the_count():
    messages = [*ONE_RUN, user_input("u_current")]
    result = preprocess(messages, toolHistory={"strategy": "per-pair", "keepLatestToolPairs": 4, **DROP})
    assert ids(result.preprocessed) == ids(messages)
