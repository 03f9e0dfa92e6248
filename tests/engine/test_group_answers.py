"""A tool group's answered calls (engine/groups.py): each call id once, complete when every call is."""

from __future__ import annotations

from engine.groups import GroupScan
from engine.messages import AiMessage


def _call(cid: str) -> dict:
    return {"id": cid, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}


def _output(mid: str, cid: str) -> AiMessage:
    return AiMessage(mid, "tool", "tool_output", "ok", 1, {"tool_call_id": cid, "tool_name": "read_file"})


def test_a_call_answered_twice_is_listed_once_and_the_group_completes_with_its_last_call():
    anchor = AiMessage("a", "assistant", "tool_calls", "", 1, {"tool_calls": [_call("c1"), _call("c2")]})
    messages = [anchor, _output("o1", "c1"), _output("o2", "c1")]
    first = GroupScan().extend(messages, "context_checkpoint")
    (group,) = first.groups
    assert group.answered == ["c1"] and group.output_indices == [1, 2]
    assert not group.complete and first.complete == [False]
    later = first.extend([*messages, _output("o3", "c2")], "context_checkpoint")
    (grown,) = later.groups
    assert grown.answered == ["c1", "c2"] and grown.complete and later.complete == [True]
    assert group.answered == ["c1"] and not group.complete  # the earlier scan's group is left as it was
