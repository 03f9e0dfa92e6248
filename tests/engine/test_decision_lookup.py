"""A few messages' fates read without the rest (engine/session_index.py, engine/removal_index.py): at every
step of a replay, they are the fates the full decisions give."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import assemble
from engine.assemble import WireIndex, _carriers_named
from engine.lineage import grown
from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.preprocess.base import Removal
from engine.providers.state import State
from engine.removal_index import RemovedBy, stage_map
from engine.replay import iter_session_steps
from engine.sent import Sent
from engine.session import load_session
from engine.session_index import position_of_id, positions_of_type
from engine.tokens import DefaultTokenizer

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


@pytest.mark.parametrize("name", ["summarization_trigger", "tool_loop_runs", "checkpoint_midtask"])
def test_each_steps_user_requests_and_a_message_by_id_have_the_fates_of_the_full_decisions(name: str):
    messages = load_session(SAMPLES / f"{name}.jsonl").messages
    policy = define_context_policy({"budget": {"maxTokens": 2500, "reservedForResponse": 200}})
    steps = 0
    for step in iter_session_steps(messages, policy, tokenizer=DefaultTokenizer(), now=1):
        result = step.result
        users = result.decisions_of_type("user_input")  # before the full decisions are made
        probe = messages[min(len(messages) // 3, step.point.message_count - 1)].id
        alone = result.decision_for(probe)
        everything = result.decisions
        assert users == tuple(d for d in everything if d.index >= 0 and d.type == "user_input")
        assert alone == next(d for d in everything if d.message_id == probe)
        steps += 1
    assert steps > 5


@pytest.mark.parametrize("near_end", [assemble.NEAR_END, 1])  # a carrier found from the end, or mapped
@pytest.mark.parametrize(
    ("name", "fates_met"),
    [
        ("summarization_trigger", {
            "replaced_by_ai_history_summarization",
            "replaced_by_summary_replacement_cleanup",
        }),
        ("tool_loop_runs", {"replaced_by_tool_history_compression", "dropped_by_budget_or_priority"}),
        ("checkpoint_midtask", {"dropped_by_budget_or_priority"}),
    ],
)
def test_every_message_alone_has_its_full_decision_kept_removed_carried_or_summarised(
    name: str, fates_met: set[str], near_end: int, monkeypatch
):
    """Each lookup maps the states only as its message needs (by id for a carried one, by origin for one not
    removed): every kind of fate must still come out as the full decisions say."""
    monkeypatch.setattr(assemble, "NEAR_END", near_end)
    messages = load_session(SAMPLES / f"{name}.jsonl").messages
    policy = define_context_policy(
        {"budget": {"maxTokens": 900, "reservedForResponse": 100}, "summarization": {"triggerThreshold": 0.3}}
    )
    reasons = set()
    for step in iter_session_steps(messages, policy, tokenizer=DefaultTokenizer(), now=1):
        result = step.result
        seen = messages[: step.point.message_count]
        alone = [result.decision_for(m.id) for m in seen]  # before the full decisions are made
        first = {}
        for decision in result.decisions:
            first.setdefault(decision.message_id, decision)
        assert alone == [first[m.id] for m in seen]
        reasons |= {d.reason for d in alone}
    assert fates_met | {"kept_by_CORE_CONTEXT"} <= reasons


class _Run:
    """What `_carriers_named` reads of a build: its states, and its map of them by id (counted)."""

    def __init__(self, states: list[State]) -> None:
        self.states, self.by_id, self.maps = states, None, 0

    def carriers(self) -> dict[str, State]:
        self.maps += 1
        self.by_id = {s.message.id: s for s in self.states}
        return self.by_id


def test_named_carriers_near_the_end_are_found_without_a_map_and_the_last_state_of_an_id_wins():
    states = [State(_message(n % 100), n, (n,), 1) for n in range(600)]  # each id six times
    states[10] = State(AiMessage("early", "user", "user_input", "x", 10), 10, (10,), 1)
    run = _Run(states)
    named = [Removal((1,), "tool_history_compression", "m99"), None, Removal((2,), "x", "m50")]
    found = _carriers_named(run, named)  # type: ignore[arg-type]
    assert found == {"m99": states[599], "m50": states[550]} and run.maps == 0
    assert _carriers_named(run, [None, Removal((3,), "x")]) == {}  # none named: none read
    far = _carriers_named(run, [Removal((1,), "x", "early")])
    assert far["early"] is states[10] and far["m5"] is states[505] and run.maps == 1  # all mapped
    assert _carriers_named(run, [Removal((1,), "x", "gone")]).get("gone") is None


def test_a_wire_index_reads_a_few_states_from_the_ids_and_maps_them_all_past_a_few():
    final = [State(_message(n), n, (n,), 1) for n in range(40)]
    index = WireIndex(final, Sent(ids=[id(s) for s in final]))
    assert [index.get(id(final[k])) for k in (0, 39, 7)] == [0, 39, 7] and index._map is None
    assert index.get(id(object())) is None  # not a final state
    assert [index.get(id(s)) for s in final] == list(range(40)) and index._map is not None
    # a state the formatter dropped is off the wire, and those after it move up one
    index = WireIndex(final, Sent(ids=[id(s) for s in final], unformatted=[final[3]]))
    assert (index.get(id(final[3])), index.get(id(final[4])), index.get(id(final[2]))) == (None, 3, 2)


def _message(n: int, kind: str = "user_input") -> AiMessage:
    return AiMessage(f"m{n}", "user", kind, f"text {n}", n)


def test_positions_are_read_once_per_line_of_lists_and_cut_at_each_lists_length():
    first = grown([], [_message(0), _message(1, "final_answer"), _message(2)])
    assert positions_of_type(first, "user_input") == [0, 2]
    longer = grown(first, [_message(3, "final_answer"), _message(1)])  # a repeated id: the first counts
    assert positions_of_type(longer, "user_input") == [0, 2, 4]
    assert positions_of_type(first, "user_input") == [0, 2]  # the shorter list of the line, after
    assert position_of_id(longer, "m1") == 1 and position_of_id(first, "m3") is None
    assert position_of_id(longer, "m3") == 3 and positions_of_type(longer, "tool_calls") == []
    plain = [_message(5), _message(6, "final_answer")]  # of no line: an index of its own
    assert positions_of_type(plain, "final_answer") == [1] and position_of_id(plain, "m0") is None


def _reference(lists: list[list[Removal]], renamed: dict[str, str]) -> dict[int, Removal]:
    """The one map per build the index replaces."""
    out = {}
    for removal in (r for removals in lists for r in removals):
        new = renamed.get(removal.replaced_by) if removal.replaced_by else None
        scoped = removal if new is None else Removal(removal.origins, removal.strategy, new, removal.note)
        for origin in removal.origins:
            out[origin] = scoped
    return out


def test_a_removal_is_the_last_stages_with_its_carrier_renamed():
    compressed = [
        Removal((1, 2), "tool_history_compression", "compressed:a1"),
        Removal((4, 5), "tool_history_drop"),
    ]
    later = [Removal((2, 5, 7), "summary_replacement_cleanup", "summary:1")]
    renamed = {"compressed:a1": "compressed:e1:a1"}
    removed = RemovedBy([compressed, [], later], lambda: renamed)
    reference = _reference([compressed, [], later], renamed)
    assert {o: removed.get(o) for o in range(9)} == {o: reference.get(o) for o in range(9)}
    assert (
        removed.get(1).replaced_by == "compressed:e1:a1"
        and removed.get(2).strategy == "summary_replacement_cleanup"
    )
    assert removed.get(1) is removed.get(1) and removed.get(0) is None
    assert removed.of([8, 2, 1, 4, 0]) == [None, later[0], removed.get(1), compressed[1], None]  # read in C
    asked: list[int] = []
    lazy = RemovedBy([compressed], lambda: asked.append(1) or renamed)
    assert lazy.of([0, 4, 5]) == [None, compressed[1], compressed[1]] and asked == []  # no carrier named
    assert lazy.of([1]) == [removed.get(1)] and lazy.get(2) == removed.get(1) and asked == [1]


def test_a_stages_map_is_made_once_for_its_removals_and_carried_to_a_longer_list_of_them():
    first = [Removal((1,), "tool_history_drop"), Removal((3, 4), "tool_history_drop")]
    mapping = stage_map(first)
    assert stage_map(list(first)) is mapping  # the same removals in a new list
    more = [*first, Removal((4, 6), "tool_history_drop")]
    longer = stage_map(more)
    assert longer == {1: first[0], 3: first[1], 4: more[2], 6: more[2]} and longer is not mapping
    assert mapping == {1: first[0], 3: first[1], 4: first[1]}  # the shorter list's map is left as it was
    other = [Removal((1,), "tool_history_drop"), first[1]]  # another first removal: mapped anew
    assert stage_map(other) == {1: other[0], 3: first[1], 4: first[1]}
