"""Lessons as data: each sample's lesson is completed by its own edits and not by the untouched policy."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.session import load_session
from playground.app.lessons import (
    LessonError,
    LessonRun,
    check_step,
    lesson_path_for,
    load_lesson_for,
    merge_layer,
    parse_lesson,
    session_view,
)

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
NAMES = sorted(p.name.removesuffix(".jsonl") for p in SAMPLES.glob("*.jsonl"))


def header_layer(session) -> dict:
    return dict(session.header.context_policy or {})


@pytest.mark.parametrize("name", NAMES)
def test_every_sample_has_a_lesson(name):
    lesson = load_lesson_for(SAMPLES / f"{name}.jsonl")
    assert lesson is not None and lesson.title and lesson.steps
    assert all(step.instruction and step.hint and step.answer for step in lesson.steps)


@pytest.mark.parametrize("name", NAMES)
def test_the_untouched_policy_satisfies_no_step(name):
    session = load_session(SAMPLES / f"{name}.jsonl")
    lesson = load_lesson_for(session.path)
    view = session_view(session, merge_layer(header_layer(session), lesson.start), now=0)
    assert [check_step(step.check, view) for step in lesson.steps] == [False] * len(lesson.steps)
    run = LessonRun(lesson)
    assert run.update(view) is False and run.current == 0


@pytest.mark.parametrize("name", NAMES)
def test_the_lessons_answers_complete_it_step_by_step(name):
    session = load_session(SAMPLES / f"{name}.jsonl")
    lesson = load_lesson_for(session.path)
    run = LessonRun(lesson)
    for number in range(1, len(lesson.steps) + 1):
        layer = merge_layer(header_layer(session), lesson.answer_layer(number))
        assert run.update(session_view(session, layer, now=0)) is True, f"step {number}"
    assert run.complete and run.current is None
    assert run.reset() == lesson.start and run.current == 0


def test_the_persisted_summary_lesson_reads_the_replay_markers():
    session = load_session(SAMPLES / "summarization_trigger.jsonl")
    lesson = load_lesson_for(session.path)
    view = session_view(session, merge_layer(header_layer(session), lesson.answer_layer()), now=0)
    marked = [(s.number, s.markers, len(s.carried_ids)) for s in view.steps if s.markers or s.carried_ids]
    assert marked == [(9, "S", 0), (10, "", 1), (11, "", 1), (12, "", 1), (13, "", 1)]
    assert check_step(lesson.steps[1].check, view)


def test_one_build_completes_at_most_one_step():
    text = """
title: T
steps:
  - {instruction: a, check: {policy: budget.maxTokens, is: {at_most: 5000}}}
  - {instruction: b, check: {policy: budget.maxTokens, is: {at_most: 6000}}}
"""
    session = load_session(SAMPLES / "short_chat.jsonl")
    run = LessonRun(parse_lesson(text))
    view = session_view(session, {"budget": {"maxTokens": 4000}}, now=0)
    assert run.update(view) is True and run.done == [True, False]
    assert run.update(view) is True and run.complete


STEP = "{instruction: a, check: {summarization: none}}"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- 1", "x.yaml: a lesson must be a mapping with title, goal and steps"),
        ("title: T\nsteps: []", "x.yaml: steps: must be a non-empty list"),
        ("title: T\nsteps: [{instruction: a, check: {budget: 1}}]",
         "x.yaml: steps[0].check: must name exactly one of message, strategy"),
        ("title: T\nsteps: [{instruction: a, check: {message: m1, fate: gone}}]",
         "x.yaml: steps[0].check: fate: must be one of kept, dropped, replaced, compressed"),
        ("title: T\nsteps: [{instruction: a, check: {all: [{policy: budget.maxTokens, is: {near: 3}}]}}]",
         "x.yaml: steps[0].check.all[0].is: must be one of equals, below"),
        ("title: T\nsteps: [{instruction: a, check: {step: 0, then: {summarization: none}}}]",
         "x.yaml: steps[0].check: step: must be a step number"),
        ("title: T\nsteps: [{instruction: '', check: {summarization: none}}]",
         "x.yaml: steps[0].instruction: must be a non-empty string"),
        ("title: T\nsteps:\n  - {instruction: a, check: !!python/object/apply:os.system [ls]}",
         "x.yaml:3: unsafe or unknown YAML tag"),
        ("title: T\nsteps: [", "x.yaml:2: bad YAML"),
        # the layers a lesson applies are checked as a policy file is (L crashed the TUI on these)
        (f"title: T\nstart: {{budget: {{maxTokens: -5}}}}\nsteps: [{STEP}]",
         "x.yaml: start.budget.maxTokens: -5 must be greater than 0"),
        (f"title: T\nstart: {{budjet: {{maxTokens: 5000}}}}\nsteps: [{STEP}]",
         "x.yaml: start.budjet: unknown policy group; did you mean `budget`?"),
        ("title: T\nsteps: [{instruction: a, check: {summarization: none}, "
         "answer: {budget: {maxTokenz: 1}}}]",
         "x.yaml: steps[0].answer.budget.maxTokenz: unknown key; did you mean `maxTokens`?"),
    ],
)
def test_bad_lessons_name_file_and_field(text, message):
    with pytest.raises(LessonError) as err:
        parse_lesson(text, "x.yaml")
    assert str(err.value).startswith(message)


def test_the_side_file_sits_next_to_the_session():
    assert lesson_path_for("/a/b/s.jsonl") == Path("/a/b/s.lesson.yaml")
    assert load_lesson_for(SAMPLES / "no_such.jsonl") is None


def test_a_start_the_engine_refuses_over_the_sessions_policy_is_said(tmp_path, capsys):
    # each field is valid alone; over the session's own policy (2,400 tokens reserved) the budget is not
    from engine.policy import define_context_policy
    from playground.app.lessons import start_policy
    from playground.cli.main import main

    text = f"title: T\nstart: {{budget: {{maxTokens: 1000}}}}\nsteps: [{STEP}]"
    lesson = parse_lesson(text, "x.lesson.yaml")
    opened = define_context_policy({"budget": {"reservedForResponse": 2400}})
    with pytest.raises(LessonError) as refused:
        start_policy(lesson, opened)
    reason = "budget.reservedForResponse: reservedForResponse must be > 0 and < maxTokens"
    assert str(refused.value) == f"x.lesson.yaml: start: {reason} (over the session's own policy)"
    session = tmp_path / "s.jsonl"
    session.write_text((SAMPLES / "short_chat.jsonl").read_text(encoding="utf-8"), encoding="utf-8")
    (tmp_path / "s.lesson.yaml").write_text(text, encoding="utf-8")
    assert main(["validate", str(session)]) == 1
    assert f"{tmp_path / 's.lesson.yaml'}: start: {reason}" in capsys.readouterr().out
