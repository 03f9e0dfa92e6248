"""What a build carries over from the last one: the grouping scan (engine/groups.py), core's must-keep
positions (engine/providers/core.py) and the checkpoint tool's first call (engine/providers/checkpoint.py).
Each must equal what a build from nothing finds."""

from __future__ import annotations

from engine.groups import _SCANS, GroupScan, build_groups
from engine.messages import AiMessage
from engine.pipeline import MustKeep
from engine.preprocess.base import Entry
from engine.providers import checkpoint, core, working_memory
from engine.providers.state import States, starting_states


def _turn(n: int) -> list[AiMessage]:
    call = {"id": f"c{n}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    return [
        AiMessage(f"u{n}", "user", "user_input", f"turn {n}", n),
        AiMessage(f"a{n}", "assistant", "tool_calls", "", n, {"tool_calls": [call]}),
        AiMessage(f"t{n}", "tool", "tool_output", "ok", n, {"tool_call_id": f"c{n}", "tool_name": "grep"}),
        AiMessage(f"f{n}", "assistant", "final_answer", f"done {n}", n),
    ]


def _session(turns: int) -> list[AiMessage]:
    return [message for n in range(1, turns + 1) for message in _turn(n)]


def _fresh(messages: list[AiMessage]) -> list[tuple]:
    return [
        (g.anchor_id, g.output_indices, g.run_ordinal, g.complete)
        for g in GroupScan().extend(messages, "context_checkpoint").groups
    ]


def _shape(groups) -> list[tuple]:
    return [(g.anchor_id, g.output_indices, g.run_ordinal, g.complete) for g in groups]


def test_a_longer_list_goes_on_from_the_scan_of_the_list_it_starts_with():
    _SCANS.clear()
    messages = _session(5)
    first = build_groups(messages)
    # the next step: the same objects and a call awaiting its output
    longer = [*messages, *_turn(6)[:2]]
    grown = build_groups(longer)
    assert _shape(grown) == _fresh(longer)
    assert all(a is b for a, b in zip(first, grown[:5], strict=True))  # the groups it left unchanged
    assert not grown[-1].complete
    # its output arrives: that group is copied, the earlier list's groups stay as they were
    answered = [*longer, _turn(6)[2]]
    assert _shape(build_groups(answered)) == _fresh(answered)
    assert not grown[-1].complete and build_groups(answered)[-1].complete
    assert build_groups(messages) is first  # the very same list: its scan, not a new one


def test_a_list_that_differs_inside_is_scanned_from_its_start():
    _SCANS.clear()
    messages = _session(4)
    build_groups(messages)
    changed = list(messages)
    changed[5] = AiMessage("a2", "assistant", "tool_calls", "", 2, {"tool_calls": [
        {"id": "other", "type": "function", "function": {"name": "grep", "arguments": "{}"}}]})  # fmt: skip
    changed.append(_turn(5)[0])
    groups = build_groups(changed)
    assert _shape(groups) == _fresh(changed)
    assert groups[1].anchor_id == "a2" and groups[1].output_indices == [] and not groups[1].complete


def _states(messages: list[AiMessage], base: States | None = None) -> States:
    entries = [Entry(m, (i,)) for i, m in enumerate(messages)]
    tokens = [5] * len(messages)
    shared = base.initial_tokens if base is not None else None
    kept = len(base) if base is not None else 0
    states = starting_states(entries, tokens, list(base[:kept]) if base is not None else None)
    return States(states, tokens, (shared, kept) if shared is not None else None)


MUST_KEEP = MustKeep(frozenset({"system_prompt", "user_input", "history_summary"}), frozenset(), ())


def _fresh_positions(messages: list[AiMessage]) -> list[int]:
    return core._core_positions(_states(messages)[:], MUST_KEEP)  # a plain list: nothing carried


