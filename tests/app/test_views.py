"""The view models both front ends draw (playground/app/views.py): one dropped rule, one category order."""

from __future__ import annotations

from dataclasses import replace
from itertools import accumulate

from engine import BuildResult, Decision, ReminderOutcome, TokenAccount
from engine.build import build_context
from engine.policy import define_context_policy
from engine.result import WireCards
from engine.session import load_session
from engine.ticks import TickState
from engine.tokens import DefaultTokenizer
from playground.app.inputs import SAMPLES_DIR
from playground.app.views import (
    WireRows,
    _made_row,
    bar_segments,
    card_row,
    category_names,
    line_starts,
    position_of,
    tokens_delta,
    tokens_long,
    tokens_short,
    wire_rows,
)
from playground.web import views as html


def summarised_result() -> BuildResult:
    reason, strategy = "replaced_by_ai_history_summarization", "ai_history_summarization"
    summarised = Decision(
        3, "m3", "user", "user_input", True, "provider", "SUMMARIZATION", reason, strategy, 0,
        replaced_by="summary:1", note="summarised",
    )  # fmt: skip
    dropped = Decision(4, "m4", "assistant", "final_answer", False, "provider", None, "dropped_by_x", None, 0)
    tokens = TokenAccount(1000, 100, 900, 630, 630.0, 108, 0, {"summary": 5, "fence:b": 2, "core": 3}, "test")
    return BuildResult((), (), (), (), (summarised, dropped), tokens, (), None, ReminderOutcome())


def test_a_summarised_message_is_a_dropped_row_in_both_front_ends() -> None:
    result = summarised_result()
    rows = wire_rows(result, show_dropped=True)
    assert [(r.kind, r.message_id, r.reason, r.replaced_by) for r in rows] == [
        ("dropped", "m3", "replaced_by_ai_history_summarization", "summary:1"),
        ("dropped", "m4", "dropped_by_x", None),
    ]
    assert wire_rows(result) == []
    page = html.wire_cards(result, show_dropped=True)
    assert page.index('data-id="m3"') < page.index('data-id="m4"')


def test_one_category_order_for_the_bar_and_the_table() -> None:
    account = summarised_result().tokens
    assert category_names(set(account.by_category))[:4] == ["core", "user", "fence:b", "working_memory"]
    assert html.category_order(account.by_category) == ["core", "fence:b", "summary"]
    names = [s.name for s in bar_segments(account)]
    assert [n for n in names if account.by_category.get(n)] == html.category_order(account.by_category)
    assert names[-2:] == ["reserved", "free"]


def test_numbers() -> None:
    assert [tokens_short(n) for n in (412, 1234, 18_400, 1_400_000)] == ["412", "1.2k", "18k", "1.4M"]
    assert tokens_long(18412) == "18 412" and tokens_delta(0) == "±0" and tokens_delta(1200) == "+1.2k"


def test_a_rebuild_reuses_the_rows_of_cards_that_show_the_same_content_and_remakes_the_others() -> None:
    messages = load_session(SAMPLES_DIR / "tool_loop_runs.jsonl").messages
    policy = define_context_policy({"budget": {"maxTokens": 6000}})
    first = build_context(messages, policy, tokenizer=DefaultTokenizer())
    rows = wire_rows(first)
    tighter = build_context(
        messages, define_context_policy({"budget": {"maxTokens": 5000}}), tokenizer=DefaultTokenizer()
    )
    again = wire_rows(tighter)
    by_id = {r.message_id: r for r in rows}
    assert (len(rows), len(again)) == (30, 22)
    assert all(by_id[r.message_id] is r for r in again)  # the same content: the same rows
    # every row, reused or not, is the row a card makes from nothing
    made = [
        _made_row(c, tighter.reminder.appended_text if "reminder" in c.marks else None) for c in tighter.cards
    ]
    assert again == made
    # a card whose count differs gets a row of its own
    card = tighter.cards[1]
    recounted = card_row(replace(card, tokens=card.tokens + 1), None)
    assert (
        recounted is not again[1] and recounted.tokens == card.tokens + 1 and recounted.text == again[1].text
    )


def test_rows_of_cards_made_as_read_are_the_rows_of_every_card() -> None:
    messages = load_session(SAMPLES_DIR / "max_steps_streak.jsonl").messages
    tick = TickState(step_count=36, max_steps=40, available_tools=("context_checkpoint",))
    result = build_context(messages, define_context_policy({}), tokenizer=DefaultTokenizer(), tick=tick)
    reminder = result.reminder.appended_text
    assert reminder and isinstance(result.cards, WireCards)
    rows = wire_rows(result)
    assert isinstance(rows, WireRows) and not result.cards.made
    last = rows[-1]  # the card the reminder was appended to: three lines
    assert last.reminder and last.height == 3 and not result.cards.made
    every = [card_row(c, reminder if "reminder" in c.marks else None) for c in result.cards.items()]
    assert rows == every and list(rows) == every and rows[2:5] == every[2:5]
    assert line_starts(rows) == line_starts(every) == [0, *accumulate(r.height for r in every)]
    ids = [r.message_id for r in every]
    assert [position_of(rows, i) for i in ids] == [position_of(every, i) for i in ids]
    assert [position_of(rows, i) for i in ids] == list(range(len(ids)))
    assert position_of(rows, "nope") is None and position_of(every, "nope") is None
