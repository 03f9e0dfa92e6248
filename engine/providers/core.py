"""CoreContextProvider (priority 1): must-keep messages and their truncation rules (spec §5.3)."""

from __future__ import annotations

import math
from bisect import bisect_left, insort
from itertools import compress
from operator import attrgetter

from engine.jsvalues import utf16_len, utf16_slice
from engine.lanes import LaneLists
from engine.pipeline import BuildContext, MustKeep, ProviderOutcome, TruncationRule
from engine.providers.state import CORE_CONTEXT, KEEP_CORE, ProviderReport, State, derived, own
from engine.result import Event

NAME = "CoreContextProvider"
_TYPE = attrgetter("message.type")


__all__ = ["MustKeep", "TruncationRule", "run_core"]


def run_core(states: list[State], available: int, ctx: BuildContext) -> ProviderOutcome:
    report = ProviderReport(NAME)
    must_keep = ctx.must_keep
    events: list[Event] = []
    for position in _core_positions(states, must_keep):
        state = own(states, position)
        state.keep(KEEP_CORE, CORE_CONTEXT, "must_keep")
        rule = _matching_rule(state, must_keep.rules)
        cap = math.floor(ctx.total_budget * rule.max_budget_fraction) if rule is not None else None
        if cap is not None and state.tokens > cap:
            # linnkit names the rule's strategy whenever the estimate is over the cap, even when the text
            # is already short enough to stay as it is
            report.strategies.append(rule.strategy_name)
            event = _truncate(state, rule, cap, ctx)
            if event is not None:
                events.append(event)
        report.tokens_used += state.tokens
    return ProviderOutcome(report, tuple(events))


def _core_positions(states: list[State], must_keep: MustKeep) -> list[int]:
    """The must-keep states' positions, ascending: the last user input, the must-keep types and fence kinds.
    Without fence kinds, a message's type decides: the positions are kept per set of starting states
    (`_typed_positions`), and a replay's next step looks only at its new states."""
    if must_keep.fence_kinds:
        types = list(map(_TYPE, states))
        last_user = len(types) - 1 - types[::-1].index("user_input") if "user_input" in types else None
        return [p for p, s in enumerate(states) if _is_core(s, p == last_user, must_keep)]
    positions, last_user = _typed_positions(states, must_keep.types - {"user_input"})
    if last_user is None:
        return positions
    out = list(positions)
    insort(out, last_user)  # of the user inputs, only the last is kept
    return out


# per set of starting states and types looked for (`derived`): their positions, the last user input's
_POSITIONS: LaneLists[tuple[list[int], frozenset[str], tuple[list[int], int | None]]] = LaneLists(4)


def _typed_positions(states: list[State], kinds: frozenset[str]) -> tuple[list[int], int | None]:
    """The positions of the starting states whose type is in `kinds`, and of the last user input; those of
    the states an earlier build's positions were found for (`States.grown_from`) are taken over."""

    def make(start: int, base: tuple[list[int], int | None] | None) -> tuple[list[int], int | None]:
        if base is None:
            return _scan(states, kinds, 0, [], None)
        positions, last_user = base
        if last_user is not None and last_user >= start:  # the earlier build's last was past the shared part
            last_user = _last_user_before(states, start)
        return _scan(states, kinds, start, positions[: bisect_left(positions, start)], last_user)

    return derived(_POSITIONS, states, kinds, make)


def _scan(
    states: list[State], kinds: frozenset[str], start: int, positions: list[int], last_user: int | None
) -> tuple[list[int], int | None]:
    """`positions` and `last_user` (of `states[:start]`) carried on over `states[start:]`, in C."""
    types = list(map(_TYPE, states[start:]))
    if "user_input" in types:
        last_user = start + len(types) - 1 - types[::-1].index("user_input")
    positions.extend(compress(range(start, len(states)), map(kinds.__contains__, types)))
    return positions, last_user


def _last_user_before(states: list[State], end: int) -> int | None:
    for index in range(end - 1, -1, -1):
        if states[index].message.type == "user_input":
            return index
    return None


def _is_core(state: State, is_last_user: bool, must_keep: MustKeep) -> bool:
    message = state.message
    if message.type == "user_input":
        return is_last_user
    if message.type in must_keep.types:
        return True
    if not must_keep.fence_kinds:  # the common case: skip reading the metadata
        return False
    kind = message.fence_kind
    return kind is not None and kind in must_keep.fence_kinds


def _matching_rule(state: State, rules: tuple[TruncationRule, ...]) -> TruncationRule | None:
    kind = state.message.fence_kind
    return next((r for r in rules if r.fence_kind is None or r.fence_kind == kind), None)


def _truncate(state: State, rule: TruncationRule, cap: int, ctx: BuildContext) -> Event | None:
    """Cut a must-keep message over its rule's `cap` (the caller checked it is over)."""
    content = state.message.content
    exact_chars = cap * ctx.avg_chars_per_token  # linnkit compares with the fractional count
    max_chars = int(exact_chars)
    if utf16_len(content) <= max_chars:  # linnkit's truncateContent leaves text that short unchanged
        return None
    cut = utf16_slice(content, 0, max_chars)  # JS substring: UTF-16 code units
    last_space = cut.rfind(" ")
    if last_space >= 0 and utf16_len(cut[:last_space]) > 0.8 * exact_chars:
        cut = cut[:last_space]
    before = state.tokens
    state.processed = state.message.with_(content=cut + "...")
    state.tokens = ctx.estimate(state.processed)
    state.strategy = rule.strategy_name
    state.truncation = {"strategy": rule.strategy_name, "cap": cap, "before": before, "after": state.tokens}
    return Event(
        kind="fence_truncation",
        title=f"{state.message.fence_kind or state.message.type} truncated by {rule.strategy_name}: "
        f"{before} → {state.tokens} tokens (cap {cap})",
        message_ids=(state.message.id,),
        data={
            "strategy": rule.strategy_name,
            "cap": cap,
            "before": before,
            "after": state.tokens,
            "originalChars": len(content),
            "keptChars": len(cut) + 3,
        },
    )