def test_core_positions_carried_to_a_longer_list_equal_a_fresh_search():
    core._POSITIONS.clear()
    system = AiMessage("sys", "system", "system_prompt", "be brief", 0)
    messages = [system, *_session(3)]
    first = _states(messages)
    assert core._core_positions(first, MUST_KEEP) == [0, 9]  # the system prompt and the last user input
    longer = [*messages, AiMessage("s1", "system", "history_summary", "so far", 4), *_turn(4)[:2]]
    grown = _states(longer, first)
    assert core._core_positions(grown, MUST_KEEP) == _fresh_positions(longer) == [0, 13, 14]
    # no new user input: the last is still the one the shared part holds
    tail = [*longer, _turn(4)[2]]
    assert core._core_positions(_states(tail, grown), MUST_KEEP) == _fresh_positions(tail) == [0, 13, 14]


def test_core_positions_find_the_last_user_input_again_when_the_earlier_one_lies_past_the_shared_part():
    core._POSITIONS.clear()
    messages = _session(3)
    first = _states(messages)
    assert core._core_positions(first, MUST_KEEP) == [8]
    # a build sharing only the first 6 entries (compression changed the rest): u3 at 8 is not among them
    other = [*messages[:6], AiMessage("x", "assistant", "final_answer", "short", 3)]
    entries = [Entry(m, (i,)) for i, m in enumerate(other)]
    states = States(starting_states(entries, [5] * 7, list(first[:6])), [5] * 7, (first.initial_tokens, 6))
    assert core._core_positions(states, MUST_KEEP) == _fresh_positions(other) == [4]


def _checkpoint_call(n: int) -> AiMessage:
    call = {"id": f"k{n}", "type": "function", "function": {"name": "context_checkpoint", "arguments": "{}"}}
    return AiMessage(f"k{n}", "assistant", "tool_calls", "", n, {"tool_calls": [call]})


def test_the_checkpoint_calls_first_position_is_carried_to_a_grown_set_of_states():
    checkpoint._FIRST_CALLS.clear()
    messages = _session(2)
    first = _states(messages)
    assert checkpoint._first_call(first, "context_checkpoint") is None
    longer = [*messages, _checkpoint_call(3), *_turn(3)]
    grown = _states(longer, first)
    assert checkpoint._first_call(grown, "context_checkpoint") == 8  # only the new states were read
    tail = _states([*longer, *_turn(4)], grown)
    assert checkpoint._first_call(tail, "context_checkpoint") == 8
    assert checkpoint._first_call(tail, "other_tool") is None


def test_a_checkpoint_call_past_the_shared_part_is_looked_for_again():
    checkpoint._FIRST_CALLS.clear()
    messages = [*_session(2), _checkpoint_call(3)]
    first = _states(messages)
    assert checkpoint._first_call(first, "context_checkpoint") == 8
    other = [*messages[:8], *_turn(3)]  # shares the first 8 entries: the call is not among them
    entries = [Entry(m, (i,)) for i, m in enumerate(other)]
    states = States(starting_states(entries, [5] * 12, list(first[:8])), [5] * 12, (first.initial_tokens, 8))
    assert checkpoint._first_call(states, "context_checkpoint") is None


def _created(message_id: str, n: int) -> Entry:
    return Entry(AiMessage(message_id, "assistant", "final_answer", f"compressed {n}", n), (n,), True)


def test_created_ids_are_checked_from_where_the_last_checked_list_ended():
    from engine.lineage import grown
    from engine.preprocess.base import distinct_created, forget_checked

    forget_checked()
    plain = [Entry(m, (i,)) for i, m in enumerate(_session(2))]
    first = grown([], [*plain, _created("compressed:a1", 8)])
    assert distinct_created(first) is first  # no id repeats: the list itself
    longer = grown(first, [_created("compressed:a2", 9)])
    assert distinct_created(longer) is longer
    # the next step's new created message repeats an id of the part already checked: renamed, as from nothing
    repeated = grown(longer, [_created("compressed:a1", 10)])
    out = distinct_created(repeated)
    assert [e.message.id for e in out if e.created] == ["compressed:a1", "compressed:a2", "compressed:a1#2"]
    forget_checked()
    assert [e.message.id for e in distinct_created(repeated)] == [e.message.id for e in out]


