"""A tool group's answered calls (engine/groups.py): each call id once, complete when every call is."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

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


def _anchor(mid: str, *cids: str) -> AiMessage:
    return AiMessage(mid, "assistant", "tool_calls", "", 1, {"tool_calls": [_call(c) for c in cids]})


@settings(max_examples=150, deadline=None)
@given(
    plan=st.lists(st.tuples(st.booleans(), st.integers(0, 5)), min_size=1, max_size=40),
    cuts=st.lists(st.integers(1, 40), max_size=6),
    asked=st.lists(st.booleans(), min_size=8, max_size=8),
)
def test_a_scan_extended_step_by_step_pairs_and_completes_as_a_fresh_scan(plan, cuts, asked):
    """Calls answered late (an output for an earlier group) change groups before the newest: the outputs a
    scan pairs through the declarations it shares with earlier scans, and the complete groups it carries
    over from the one it was extended from, must be those of a fresh scan."""
    messages: list[AiMessage] = []
    for number, (is_call, back) in enumerate(plan):
        if is_call or not messages:
            messages.append(_anchor(f"a{number}", f"c{number}"))
        else:
            calls = [m for m in messages if m.type == "tool_calls"]
            target = calls[max(0, len(calls) - 1 - back)]
            messages.append(_output(f"o{number}", target.tool_calls[0]["id"]))
    scan = GroupScan()
    ends = sorted({min(c, len(messages)) for c in cuts} | {len(messages)})
    for step, end in enumerate(ends):
        scan = scan.extend(messages[:end], "context_checkpoint")
        if asked[step % len(asked)] or end == len(messages):
            fresh = GroupScan().extend(messages[:end], "context_checkpoint")
            assert scan.groups == fresh.groups and scan.complete == fresh.complete  # outputs paired alike
            assert scan.complete_groups() == fresh.complete_groups()
            assert [g.anchor_id for g in scan.complete_groups()] == [
                g.anchor_id for g, done in zip(fresh.groups, fresh.complete, strict=True) if done
            ]


def test_two_scans_going_on_from_one_leave_it_and_each_other_as_they_were():
    """A scan's group lists are its base's up to the first group it changed (`engine.lineage`): a second scan
    from the same base, one answering an earlier call and one adding a group, must not see the other's."""
    base_messages = [_anchor("a1", "c1"), _anchor("a2", "c2"), _output("o2", "c2")]
    base = GroupScan().extend(base_messages, "context_checkpoint")
    groups, complete = list(base.groups), list(base.complete)
    answered = base.extend([*base_messages, _output("o1", "c1")], "context_checkpoint")
    added = base.extend([*base_messages, _anchor("a3", "c3")], "context_checkpoint")
    assert base.groups == groups and base.complete == complete == [False, True]
    assert [g.anchor_id for g in answered.groups] == ["a1", "a2"] and answered.complete == [True, True]
    assert [g.anchor_id for g in added.groups] == ["a1", "a2", "a3"]
    assert added.complete == [False, True, False]
    assert answered.groups[1] is base.groups[1] and added.groups[0] is base.groups[0]  # shared, not copied
    assert base.groups[0].output_indices == [] and answered.groups[0].output_indices == [3]
