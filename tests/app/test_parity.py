"""One script of edits through the TUI (Pilot) and through the notebook's widgets gives the same build.

Both front ends sit on `playground.app.workspace`; this pins that they stay equal on policy fields, a fence
placement (the session's fence is re-placed), the defaults switch and a step move.
"""

from __future__ import annotations

import asyncio

from textual.pilot import Pilot
from textual.widgets import Select

from playground.app.inputs import SAMPLES_DIR, load_inputs
from playground.app.views import bar_segments, wire_rows
from playground.notebook import Playground
from playground.tui.app import PlaygroundApp, make_app
from playground.tui.screens.fence_form import FenceForm
from playground.tui.widgets.wire_list import WireList
from tests.tui.test_tui_app import SIZE, focus_field, settle

SESSION = SAMPLES_DIR / "fences_showcase.jsonl"
MAX_TOKENS = ("budget", "maxTokens")
RETENTION = ("toolHistory", "retentionMode")
TRACE = ("contextTrace", "enabled")


def run_tui() -> dict[str, object]:
    """The script through the TUI: the build after the fence edit (`last_step`), the final build
    (`result`), the field values it set, the step it went to and the wire rows it shows."""
    app = make_app(load_inputs(SESSION))
    seen: dict[str, object] = {}

    async def scenario(app: PlaygroundApp, pilot: Pilot) -> None:
        main = app.main
        slider = (await focus_field(app, pilot, "budget.maxTokens")).input
        await pilot.press("left")
        (await focus_field(app, pilot, "toolHistory.retentionMode")).input.value = "drop"
        await focus_field(app, pilot, "contextTrace.enabled")
        await pilot.press("enter")
        await settle(app, pilot)
        main.query_one("#left").active = "tab-fences"
        table = main.query_one("#fence-descriptors")
        table.focus()
        await pilot.press(*["down"] * app.workspace.fences.kinds().index("memory-context"), "e")
        await pilot.pause()
        form = app.screen
        assert isinstance(form, FenceForm)
        form.query_one("#fence-placement", Select).value = "after-last-tool-result"
        await pilot.click("#fence-save")
        await settle(app, pilot)
        seen["last_step"] = main.result
        await pilot.press("ctrl+d")
        await settle(app, pilot)
        main.set_focus(None)
        await pilot.press("left_square_bracket")
        await settle(app, pilot)
        ws = app.workspace
        seen["values"] = {MAX_TOKENS: slider.value, RETENTION: "drop", TRACE: ws.policy.context_trace.enabled}
        seen["result"], seen["step"] = main.result, ws.step
        seen["rows"] = list(main.query_one(WireList).rows)

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await scenario(app, pilot)

    asyncio.run(main())
    return seen


def test_the_same_edits_give_the_same_build_in_the_tui_and_the_notebook() -> None:
    seen = run_tui()
    values, step = seen["values"], seen["step"]
    assert values[MAX_TOKENS] == 7000 and values[TRACE] is False  # the header set 8000 and the trace on
    pg = Playground(str(SESSION), debounce=0)
    for path, value in values.items():
        pg.controls.input(path).value = value
    row = next(r for r in pg.fence_editor.rows if r.kind.value == "memory-context")
    row.placement.value = "after-last-tool-result"
    # the fence case of issue 11: the persisted memory fence (m003) follows its turn's last tool result
    # (m010) in both, kept, where the notebook used to drop it (dropped_by_fence_lifetime)
    for result in (seen["last_step"], pg.result):
        ids = [c.message_id for c in result.cards]
        assert ids[ids.index("m010") + 1] == "m003"
        assert result.cards[ids.index("m003")].marks == ("fence:memory-context", "truncated")
        assert result.decision_for("m003").reason == "kept_by_CORE_CONTEXT"
    assert pg.result.wire == seen["last_step"].wire
    pg.defaults_switch.value = "linnkit-0.21"
    pg.step = step
    tui, tui_rows, notebook = seen["result"], seen["rows"], pg.result
    assert pg.defaults == "linnkit-0.21" and step == pg.step_count - 1
    assert tui.tokens.max_tokens == 7000 and tui.trace is None
    assert notebook.wire == tui.wire
    assert notebook.decisions == tui.decisions
    assert notebook.tokens == tui.tokens
    assert notebook.events == tui.events
    assert notebook == tui
    assert wire_rows(notebook) == tui_rows
    assert wire_rows(notebook, show_dropped=True) == wire_rows(tui, show_dropped=True)
    assert bar_segments(notebook.tokens) == bar_segments(tui.tokens)
