"""Turn a finished pipeline into the BuildResult: final order, wire, reminders, decisions, token account."""

from __future__ import annotations

import functools
import math
from bisect import bisect_left
from collections.abc import Callable, Iterator
from itertools import compress, repeat
from operator import attrgetter
from typing import Any

from engine.dropped_count import dropped_count
from engine.messages import AiMessage
from engine.pipeline import Pipeline, final_order
from engine.preprocess.base import Removal
from engine.preprocess.renames import created_renames
from engine.providers.state import KEEP_CORE, State
from engine.reminders import ReminderRegistry, apply_reminders, reminder_context, reminder_policy_warnings
from engine.removal_index import RemovedBy
from engine.result import (
    BuildFailure,
    BuildResult,
    Decision,
    Deferred,
    Event,
    ReminderOutcome,
    TokenAccount,
    WireCard,
    WireCards,
    WrittenOfType,
)
from engine.sent import Sent, sent
from engine.session_index import of_type, position_of_id, positions_of_type
from engine.ticks import TickState
from engine.trace import decision_reason
from engine.wire_origins import wire_origins

_MESSAGE = attrgetter("message")
NEAR_END = 256  # states looked through from the end for a named carrier before all are mapped


def assemble_result(
    run: Pipeline,
    tick: TickState | None,
    effective_policy: dict[str, Any],
    reminder_registry: ReminderRegistry | None,
    *,
    detail: bool = True,
) -> BuildResult:
    ctx, registry = run.ctx, run.registry
    check = run.trigger_check  # the last provider's: its kept states, unless it changed the states
    known = check.kept_of if check is not None and not check.fired else None
    kept = known[1] if known is not None and known[0] is run.states else None
    final = final_order(run.states, kept)
    ids = kept.ids if kept is not None and final is kept.states else None
    out = sent(final, registry, ctx.tokenizer, ctx.model_id, ids)
    final_tokens = out.tokens
    trace = None
    if detail and run.trace.enabled:
        run.trace.decisions(run.states)
        trace = run.trace.finish(len(run.entries), final, final_tokens, run.states)
    if trace is not None:
        trace["tokenizerBackend"] = ctx.tokenizer.backend  # which tokenizer served: tiktoken, bundle, ratio
    wire = out.wire
    # each final state's wire index, by the state's id: made once, for every reader of decisions
    placed = functools.cache(lambda: WireIndex(final, out))
    # the final states on the wire, in wire order: the cards' and `sent_as_written`'s, listed once (the
    # final list itself when the formatter dropped none)
    shown = functools.cache(lambda: _on_wire(final, out))
    reminder = ReminderOutcome()
    if tick is not None:
        wire, reminder = _apply_reminders(run, wire, tick, reminder_registry)
    run.warnings.extend(_skipped_by_formatter(out.unformatted))
    run.warnings.extend(reminder_policy_warnings(ctx.policy.system_reminder, reminder_registry))
    if final_tokens > ctx.total_budget:
        run.events.append(_overflow_event(final, final_tokens, ctx.total_budget))
    return BuildResult(
        wire=tuple(wire),
        cards=_cards(shown, wire, run, reminder, out) if detail else (),
        messages=tuple(out.messages),
        preprocessed=_preprocessed(run),
        decisions=Deferred(lambda: _decisions(run, placed())) if detail else (),
        decide=(lambda field, value: tuple(_decisions(run, placed(), _picked(run, field, value))))
        if detail
        else None,
        written_of=(lambda kind: _written_of(run, shown(), placed, kind, out)) if detail else None,
        count_dropped=functools.cache(lambda: dropped_count(run, final)) if detail else None,
        tokens=_token_account(run, final, out, reminder),
        events=tuple(run.events) + _reminder_events(reminder),
        trace=trace,
        reminder=reminder,
        summary_events=tuple(run.summary_events),
        strategies_applied=tuple(dict.fromkeys(run.strategies)),
        warnings=tuple(run.warnings),
        effective_policy=effective_policy,
        summarization_check=trigger_summary(run),
    )


