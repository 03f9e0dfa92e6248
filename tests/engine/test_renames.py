"""The created ids' renames (engine/preprocess/renames.py): a list that extends or forks from a kept one gets
its renames from that one's, and they must be those a pass over the whole list makes."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from engine.lineage import forked, grown
from engine.messages import AiMessage
from engine.preprocess import renames as renames_module
from engine.preprocess.base import Entry
from engine.preprocess.renames import created_renames, forget_renames


def _plain(n: int) -> Entry:
    return Entry(AiMessage(f"m{n}", "user", "user_input", f"turn {n}", n), (n,))


def _created(anchor: str, n: int, scope: str = "e1") -> Entry:
    message = AiMessage(f"compressed:{scope}:{anchor}", "assistant", "final_answer", f"compressed {n}", n)
    return Entry(message, (n,), True)


def _whole_pass(entries: list[Entry], scope: str) -> dict[str, str]:
    """The renames as read from every entry, in order (a later one wins)."""
    cut = len(scope) + 1
    renames = {}
    for entry in entries:
        if entry.created:
            prefix, rest = entry.message.id.split(":", 1)
            renames[f"{prefix}:{rest[cut:]}"] = entry.message.id
    return renames


def test_a_grown_list_has_its_own_renames_and_the_kept_dict_is_left_as_it_was(monkeypatch):
    read_from = []  # where each pass over created entries started
    original = renames_module.created_ids

    def spied(entries: list[Entry], start: int) -> list[str]:
        read_from.append(start)
        return original(entries, start)

    monkeypatch.setattr(renames_module, "created_ids", spied)
    forget_renames()
    first = grown([], [_plain(0), _created("a0", 1), _plain(2)])
    renames = created_renames(first, "e1")
    assert renames == {"compressed:a0": "compressed:e1:a0"}
    assert created_renames(first, "e1") is renames  # the same list: the same dict
    longer = grown(first, [_created("a3", 3)])
    assert created_renames(longer, "e1") == {
        "compressed:a0": "compressed:e1:a0",
        "compressed:a3": "compressed:e1:a3",
    }
    assert renames == {"compressed:a0": "compressed:e1:a0"}  # handed out: never changed
    assert read_from == [0, 3, 3]  # the first list whole; the longer one from the first's end (both passes)


def test_a_fork_drops_the_cut_tails_renames():
    forget_renames()
    first = grown([], [_plain(0), _created("a1", 1), _plain(2), _created("a3", 3)])
    created_renames(first, "e1")
    replaced = forked(first, 2, [_created("b3", 4)])  # the compressor replaced the last group
    assert created_renames(replaced, "e1") == {
        "compressed:a1": "compressed:e1:a1",
        "compressed:b3": "compressed:e1:b3",
    }


def test_a_repeated_key_keeps_the_last_and_such_a_list_is_not_a_base():
    forget_renames()
    first = grown([], [_created("a0", 0), _plain(1)])
    created_renames(first, "e1")
    repeated = grown(first, [_created("a0", 2)])
    assert created_renames(repeated, "e1") == {"compressed:a0": "compressed:e1:a0"}
    # forked back before the repeat: taking the tail's key out would lose the first one's rename
    back = forked(repeated, 2, [_plain(3)])
    assert created_renames(back, "e1") == {"compressed:a0": "compressed:e1:a0"}


def test_no_scope_no_renames():
    forget_renames()
    assert created_renames([_created("a0", 0)], "") == {}


@st.composite
def _steps(draw) -> list[tuple[int, list[tuple[bool, int]]]]:
    """Each step: how many entries of the last list it keeps back from the end, and its new entries (created?,
    anchor): anchors from a small range, so keys repeat."""
    steps = []
    for _ in range(draw(st.integers(1, 12))):
        back = draw(st.integers(0, 3))
        new = draw(st.lists(st.tuples(st.booleans(), st.integers(0, 15)), max_size=4))
        steps.append((back, new))
    return steps


@settings(max_examples=150, deadline=None)
@given(_steps(), st.sampled_from(["e1", "e12"]))
def test_renames_made_from_a_kept_list_are_those_of_a_whole_pass(steps, scope):
    forget_renames()
    current: list[Entry] = grown([], [])
    n = 0
    for back, new in steps:
        made = []
        for is_created, anchor in new:
            made.append(_created(f"x{anchor}", n, scope) if is_created else _plain(n))
            n += 1
        keep = max(len(current) - back, 0)
        current = grown(current, made) if keep == len(current) else forked(current, keep, made)
        assert created_renames(current, scope) == _whole_pass(current, scope)
