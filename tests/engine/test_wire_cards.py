"""A build's cards are made as they are read (`engine.result.WireCards`): each card read alone is the card
the whole tuple holds, whatever was read before, and reading one makes no other."""

from __future__ import annotations

import gc

import pytest

from engine.host_tokenizers import MockTokenizer
from engine.replay import iter_session_steps
from engine.result import WireCards
from engine.stage_cache import forget_earlier_builds
from engine.ticks import TickState
from tests.pipeline_helpers import build, fence, flatten, group, policy, registry, sys, user

MEMORY = {
    "kind": "memory-context",
    "llmRole": "user",
    "placement": "before-current-user",
    "lifetime": "turn-only",
}
# ten groups in a row fire the streak reminder; `secret` has no descriptor: kept, but the formatter drops it
MESSAGES = flatten(
    sys(),
    user("u1"),
    fence("f_unreg", "secret", "zzz", "before-current-user"),
    user("u2"),
    *[group(f"g{i}") for i in range(1, 10)],
    group("g10", result="result text"),
)
TICK = TickState(step_count=72, max_steps=80, available_tools=("context_checkpoint",))


def made() -> object:
    return build(MESSAGES, policy(), fences=registry(MEMORY), tokenizer=MockTokenizer(10), tick=TICK)


def test_the_build_has_an_unsent_message_and_a_reminder_so_cards_and_states_differ() -> None:
    result = made()
    assert "f_unreg" in result.kept_ids and result.decision_for("f_unreg").wire_index is None
    assert result.reminder.appended_text and len(result.cards) == len(result.wire) == len(result.messages) - 1


@pytest.mark.parametrize("order", ["forward", "backward", "last_first"])
def test_cards_read_one_at_a_time_are_the_cards_made_all_at_once(order: str) -> None:
    whole = made().cards.items()  # another build of the same input, made in one go
    cards = made().cards
    assert isinstance(cards, WireCards) and not cards.made
    positions = list(range(len(cards)))
    if order == "backward":
        positions.reverse()
    elif order == "last_first":
        positions = [-1, *positions[:-1]]
    one_by_one = {p % len(cards): cards[p] for p in positions}
    assert not cards.made
    assert [one_by_one[p] for p in range(len(cards))] == list(whole)
    assert all(cards.items()[p] is card for p, card in one_by_one.items())  # the same objects, not made twice
    assert [c.index for c in whole] == list(range(len(whole)))
    assert whole[-1].marks == ("reminder",) and whole[-1].message["content"].endswith("</system-reminder>")
    assert [c.message_id for c in whole] == [m for m in made().kept_ids if m != "f_unreg"]


def test_reading_one_card_makes_that_card_only() -> None:
    cards = made().cards
    calls: list[int] = []
    one = cards._one
    cards._one = lambda position: calls.append(position) or one(position)  # type: ignore[method-assign]
    assert cards[3] is cards[3] and cards[-2] is cards[len(cards) - 2]
    assert calls == [3, len(cards) - 2]
    assert len(cards) == 23 and calls == [3, 21]  # the length is known without making any
    list(cards)
    assert sorted(calls) == list(range(len(cards)))  # the rest once each, the two already made not again


def test_out_of_range_and_slices_read_as_a_tuple_does() -> None:
    cards = made().cards
    with pytest.raises(IndexError):
        cards[len(cards)]
    with pytest.raises(IndexError):
        cards[-len(cards) - 1]
    assert cards[1:3] == made().cards.items()[1:3]
    assert cards == made().cards and cards == made().cards.items()


def test_position_of_finds_a_card_by_its_message_without_making_cards() -> None:
    result = made()
    cards = result.cards
    ids = [m for m in result.kept_ids if m != "f_unreg"]
    assert [cards.position_of(i) for i in ids] == list(range(len(ids)))
    assert cards.position_of("f_unreg") is None and cards.position_of("nope") is None
    assert not cards.made
    assert result.cards_carrying("u2") == [ids.index("u2")]


def test_a_builds_cards_go_with_it_without_the_cycle_collector() -> None:
    """Cards not yet made hold the whole build (its states, its wire): they must be freed when the result
    is, not at the next full collection."""

    def alive() -> int:
        return sum(isinstance(o, WireCards) for o in gc.get_objects())

    gc.collect()
    gc.disable()
    try:
        result = made()
        result.cards[0]
        before = alive()
        del result
        after = alive()
    finally:
        gc.enable()
    assert after == before - 1


def test_the_cards_tokens_are_read_without_making_cards_and_are_the_cards_own() -> None:
    result = made()
    tokens = result.wire_tokens()
    assert not result.cards.made
    whole = made().cards.items()
    assert tokens == [card.tokens for card in whole] and len(tokens) == len(result.wire)
    result.cards.items()
    assert result.wire_tokens() == tokens  # the same, read from the cards once they are made


@pytest.mark.parametrize("name", ["max_steps_streak", "long_chat_overflow", "tool_loop_runs"])
def test_a_replays_card_counts_taken_over_from_the_last_step_are_each_steps_cards_own(name: str) -> None:
    """A step's counts are taken from the last step's for the states both sent (`engine.sent`): at every step
    they equal the cards' own, and a caller adding to the list it got (the cost adds the reminder's count to
    the last) changes neither the next read nor the next step's."""
    from tests.engine.test_cost import _sample

    messages, policy, options = _sample(name)
    forget_earlier_builds()
    steps = 0
    for step in iter_session_steps(messages, policy, **options):
        result = step.result
        tokens = result.wire_tokens()
        if tokens:
            tokens[-1] += 1_000_000
        assert result.wire_tokens() == [card.tokens for card in result.cards], step.number
        steps += 1
    assert steps >= 5
