"""The lesson widget in the notebook: each sample's lesson completes by the edits it asks for, not before."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine import effective_policy
from playground.app.lessons import load_lesson_for, merge_layer
from playground.notebook import Playground

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
NAMES = sorted(p.name.removesuffix(".jsonl") for p in SAMPLES.glob("*.jsonl"))


@pytest.mark.parametrize("name", ["short_chat", "summarization_trigger", "max_steps_streak"])
def test_the_notebook_lesson_completes_step_by_step(name):
    path = SAMPLES / f"{name}.jsonl"
    lesson = load_lesson_for(path)
    pg = Playground(path, debounce=0, now=0)
    start = pg.policy
    assert pg.lesson.run.done == [False] * len(lesson.steps)
    assert "→ 1. " in pg.lesson.steps.value and "hint:" not in pg.lesson.steps.value
    pg.lesson.hint_button.click()
    assert f"hint: {lesson.steps[0].hint}" in pg.lesson.steps.value
    header = dict(pg.workspace.header.context_policy)
    for number in range(1, len(lesson.steps) + 1):
        pg.policy = effective_policy(merge_layer(header, lesson.answer_layer(number)), None, "seed")
        assert pg.lesson.run.done[:number] == [True] * number
    assert "Lesson complete." in pg.lesson.steps.value
    pg.lesson.reset_button.click()
    assert pg.policy == start and pg.lesson.run.done == [False] * len(lesson.steps)


def test_a_session_without_a_side_lesson_has_no_lesson_widget(tmp_path):
    session = tmp_path / "s.jsonl"
    session.write_bytes((SAMPLES / "short_chat.jsonl").read_bytes())
    assert Playground(session, debounce=0, now=0).lesson is None
