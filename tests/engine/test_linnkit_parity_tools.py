"""linnkit 0.21.0's own tests of tool-history compression and tool interaction groups, as scenarios our
engine runs (each test names the linnkit test it follows; the assertions are linnkit's, written anew)."""

from __future__ import annotations

import json

import pytest

from engine.groups import build_groups
from tests.engine.parity_helpers import (
    checkpoint_raw,
    ids,
    preprocess,
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


def _five_groups_capped_at_three(overflow_strategy: str, **tool_history: object):
    """Five groups of one run, all selected by per-run, over a cap of three."""
    return preprocess(
        [*FIVE_IN_ONE_RUN, user_input("u_current")],
        toolHistory={
            "strategy": "per-run",
            "keepLatestRuns": 1,
            "maxInteractionGroups": 3,
            "overflowStrategy": overflow_strategy,
            **tool_history,
        },
        workingMemory={"maxRecentToolInteractions": 2},
    )


# toolHistoryCompressor.strategy.test.ts: "overflowStrategy: 'keep-latest' keeps the latest groups when
# per-run exceeds maxInteractionGroups"
def test_keep_latest_overflow_keeps_the_newest_groups():
    result = _five_groups_capped_at_three("keep-latest", **DROP)
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
    result = _five_groups_capped_at_three("fail-fast")
    assert result.error is not None
    assert (result.error.code, result.error.provider_name) == (
        "TOOL_HISTORY_OVERFLOW",
        "ToolHistoryCompressorPreprocessor",
    )


# -- Read from linnkit 0.21.0's source (no linnkit test covers these edges) -------------------------------


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


# toolHistoryCompressor.ts per-pair: `nonCheckpointGroups.slice(-keepLatestToolPairs)` keeps every group
# when there are fewer than keepLatestToolPairs (found by running linnkit 0.21.0 on random cases)
def test_per_pair_keeps_all_groups_when_there_are_fewer_than_the_count():
    messages = [*ONE_RUN, user_input("u_current")]
    result = preprocess(messages, toolHistory={"strategy": "per-pair", "keepLatestToolPairs": 4, **DROP})
    assert ids(result.preprocessed) == ids(messages)


def test_an_anchor_id_repeated_in_a_later_step_keeps_the_older_group_as_a_build_from_nothing():
    old = [tool_calls("a_dup", ("c_old", "search", {})), tool_output("t_old", "c_old", "search", "old")]
    first = [user_input("u_1"), *old, *read_group(1), *read_group(2), user_input("u_2")]
    new = [tool_calls("a_dup", ("c_new", "search", {})), tool_output("t_new", "c_new", "search", "new")]
    messages = [*first, *new, user_input("u_now")]
    per_pair = {"strategy": "per-pair", "keepLatestToolPairs": 1, **DROP}
    assert ids(preprocess(first, toolHistory=per_pair).preprocessed) == ["u_1", "a_tc_2", "t_out_2", "u_2"]
    result = preprocess(messages, toolHistory=per_pair)  # goes on from the first build's scan
    assert ids(result.preprocessed) == ["u_1", "a_dup", "t_old", "u_2", "a_dup", "t_new", "u_now"]
