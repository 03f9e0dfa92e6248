"""The user before the background (playground/tui/priority.py): replays wait between their steps and the
garbage collector is off while a key's effect is on its way to the screen."""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
from textual import events
from textual.app import App
from textual.message import Message
from textual.pilot import Pilot
from textual.widgets import Input

from playground.app.building import series_steps
from playground.app.inputs import load_inputs
from playground.app.workspace import Workspace
from playground.tui import priority as priority_module
from playground.tui.app import PlaygroundApp, make_app
from playground.tui.messages import BuildFinished
from playground.tui.priority import PAINT_GRACE, UPDATES_ASKED, UiPriority
from playground.tui.screens.main import MainScreen
from playground.tui.widgets import Slider, Timeline
from tests.tui.test_tui_app import settle
from tests.tui_session import write_session


def run_in_app(scenario: object) -> None:
    async def main() -> None:
        app: App[None] = App()
        async with app.run_test() as pilot:
            await scenario(UiPriority(app), pilot)  # type: ignore[operator]

    asyncio.run(main())
    assert gc.isenabled()


def test_a_hold_turns_the_collector_off_until_released_or_expired() -> None:
    async def scenario(priority: UiPriority, pilot: Pilot) -> None:
        priority.hold(5)
        assert priority.busy and not gc.isenabled()
        priority.release()
        assert not priority.busy and gc.isenabled()
        priority.hold(0.05)
        priority.hold(0.01)  # a shorter hold does not cut a longer one short
        await asyncio.sleep(0.03)
        assert priority.busy and not gc.isenabled()
        await asyncio.sleep(0.1)
        await pilot.pause()
        assert not priority.busy and gc.isenabled()

    run_in_app(scenario)


def test_an_expiry_before_the_hold_ends_by_the_clock_looks_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # Textual's timers and `time.monotonic()` may disagree by a hair: an expiry that finds the hold not yet
    # over must not leave the collector off for the rest of the session (it did, in CI).
    late = [0.0]
    clock = SimpleNamespace(monotonic=lambda: time.monotonic() - late[0], sleep=time.sleep)
    monkeypatch.setattr(priority_module, "time", clock)

    async def scenario(priority: UiPriority, pilot: Pilot) -> None:
        priority.hold(0.03)
        late[0] = 0.02  # from now on this clock reads 20 ms behind the timers'
        await asyncio.sleep(0.04)
        assert priority.busy and not gc.isenabled()
        await asyncio.sleep(0.06)
        await pilot.pause()
        assert not priority.busy and gc.isenabled()

    run_in_app(scenario)


def test_a_worker_waits_while_the_user_waits_and_not_when_it_is_stopped() -> None:
    async def scenario(priority: UiPriority, pilot: Pilot) -> None:
        priority.hold(5)
        waited: list[float] = []
        worker = threading.Thread(target=lambda: (priority.wait(), waited.append(time.monotonic())))
        worker.start()
        await asyncio.sleep(0.05)
        assert waited == []
        released = time.monotonic()
        priority.release()
        await asyncio.to_thread(worker.join, 2)
        assert len(waited) == 1 and waited[0] >= released
        priority.hold(5)
        stop = priority.polite(lambda: True)
        assert stop() is True and priority.busy  # a stopped replay does not wait to end
        priority.release()

    run_in_app(scenario)


def test_the_series_pauses_before_each_step_outside_the_engine_lock(tmp_path: Path) -> None:
    ws = Workspace(load_inputs(write_session(tmp_path)))
    lock = threading.Lock()
    held_at_pause: list[bool] = []
    pause = lambda: held_at_pause.append(lock.locked())  # noqa: E731
    points = list(series_steps(ws.timeline_request(), lock=lock, pause=pause))
    assert len(points) == len(ws.points) == 7 and held_at_pause == [False] * 7


