"""Pilot tests of the playground widgets, driven by hand-built results (tests/tui_fixtures.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import replace
from typing import TypeVar

import pytest
from rich.style import Style
from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.content import Content
from textual.message import Message
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Input, Static

from engine.wire import to_anthropic
from playground.app.views import StepSample, anthropic_rows, apportion, bar_segments
from playground.tui.widgets import BudgetBar, EventsView, Slider, Timeline, TraceView, WireList, WireView
from playground.tui.widgets.slider import SliderBar
from playground.tui.widgets.static_text import update_if_changed
from playground.tui.widgets.text_lines import TextLines
from playground.tui.widgets.timeline import columns
from playground.tui.widgets.trace_view import trace_content
from tests.tui_fixtures import ACCOUNT, OVER_ACCOUNT, REMINDER_TEXT, big_result, small_result


class Host(App[None]):
    """A bare app around the widgets under test."""

    CSS = "BudgetBar { width: 30; } WireView { height: 24; }"
    AUTO_FOCUS = None

    def __init__(self, *widgets: Widget) -> None:
        super().__init__()
        self._widgets = widgets

    def compose(self) -> ComposeResult:
        yield from self._widgets


Scenario = Callable[[Pilot, list[Message]], Awaitable[None]]


def drawn(widget: TextLines) -> list[str]:
    """A widget's lines as the screen draws them (through the line API)."""
    return [widget.render_line(y).text for y in range(widget.content_size.height)]


def run(widgets: Iterable[Widget], scenario: Scenario, size: tuple[int, int] = (40, 10)) -> list[Message]:
    """Run `scenario` in a `Host` around `widgets`; return every message the app saw."""
    seen: list[Message] = []

    async def main() -> None:
        async with Host(*widgets).run_test(size=size, message_hook=seen.append) as pilot:
            await pilot.pause()
            await scenario(pilot, seen)

    asyncio.run(main())
    return seen


M = TypeVar("M", bound=Message)


def of_type(messages: list[Message], kind: type[M]) -> list[M]:
    """The messages of `kind`, once each (the hook sees a message again at every node it bubbles to)."""
    return list({id(m): m for m in messages if isinstance(m, kind)}.values())


# -- Slider -------------------------------------------------------------------------------------


def tokens_slider(value: int = 24000) -> Slider:
    return Slider(value, min=0, max=200_000, step=1000, coarse_step=10_000, id="tokens")


def test_slider_keys_step_coarse_and_ends() -> None:
    slider = tokens_slider()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        slider.focus()
        await pilot.press("right", "shift+right", "left", "home", "end", "pagedown", "pageup")

    changed = of_type(run([slider], scenario), Slider.Changed)  # coarse: ten steps of 1000
    assert [m.value for m in changed] == [25000, 35000, 34000, 0, 200_000, 190_000, 200_000]
    assert all(m.control is slider for m in changed)


def test_slider_moves_from_off_grid_value_to_neighbouring_grid_points() -> None:
    slider = tokens_slider(24123)

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        slider.focus()
        await pilot.press("right")
        assert slider.value == 25000
        slider.value = 24123
        await pilot.press("left")
        assert slider.value == 24000

    run([slider], scenario)


def test_float_slider_steps_without_float_noise() -> None:
    slider = Slider(0.7, min=0.0, max=1.0, step=0.05, coarse_step=0.1)

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        slider.focus()
        await pilot.press("right")
        assert slider.value == 0.75
        await pilot.press("shift+right")
        assert slider.value == 0.85
        await pilot.press("end", "left")
        assert slider.value == 0.95

    run([slider], scenario)
    assert slider.format(0.95) == "0.95" and slider.format(0.123) == "0.123"


def test_slider_renders_track_knob_and_value() -> None:
    slider = tokens_slider()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        bar = slider.query_one("SliderBar")
        assert drawn(bar)[0] == "━━━━○" + "─" * 28 + "  24000"
        slider.focus()
        await pilot.press("end")
        assert drawn(bar)[0] == "━" * 32 + "● 200000"

    run([slider], scenario)


