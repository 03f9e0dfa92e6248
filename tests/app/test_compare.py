"""Comparing two builds (playground/app/compare.py)."""

from __future__ import annotations

from dataclasses import replace

from playground.app.compare import MessageDelta, compare_builds
from tests.tui_fixtures import ACCOUNT, OVER_ACCOUNT, small_result


def test_same_build_is_identical() -> None:
    result = small_result()
    comparison = compare_builds(result, result)
    assert comparison.identical and comparison.deltas == () and comparison.category_deltas == {}


def test_added_removed_and_recounted_messages_and_category_deltas() -> None:
    a = small_result()
    cards = list(a.cards)
    b_cards = (
        cards[0],
        replace(cards[2], tokens=500),
        cards[3],
        cards[4],
        replace(cards[1], message_id="h2"),
    )
    b = replace(small_result(OVER_ACCOUNT), cards=b_cards)
    comparison = compare_builds(a, b)
    assert comparison.of("added") == [MessageDelta("added", "h2", "system", "history_summary", None, 640)]
    assert comparison.of("removed") == [MessageDelta("removed", "h1", "system", "history_summary", 640, None)]
    assert comparison.of("changed") == [MessageDelta("changed", "a5", "assistant", "tool_calls", 102, 500)]
    assert comparison.of("changed")[0].delta == 398
    assert comparison.category_deltas == {
        "fence:memory": -600,
        "reminder": -100,
        "summary": -1100,
        "tool_history": -400,
        "working_memory": 10600,
    }
    assert (comparison.a, comparison.b) == (ACCOUNT, OVER_ACCOUNT)
    assert not comparison.identical
