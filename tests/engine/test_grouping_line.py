"""Working memory's grouping along a replay: each step goes on from an earlier step's scan, so a long replay
reads each message a few times, not its whole history at every user input; the groups are a fresh scan's."""

from __future__ import annotations

import json

import pytest

from engine.groups import GroupScan
from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.providers import working_memory
from engine.replay import iter_session_steps
from engine.stage_cache import forget_earlier_builds
from engine.tokens import DefaultTokenizer


def _session(turns: int) -> list[AiMessage]:
    """A user input, three tool groups and an answer per turn."""
    out = [AiMessage("sys", "system", "system_prompt", "You are a careful coding agent.", 0)]
    for turn in range(turns):
        out.append(AiMessage(f"u{turn}", "user", "user_input", f"fix test {turn}", turn))
        for k in range(3):
            arguments = json.dumps({"path": f"f{turn}_{k}.py"})
            call = {
                "id": f"c{turn}_{k}",
                "type": "function",
                "function": {"name": "read", "arguments": arguments},
            }
            out.append(AiMessage(f"a{turn}_{k}", "assistant", "tool_calls", "", turn, {"tool_calls": [call]}))
            meta = {"tool_call_id": call["id"], "tool_name": "read"}
            out.append(
                AiMessage(f"t{turn}_{k}", "tool", "tool_output", f"def f{k}(): ...\n" * 20, turn, meta)
            )
        out.append(AiMessage(f"f{turn}", "assistant", "final_answer", f"fixed {turn}", turn))
    return out


@pytest.mark.parametrize("strategy", ["per-run", "per-pair", "none"])
def test_a_replay_scans_each_message_a_few_times_and_groups_as_a_fresh_scan(
    monkeypatch, strategy: str
) -> None:
    messages = _session(125)  # 1,001 messages, 500 steps
    scanned: list[int] = []
    extend = GroupScan.extend

    def counted(self: GroupScan, seen, *rest):
        scanned.append(len(seen) - self.length)
        return extend(self, seen, *rest)

    monkeypatch.setattr(GroupScan, "extend", counted)
    made: list[list] = []
    grouping = working_memory._grouping

    def kept(states, *rest):
        groups = grouping(states, *rest)
        made.append(([s.message for s in states], rest, groups))
        return groups

    monkeypatch.setattr(working_memory, "_grouping", kept)
    forget_earlier_builds()
    policy = define_context_policy({"toolHistory": {"strategy": strategy}})
    steps = list(iter_session_steps(messages, policy, tokenizer=DefaultTokenizer(), detail=False))
    assert len(steps) == 500
    # the scans of working memory and of the compressor: at most a turn or two back at a user input; the
    # scan from the first step's at every user input read about 40,000
    assert sum(scanned) < 10 * len(messages)
    monkeypatch.undo()
    for seen, (checkpoint_tool, distance), groups in made[::37]:
        assert groups == GroupScan().extend(seen, checkpoint_tool, distance).groups  # a scan from nothing
