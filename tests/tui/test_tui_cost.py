"""The TUI's session cost: totals beside the budget and A vs B in Compare, with the real app (Pilot)."""

from __future__ import annotations

from playground.app.inputs import SAMPLES_DIR
from playground.tui.widgets.cost_pane import CostCompare, CostPane
from tests.tui.test_tui_app import run, settle

SUMMARIZING = SAMPLES_DIR / "summarization_trigger.jsonl"


def text(widget) -> str:
    return str(widget.render())


def test_the_pane_shows_the_session_cost_beside_the_budget():
    async def scenario(app, pilot):
        pane = app.main.query_one(CostPane)
        assert text(pane).splitlines() == [
            "COST openai · claude-sonnet-4-5",
            "sent 9 240 · cached 80%",
            "breaks 1: summary 1",
            "summaries 1 · summarizer 1 calls",
            "over budget 0 · requests lost 10",
            "$0.0319 (no cache $0.0505)",
        ]
        assert not app.main.query_one(CostCompare).display  # nothing pinned
        known = dict(pane.totals)
        await pilot.press("[")  # another step of the same policy: no new replay
        await settle(app, pilot)
        assert app.workspace.step == 12 and pane.totals == known

    run(SUMMARIZING, scenario)


def test_a_versus_b_in_compare_and_the_cache_shape_key():
    async def scenario(app, pilot):
        await pilot.press("a")  # pin A
        await settle(app, pilot)
        app.workspace.edit(("summarization", "triggerThreshold"), 0.9)
        app.main._policy_changed()
        await settle(app, pilot)
        lines = text(app.main.query_one(CostCompare)).splitlines()
        assert lines[0] == "session cost              A          B  B − A"
        assert "tokens sent           9 240     10 187  +947" in lines
        assert "cached share            80%        86%  +6 pt" in lines
        assert "cost                $0.0319    $0.0253  −$0.0066" in lines
        pane = app.main.query_one(CostPane)
        pane.focus()
        await pilot.press("k")  # the Anthropic shape: turns merged, the summary inside `system`
        await settle(app, pilot)
        shown = text(pane).splitlines()[:2]
        assert shown == ["COST anthropic · claude-sonnet-4-5", "sent 10 187 · cached 86%"]

    run(SUMMARIZING, scenario)
