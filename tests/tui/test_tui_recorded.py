"""A recorded session in the real app: the cost pane says what was billed and how far the rebuild is from
the record, the chart under the timeline follows the step, `g` loads the as-recorded policy."""

from __future__ import annotations

import asyncio
from pathlib import Path

from engine.session import save_session
from playground.app.inputs import load_inputs
from playground.app.recorded import AS_RECORDED_POLICY
from playground.app.views import tokens_long
from playground.tui.app import make_app
from playground.tui.widgets.cost_pane import CostPane
from playground.tui.widgets.record_chart import RecordChart
from tests.engine.test_truth import session
from tests.tui.test_tui_app import SIZE, settle

MODELS = {"m": "claude-opus-4-6", "m2": "claude-haiku-4-5"}


def priced_session(tmp_path: Path) -> Path:
    """The four recorded calls of the truth tests, under models the price catalogue knows."""
    messages = []
    for message in session():
        usage = (message.metadata or {}).get("usage")
        if usage:
            message = message.with_(
                metadata={**message.metadata, "usage": {**usage, "model": MODELS[usage["model"]]}}
            )
        messages.append(message)
    path = tmp_path / "recorded.jsonl"
    save_session(messages, path, header={"kind": "linn-session", "version": 1, "title": "recorded"})
    return path


def test_the_record_is_shown_beside_the_policy(tmp_path: Path) -> None:
    app = make_app(load_inputs(priced_session(tmp_path)))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await asyncio.sleep(0.3)
            await settle(app, pilot)
            pane = str(app.main.query_one(CostPane).content)
            assert "RECORDED" in pane and "billed $0.0" in pane and "4 recorded calls" in pane
            assert "rebuild vs record: median" in pane and "(2 calls)" in pane
            chart = app.main.query_one(RecordChart)
            assert chart.display and [s.recorded_prompt_tokens for s in chart.steps] == [
                1010,
                1030,
                1060,
                2000,
            ]
            assert chart.labels()[0].startswith(f" recorded {tokens_long(2000)} · as recorded")
            app.main.action_step(-3)
            await settle(app, pilot)
            assert chart.step == 1
            first = f" recorded {tokens_long(1010)} · as recorded {tokens_long(1010)} (learns the offset)"
            assert chart.labels()[0] == first
            await pilot.press("g")
            await settle(app, pilot)
            assert app.main.workspace.policy == AS_RECORDED_POLICY

    asyncio.run(scenario())


def test_a_session_without_usage_shows_no_record(tmp_path: Path) -> None:
    plain = tmp_path / "plain.jsonl"
    save_session([m.with_(metadata=None) for m in session()], plain)
    app = make_app(load_inputs(plain))

    async def scenario() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            await asyncio.sleep(0.3)
            await settle(app, pilot)
            assert "RECORDED" not in str(app.main.query_one(CostPane).content)
            assert not app.main.query_one(RecordChart).display

    asyncio.run(scenario())