def _on_wire(final: list[State], out: Sent) -> list[State]:
    """The final states the formatter did not drop: `final` itself when it dropped none (read only)."""
    if not out.unformatted:
        return final
    dropped = set(map(id, out.unformatted))
    return [state for state in final if id(state) not in dropped]


class WireIndex:
    """Each final state's wire index by the state's `id` (None: off the wire). A reader of a few fates (a
    replay's cost, where its cached prefix broke) looks a state up in the final states' ids, in C; the
    map of every state is made at the `MAP_AFTER`th lookup, or at once when the formatter dropped some."""

    MAP_AFTER = 16
    __slots__ = ("_final", "_out", "_map", "_asked")

    def __init__(self, final: list[State], out: Sent) -> None:
        self._final, self._out = final, out
        self._map: dict[int, int | None] | None = None
        self._asked = 0

    def get(self, key: int) -> int | None:
        if self._map is None:
            if not self._out.unformatted and self._asked < self.MAP_AFTER:
                self._asked += 1
                try:
                    return self._out.ids.index(key)
                except ValueError:
                    return None
            self._map = dict(zip(map(id, self._final), self._out.positions(self._final), strict=True))
        return self._map.get(key)


def _preprocessed(run: Pipeline) -> Deferred[AiMessage]:
    """The messages the providers received, made on first read: a replay step's build of 64,000 messages
    made two lists of them that most steps never read."""
    entries = run.entries
    return Deferred(lambda: map(_MESSAGE, entries))


def _overflow_event(final: list[State], final_tokens: int, total_budget: int) -> Event:
    """Over budget is no error in linnkit (spec §5.4): must-keep and forced groups are never dropped."""
    core = sum(s.tokens for s in final if s.action == KEEP_CORE)
    return Event(
        kind="overflow",
        title=f"over budget: {final_tokens} tokens for a budget of {total_budget} "
        f"(must-keep messages alone: {core}); only truncation rules can relieve it",
        data={"finalTokens": final_tokens, "totalBudget": total_budget, "coreTokens": core},
    )


def failed_result(run: Pipeline, failure: BuildFailure) -> BuildResult:
    ctx = run.ctx
    return BuildResult(
        wire=(),
        cards=(),
        messages=(),
        preprocessed=_preprocessed(run) if run.preprocess_done else (),
        decisions=(),
        tokens=_budget_numbers(run, 0, {}),
        events=tuple(run.events) + (Event("error", f"build failed: {failure.code}: {failure.message}"),),
        trace=None,
        reminder=ReminderOutcome(),
        strategies_applied=tuple(dict.fromkeys(run.strategies)),
        warnings=tuple(run.warnings),
        error=failure,
        effective_policy=ctx.policy.model_dump(by_alias=True),
    )


def _apply_reminders(
    run: Pipeline, wire: list[dict], tick: TickState, reminder_registry: ReminderRegistry | None
) -> tuple[list[dict], ReminderOutcome]:
    reminder_ctx = reminder_context(tick, run.session, run.ctx.policy)
    policy = run.ctx.policy.system_reminder
    new_wire, outcome = apply_reminders(wire, policy, reminder_ctx, reminder_registry, owned=True)
    if outcome.appended_text:
        tokens = run.ctx.tokenizer.estimate_text(outcome.appended_text, run.ctx.model_id)
        outcome = ReminderOutcome(outcome.hit_rule_ids, outcome.texts, outcome.appended_text, tokens)
    return new_wire, outcome


def _skipped_by_formatter(unformatted: list[State]) -> list[str]:
    return [
        f"{s.message.id}: kept but not sent: the wire formatter drops {s.message.type}"
        + (f" of unregistered fence kind '{s.message.fence_kind}'" if s.message.fence_kind else "")
        for s in unformatted
    ]


def _marks(state: State) -> tuple[str, ...]:
    """The card's marks: read from the message once per message object (most cards of a rebuild or of a
    replay's next step show the very messages the last build showed), with the state's own two facts."""
    message = state.current
    key = (id(message), state.index >= 0, state.truncation is not None)
    held = _MARKS.get(key)
    if held is not None and held[0] is message:
        return held[1]
    if len(_MARKS) >= _MARKS_LIMIT:
        _MARKS.clear()
    marks = _made_marks(message, carried=key[1], truncated=key[2])
    _MARKS[key] = (message, marks)  # holds the message: its id is not reused while cached
    return marks


