"""The lesson pane: the lesson's steps, ticked off as their checks hold, the current instruction and,
on request, its hint. It renders what it is given; the screen evaluates the checks
(playground.app.lessons)."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from playground.app.lessons import LessonRun


class LessonPane(Static):
    def __init__(self, run: LessonRun, **kwargs) -> None:
        super().__init__(**kwargs)
        self.run = run
        self.hint_shown = False
        self.checking = False

    def on_mount(self) -> None:
        self.refresh_lesson()

    def toggle_hint(self) -> None:
        self.hint_shown = not self.hint_shown
        self.refresh_lesson()

    def refresh_lesson(self) -> None:
        self.update(self.render_lesson())

    def render_lesson(self) -> Text:
        lesson, run = self.run.lesson, self.run
        text = Text()
        text.append("LESSON ", style="bold")
        text.append(lesson.title + "\n", style="bold")
        if lesson.goal:
            text.append(lesson.goal + "\n", style="dim")
        for index, step in enumerate(lesson.steps):
            done, current = run.done[index], index == run.current
            mark = "✓" if done else ("→" if current else "·")
            style = "green" if done else ("bold" if current else "dim")
            text.append(f"{mark} {index + 1}. {step.instruction}\n", style=style)
        step = run.current_step
        if step is None:
            text.append("Lesson complete.", style="bold green")
        elif self.hint_shown and step.hint:
            text.append(f"hint: {step.hint}", style="italic")
        else:
            tail = " · checking…" if self.checking else ""
            text.append(f"h hint · L back to the lesson's start{tail}", style="dim")
        return text
