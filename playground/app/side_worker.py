"""One side of a diff replayed in a forked child process, so the two replays of `linn-playground diff` run on
two cores (`parallel_sides`). No UI import.

A diff is two costed replays and a comparison: on one core it costs two replays and a few per cent. The
child replays side B while this process replays side A and compares, and sends B's steps through a pipe in
batches. Pickling a step whole costs half a replay again (thousands of small objects), so a step is sent as
a delta of the step before it: a wire card that the step before sent too, equal but perhaps moved, goes as
its position there (three in four cards of a replay's step, measured on `bench_diff`'s sessions). The
child runs only engine code, never the UI: the CLI forks it; the TUI and the notebook, whose threads a fork
would copy half-way, replay both sides in process.
"""

from __future__ import annotations

import gc
import multiprocessing
import os
from collections.abc import Iterator, Sequence
from dataclasses import fields, replace
from multiprocessing.connection import Connection
from typing import Any

from engine.cache_breaks import WireUnit
from engine.cost import SessionCost
from engine.result import WireCard
from playground.app.diffing import ReplaySource
from playground.app.pacing import paced_collection
from playground.app.rundiff import RunSource, SentStep, StepAnchor

_CARD_FIELDS = tuple(f.name for f in fields(WireCard))
BATCH = 16  # steps a message: fewer pipe round trips, and still a step of B soon after it is made

# a card of the step before, that card moved to an index, or a card's fields (a tuple unpickles in C; a
# frozen dataclass through Python's `__setstate__`, which cost a third of the parent's time)
Coded = int | tuple[int, int] | tuple[Any, ...]


def parallel_sides(a: RunSource, b: RunSource, jobs: int | None = None) -> tuple[RunSource, RunSource]:
    """`a` and `b`, B replayed by a forked child when `jobs` (default: the machine's cores) allows two and
    B is a replay; otherwise as they are."""
    cores = jobs if jobs is not None else (os.cpu_count() or 1)
    if cores < 2 or not isinstance(b, ReplaySource) or "fork" not in multiprocessing.get_all_start_methods():
        return a, b
    return a, ForkedSource(b)


class ForkedSource:
    """A `ReplaySource` whose `steps()` run in a forked child; `anchors()` are read here (no build)."""

    def __init__(self, source: ReplaySource) -> None:
        self.source = source
        self.label, self.shape = source.label, source.shape
        self._totals: SessionCost | None = None

    def anchors(self) -> list[StepAnchor]:
        return self.source.anchors()

    def totals(self) -> SessionCost:
        if self._totals is None:
            raise RuntimeError(f"{self.label}: totals are known once its steps were read")
        return self._totals

    def steps(self) -> Iterator[SentStep]:
        fork = multiprocessing.get_context("fork")
        receiving, sending = fork.Pipe(duplex=False)
        child = fork.Process(target=_replay_into, args=(self.source, sending), daemon=True)
        child.start()
        sending.close()  # the child's end: our copy closed, a dead child reads as EOF here
        try:
            before: Sequence[WireCard] = ()
            while True:
                try:
                    kind, payload = receiving.recv()
                except EOFError:
                    raise RuntimeError(
                        f"{self.label}: the replay's worker process ended without a word"
                    ) from None
                if kind == "steps":
                    for coded in payload:
                        step = _decode(coded, before)
                        before = step.cards
                        yield step
                elif kind == "totals":
                    self._totals = payload
                    return
                else:
                    raise payload
        finally:
            receiving.close()
            if child.is_alive():  # the diff stopped early, or failed: the child's work is not wanted
                child.terminate()
            child.join()


def _replay_into(source: ReplaySource, pipe: Connection) -> None:
    """The child: replay `source` and send its steps, then its totals (or the error that stopped it)."""
    # What the parent made is left out of the collector's scans: a full collection writes into every object
    # it walks, which would copy the parent's whole heap into this process page by page.
    gc.freeze()
    try:
        batch: list[tuple[Any, ...]] = []
        before: Sequence[WireCard] = ()
        for step in paced_collection(source.steps()):
            batch.append(_encode(step, before))
            before = step.cards
            if len(batch) == BATCH:
                pipe.send(("steps", batch))
                batch = []
        pipe.send(("steps", batch))
        pipe.send(("totals", source.totals()))
    except KeyboardInterrupt:  # Ctrl-C reaches the whole process group: the parent says what stopped
        pass
    except Exception as error:  # noqa: BLE001 - handed to the parent, which raises it where the diff reads
        pipe.send(("error", error))
    finally:
        pipe.close()


def _encode(step: SentStep, before: Sequence[WireCard]) -> tuple[Any, ...]:
    """`step` with each card that the step before sent as its position there, and each unit that carries a
    card's very message as None (the card says it), so what crosses the pipe is what is new."""
    where = {card.message_id: n for n, card in enumerate(before)}
    cards: list[Coded] = []
    for card in step.cards:
        n = where.get(card.message_id)
        old = before[n] if n is not None else None
        if old is not None and _same_but_index(old, card):
            cards.append(n if old.index == card.index else (n, card.index))
        else:
            cards.append(tuple(getattr(card, name) for name in _CARD_FIELDS))
    units = tuple(
        (None, u.tokens, u.indexes)
        if len(u.indexes) == 1 and u.payload is step.cards[u.indexes[0]].message
        else (u.payload, u.tokens, u.indexes)
        for u in step.units
    )
    cost = replace(step.cost, units=())  # a diff does not read them; B's totals come whole
    return step.number, step.messages, cards, units, cost


def _decode(coded: tuple[Any, ...], before: Sequence[WireCard]) -> SentStep:
    number, messages, coded_cards, coded_units, cost = coded
    cards = tuple(_card(c, before) for c in coded_cards)
    units = tuple(
        WireUnit(cards[indexes[0]].message if payload is None else payload, tokens, indexes)
        for payload, tokens, indexes in coded_units
    )
    return SentStep(number, messages, cards, units, replace(cost, units=units))


def _card(coded: Coded, before: Sequence[WireCard]) -> WireCard:
    if isinstance(coded, int):
        return before[coded]
    if len(coded) == 2:
        old = before[coded[0]]
        return WireCard(
            coded[1], old.message, old.message_id, old.type, old.tokens, old.source_ids, old.marks
        )
    return WireCard(*coded)


def _same_but_index(old: WireCard, card: WireCard) -> bool:
    return (
        old.tokens == card.tokens
        and old.type == card.type
        and old.marks == card.marks
        and old.source_ids == card.source_ids
        and old.message == card.message
    )