_MARKS: dict[tuple[int, bool, bool], tuple[AiMessage, tuple[str, ...]]] = {}
_MARKS_LIMIT = 50_000


def _made_marks(message: AiMessage, *, carried: bool, truncated: bool) -> tuple[str, ...]:
    marks = []
    if message.fence_kind:
        marks.append(f"fence:{message.fence_kind}")
    if message.meta("assembledFenceKinds"):
        marks.extend(f"assembled:{k}" for k in message.meta("assembledFenceKinds"))
    if message.type == "history_summary":
        marks.append("summary")
        if carried:
            marks.append("carried")  # read back from the history: made by an earlier step, not by this build
    if message.meta("isCompressedToolHistory"):
        marks.append("compressed")
    if message.meta("isDegradedToolReplay"):
        marks.append("degraded")
    if truncated:
        marks.append("truncated")
    if message.meta("tool_output_store"):
        marks.append("preview")  # cut at execution time; the full text is in the observation store
    return tuple(marks)


def _cards(
    shown_states: Callable[[], list[State]],
    wire: list[dict[str, Any]],
    run: Pipeline,
    reminder: ReminderOutcome,
    out: Sent,
) -> WireCards:
    """A card per wire message, each made when read (`WireCards`). `shown_states()`: the final states on the
    wire, in wire order; their counts are a copy of `sent`'s list when the formatter dropped none (a
    replay's cost reads them at every step, and adds the reminder's to the last)."""

    session, last = run.session, len(wire) - 1 if reminder.appended_text else -1

    def card(position: int) -> WireCard:
        state = shown_states()[position]
        marks = _marks(state)
        if position == last:
            marks = (*marks, "reminder")
        message = state.message
        sources = tuple([session[i].id for i in state.origins]) or (message.id,)
        return WireCard(position, wire[position], message.id, message.type, state.tokens, sources, marks)

    return WireCards(
        len(wire),
        card,
        lambda: [s.message.id for s in shown_states()],
        lambda: [s.tokens for s in shown_states()] if out.unformatted else out.state_tokens[:],  # a copy
    )


def _decisions(
    run: Pipeline, wire_index: WireIndex, only: list[int] | None = None
) -> list[Decision]:
    """A decision per session message and per created message; with `only` (session positions), just for
    those session messages (a replay's cost reads a few messages' fates at every step). `wire_index`:
    each final state's wire index, by `id(state)`."""
    summary = run.made_summary()
    if only is not None:
        return _decisions_of(run, only, summary, wire_index)
    carriers = run.carriers()
    decisions = []
    tails: dict[int, tuple[Any, ...]] = {}  # per removal: what its messages' decisions share
    for index, message, removal, state in _fates(run, carriers):
        if removal is not None:
            decisions.append(_from_removal(index, message, removal, carriers, wire_index, tails))
        elif state is not None:
            decisions.append(_from_state(index, message, state, wire_index))
        else:
            decisions.append(_summarized(index, message, summary, wire_index))
    decisions.extend(_created(run, wire_index))
    return decisions


