"""Preprocessor outputs reused across builds when a stage's inputs did not change.

A stage's inputs are its entry list and a key: the stage function and the policy values it reads (its
policy group, the checkpoint tool's name, fence descriptors, the id scope and copy set). Stages are pure and
never change their input list, so an output whose inputs are the very same objects (compared by identity)
and an equal key is the output a fresh run would give. A reused output hands its own entry list on, so the
next stage's inputs compare in O(1); only the session's message list is compared element by element, and
not even that for a replay's next step (`engine.lineage`: its list and entries are of the last one's line).
Bounded: a few recent outputs per stage (an A/B comparison or a pinned build keeps its own).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from engine import groups, hygiene, lineage, removal_index, sent, session_index, wire_origins
from engine.forksafe import fork_safe_lock
from engine.lanes import LaneLists
from engine.lineage import continued, grown, head
from engine.messages import AiMessage
from engine.preprocess import observation_sim, purification, tool_history
from engine.preprocess.base import (
    ID_SCOPE,
    Entry,
    StageOutput,
    common_prefix,
    distinct_created,
    forget_checked,
    scope_created,
    starts_with,
)
from engine.preprocess.renames import forget_renames
from engine.providers import checkpoint, core, origin_positions, summarization, working_memory
from engine.providers.state import Origin, State, starting_states
from engine.tokens import TokenizerPort

_PER_STAGE = 4


def _same(a: Sequence[object], b: Sequence[object]) -> bool:
    return a is b or (len(a) == len(b) and starts_with(a, b))


class StageCache:
    def __init__(self) -> None:
        self._lock = fork_safe_lock()
        self._entries: LaneLists[tuple[list[AiMessage], list[Entry]]] = LaneLists(_PER_STAGE)
        self._outputs: dict[str, LaneLists[tuple[list[Entry], tuple[Any, ...], StageOutput]]] = {}
        self._tokens: LaneLists[tuple[list[Entry], TokenizerPort, str, list[int]]] = LaneLists(_PER_STAGE)
        # a token list made from another's first `k` counts: (it, the other, k), for what derives from both
        self._grown: LaneLists[tuple[list[int], list[int], int]] = LaneLists(_PER_STAGE)
        self._scoped: LaneLists[tuple[list[Entry], str, list[Entry]]] = LaneLists(_PER_STAGE)
        # shared starting states (`engine.providers.state`): (entries, their counts, the states and the
        # earlier list they took over states from)
        self._states: LaneLists[tuple[list[Entry], list[int], Origin]] = LaneLists(_PER_STAGE)
        self.hits = self.misses = 0  # stage runs answered from the cache, and run afresh

    def entries(self, messages: Sequence[AiMessage], *, owned: bool = False) -> list[Entry]:
        """The first stage's input for `messages`: the same list object as last time for the same messages;
        for a longer list starting with those (a replay's next step), their entries plus the new ones; for
        a start of a held list, that list's first entries.
        `owned`: `messages` is a list nobody changes afterwards (a build's own copy), kept as it is."""
        start: list[Entry] = []
        with self._lock:
            for held, entries in self._entries.items():
                if _same(held, messages):
                    return entries
                if len(start) < len(held) < len(messages) and starts_with(messages, held):
                    start = entries
            # an earlier step of a held list (the timeline one step back): the first entries of that list
            longer = None if start else self._longer(messages)
        if longer is not None:
            entries = head(longer, len(messages))  # in its line: the stages tell it starts that list
        else:  # in the line of the entries it grew from, so the stages tell it starts with them at once
            fresh = enumerate(messages[len(start) :], start=len(start))
            entries = grown(start, [Entry(m, (i,)) for i, m in fresh])
        held = messages if owned and isinstance(messages, list) else list(messages)
        with self._lock:
            self._entries.add((held, entries))
        return entries

    def _longer(self, messages: Sequence[AiMessage]) -> list[Entry] | None:
        """The entries of a held list that starts with `messages` and goes on (called under the lock)."""
        for held, entries in self._entries.items():
            if len(held) > len(messages) and starts_with(held, messages):
                return entries
        return None

    def run(
        self,
        name: str,
        stage: Callable[[list[Entry]], StageOutput],
        entries: list[Entry],
        key: tuple[Any, ...] | None,
    ) -> StageOutput:
        """`stage(entries)`, or its output for the same entries and an equal key (a None key: never reuse)."""
        if key is None:
            return stage(entries)
        with self._lock:
            for held, held_key, output in self._outputs[name].items() if name in self._outputs else ():
                if held is entries and held_key == key:
                    self.hits += 1
                    return output
            self.misses += 1
        output = stage(entries)
        with self._lock:
            self._outputs.setdefault(name, LaneLists(_PER_STAGE)).add((entries, key, output))
        return output

    def tokens(self, entries: list[Entry], tokenizer: TokenizerPort, model_id: str) -> list[int]:
        """Each entry's token count: the same list as last time for the same entry list and tokenizer; for a
        list that starts with the entries of the last one (a replay's next step), its counts and the new."""
        base: tuple[list[Entry], list[int]] | None = None
        with self._lock:
            for held, held_tokenizer, held_model, counts in self._tokens.items():
                if held_tokenizer is not tokenizer or held_model != model_id:
                    continue
                if held is entries:
                    return counts
                base = base or (held, counts)  # the newest, of this lane first
        shared = common_prefix(base[0], entries) if base is not None else 0
        fresh = tokenizer.estimate_messages([e.message for e in entries[shared:]], model_id)
        # in the line of the last counts: made from a spare of it, not by copying the history's counts
        counts = continued(base[1], shared, fresh) if base is not None and shared else fresh
        with self._lock:
            self._tokens.add((entries, tokenizer, model_id, counts))
            if base is not None and shared:
                self._grown.add((counts, base[1], shared))
        return counts

    def grown_from(self, counts: list[int]) -> tuple[list[int], int] | None:
        """The token list whose first `k` counts `counts` took over, and `k` (None: counted afresh)."""
        with self._lock:
            for held, base, shared in self._grown.items():
                if held is counts:
                    return base, shared
        return None

    def starting_states(self, entries: list[Entry], tokens: list[int]) -> Origin:
        """The shared starting states of `entries` with their counts `tokens` (`Origin.states`), and the
        earlier list whose first states they took over: the same list as last time for the same lists (a
        rebuild), else the states of the entries and counts an earlier list shares with these (a replay's
        next step) and new ones for the rest. Never changed: a build copies the list."""
        grown = self.grown_from(tokens)
        base: tuple[list[Entry], list[State], int] | None = None
        with self._lock:
            for held, held_tokens, made in self._states.items():
                if held_tokens is tokens:
                    if held is entries:
                        return made
                    base = base or (held, made.states, len(tokens))
                elif grown is not None and held_tokens is grown[0]:
                    base = base or (held, made.states, grown[1])
        origin: Origin | None = None
        if base is not None:
            held, earlier, counted = base
            shared = min(counted, len(earlier), common_prefix(held, entries))
            if shared:
                origin = Origin(starting_states(entries, tokens, earlier, shared), earlier, shared)
        if origin is None:
            origin = Origin(starting_states(entries, tokens))
        with self._lock:
            self._states.add((entries, tokens, origin))
        return origin

    def scoped(self, entries: list[Entry]) -> list[Entry]:
        """`scope_created(entries)` under the current id scope: the same list as last time for the same
        entries and scope (a step's rebuilds), and the last list's scoped messages for the entries it shares
        with this one (a replay's next step of the same scope), so the providers meet the very same created
        messages and every count and answer kept for them by identity still serves."""
        scope = ID_SCOPE.get()
        base = None
        with self._lock:
            for held, held_scope, output in self._scoped.items():
                if held_scope != scope:
                    continue
                if held is entries:
                    return output
                base = base or (held, output)  # the newest, of this lane first
        output = distinct_created(scope_created(entries, base))
        with self._lock:
            self._scoped.add((entries, scope, output))
        return output

    def clear(self) -> None:
        with self._lock:
            self._scoped.clear()
            self._entries.clear()
            self._outputs.clear()
            self._tokens.clear()
            self._grown.clear()
            self._states.clear()


STAGE_CACHE = StageCache()


def entries_for(messages: list[AiMessage]) -> list[Entry]:
    """The entries of a build's own message list (`build_context` copies what it was given, but for a
    replay's step list, which nobody changes)."""
    return STAGE_CACHE.entries(messages, owned=True)


def forget_earlier_builds() -> None:
    """Empty every memory the engine keeps of earlier builds (stage outputs, grouping scans, the incremental
    runs of compression, purification, governance and hygiene, working memory's floors, core's positions,
    the checkpoint tool's first call, the last build's sent figures and wire origins, content counts), so the
    next build runs as a process's first. For benchmarks and tests: a result never depends on what is
    remembered."""
    STAGE_CACHE.clear()
    lineage.forget()
    session_index.forget()
    removal_index.forget()
    groups._SCANS.clear()
    forget_checked()
    forget_renames()
    origin_positions.forget()
    tool_history._CACHE.clear()
    tool_history._PLANS.clear()
    purification._LAST.clear()
    purification._SAID.clear()
    observation_sim._LAST.clear()
    hygiene.forget()
    working_memory._FLOORS.clear()
    working_memory._STRATEGIES.clear()
    core._POSITIONS.clear()
    sent.forget()
    wire_origins.forget()
    summarization.forget()
    checkpoint._FIRST_CALLS.clear()
