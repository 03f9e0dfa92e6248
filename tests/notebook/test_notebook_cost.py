"""The notebook's cost panel (totals, sent vs cached chart, A vs B) and `sweep(...)` with its Pareto plot."""

from __future__ import annotations

from engine.policy import set_value
from playground.app.inputs import SAMPLES_DIR
from playground.notebook import Playground, sweep
from playground.web.cost_views import PolicyPoint, pareto_front

SUMMARIZING = SAMPLES_DIR / "summarization_trigger.jsonl"


def test_the_cost_panel_shows_the_sessions_totals_and_chart():
    pg = Playground(SUMMARIZING, debounce=0)
    totals = pg.cost.totals
    assert (totals.steps, totals.tokens_sent, totals.cached_tokens, totals.cache_breaks) == (
        13, 9240, 7385, {"summary": 1},
    )  # fmt: skip
    html = pg.cost.totals_html.value
    assert "<td>cached</td><td>7 385 (80%)</td>" in html
    assert "<td>cache breaks</td><td>1: summary 1</td>" in html
    assert "<td>cost</td><td>$0.0319 (no cache $0.0505)</td>" in html
    note = pg.cost.note.value
    assert "priced with claude-sonnet-4-5 (the session&#x27;s modelId); from genai-prices " in note
    chart = pg.cost.chart.value
    assert chart.count("<g>") == 13  # one bar a step
    assert "step 13: sent 522, cached 35; prefix broke at message 1 (summary)" in chart


def test_moving_the_step_does_not_replay_and_a_price_row_can_be_chosen():
    pg = Playground(SUMMARIZING, debounce=0)
    steps = pg.cost.steps
    pg.step = 3
    assert pg.cost.steps is steps  # the same replay, kept for the policy
    pg.cost.model.value = "gpt-4.1"  # the header's modelId still picks its row
    assert pg.cost.totals.model == "claude-sonnet-4-5"
    pg.cost.shape.value = "anthropic"
    assert pg.cost.totals.shape == "anthropic" and pg.cost.totals.cached_tokens == 7350


def test_a_versus_b_shows_the_deltas():
    pg = Playground(SUMMARIZING, debounce=0)
    pg.pin()
    pg.policy = set_value(pg.policy, ("summarization", "triggerThreshold"), 0.9)
    assert pg.result.ok  # debounce 0 built already; the cost panel followed
    html = pg.cost.compare.value
    assert "<tr><td>tokens sent</td><td>9 240</td><td>10 187</td><td>+947</td></tr>" in html
    assert "<tr><td>cached share</td><td>80%</td><td>86%</td><td>+6 pt</td></tr>" in html
    assert "<tr><td>cost</td><td>$0.0319</td><td>$0.0253</td><td>−$0.0066</td></tr>" in html
    pg.unpin()
    assert pg.cost.compare.value == ""


def test_sweep_returns_a_dataframe_and_the_pareto_plot():
    rows, plot = sweep(
        [SAMPLES_DIR / "short_chat.jsonl", SUMMARIZING], ["summarization.triggerThreshold=0.5,0.9"], workers=1
    )
    assert list(rows["tokensSent"]) == [1183, 1183, 9240, 10187]
    assert list(rows.columns[:3]) == ["session", "policy", "summarization.triggerThreshold"]
    assert list(plot.summary["costUsd.sum"]) == [0.04096, 0.034338]
    assert plot.front == ["summarization.triggerThreshold=0.9"]  # cheaper and loses nothing
    svg = plot._repr_html_()
    assert svg.count("<circle") == 3  # two points, the front one ringed
    assert "summarization.triggerThreshold=0.9 — $0.0343, lost 0 (Pareto front)" in svg


def test_the_pareto_front_keeps_what_nothing_beats_on_both_axes():
    points = [PolicyPoint("a", 1.0, 5), PolicyPoint("b", 2.0, 1), PolicyPoint("c", 2.5, 1)]
    points.append(PolicyPoint("d", 0.5, 9))
    assert [p.policy for p in pareto_front(points)] == ["d", "a", "b"]