def _written_of(
    run: Pipeline, on_wire: list[State], placed: Callable[[], WireIndex], kind: str, out: Sent
) -> WrittenOfType:
    """`BuildResult.sent_as_written`: of the messages of `kind` a wire message carries (itself, or merged
    into it), those whose decision (`_decisions_of`) would be `as_written`, told from the fields it reads
    without making the decisions. Every other message is off the wire, or in the new summary. What it reads
    is the wire's alone: a session message is carried by one state (`Pipeline.states_by_origin`; of two, the
    later in wire order, as that map tells), so a wire state is its candidates' state; and the states are
    mapped by id only when a candidate was removed. A replay's cost asks it at every step, of a wire of
    thousands: each wire state's candidates are taken over from the last build's where it sent the same
    states (`engine.wire_origins`)."""
    session = run.session
    found, count = of_type(session, kind)
    # the wire's states are the final ones when the formatter dropped none: their ids are `sent`'s
    wired = wire_origins(session, on_wire, kind, None if out.unformatted else out.ids)
    own_written = dict(zip(wired.origins, wired.own_written, strict=True))  # of a repeated origin, the last
    candidates = list(own_written)
    removals = _removed_by_origin(run).of(candidates)
    if not any(removals):  # the usual step: no candidate was removed, each is its own state's
        written = list(compress(candidates, own_written.values()))
    else:
        written = [o for o, r in zip(candidates, removals, strict=True) if r is None and own_written[o]]
        carriers = _carriers_named(run, removals)
        tails: dict[int, tuple[Any, ...]] = {}
        for position, removal in zip(candidates, removals, strict=True):
            if _decided_by(removal, carriers):  # the removal's decision: its carrier's wire index, its reason
                tail = _shared_tail(removal, carriers, placed(), tails)
                if tail[6] is not None and "summar" not in tail[3]:
                    written.append(position)
    written.sort()  # wire order is not session order (the final order puts the system prompt first)
    ranks = tuple(map(bisect_left, repeat(found), written, repeat(0), repeat(count)))
    return WrittenOfType(count, ranks, lambda rank: session[found[rank]].id)


def _decisions_of(run: Pipeline, only: list[int], summary: State | None, wire_index) -> list[Decision]:
    """The decisions of the session messages at the positions `only` (ascending), as `_fates` decides
    them. A run of them one removal took is decided as a whole (`_removal_run`). The states are mapped by
    id only when one of them was handed to a carrier, and by origin only when one was not removed (each map
    is a pass over every state: a replay's cost asks a few messages' fates where its cached prefix broke)."""
    found = _removed_by_origin(run).of(only)
    carriers = _carriers_named(run, found)
    session = run.session
    tails: dict[int, tuple[Any, ...]] = {}
    decisions: list[Decision] = []
    start, count = 0, len(only)
    while start < count:
        removal, end = found[start], start + 1
        if _decided_by(removal, carriers):
            while end < count and found[end] is removal:
                end += 1
            tail = _shared_tail(removal, carriers, wire_index, tails)
            decisions.extend(_removal_run(session, only[start:end], removal, tail))
        else:
            index = only[start]
            message = session[index]
            state = run.state_of_origin(index) if removal is None else None
            if state is not None:
                decisions.append(_from_state(index, message, state, wire_index))
            else:
                decisions.append(_summarized(index, message, summary, wire_index))
        start = end
    return decisions


def _removal_run(session, positions: list[int], removal: Removal, tail: tuple[Any, ...]) -> list[Decision]:
    """The decisions of the messages at `positions`, all taken by `removal`: the list made for the same
    removal, positions and shared fields before, if still held. A replay's cost asks every step for every
    user request's fate; most were taken by the summary cleanup's one removal, and stay as they were until
    the next summary (one lookup each per step was half of a late step of a 100,000-message `replay`).
    A removal belongs to the session its origins index, so it and the run's ends name the positions."""
    key = (id(removal), tail, positions[0], positions[-1], len(positions))
    held = _RUNS.get(key)
    if held is not None and held[0] is removal:
        return held[1]
    made = [
        _decision((i, m.id, m.role, m.type), tail)
        for i, m in zip(positions, map(session.__getitem__, positions), strict=True)
    ]
    if len(_RUNS) >= _RUNS_LIMIT:
        del _RUNS[next(iter(_RUNS))]
    _RUNS[key] = (removal, made)  # holds the removal: its id is not reused while held
    return made


_RUNS: dict[tuple[Any, ...], tuple[Removal, list[Decision]]] = {}
_RUNS_LIMIT = 4


def _picked(run: Pipeline, field: str, value: str) -> list[int]:
    """The session positions of the messages whose `field` ("type" or "id", the first of an id) is `value`,
    found without a look at every message (`engine.session_index`)."""
    if field == "type":
        return positions_of_type(run.session, value)
    if field == "id":
        at = position_of_id(run.session, value)
        return [] if at is None else [at]
    raise ValueError(f"decisions are picked by type or id, not {field!r}")