def test_created_ids_of_a_list_forked_near_the_checked_ones_end_drop_its_tail():
    from engine.lineage import forked, grown
    from engine.preprocess.base import distinct_created, forget_checked

    forget_checked()
    plain = [Entry(m, (i,)) for i, m in enumerate(_session(2))]
    checked = grown([], [*plain, _created("compressed:a1", 8), _created("compressed:a2", 9)])
    assert distinct_created(checked) is checked
    # the compressor replaced the last group: a fork whose new entry takes the id only the dropped tail held
    replaced = forked(checked, len(checked) - 1, [_created("compressed:a2", 10)])
    assert distinct_created(replaced) is replaced
    # a fork whose new entry repeats an id of the shared part: renamed, as from nothing
    repeated = forked(replaced, len(replaced) - 1, [_created("compressed:a1", 11)])
    out = distinct_created(repeated)
    assert [e.message.id for e in out if e.created] == ["compressed:a1", "compressed:a1#2"]


def _calls(message_id: str, call: str) -> AiMessage:
    tool_call = {"id": call, "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
    return AiMessage(message_id, "assistant", "tool_calls", "", 0, {"tool_calls": [tool_call]})


def test_a_scan_knows_whether_anchors_repeat_an_id_and_whether_a_group_is_a_checkpoint():
    plain = GroupScan().extend(_session(3), "context_checkpoint")
    assert (plain.repeated_anchor, plain.any_checkpoint) == (False, False)
    again = [*_session(3), _calls("a2", "c9")]  # a second anchor with the id a2
    assert GroupScan().extend(again, "context_checkpoint").repeated_anchor is True
    assert plain.extend(again, "context_checkpoint").repeated_anchor is True
    assert plain.repeated_anchor is False  # the scan it went on from is unchanged
    checkpoint = [*_session(1), _calls("a9", "c9")]
    assert GroupScan().extend(checkpoint, "read_file").any_checkpoint is True


def test_two_lists_going_on_from_one_scan_with_an_id_at_other_places_is_a_false_alarm_only():
    start = GroupScan().extend(_session(1), "context_checkpoint")
    one = start.extend([*_session(1), _calls("x", "c5")], "context_checkpoint")
    other = start.extend([*_session(1), _turn(2)[0], _calls("x", "c6")], "context_checkpoint")
    assert one.repeated_anchor is False
    assert other.repeated_anchor is True  # "x" was met at index 4 by `one`: told to look at the groups
    assert _shape(other.groups) == _fresh([*_session(1), _turn(2)[0], _calls("x", "c6")])


def test_a_long_scan_made_afresh_keeps_its_mark_and_an_earlier_step_goes_on_from_it(monkeypatch):
    """The TUI's timeline going back over a user input: the set shares the first states of the one built
    last, but less than all; its groups come from the mark, not from a scan of every state again."""
    working_memory._SCANS.clear()
    _SCANS.clear()
    monkeypatch.setattr(working_memory, "MARK_AFTER", 8)
    monkeypatch.setattr(working_memory, "MARK_BACK", 6)
    messages = _session(6)
    latest = _states(messages)
    assert _shape(working_memory._grouping(latest, "context_checkpoint", None)) == _fresh(messages)
    # an earlier step: its first 20 states are the latest's, then compression made a message of its own
    earlier = [*messages[:20], AiMessage("x", "assistant", "final_answer", "compressed", 5)]
    entries = [Entry(m, (i,)) for i, m in enumerate(earlier)]
    tokens = [5] * 21
    states = States(starting_states(entries, tokens, list(latest[:20])), tokens, (latest.initial_tokens, 20))

    def scan_afresh(*args):
        raise AssertionError("scanned afresh")

    monkeypatch.setattr(working_memory, "group_scan", scan_afresh)
    assert _shape(working_memory._grouping(states, "context_checkpoint", None)) == _fresh(earlier)
