"""A summary's replacedMessageIds shares the old summary's list (engine.shared_ids) and reads as the list."""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.replay import iter_session_steps
from engine.shared_ids import IdSet, SharedIds, folded_ids, id_set
from tests.engine.test_replay_persisted import four_times  # noqa: F401  (the module's fixture)


def _chain() -> tuple[list[str], SharedIds, SharedIds]:
    base = ["u1", "a1", "u2"]
    first = SharedIds(["s1"], base, ["a2", "u3"])
    second = SharedIds(["u4", "s2"], first, ["a4"])
    return base, first, second


def test_a_chain_reads_as_the_flat_list():
    _, first, second = _chain()
    flat = ["u4", "s2", "s1", "u1", "a1", "u2", "a2", "u3", "a4"]
    assert list(second) == flat and len(second) == 9 and bool(second)
    assert [second[i] for i in range(9)] == flat
    assert [second[-i] for i in range(1, 10)] == flat[::-1]
    assert second[2:5] == ["s1", "u1", "a1"] and second[::-3] == ["a4", "u2", "s1"]
    assert list(reversed(second)) == flat[::-1]
    assert second == flat and flat == second and not (second != flat) and second != flat[:-1]
    assert second != tuple(flat)  # as the list it replaces: a list never equals a tuple
    assert "a2" in second and "zz" not in second
    assert second.index("u2") == 5 and second.count("u1") == 1
    assert repr(second) == repr(flat)
    assert second + ["x"] == [*flat, "x"] and ["x"] + second == ["x", *flat]
    with pytest.raises(IndexError):
        second[9]


def test_json_sets_and_copies_see_every_id():
    _, _, second = _chain()
    flat = list(second)
    assert json.dumps(second) == json.dumps(flat)
    indented = json.dumps({"replacedMessageIds": second}, indent=2)  # the pure-Python encoder
    assert indented == json.dumps({"replacedMessageIds": flat}, indent=2)
    assert frozenset(second) == frozenset(flat) and list(dict.fromkeys(second)) == flat
    for twin in (copy.copy(second), copy.deepcopy(second), pickle.loads(pickle.dumps(second))):
        assert type(twin) is list and twin == flat


def test_it_cannot_be_changed():
    _, _, second = _chain()
    for change in (lambda: second.append("x"), lambda: second.extend(["x"]), lambda: second.sort()):
        with pytest.raises(TypeError, match="cannot be changed"):
            change()
    with pytest.raises(TypeError):
        second[0] = "x"
    assert len(second) == 9


def test_folded_ids_is_the_distinct_concatenation_sharing_the_old_list():
    old = ["u1", "a1", "u2"]
    ids = folded_ids(["u4", "s1"], old, ["a2", "u1", "a2", "u5", "s1"])
    assert ids == ["u4", "s1", "u1", "a1", "u2", "a2", "u5"]
    assert isinstance(ids, SharedIds) and ids._parent is old
    # an old list with a repeated id, or an id before it that it holds: a plain list, the same ids
    for before, repeated in ((["u4"], ["u1", "u1"]), (["u1", "u4"], ["u1", "a1"])):
        plain = folded_ids(before, repeated, ["u5"])
        assert type(plain) is list and plain == list(dict.fromkeys([*before, *repeated, "u5"]))
    assert folded_ids(["u1", "u1", "a1"], None, []) == ["u1", "a1"]


def test_a_replay_summary_holds_the_one_before_it(four_times):  # noqa: F811
    """The 2nd summary's ids object holds the 1st's; equal, and the same JSON, as the flat list."""
    messages, policy = four_times
    made = [s for s in iter_session_steps(messages, policy) if s.persisted is not None]
    lists = [s.persisted.metadata["replacedMessageIds"] for s in made]
    assert len(lists) == 5 and type(lists[0]) is list
    for older, newer, step in zip(lists, lists[1:], made[1:], strict=False):
        assert isinstance(newer, SharedIds) and newer._parent is older
        at = len(newer._head)
        assert list(newer)[at : at + len(older)] == list(older)
        assert json.loads(json.dumps(newer)) == list(newer) == list(dict.fromkeys(newer))
        # the event a host persists is the message's own list
        assert step.result.summary_events[-1]["replaced_message_ids"] is newer
    held = sum(len(x._head) + len(x._tail) if isinstance(x, SharedIds) else len(x) for x in lists)
    assert held == len(lists[-1]) < sum(len(x) for x in lists)


@settings(max_examples=200, deadline=None)
@given(
    base=st.sets(st.text("abcdef", min_size=1, max_size=3), max_size=40),
    added=st.lists(st.lists(st.text("abcdefgh", min_size=1, max_size=3), max_size=6), max_size=12),
    probes=st.lists(st.text("abcdefgh", min_size=1, max_size=3), max_size=10),
)
def test_an_id_set_extended_summary_by_summary_reads_as_the_frozenset_of_its_ids(base, added, probes):
    made, expected = IdSet(frozenset(base)), frozenset(base)
    for ids in added:
        made, expected = made.with_ids(ids), expected | set(ids)
        assert len(made) == len(expected) and set(made) == expected
        assert all((p in made) == (p in expected) for p in probes)
        assert made.isdisjoint(probes) == expected.isdisjoint(probes)
        assert made.issubset(IdSet(expected | set(probes))) and (
            made.issubset(IdSet(frozenset(probes))) == expected.issubset(probes)
        )


def test_a_summary_folding_the_last_one_in_gets_its_set_without_a_copy_of_the_last_set():
    base = [f"m{i}" for i in range(100)]
    first = SharedIds(["s1"], base, ["m100"])
    second = SharedIds(["s2"], first, ["m101", "m102"])
    old, new = id_set(first), id_set(second)
    assert set(new) == set(second) and len(new) == 105
    assert new._whole is old._whole  # the last set's ids, shared: only the three new ones were added
    many = SharedIds([], second, [f"n{i}" for i in range(20)])  # past an eighth of the set: folded in
    assert id_set(many)._whole is not old._whole and set(id_set(many)) == set(many)