def _fates(
    run: Pipeline, carriers: dict[str, State]
) -> Iterator[tuple[int, AiMessage, Removal | None, State | None]]:
    """Each session message with what decided its fate: the removal that dropped it or handed it to a
    carrier, else its own state, else neither (it was summarised). `_decisions_of` decides alike."""
    by_origin = run.states_by_origin()
    removed = _removed_by_origin(run)
    session = run.session
    positions = range(len(session))
    for index, removal in zip(positions, removed.of(positions), strict=True):
        message = session[index]
        state = by_origin.get(index)
        # A removed message is carried by the state that replaced it (compressed, degraded, assembled),
        # unless that state was summarised in turn.
        if _decided_by(removal, carriers):
            yield index, message, removal, None
        elif removal is None and state is not None:
            yield index, message, None, state
        else:
            yield index, message, None, None


def _decided_by(removal: Removal | None, carriers: dict[str, State]) -> bool:
    """A removal decides its message's fate unless the carrier it handed it to was summarised in turn."""
    return removal is not None and (removal.replaced_by is None or removal.replaced_by in carriers)


def _carriers_named(run: Pipeline, removals: list[Removal | None]) -> dict[str, State]:
    """The carriers `removals` name, by id: the last state of each id, as `Pipeline.carriers` maps them. A
    replay's cost asks where its cached prefix broke, and the carrier there is a compressed group near the
    end: the last `NEAR_END` states are looked through first; only a carrier not among them makes the map
    of every state (it may be further back, or gone: summarised in turn). None named: none are read."""
    named = {r.replaced_by for r in removals if r is not None and r.replaced_by is not None}
    if not named:
        return {}
    if run.by_id is None:
        found: dict[str, State] = {}
        for state in reversed(run.states[-NEAR_END:]):
            carrier_id = state.message.id
            if carrier_id in named and carrier_id not in found:
                found[carrier_id] = state
                if len(found) == len(named):
                    return found
    return run.carriers()


def _carrier(removal: Removal, carriers: dict[str, State]) -> State | None:
    """The state now carrying a removed message; None when it was dropped outright."""
    return carriers.get(removal.replaced_by) if removal.replaced_by else None


def _removed_by_origin(run: Pipeline) -> RemovedBy:
    """Each removed session message's removal (the last stage's, when several removed it), naming its
    carrier by its scoped id; made once per build, as a replay's cost asks a build for a few decisions
    several times (`engine.removal_index`: no map of every removed message per build)."""
    if run.removed_by_origin is None:
        # the created ids' renames, made from the run's entries when first read: a closure over `run`, which
        # holds this, would make a cycle that only the collector frees (each build's lists outlived it)
        renames = functools.partial(created_renames, run.entries, run.scope)
        run.removed_by_origin = RemovedBy(run.removal_lists, renames)
    return run.removed_by_origin


def _decision(head: tuple[Any, ...], tail: tuple[Any, ...]) -> Decision:
    """The decision of these fields (`head`: the message's own four, `tail`: the rest): the one made for
    the same fields before, if still held. A replay's cost asks every step for every user request's fate,
    and most fates stay as they were (making them anew was most of a long `replay`'s time after the
    builds); the messages a removal took share their `tail`, so it is hashed once per removal."""
    global _held_decisions
    by_head = _DECIDED.get(tail)
    if by_head is None:
        if _held_decisions >= _DECIDED_LIMIT:
            _DECIDED.clear()
            _held_decisions = 0
        by_head = _DECIDED[tail] = {}
    held = by_head.get(head)
    if held is None:
        held = by_head[head] = Decision(*head, *tail)
        _held_decisions += 1
    return held


_DECIDED: dict[tuple[Any, ...], dict[tuple[Any, ...], Decision]] = {}
_DECIDED_LIMIT = 10_000
_held_decisions = 0


def _from_state(index, message, state: State, wire_index) -> Decision:
    tail = (state.kept, "provider", state.phase, decision_reason(state), state.strategy, state.tokens,
            wire_index.get(id(state)), None, "")  # fmt: skip
    return _decision((index, message.id, message.role, message.type), tail)