def test_slider_drag_follows_the_mouse_and_snaps_to_steps() -> None:
    slider = tokens_slider()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        await pilot.mouse_down(slider, offset=(0, 0))
        assert slider.value == 0
        await pilot.hover(slider, offset=(16, 0))
        assert slider.value == 100_000
        await pilot.hover(slider, offset=(5, 0))  # 5/32 of 200 000 = 31 250
        assert slider.value == 31000
        await pilot.mouse_up(slider, offset=(5, 0))
        await pilot.hover(slider, offset=(30, 0))
        assert slider.value == 31000 and pilot.app.mouse_captured is None

    changed = of_type(run([slider], scenario), Slider.Changed)
    assert [m.value for m in changed] == [0, 100_000, 31000]


def test_slider_typed_value_is_applied_and_clamped() -> None:
    slider = tokens_slider()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        slider.focus()
        await pilot.press("enter")
        field = slider.query_one(Input)
        assert slider.has_class("-editing") and pilot.app.focused is field and field.value == "24000"
        await pilot.press(*"500", "enter")  # the text is selected on focus, so typing replaces it
        assert slider.value == 500 and not slider.has_class("-editing") and pilot.app.focused is slider
        await pilot.press("enter", *"999999", "enter")
        assert slider.value == 200_000

    changed = of_type(run([slider], scenario), Slider.Changed)
    assert [m.value for m in changed] == [500, 200_000]


def test_slider_invalid_text_shows_an_error_and_keeps_the_value() -> None:
    slider = tokens_slider()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        slider.focus()
        await pilot.press("enter", "-", "enter")
        error = slider.query_one(".slider--error")
        assert slider.has_class("-invalid") and error.display and str(error.render()) == "not a number"
        assert slider.value == 24000
        await pilot.press("escape")
        assert not slider.has_class("-editing") and pilot.app.focused is slider

    assert of_type(run([slider], scenario), Slider.Changed) == []


def test_slider_click_on_the_number_opens_the_editor() -> None:
    slider = tokens_slider()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        await pilot.click(slider, offset=(38, 0))
        assert slider.has_class("-editing") and slider.value == 24000

    run([slider], scenario)


def test_slider_clamps_assignments_and_rejects_bad_ranges() -> None:
    slider = tokens_slider()
    slider.value = -5
    assert slider.value == 0
    slider.value = 10**9
    assert slider.value == 200_000
    with pytest.raises(ValueError, match=r"^slider needs min <= max and step > 0, got 5, 1, 1$"):
        Slider(min=5, max=1)


# -- BudgetBar ----------------------------------------------------------------------------------


def test_apportion_uses_largest_remainders_and_fills_exactly() -> None:
    values = [1200, 300, 600, 9800, 4900, 1100, 100, 2400, 3600]
    assert apportion(values, 30, 24000) == [2, 0, 1, 12, 6, 1, 0, 3, 5]
    assert apportion([1, 1, 1], 10, 3) == [4, 3, 3]
    assert apportion([5], 10, 0) == [0]


def test_budget_bar_segments_and_numbers() -> None:
    bar = BudgetBar()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        bar.show(ACCOUNT)
        await pilot.pause()
        lines = drawn(bar)
        assert lines[0] == "maxTokens 24 000"
        assert lines[1] == "█" * 22 + "▒" * 3 + "░" * 5
        assert lines[2] == " " * 18 + "▲" + " " * 11  # wm budget = trigger = 15 120 → cell 18
        assert lines[3:] == [
            "█ core          1.2k",
            "█ user           300",
            "█ fence:memory   600",
            "█ wm            9.8k",
            "█ tools         4.9k",
            "█ summary       1.1k",
            "█ reminder       100",
            "▒ reserved      2.4k",
            "░ free          3.6k",
            "△ wm budget 15k",
            "▲ trigger   15k",
            "  summary budget 2.6k",
            "used 18 000 · 83.3 %",
        ]
        assert not bar.has_class("-over") and bar.size.height == len(lines)

    run([bar], scenario, size=(30, 20))


def test_budget_bar_over_budget_and_pinned_compare() -> None:
    bar = BudgetBar()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        bar.show(OVER_ACCOUNT, pinned=ACCOUNT)
        await pilot.pause()
        lines = drawn(bar)
        assert bar.has_class("-over")
        assert lines[0] == "maxTokens 24 000 · ▀ A"
        assert lines[1] == "█" * 27 + "▒" * 3  # 28 800 tokens drawn: the bar grows past maxTokens
        assert lines[2] == "▀" * 25  # A on the same scale
        assert lines[3][25] == "┃"  # where maxTokens ends
        assert "█ fence:memory     0  -600" in lines and "█ wm             20k  +10k" in lines
        assert lines[-1] == "used 26 400 · 122.2 % !"
        assert bar.size.height == len(lines) == 17  # with A's bar and the deltas

    run([bar], scenario, size=(30, 24))


