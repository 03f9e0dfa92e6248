"""The notebook's data out (DataFrames, the step chart, compare), its static view, close() and the note
when an edit changes nothing: on the bundled samples, against the engine's and application layer's own
records."""

from __future__ import annotations

import re
import sys

import ipywidgets as W
import pytest
from ipywidgets.widgets.widget import _instances

from engine.policy import set_value
from playground.app.compare import compare_builds
from playground.app.inputs import SAMPLES_DIR
from playground.notebook import Playground
from playground.notebook.data import DECISION_COLUMNS, PANDAS_HINT

WIDGET = "application/vnd.jupyter.widget-view+json"


@pytest.fixture
def loop() -> Playground:
    return Playground(SAMPLES_DIR / "tool_loop_runs.jsonl", now=0)


def test_decisions_and_events_frames_hold_the_builds_records(loop):
    frame = loop.decisions_frame()
    result = loop.result
    assert list(frame.columns) == list(DECISION_COLUMNS)
    assert len(frame) == len(result.decisions)
    first = result.decisions[0]
    assert frame.iloc[0][["message_id", "kept", "reason", "tokens"]].tolist() == [
        first.message_id, first.kept, first.reason, first.tokens,
    ]  # fmt: skip
    assert frame["tokens"][frame["kept"]].sum() == sum(d.tokens for d in result.decisions if d.kept)
    events = loop.events_frame()
    assert events["kind"].tolist() == [e.kind for e in result.events]
    assert events.iloc[0]["message_ids"] == list(result.events[0].message_ids)


def test_the_steps_frame_has_a_column_per_category_and_the_markers(loop):
    frame = loop.steps_frame()
    series = loop.series
    assert frame.index.tolist() == list(range(1, loop.step_count + 1))
    assert frame["markers"].tolist() == [s.markers for s in series]
    categories = [c for c in ("core", "user", "working_memory", "tool_history", "summary") if c in frame]
    assert categories[:2] == ["core", "user"]
    by_category = frame[[c for c in frame.columns if c in dict(series[-1].by_category) or c == "reminder"]]
    assert (by_category.sum(axis=1) - frame.get("reminder", 0)).tolist() == frame["final_tokens"].tolist()
    assert frame["reminder_fired"].tolist() == ["R" in s.markers for s in series]
    assert frame.loc[loop.step, "final_tokens"] == loop.result.tokens.final_tokens


def test_frames_without_pandas_name_the_install_line(loop, monkeypatch):
    monkeypatch.setitem(sys.modules, "pandas", None)
    with pytest.raises(ImportError, match=re.escape(f"tables need pandas; install it with: {PANDAS_HINT}")):
        loop.decisions_frame()


def test_compare_lists_what_b_adds_drops_and_recounts(loop):
    table = loop.compare({"budget": {"maxTokens": 3000}})  # a layer over the current policy
    b = loop.build(set_value(loop.policy, ("budget", "maxTokens"), 3000))
    expected = compare_builds(loop.result, b)
    assert table["message_id"].tolist() == [d.message_id for d in expected.deltas]
    assert set(table["change"]) == {"removed"}
    assert table.iloc[0][["change", "message_id", "type", "tokens_a", "delta"]].tolist() == [
        "removed", "m002", "user_input", 43, -43,
    ]  # fmt: skip
    assert table.attrs["tokens_b"] == b.tokens.final_tokens
    assert loop.policy.budget.max_tokens != 3000  # the widgets' policy is untouched
    loop.pin_button.click()  # A = pinned; B = the current build after an edit
    loop.controls.input(("budget", "maxTokens")).value = 3000
    assert "m002" in loop.compare_view.value and "A → B" in loop.compare_view.value
    assert loop.compare(loop.policy)["message_id"].tolist() == table["message_id"].tolist()


def test_plot_steps_is_an_svg_chart_with_the_current_step_marked(loop):
    chart = loop.plot_steps()
    svg = chart._repr_svg_()
    assert svg.startswith('<svg class="lp-chart"') and f"{loop.step_count} steps" in svg
    assert svg.count('class="lp-current"') == 2  # the bar and its ▼
    assert 'fill="#d97706"' in svg  # tool history, stacked in its category colour
    assert chart.frame().equals(loop.steps_frame())


def test_the_static_view_travels_with_the_widgets(loop):
    bundle = loop._repr_mimebundle_()
    assert WIDGET in bundle
    static = bundle["text/html"]
    assert "lp-wire-summary" in static and "lp-budget" in static and "lp-step-bars" in static
    assert static.count('class="lp-step-col"') == loop.step_count
    assert f"{len(loop.result.cards)} messages" in static
    assert bundle["text/plain"].startswith("Playground('Tool loop")


def test_far_fewer_widget_models_and_close_releases_every_one():
    Playground(SAMPLES_DIR / "short_chat.jsonl").close()  # the modules' first import makes none after
    before = set(_instances)
    pg = Playground(SAMPLES_DIR / "fences_showcase.jsonl")
    made = len(set(_instances) - before)
    assert made < 310  # was 981 for a sample: rows of HTML, a policy group's widgets once it is opened
    pg.controls.accordion.selected_index = 0
    pg.fence_editor.add()
    pg.close()
    assert set(_instances) - before == set()
    assert WIDGET not in pg._repr_mimebundle_() and "lp-wire-summary" in pg._repr_mimebundle_()["text/html"]


def test_an_edit_that_changes_nothing_at_the_step_says_so_beside_its_control():
    pg = Playground(SAMPLES_DIR / "fences_showcase.jsonl")
    pg.controls.input(("checkpoint", "keepPairsBefore")).value = 3
    note = pg.controls.editor(("checkpoint", "keepPairsBefore")).error.value
    assert f"no change at step {pg.step}: the model receives the same messages and tokens" in note
    pg.controls.input(("budget", "maxTokens")).value = 2000
    assert pg.controls.editor(("checkpoint", "keepPairsBefore")).error.value == ""
    assert pg.controls.editor(("budget", "maxTokens")).error.value == ""
    assert isinstance(pg.controls.input(("budget", "maxTokens")), W.FloatLogSlider)


def test_a_step_move_redraws_only_the_marker_over_the_chart(loop):
    chart = loop.timeline.chart.value
    assert f"left:{(loop.step - 1) * 640 / loop.step_count:.2f}px" in loop.timeline.marker.value
    loop.step = 3
    assert loop.timeline.chart.value == chart  # the long SVG is not sent again
    assert f"left:{2 * 640 / loop.step_count:.2f}px" in loop.timeline.marker.value
