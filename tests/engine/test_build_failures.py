"""Failing stages (spec §5.1, §5.2, §8): only fatal errors abort; others skip the stage and are reported."""

import pytest

import engine.build
from engine.build import build_context
from engine.errors import ContextProviderError
from engine.invariants import check_invariants
from engine.policy import define_context_policy
from engine.providers.state import own
from tests.pipeline_helpers import CHECKPOINT_RAW, answer, call, calls, output, sys, user


def checkpoint_session():
    return [
        sys(),
        user("u1"),
        answer("a1"),
        user("u2"),
        calls("cp", call("c_cp", "context_checkpoint", "{}")),
        output("t_cp", "c_cp", "Checkpoint saved", "context_checkpoint", raw_output=CHECKPOINT_RAW),
    ]


POLICY = define_context_policy(
    {"budget": {"maxTokens": 10000, "reservedForResponse": 1000}, "contextTrace": {"enabled": True}}
)


def test_the_checkpoint_prunes_when_it_works():
    result = build_context(checkpoint_session(), POLICY)
    assert result.decision_for("a1").reason == "dropped_by_CHECKPOINT_PURGED"


def test_a_provider_that_raises_loses_its_changes_and_its_trace_event(monkeypatch):
    def broken(states, available, ctx):
        own(states, 2).drop("CHECKPOINT_PURGED", "half-done")  # a change that must be rolled back
        raise RuntimeError("disk on fire")

    monkeypatch.setattr(engine.build, "run_checkpoint", broken)
    result = build_context(checkpoint_session(), POLICY)
    assert result.error is None
    assert result.decision_for("a1").kept
    assert result.decision_for("a1").reason == "kept_by_WORKING_MEMORY"
    providers = [e["providerName"] for e in result.trace["events"] if e["kind"] == "provider"]
    assert providers == ["CoreContextProvider", "WorkingMemoryProvider", "SummarizationProvider"]
    assert (
        result.warnings[-1]
        == "CheckpointProvider failed; its changes were discarded: RuntimeError('disk on fire')"
    )
    assert check_invariants(result).errors == ()


def test_a_non_fatal_preprocessor_error_skips_that_preprocessor(monkeypatch):
    def broken(*args):
        raise ContextProviderError("compressor confused", provider_name="ToolHistoryCompressorPreprocessor")

    monkeypatch.setattr(engine.build, "compress_tool_history", broken)
    result = build_context(checkpoint_session(), POLICY)
    assert result.error is None
    assert [m.id for m in result.preprocessed] == ["sys", "u1", "a1", "u2", "cp", "t_cp"]
    assert "a preprocessor failed and was skipped" in result.warnings[-1]
    assert "compressor confused" in result.warnings[-1]


def test_a_fatal_error_aborts_with_its_code(monkeypatch):
    def fatal(*args):
        raise ContextProviderError("no", code="TOOL_HISTORY_OVERFLOW", fatal=True, provider_name="X")

    monkeypatch.setattr(engine.build, "compress_tool_history", fatal)
    result = build_context(checkpoint_session(), POLICY)
    assert (result.error.code, result.error.message, result.wire) == ("TOOL_HISTORY_OVERFLOW", "no", ())


@pytest.mark.parametrize("include_ids", [True, False])
def test_token_components_follow_include_message_ids(include_ids):
    policy = define_context_policy({"contextTrace": {"enabled": True, "includeMessageIds": include_ids}})
    result = build_context([sys(), user("u1")], policy)
    components = result.trace["tokenComponents"]
    assert [c["componentId"] for c in components] == (["0:sys", "1:u1"] if include_ids else ["0", "1"])
    assert all(("messageId" in c) is include_ids for c in components)