def test_kept_component_styles_follow_a_class_a_theme_and_focus() -> None:
    """`ComponentStyles` keeps a style across repaints, never past a restyle (what Textual would give)."""
    bar, slider = BudgetBar(), tokens_slider()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        app, knob = pilot.app, slider.query_one(SliderBar)
        kept, knob_style = bar.component_style, knob.component_style  # cleared by Textual's restyle hook

        def fresh(widget: Widget, name: str) -> object:
            widget.refresh()  # drops Textual's own copy
            return widget.get_component_rich_style(name)

        bar.show(ACCOUNT)
        await pilot.pause()
        normal = kept("budget-bar--used")
        assert kept("budget-bar--used") is normal and normal == fresh(bar, "budget-bar--used")
        bar.show(OVER_ACCOUNT)  # `-over`: bold, in the error colour
        await pilot.pause()
        assert kept("budget-bar--used") == fresh(bar, "budget-bar--used") != normal
        app.theme = "textual-light" if app.theme != "textual-light" else "textual-dark"
        await pilot.pause()
        assert kept("budget-bar--used") == fresh(bar, "budget-bar--used")
        unfocused = knob_style("slider--knob")
        slider.focus()
        await pilot.pause()
        assert knob_style("slider--knob") == fresh(knob, "slider--knob") != unfocused

    run([bar, slider], scenario, size=(40, 24))


def test_budget_bar_unknown_category_is_drawn_last_in_a_neutral_style() -> None:
    bar = BudgetBar()
    account = replace(ACCOUNT, by_category={"core": 1200, "images": 600})

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        bar.show(account)
        await pilot.pause()
        assert [s.style for s in bar_segments(account)][-3:] == ["other", "reserved", "free"]
        assert "█ images     600" in drawn(bar)

    run([bar], scenario, size=(30, 20))


# -- WireView -----------------------------------------------------------------------------------


def visible_lines(wire: WireList) -> list[str]:
    return [wire.render_line(y).text.rstrip() for y in range(wire.size.height)]


def test_wire_view_cards_and_dropped_lines() -> None:
    view = WireView()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        view.show(small_result())
        await pilot.pause()
        wire = view.query_one(WireList)
        assert [r.message_id for r in wire.rows] == ["s0", "h1", "a5", "t6", "u7"]
        title = view.query_one(".wire-view--title")
        assert str(title.render()) == "WIRE openai · 5 messages · 18 000 tok · 4 dropped (hidden)"
        assert visible_lines(wire)[:11] == [
            "▌ system · system_prompt · 100 tok · s0",
            "▌ You are a careful data analyst.",
            "▌ system · history_summary · 640 tok SUMMARY · carries 2 · h1",
            "▌ [summary] loaded sales",
            "▌ assistant · tool_calls · 102 tok · a5",
            '▌ run_sql({"q": "select"})',
            "▌ tool · tool_output · 103 tok COMPRESSED · t6",
            "▌ [compressed] 3 rows",
            "▌ user · user_input · 104 tok REMINDER · u7",
            "▌ Which region grew fastest?",
            f"▌ ⟪reminder⟫ {REMINDER_TEXT}",
        ]
        wire.focus()
        await pilot.press("d")
        assert [r.kind[0] + ":" + str(r.message_id) for r in wire.rows] == [
            "c:s0", "d:u1", "d:a2", "d:a3", "d:t4", "c:h1", "c:a5", "c:t6", "c:u7",
        ]  # fmt: skip
        lines = visible_lines(wire)
        assert lines[2].startswith("┄ dropped · user user_input u1 · replaced_by_summarization → h1 ┄")
        assert lines[5].startswith("┄ dropped · tool tool_output t4 · dropped_by_WORKING_MEMORY ┄")
        assert str(title.render()).endswith("4 dropped (shown)")

    run([view], scenario, size=(80, 24))


