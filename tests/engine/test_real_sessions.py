"""Real agent transcripts through the whole engine: import, build, replay, invariants."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.build import build_context
from engine.importers import import_file
from engine.invariants import check_invariants
from engine.policy import define_context_policy
from engine.replay import replay_session

REAL = Path(__file__).resolve().parents[2].parent / "shared" / "real-sessions" / "claude-code"
pytestmark = pytest.mark.skipif(not REAL.is_dir(), reason=f"real transcripts not found at {REAL}")

TIGHT = {"budget": {"maxTokens": 6000, "reservedForResponse": 1000}, "contextTrace": {"enabled": True}}


@pytest.mark.parametrize("name", ["short.jsonl", "tool_heavy.jsonl"])
@pytest.mark.parametrize("layer", [None, TIGHT], ids=["defaults", "tight"])
def test_real_transcript_builds_without_invariant_violations(name, layer):
    messages = import_file(REAL / name).messages
    policy = define_context_policy({**(layer or {}), "contextTrace": {"enabled": True}})
    result = build_context(messages, policy)
    assert result.error is None
    assert check_invariants(result).errors == ()
    assert len(result.decisions) >= len(messages)
    kept = {m.id for m in result.messages}
    calls = {c["id"]: m.id for m in result.messages if m.type == "tool_calls" for c in m.tool_calls}
    for message in result.messages:  # every output on the wire travels with its call
        if message.type == "tool_output":
            assert calls.get(message.tool_call_id) in kept


def test_replay_of_a_real_transcript_has_one_build_per_llm_call():
    messages = import_file(REAL / "tool_heavy.jsonl").messages
    steps = replay_session(messages, define_context_policy(TIGHT))
    actions = sum(1 for m in messages if m.type in ("tool_calls", "final_answer"))
    assert len(steps) in (actions, actions + 1)  # + the call a session still waits for
    assert all(s.result.error is None and check_invariants(s.result).errors == () for s in steps)
    assert [s.point.message_count for s in steps] == sorted(s.point.message_count for s in steps)