def _from_removal(
    index, message, removal, carriers: dict[str, State], wire_index, tails: dict[int, tuple[Any, ...]]
) -> Decision:
    tail = _shared_tail(removal, carriers, wire_index, tails)
    return _decision((index, message.id, message.role, message.type), tail)


def _shared_tail(
    removal: Removal, carriers: dict[str, State], wire_index, tails: dict[int, tuple[Any, ...]]
) -> tuple[Any, ...]:
    """`_removal_tail`, made once per removal of a decision list (`tails`)."""
    tail = tails.get(id(removal))
    if tail is None:
        tail = tails[id(removal)] = _removal_tail(removal, carriers, wire_index)
    return tail


def _removal_tail(removal: Removal, carriers: dict[str, State], wire_index) -> tuple[Any, ...]:
    """The fields every message `removal` took shares in its decision."""
    carrier = _carrier(removal, carriers)
    if carrier is None:
        strategy = removal.strategy
        return (False, "preprocess", None, f"dropped_by_{strategy}", strategy, 0, None, removal.replaced_by,
                removal.note)  # fmt: skip
    carried_by, strategy = carrier.message.id, removal.strategy
    note = removal.note or f"now carried by {carried_by}"
    return (carrier.kept, "preprocess", carrier.phase, f"replaced_by_{strategy}", strategy, 0,
            wire_index.get(id(carrier)), carried_by, note)  # fmt: skip


def _summarized(index, message, summary: State | None, wire_index) -> Decision:
    tail = (summary is not None, "provider", "SUMMARIZATION", "replaced_by_ai_history_summarization",
            "ai_history_summarization", 0, wire_index.get(id(summary)) if summary else None,
            summary.message.id if summary else None, "summarised")  # fmt: skip
    return _decision((index, message.id, message.role, message.type), tail)


def _created(run: Pipeline, wire_index) -> list[Decision]:
    return [_from_state(-1, s.message, s, wire_index) for s in run.states if s.index == -1]


def _local_tokens(run: Pipeline, final: list[State]) -> int:
    """The final messages' count before calibration: what a host pairs with the provider's count."""
    tokenizer = run.ctx.tokenizer
    local = getattr(tokenizer, "local", tokenizer.estimate_message)
    return sum(local(s.current, run.ctx.model_id) for s in final)


def _token_account(run: Pipeline, final: list[State], out: Sent, reminder: ReminderOutcome):
    by_category = out.by_category
    if reminder.tokens:
        by_category["reminder"] = reminder.tokens
    calibration = run.ctx.calibration
    local = _local_tokens(run, final) if calibration is not None and calibration.applied else None
    return _budget_numbers(run, out.tokens, by_category, local)


def _budget_numbers(
    run: Pipeline, final_tokens: int, by_category: dict[str, int], local_final_tokens: int | None = None
) -> TokenAccount:
    policy = run.ctx.policy
    total = run.ctx.total_budget
    return TokenAccount(
        max_tokens=policy.budget.max_tokens,
        reserved_for_response=policy.budget.reserved_for_response,
        total_budget=total,
        wm_budget=math.floor(total * policy.budget.working_memory_budget_percentage),
        trigger_tokens=total * policy.summarization.trigger_threshold,
        summary_budget=math.floor(total * policy.summarization.budget_percentage),
        final_tokens=final_tokens,
        by_category=by_category,
        backend=run.ctx.tokenizer.backend,
        local_final_tokens=local_final_tokens,
    )


def _reminder_events(reminder: ReminderOutcome) -> tuple[Event, ...]:
    return tuple(
        Event(
            "reminder",
            f"reminder {rule_id}: {text.splitlines()[0] if text else ''}",
            (),
            {"ruleId": rule_id, "text": text},
        )
        for rule_id, text in reminder.texts.items()
    )


def trigger_summary(run: Pipeline) -> dict[str, Any] | None:
    check = run.trigger_check
    if check is None:
        return None
    return {
        "used": check.used,
        "available": check.available,
        "threshold": check.threshold,
        "precheckPassed": check.precheck_passed,
        "contentTokens": check.content_tokens,
        "fired": check.fired,
    }
