"""The renames `scope_created` made: each created message's id as its stage made it → as scoped.

A reader of a removed message's fate needs them when the removal names its carrier (a stage names it by
the id it made, the build's states by the scoped id). Made afresh, they were a pass in Python over every
entry of the build, at every step a replay's cost read such a fate. Like the scoped list itself, a step's
renames are the last step's and a few more: the last few lists' renames are kept, and a list that extends
one of them, or forks from it near its end (`engine.lineage`), gets a copy of its renames with the cut
tail's taken out and its own tail's put in. A renames dict, once handed out, is never changed.
"""

from __future__ import annotations

from engine.forksafe import fork_safe_lock
from engine.lanes import LaneLists
from engine.lineage import shared_at_least
from engine.preprocess.base import FORK_TAIL, Entry, created_ids

# (scoped list, its scope, its renames, how many created entries it holds); newest first
_KEPT: LaneLists[tuple[list[Entry], str, dict[str, str], int]] = LaneLists(3)
_LOCK = fork_safe_lock()


def created_renames(scoped: list[Entry], scope: str) -> dict[str, str]:
    """The renames `scope_created` made in its output `scoped` (the last one's, when a created id repeats
    once its scope is taken out). Read only: it may be shared with other builds."""
    if not scope:
        return {}
    base = None  # the kept list sharing the most entries with `scoped`, and how many
    with _LOCK:
        for held, held_scope, renames, created in _KEPT.items():
            if held_scope != scope:
                continue
            if held is scoped:
                return renames
            shared = shared_at_least(held, scoped)
            # a kept list whose renames repeat a key cannot have a tail taken out: which one wins is lost
            if len(renames) == created and shared and len(held) - shared <= FORK_TAIL:
                if base is None or shared > base[1]:
                    base = (held, shared, renames, created)
    if base is None:
        renames = {}
        created = _add(scoped, 0, scope, renames)
    else:
        held, shared, renames, created = base
        renames = dict(renames)
        cut = _taken_out(created_ids(held, shared), scope)  # each once: the kept renames repeat no key
        for key in cut:
            del renames[key]
        created += _add(scoped, shared, scope, renames) - len(cut)
    with _LOCK:
        _KEPT.add((scoped, scope, renames, created))
    return renames


def forget_renames() -> None:
    with _LOCK:
        _KEPT.clear()


def _add(entries: list[Entry], start: int, scope: str, renames: dict[str, str]) -> int:
    """Put the renames of `entries[start:]` into `renames`, in order (a later one wins); how many."""
    fresh = created_ids(entries, start)
    renames.update(zip(_taken_out(fresh, scope), fresh, strict=True))
    return len(fresh)


def _taken_out(ids: list[str], scope: str) -> list[str]:
    """`prefix:<scope>:rest` → `prefix:rest` (`scope_created` put the scope in after the first colon)."""
    cut = len(scope) + 1
    out = []
    for fresh in ids:
        prefix, rest = fresh.split(":", 1)
        out.append(f"{prefix}:{rest[cut:]}")
    return out
