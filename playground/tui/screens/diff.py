"""The diff screen: the session replayed under two policies, side by side, one changed step at a time.

A is the pinned policy (or the one the session opened with), B the current one. Both replays run in a
worker (`playground.app.rundiff.diff_runs`); `n` / `p` move to the next / previous step that differs.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static
from textual.worker import get_current_worker

from playground.app.diffing import (
    ReplaySource,
    break_text,
    prefix_text,
    signed_money,
    signed_tokens,
    step_title,
    totals_line,
)
from playground.app.rundiff import ALIGNMENTS, MessageChange, RunDiff, StepDiff, StepSide, diff_until
from playground.app.views import tokens_long

DELETED, INSERTED = "strike red", "bold green"


def side_text(step: StepDiff, name: str) -> Text:
    """One column: the side's figures and break, then its removed (A) or added (B) messages, then each
    changed message as that side has it (A's words struck out, B's new words in green)."""
    side: StepSide | None = step.a if name == "A" else step.b
    text = Text()
    if side is None:
        text.append(f"{name}: no such step (only the other run has it)\n", style="italic")
        return text
    text.append(f"{name} · step {side.step} · {side.messages} messages\n", style="bold")
    text.append(f"sent {tokens_long(side.tokens)} tok · cached {tokens_long(side.cached)}\n")
    text.append(f"cache: {break_text(side)}\n\n", style="yellow" if side.brk else "")
    own = "removed" if name == "A" else "added"
    for change in step.of(own):
        index, ident, tokens = (
            (change.index_a, change.id_a, change.tokens_a)
            if name == "A"
            else (change.index_b, change.id_b, change.tokens_b)
        )
        sign = "−" if name == "A" else "+"
        text.append(
            f"{sign} [{index}] {ident} ({change.role}) {tokens} tok\n",
            style="red" if name == "A" else "green",
        )
    for change in step.of("changed"):
        text.append_text(_changed(change, name))
    return text


def _changed(change: MessageChange, name: str) -> Text:
    index, ident, tokens = (
        (change.index_a, change.id_a, change.tokens_a)
        if name == "A"
        else (change.index_b, change.id_b, change.tokens_b)
    )
    text = Text(f"~ [{index}] {ident} ({change.role}) {tokens} tok\n", style="bold")
    hidden = "+" if name == "A" else "-"
    for op, words in change.words:
        if op != hidden:
            text.append(words, style={"-": DELETED, "+": INSERTED}.get(op, ""))
    text.append("\n\n")
    return text


class DiffScreen(ModalScreen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "move(1)", "Next change", id="diff.next", tooltip="The next step that differs"),
        Binding(
            "p", "move(-1)", "Previous change", id="diff.previous", tooltip="The previous step that differs"
        ),
        Binding("escape,q", "dismiss", "Close", id="diff.close", tooltip="Back to the playground"),
    ]

    DEFAULT_CSS = """
    DiffScreen {
        align: center middle;
        & > Vertical { width: 96%; height: 92%; border: thick $accent; background: $surface; }
        & #diff-head { height: auto; padding: 0 1; border-bottom: solid $panel-lighten-2; }
        & #diff-step { height: auto; padding: 0 1; color: $text-muted; }
        & .diff--column { width: 1fr; padding: 0 1; }
        & #diff-b { border-left: solid $panel-lighten-2; }
    }
    """

    def __init__(self, a: ReplaySource, b: ReplaySource) -> None:
        super().__init__()
        self.sources = a, b
        self.diff: RunDiff | None = None
        self.position = 0  # in diff.changed_steps

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("diff: replaying the session under both policies…", id="diff-head", markup=False)
            yield Static("", id="diff-step", markup=False)
            with Horizontal():
                with VerticalScroll(classes="diff--column"):
                    yield Static("", id="diff-a", markup=False)
                with VerticalScroll(classes="diff--column"):
                    yield Static("", id="diff-b", markup=False)

    def on_mount(self) -> None:
        def compute() -> None:  # closing the screen cancels the worker: it stops at the next step
            worker = get_current_worker()
            diff = diff_until(*self.sources, lambda: worker.is_cancelled)
            if diff is not None and not worker.is_cancelled:
                self.app.call_from_thread(self.show, diff)

        self.run_worker(compute, thread=True, group="diff", exit_on_error=False)

    def show(self, diff: RunDiff) -> None:
        self.diff, self.position = diff, 0
        changed = diff.changed_steps
        head = (
            f"A: {diff.label_a}\nB: {diff.label_b}\naligned {ALIGNMENTS[diff.alignment]}: "
            f"{len(diff.steps)} steps, {len(changed)} differ · n / p: next / previous change\n"
            f"{totals_line(diff)}"
        )
        self.query_one("#diff-head", Static).update(head)
        self._render_step()

    @property
    def step(self) -> StepDiff | None:
        if self.diff is None or not self.diff.changed_steps:
            return None
        return self.diff.steps[self.diff.changed_steps[self.position]]

    def _render_step(self) -> None:
        step = self.step
        if self.diff is None:
            return
        if step is None:
            self.query_one("#diff-step", Static).update("the two runs sent the same context at every step")
            return
        delta = step.cost_delta
        cost = "" if delta is None else f" · cost {signed_money(delta)}"
        brk = f" · cache break {step.break_change}" if step.break_change else ""
        line = (
            f"change {self.position + 1}/{len(self.diff.changed_steps)}: {step_title(step)} · tokens "
            f"{signed_tokens(step.tokens_delta)}{cost}{brk} · {prefix_text(step)}"
        )
        self.query_one("#diff-step", Static).update(line)
        self.query_one("#diff-a", Static).update(side_text(step, "A"))
        self.query_one("#diff-b", Static).update(side_text(step, "B"))

    def action_move(self, delta: int) -> None:
        if self.diff is None or not self.diff.changed_steps:
            return
        self.position = max(0, min(len(self.diff.changed_steps) - 1, self.position + delta))
        self._render_step()

    async def action_dismiss(self, result: None = None) -> None:
        self.workers.cancel_group(self, "diff")  # the replays stop at their next step
        self.dismiss()