def test_wire_view_title_says_the_dropped_count_is_on_its_way_until_the_check_brings_it() -> None:
    view = WireView()
    result = small_result()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        title = view.query_one(".wire-view--title")
        view.show(result, wait_for_count=True)  # a long session's build, shown before it is counted
        await pilot.pause()
        assert str(title.render()) == "WIRE openai · 5 messages · 18 000 tok · counting dropped (hidden)"
        view.set_checked(None, 4)
        await pilot.pause()
        assert str(title.render()) == "WIRE openai · 5 messages · 18 000 tok · 4 dropped (hidden)"
        view.show(result, dropped=9, wait_for_count=True)  # counted before it was shown
        await pilot.pause()
        assert str(title.render()).endswith("· 9 dropped (hidden)")

    run([view], scenario, size=(80, 24))


def test_wire_view_selection_posts_message_ids() -> None:
    view = WireView()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        view.show(small_result())
        view.show_dropped = True
        await pilot.pause()
        view.query_one(WireList).focus()
        await pilot.press("down", "down", "enter")
        await pilot.click(WireList, offset=(3, 0))
        await pilot.click(WireList, offset=(3, 7))  # lines 6-7 are the summary card

    selected = of_type(run([view], scenario, size=(80, 24)), WireView.MessageSelected)
    assert [m.message_id for m in selected] == ["a2", "s0", "h1"]
    assert all(m.control is view for m in selected)


def test_wire_view_rebuild_keeps_widgets_and_cursor_and_shows_reminder_apart() -> None:
    view = WireView()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        view.show(small_result())
        await pilot.pause()
        wire = view.query_one(WireList)
        wire.focus()
        await pilot.press("end")
        view.show(small_result(OVER_ACCOUNT))
        await pilot.pause()
        assert view.query_one(WireList) is wire and view.highlighted_message_id == "u7"
        detail = view.query_one("VerticalScroll > Static").content.plain
        assert detail.startswith("user · user_input · 104 tok REMINDER\nid u7\n\nWhich region grew fastest?")
        assert detail.endswith(
            f"── system reminder ──\n<system-reminder>\n{REMINDER_TEXT}\n</system-reminder>"
        )
        assert "18 000 tok" not in str(view.query_one(".wire-view--title").render())

    run([view], scenario, size=(80, 24))


def test_wire_view_unknown_role_and_mark_are_drawn_muted() -> None:
    view = WireView()
    result = small_result()
    odd = replace(result.cards[0], message={"role": "developer", "content": "be brief"}, marks=("sparkly",))
    result = replace(result, cards=(odd, *result.cards[1:]))

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        view.show(result)
        await pilot.pause()
        wire = view.query_one(WireList)
        assert visible_lines(wire)[0] == "▌ developer · system_prompt · 100 tok SPARKLY · s0"
        assert wire.role_style("developer") == wire.mark_style("sparkly") == wire._style("muted")

    run([view], scenario, size=(80, 24))


