"""The lesson as a notebook widget: steps ticked off as their checks hold, a hint button and a button
that puts the policy back to the lesson's start. The checks are playground.app.lessons'."""

from __future__ import annotations

from collections.abc import Callable
from html import escape

import ipywidgets as W

from engine import ContextPolicy
from playground.app.lessons import Lesson, LessonError, LessonRun, build_view, start_policy
from playground.app.workspace import Workspace


class LessonView:
    def __init__(
        self, lesson: Lesson, workspace: Workspace, on_reset: Callable[[ContextPolicy], None]
    ) -> None:
        self.run = LessonRun(lesson)
        self.workspace = workspace
        self.hint_shown = False
        self.problem: str | None = None  # why the lesson's start could not be applied
        self._on_reset = on_reset
        self.steps = W.HTML()
        self.hint_button = W.Button(description="hint", tooltip="the hint of the current step")
        self.hint_button.on_click(lambda _b: self.toggle_hint())
        self.reset_button = W.Button(description="lesson start", tooltip="the policy the lesson starts from")
        self.reset_button.on_click(lambda _b: self.reset())
        self.widget = W.VBox([self.steps, W.HBox([self.hint_button, self.reset_button])])
        self.widget.add_class("lp-lesson-view")
        self.show()

    def check(self) -> bool:
        """Evaluate the current step on the whole session under the workspace's policy."""
        ws = self.workspace
        view = build_view(
            ws.messages, ws.policy, max_steps=ws.max_steps, available_tools=ws.available_tools,
            **ws.options.kwargs(),
        )  # fmt: skip
        completed = self.run.update(view)
        if completed:
            self.hint_shown = False
        self.show()
        return completed

    def toggle_hint(self) -> None:
        self.hint_shown = not self.hint_shown
        self.show()

    def reset(self) -> None:
        """Back to the lesson's start; a start the engine refuses is said in the view, nothing changed."""
        try:
            policy = start_policy(self.run.lesson, self.workspace.inputs.policy, self.workspace.defaults)
        except LessonError as error:
            self.problem = str(error)
            self.show()
            return
        self.problem = None
        self.run.reset()
        self.hint_shown = False
        self._on_reset(policy)

    def show(self) -> None:
        lesson, run = self.run.lesson, self.run
        rows = [f"<b>Lesson: {escape(lesson.title)}</b>"]
        if lesson.goal:
            rows.append(f"<div style='color:#475569'>{escape(lesson.goal)}</div>")
        for index, step in enumerate(lesson.steps):
            done, current = run.done[index], index == run.current
            mark, colour = ("✓", "#059669") if done else ("→", "#0f172a") if current else ("·", "#94a3b8")
            rows.append(
                f"<div class='lp-lesson-step' style='color:{colour}'>{mark} {index + 1}. "
                f"{escape(step.instruction)}</div>"
            )
        step = run.current_step
        if step is None:
            rows.append("<div style='color:#059669;font-weight:600'>Lesson complete.</div>")
        elif self.hint_shown and step.hint:
            rows.append(f"<div class='lp-lesson-hint'><i>hint: {escape(step.hint)}</i></div>")
        if self.problem:
            rows.append(f"<div class='lp-lesson-problem' style='color:#dc2626'>{escape(self.problem)}</div>")
        self.steps.value = "".join(rows)
