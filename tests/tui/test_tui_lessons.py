"""The lesson pane in the TUI: each sample's lesson completes by doing what each step asks, and only then."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from playground.app.inputs import load_inputs
from playground.app.lessons import load_lesson_for
from playground.tui.app import make_app
from playground.tui.panels.policy_field import PolicyField
from playground.tui.widgets.lesson_pane import LessonPane
from tests.tui.test_tui_app import SIZE, field, focus_field, settle

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
NAMES = sorted(p.name.removesuffix(".jsonl") for p in SAMPLES.glob("*.jsonl"))


def leaves(layer: dict[str, Any], prefix: tuple[str, ...] = ()) -> list[tuple[str, Any]]:
    """A policy layer as (dotted field, value) pairs, one per control the student moves."""
    out: list[tuple[str, Any]] = []
    for key, value in layer.items():
        if isinstance(value, dict):
            out += leaves(value, (*prefix, key))
        else:
            out.append((".".join((*prefix, key)), value))
    return out


@pytest.mark.parametrize("name", NAMES)
def test_each_samples_lesson_completes_by_doing_what_it_asks(name):
    lesson = load_lesson_for(SAMPLES / f"{name}.jsonl")
    app = make_app(load_inputs(SAMPLES / f"{name}.jsonl"))

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            if app.screen is not app.main:  # the notice listing a damaged session's problems
                app.pop_screen()
                await pilot.pause()
            pane = app.main.query_one(LessonPane)
            assert pane.run.done == [False] * len(lesson.steps)  # the untouched policy does not do it
            assert f"→ 1. {lesson.steps[0].instruction}" in str(pane.render_lesson())
            await pilot.press("h")
            assert f"hint: {lesson.steps[0].hint}" in str(pane.render_lesson())
            for number, step in enumerate(lesson.steps, start=1):
                for key, value in leaves(step.answer):
                    await focus_field(app, pilot, key)
                    target = field(app, key)
                    target.post_message(PolicyField.Edited(target, value))
                    await settle(app, pilot)
                assert pane.run.done[:number] == [True] * number, f"step {number}"
                assert f"✓ {number}. {step.instruction}" in str(pane.render_lesson())
            assert "Lesson complete." in str(pane.render_lesson())
            app.main.query_one("WireList").focus()
            await pilot.press("L")  # back to the lesson's start: nothing done, the header's policy again
            await settle(app, pilot)
            assert pane.run.done == [False] * len(lesson.steps)
            start = load_inputs(SAMPLES / f"{name}.jsonl").policy
            assert app.main.workspace.policy == start

    asyncio.run(main())


def _alias_bomb(levels: int = 7) -> str:
    """Each level lists the one before ten times: 10**levels values from a few lines."""
    lines = ["l0: &l0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * 10)}]" for n in range(1, levels)]
    return "\n".join(lines) + "\n"


BAD_CHECK = "title: t\ngoal: g\nsteps:\n- instruction: i\n  check: nonsense\n"


@pytest.mark.parametrize(
    "lesson, problem",
    [(BAD_CHECK, "steps[0].check: must be a mapping"), (_alias_bomb(), "aliases expand to more than 200000")],
    ids=["bad check", "alias bomb"],
)
def test_a_bad_lesson_beside_a_session_is_a_notice_and_the_session_opens(tmp_path, lesson, problem):
    session = tmp_path / "s.jsonl"
    session.write_bytes((SAMPLES / "short_chat.jsonl").read_bytes())
    (tmp_path / "s.lesson.yaml").write_text(lesson)
    app = make_app(load_inputs(session))

    async def main() -> None:
        async with app.run_test(size=SIZE) as pilot:
            await settle(app, pilot)
            notices = [n.message for n in app._notifications]
            assert any(n.startswith("lesson not opened: ") and problem in n for n in notices), notices
            assert app.screen.lesson is None and app.screen.result is not None

    asyncio.run(main())
