"""The diff of two runs as a notebook widget: what was compared and the totals, then one changed step at
a time in two columns (`playground.web.diff` renders it), "previous change" / "next change" move.

    from playground.notebook import diff
    diff("run1.jsonl", "run2.jsonl")                                  # two recorded runs of a task
    diff("session.jsonl", policy_a="p1.yaml", policy_b="p2.yaml")     # one session, two policies
"""

from __future__ import annotations

from html import escape
from pathlib import Path
from typing import Any

import ipywidgets as W

from playground.app.diffing import RunFiles, open_runs
from playground.app.recording import StoredRuns
from playground.app.rundiff import ALIGNMENTS, RunDiff, diff_runs
from playground.web.diff import DIFF_STYLE, step_html, totals_html

PathLike = str | Path


class DiffView:
    """`.widget` shows `diff`; `move(±1)` (the buttons) goes to the next or previous step that differs."""

    def __init__(self, diff: RunDiff) -> None:
        self.diff = diff
        self.position = 0  # in diff.changed_steps
        changed = diff.changed_steps
        note = f"aligned {ALIGNMENTS[diff.alignment]}: {len(diff.steps)} steps, {len(changed)} differ"
        self.head = W.HTML(
            f"{DIFF_STYLE}<div>A: {escape(diff.label_a)}<br>B: {escape(diff.label_b)}<br>{escape(note)}</div>"
            + totals_html(diff)
        )
        self.previous = W.Button(description="previous change", icon="arrow-left")
        self.next = W.Button(description="next change", icon="arrow-right")
        self.previous.on_click(lambda _b: self.move(-1))
        self.next.on_click(lambda _b: self.move(1))
        self.where = W.Label()
        self.step = W.HTML()
        self.widget = W.VBox([self.head, W.HBox([self.previous, self.where, self.next]), self.step])
        self._show()

    def move(self, delta: int) -> None:
        count = len(self.diff.changed_steps)
        self.position = max(0, min(count - 1, self.position + delta)) if count else 0
        self._show()

    def _show(self) -> None:
        changed = self.diff.changed_steps
        self.previous.disabled = self.position == 0
        self.next.disabled = self.position >= len(changed) - 1
        if not changed:
            self.where.value = "no step differs"
            self.step.value = "<p>The two runs sent the same context at every step.</p>"
            return
        self.where.value = f"change {self.position + 1} of {len(changed)}"
        self.step.value = f"{DIFF_STYLE}{step_html(self.diff.steps[changed[self.position]])}"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        return self.widget._repr_mimebundle_(**kwargs)


def diff(
    a: PathLike,
    b: PathLike | None = None,
    *,
    policy: PathLike | None = None,
    policy_a: PathLike | None = None,
    policy_b: PathLike | None = None,
    fences: PathLike | None = None,
    shape: str = "openai",
    model: str | None = None,
    store: PathLike | None = None,
) -> DiffView:
    """Two runs side by side (as `linn-playground diff`; `run:ID` a run of the audit store at `store`);
    raises the loaders' errors for a bad file."""
    files = RunFiles(a, b, policy, policy_a, policy_b, fences, shape=shape, model=model)
    runs = StoredRuns(store)
    try:
        _, sources = open_runs(files, runs.inputs)
    finally:
        runs.close()
    return DiffView(diff_runs(*sources))