def test_wire_view_anthropic_shape() -> None:
    view = WireView()
    payload = {
        "system": "You are careful.",
        "messages": [
            {"role": "user", "content": "hi"},
            {
                "role": "assistant",
                "content": [{"type": "tool_use", "id": "c5", "name": "run_sql", "input": {}}],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c5", "content": "3 rows"}]},
        ],
    }

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        view.show(small_result(), anthropic=payload)
        view.query_one(WireList).focus()
        await pilot.press("w")
        wire = view.query_one(WireList)
        assert [(r.role, r.type, r.text) for r in wire.rows] == [
            ("system", "system", "You are careful."),
            ("user", "text", "hi"),
            ("assistant", "tool_use", "run_sql({})"),
            ("user", "tool_result", "[c5] 3 rows"),
        ]
        assert visible_lines(wire)[4] == "▌ assistant · tool_use"

    shapes = of_type(run([view], scenario, size=(80, 24)), WireView.ShapeChanged)
    assert [m.shape for m in shapes] == ["anthropic"]


def test_wire_view_makes_the_anthropic_payload_of_a_build_shown_without_one() -> None:
    view = WireView()
    result = small_result()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        view.show(result)  # shown before its provider check, which brings the payload
        view.query_one(WireList).focus()
        await pilot.press("w")
        wire = view.query_one(WireList)
        assert wire.rows == anthropic_rows(to_anthropic(list(result.wire)))
        assert [r.role for r in wire.rows][:1] == ["system"] and len(wire.rows) > 1
        payload = {"system": "", "messages": [{"role": "user", "content": "late"}]}
        view.set_checked(payload, result.dropped_count())  # the check's payload replaces it
        assert [(r.role, r.text) for r in wire.rows] == [("user", "late")]

    run([view], scenario, size=(80, 24))


def test_wire_view_ten_thousand_messages() -> None:
    view = WireView()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        view.show(big_result(10_000))
        view.show_dropped = True
        await pilot.pause()
        wire = view.query_one(WireList)
        assert len(wire.rows) == 10_000 and wire.virtual_size.height == 6667 * 2 + 3333
        wire.focus()
        await pilot.press("end")
        assert view.highlighted_message_id == "m9999"
        assert visible_lines(wire)[-2:] == ["▌ assistant · final_answer · 10 tok · m9999", "▌ message 9999"]
        await pilot.press("pageup")
        assert view.highlighted_message_id == "m9990"  # 15 lines up: 9 rows of 2, 1, 2 lines

    run([view], scenario, size=(80, 24))


def test_wire_list_scroll_range_follows_a_shorter_wire_and_the_scrollbar_goes_when_it_fits() -> None:
    view = WireView()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        view.show(big_result(300))  # 200 cards of 2 lines: 400 lines
        await pilot.pause()
        wire = view.query_one(WireList)
        wire.focus()
        await pilot.press("end")
        assert wire.show_vertical_scrollbar and wire.scroll_y == wire.max_scroll_y > 300
        view.show(big_result(60))  # 40 cards, 80 lines: still scrolls, over a shorter range
        await pilot.pause()
        assert wire.virtual_size.height == 80 and wire.show_vertical_scrollbar
        assert wire.scroll_y == 0  # m299 is gone: the cursor is on the first card
        await pilot.press("end")
        assert wire.scroll_y == wire.max_scroll_y == 80 - wire.scrollable_content_region.height
        assert wire.vertical_scrollbar.window_virtual_size == 80
        assert visible_lines(wire)[-1] == "▌ message 58"
        view.show(big_result(6))  # 4 cards, 8 lines: no scrollbar
        await pilot.pause()
        assert wire.virtual_size.height == 8 and not wire.show_vertical_scrollbar and wire.scroll_y == 0

    run([view], scenario, size=(80, 24))


def test_wire_list_lines_are_drawn_again_in_another_theme_and_for_a_changed_row() -> None:
    view = WireView()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        pilot.app.theme = "textual-dark"
        view.show(big_result(6))
        await pilot.pause()
        wire = view.query_one(WireList)
        dark = list(wire.render_line(2))
        pilot.app.theme = "textual-light"
        await pilot.pause()
        light = list(wire.render_line(2))
        assert "".join(s.text for s in dark) == "".join(s.text for s in light)
        assert [s.style for s in dark] != [s.style for s in light]
        first = visible_lines(wire)[0]
        shifted = replace(big_result(6), cards=tuple(big_result(6).cards)[1:])  # every row one line up
        view.show(shifted)
        await pilot.pause()
        assert first.endswith("· m0") and visible_lines(wire)[0].endswith("· m1")

    run([view], scenario, size=(80, 24))


def test_a_static_is_updated_only_when_its_text_changes() -> None:
    pane = Static("session cost: replaying the session…")

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        assert not update_if_changed(pane, "session cost: replaying the session…")
        assert update_if_changed(pane, "session cost: $0.12", layout=False)
        assert str(pane.content) == "session cost: $0.12"
        assert not update_if_changed(pane, Content("session cost: $0.12"))

    run([pane], scenario)


# -- EventsView and TraceView ---------------------------------------------------------------------


def test_events_view_lists_events_and_reminders_and_posts_selection() -> None:
    events = EventsView()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        events.show(small_result())
        await pilot.pause()
        prompts = [str(events.get_option_at_index(i).prompt) for i in range(events.option_count)]
        assert prompts == [
            "summarization  summarization fired: 2 messages → 640 tok · 3 messages",
            "working_memory  2 messages over the budget · 2 messages",
            "tool_history  1 tool output compressed · 1 message",
            f"reminder  tool_call_streak: {REMINDER_TEXT}",
        ]
        events.focus()
        await pilot.press("down", "down", "enter")

    selected = of_type(run([events], scenario, size=(80, 10)), EventsView.EventSelected)
    assert [m.event.kind for m in selected] == ["working_memory"]


def test_trace_content_for_a_summarized_message() -> None:
    text = trace_content(small_result(), "u1").plain
    assert text.split("\n") == [
        "TRACE u1",
        "fate        dropped",
        "message     user · user_input",
        "index       1",
        "stage       provider",
        "phase       –",
        "reason      replaced_by_summarization",
        "strategy    summarization",
        "tokens      100",
        "wire index  –",
        "replaced by h1",
        "on the wire #1",
        "",
        "EVENTS (1)",
        "summarization  summarization fired: 2 messages → 640 tok",
    ]
    assert trace_content(small_result(), "zz").plain == "TRACE zz\nno decision recorded for it"


def test_trace_view_shows_a_message() -> None:
    trace = TraceView()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        trace.show(small_result(), "t6")
        await pilot.pause()
        assert trace.message_id == "t6"
        assert "tool_history  1 tool output compressed" in str(trace.render())

    run([trace], scenario, size=(60, 20))


# -- Timeline -----------------------------------------------------------------------------------

POINTS = [StepSample(s, s * 1000, 21600, 0.0, {5: "S", 9: "CR", 25: "R"}.get(s, "")) for s in range(1, 30)]


def test_timeline_columns_bucket_points_and_keep_markers() -> None:
    points = POINTS
    cols = columns(points, 10)
    assert len(cols) == 10 and (cols[0].first, cols[0].last) == (0, 1) and cols[-1].last == 28
    assert [c.marker for c in cols] == [" ", "S", " ", "C", " ", " ", " ", " ", "R", " "]
    assert [c.over for c in cols][-4:] == [False, True, True, True]  # 22 000 > 21 600 from step 22 on


def test_timeline_step_keys_post_step_changed() -> None:
    timeline = Timeline()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        timeline.show(POINTS)
        await pilot.pause()
        assert timeline.step == 29
        timeline.show_note("no summary: stage 1")
        spark, marks, note = drawn(timeline)
        assert spark == "▁▁▁▁▁▂▂▂▂▃▃▃▄▄▄▄▅▅▅▆▆▆▆▇▇▇▇██ ◀ step 29/29 ▶ 29 000 tok · S×1"
        assert marks == "    S   C               R    "
        assert note == "no summary: stage 1"
        timeline.focus()
        await pilot.press("left", "shift+left", "home", "left", "end")
        # lower case jumps on to the next step with that marker, upper case back; none that way: it stays
        await pilot.press("S", "S", "c", "s", "r", "R", "o", "O", "o")
        timeline.show(POINTS[:10])  # the current step (29) is gone: the last one is taken, silently
        assert timeline.step == 10

    changed = of_type(run([timeline], scenario, size=(80, 4)), Timeline.StepChanged)
    assert [m.step for m in changed] == [28, 18, 1, 29, 5, 9, 25, 9, 22, 23]
    assert all(m.control is timeline for m in changed)


def test_timeline_chart_is_drawn_again_for_new_points_and_steps_but_not_for_a_new_note() -> None:
    timeline = Timeline()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        timeline.show(POINTS)
        await pilot.pause()
        spark = drawn(timeline)[0]
        timeline.show_note("stage 2 fired")
        marks = "    S   C               R    "
        assert drawn(timeline) == [spark, marks, "stage 2 fired"]
        flat = [p._replace(final_tokens=1000, markers="") for p in POINTS]  # as many points, other numbers
        timeline.show(flat)
        flat_spark = "▁" * 29 + " ◀ step 29/29 ▶ 1 000 tok · S×0"
        assert drawn(timeline)[:2] == [flat_spark, " " * 29]
        timeline.action_move(-28)
        assert drawn(timeline)[0].startswith("▁" * 29 + " ◀ step  1/29 ▶")

    run([timeline], scenario, size=(80, 4))


def test_timeline_label_keeps_its_width_so_the_chart_keeps_its_columns() -> None:
    timeline = Timeline()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        timeline.show(POINTS)
        await pilot.pause()
        last = drawn(timeline)[0]
        timeline.action_move(-28)  # step 1: 1 000 tokens, a shorter figure than step 29's 29 000
        first = drawn(timeline)[0]
        assert first.endswith(" ◀ step  1/29 ▶  1 000 tok · S×1") and len(first) == len(last)
        assert first.split(" ◀")[0] == last.split(" ◀")[0]  # the same columns, only the cursor moved

    run([timeline], scenario, size=(80, 4))


def test_timeline_fill_replaces_the_steps_computed_and_keeps_the_rest_and_the_cursor() -> None:
    timeline = Timeline()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        timeline.show(POINTS, 3)  # the last series' steps, shown while the new one computes
        await pilot.pause()
        new = [p._replace(final_tokens=500, markers="") for p in POINTS[:6]]  # step 5 no longer summarises
        timeline.fill(0, new)
        assert timeline.points[:6] == new and timeline.points[6:] == POINTS[6:] and timeline.step == 3
        assert drawn(timeline)[0].endswith(" ◀ step  3/29 ▶    500 tok · S×0")  # the column kept its width
        more = [p._replace(final_tokens=100_000) for p in POINTS[6:]]
        timeline.fill(6, more, final=True)
        assert timeline.points == new + more and len(timeline.points) == 29
        assert drawn(timeline)[0].endswith(" ◀ step  3/29 ▶     500 tok · S×0")  # fitted to 100 000

    run([timeline], scenario, size=(80, 4))


# -- Snapshots ----------------------------------------------------------------------------------


class PanelsApp(App[None]):
    """The wire view, the budget bar, the events and the timeline, as the main screen lays them out."""

    CSS = """
    Horizontal { height: 1fr; }
    WireView { width: 1fr; height: 1fr; }
    BudgetBar { width: 30; padding: 0 1; }
    """
    AUTO_FOCUS = None

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield WireView()
            yield BudgetBar()
        yield EventsView()
        yield Timeline()

    def on_mount(self) -> None:
        result = small_result()
        self.query_one(WireView).show(result)
        self.query_one(WireView).show_dropped = True
        self.query_one(BudgetBar).show(result.tokens, pinned=OVER_ACCOUNT)
        self.query_one(EventsView).show(result)
        self.query_one(Timeline).show(POINTS, step=25)


def test_snapshot_main_panels(snap_compare: Callable[..., bool]) -> None:
    assert snap_compare(PanelsApp(), terminal_size=(100, 34))


def test_snapshot_sliders_one_focused(snap_compare: Callable[..., bool]) -> None:
    app = Host(tokens_slider(), Slider(0.7, min=0.0, max=1.0, step=0.05, id="share"))

    async def move_first(pilot: Pilot) -> None:
        pilot.app.query_one("#tokens", Slider).focus()
        await pilot.press("right")

    assert snap_compare(app, terminal_size=(50, 4), run_before=move_first)


def test_log_scale_slider_maps_the_track_logarithmically():
    from playground.tui.widgets import Slider

    slider = Slider(10_000, min=1_000, max=1_000_000, step=1_000, log_scale=True)
    assert abs(slider.fraction - 1 / 3) < 1e-9  # 10k sits a third of the way from 1k to 1M
    assert round(slider.value_at_fraction(0.5)) == 31_623
    linear = Slider(10_000, min=1_000, max=1_000_000, step=1_000)
    assert abs(linear.fraction - 9_000 / 999_000) < 1e-9
    assert Slider(5, min=0, max=10, log_scale=True).logarithmic is False  # needs min > 0


def cells(widget: Widget, strips: list[Strip]) -> list[list[tuple[str, Style]]]:
    """Each line as (character, style) cells over the widget's width (segment cuts and offsets aside)."""
    width, base = widget.content_size.width, widget.rich_style
    padded = [strip.crop_extend(0, width, base) for strip in strips]
    return [[(ch, seg.style.clear_meta_and_links()) for seg in strip for ch in seg.text] for strip in padded]


def test_text_lines_draw_what_textuals_content_pipeline_draws() -> None:
    bar, timeline, slider = BudgetBar(), Timeline(), tokens_slider()

    async def scenario(pilot: Pilot, seen: list[Message]) -> None:
        bar.show(OVER_ACCOUNT, pinned=ACCOUNT)  # every category, markers, the `-over` line, a thin A bar
        timeline.show(POINTS)
        slider.focus()
        await pilot.pause()
        for widget in (bar, timeline, slider.query_one(SliderBar)):
            ours = [widget.render_line(y) for y in range(widget.content_size.height)]
            lines = widget.text_lines()
            widget.render = lambda lines=lines: Text("\n", no_wrap=True, overflow="crop").join(lines)
            widget._render_content()  # Textual's own pipeline, as for a widget that renders Text
            textuals = widget._render_cache.lines
            assert len(ours) == len(lines) > 0
            assert cells(widget, ours) == cells(widget, textuals[: len(ours)])

    run([bar, timeline, slider], scenario, size=(80, 30))