def test_an_edit_holds_the_background_until_its_build_is_shown_and_quitting_releases(
    tmp_path: Path,
) -> None:
    app = make_app(load_inputs(write_session(tmp_path)))
    seen: list[tuple[bool, bool]] = []

    def arrived(message: Message) -> None:
        if isinstance(message, BuildFinished) and not seen:  # the build is made, not yet painted
            seen.append((app.priority.busy, gc.isenabled()))

    async def main(app: PlaygroundApp) -> None:
        async with app.run_test(size=(160, 48), message_hook=arrived) as pilot:
            await settle(app, pilot)
            slider = app.main.query_one("#field-budget-maxTokens").input  # type: ignore[attr-defined]
            target = app.workspace.generation + 1
            seen.clear()
            slider.action_move(1)
            while app.main.shown_generation < target:
                await asyncio.sleep(0.001)
            seen.append((app.priority.busy, gc.isenabled()))  # applied: the paint may take a few frames
            await asyncio.sleep(PAINT_GRACE + 0.05)
            await pilot.pause()
            seen.append((app.priority.busy, gc.isenabled()))
            app.priority.hold(5)
        seen.append((app.priority.busy, gc.isenabled()))

    asyncio.run(main(app))
    assert seen == [(True, False), (True, False), (False, True), (False, True)]


async def shown(app: PlaygroundApp, generation: int) -> None:
    while app.main.shown_generation < generation:
        await asyncio.sleep(0.001)


def test_a_policy_slider_key_is_painted_in_one_paint_with_the_build_it_asks_for(tmp_path: Path) -> None:
    """The knob is not painted before the build: the paint that shows the moved slider also shows the
    new budget bar (and the app's key hook is what holds the paint: a key on the step works the same)."""
    app = make_app(load_inputs(write_session(tmp_path)))
    painted: list[set[str]] = []
    refresh = MainScreen._compositor_refresh

    def recorded(screen: MainScreen) -> None:
        painted.append({type(widget).__name__ for widget in screen._dirty_widgets})
        refresh(screen)

    async def main(app: PlaygroundApp) -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(app, pilot)
            app.main.action_focus_field("budget.maxTokens")
            await pilot.pause()
            for key, expected in (("right", "SliderBar"), ("left_square_bracket", "Timeline")):
                painted.clear()
                target = app.workspace.generation + 1
                MainScreen._compositor_refresh = recorded  # type: ignore[method-assign]
                try:
                    await pilot.press(key)
                    await asyncio.wait_for(shown(app, target), 10)
                    await asyncio.sleep(0.1)
                    await pilot.pause()
                finally:
                    MainScreen._compositor_refresh = refresh  # type: ignore[method-assign]
                first = next(i for i, names in enumerate(painted) if expected in names)
                assert "BudgetBar" in painted[first] and "TopBar" in painted[first], painted

    asyncio.run(main(app))


def test_only_a_policy_slider_or_a_step_key_holds_the_paint(tmp_path: Path) -> None:
    app = make_app(load_inputs(write_session(tmp_path)))

    async def main(app: PlaygroundApp) -> None:
        async with app.run_test(size=(160, 48)) as pilot:
            await settle(app, pilot)
            asks = lambda key: app.main.asks_for_a_build(events.Key(key, None))  # noqa: E731
            app.main.action_focus_field("budget.maxTokens")
            await pilot.pause()
            assert [asks(k) for k in ("right", "shift+left", "home", "tab", "enter", "]", "[")] == [
                True, True, True, False, False, False, False,
            ]  # fmt: skip
            assert asks("right_square_bracket") and asks("left_square_bracket")
            app.main.query_one(Timeline).focus()
            await pilot.pause()
            assert [asks(k) for k in ("left", "end", "S", "x", "right_square_bracket")] == [
                True, True, True, False, True,
            ]  # fmt: skip
            app.main.query_one(Slider).action_edit()  # typing a number: `[` goes to the input
            await pilot.pause()
            assert isinstance(app.focused, Input) and not asks("left_square_bracket")

    asyncio.run(main(app))


def test_release_soon_waits_for_the_widgets_and_not_for_a_newer_hold() -> None:
    async def scenario(priority: UiPriority, pilot: Pilot) -> None:
        app = pilot.app
        priority.hold_paint()
        priority.release_soon(0)
        assert app._batch_count == 1  # still held: the widgets have not asked for their repaint yet
        await asyncio.sleep(UPDATES_ASKED + 0.02)
        assert app._batch_count == 0
        priority.hold_paint()
        priority.release_soon(0)
        priority.release()
        priority.hold_paint()  # a newer key's hold: the earlier release_soon leaves it alone
        await asyncio.sleep(UPDATES_ASKED + 0.02)
        assert app._batch_count == 1
        priority.release()
        assert app._batch_count == 0

    run_in_app(scenario)
