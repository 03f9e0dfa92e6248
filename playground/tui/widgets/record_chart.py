"""A recorded session's prompt per step: what the provider counted, beside what this policy would send.

Two sparklines on one scale under the timeline, the current step's figures beside them: the recorded
prompt, the as-recorded rebuild's prediction of it (and its error), this policy's predicted prompt. Shown
only for a session whose transcript kept the provider's usage; the numbers come from the cost replay
(`playground.app.costing`), the widget only draws them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.geometry import Size

from engine import StepCost
from playground.app.views import tokens_long
from playground.tui.widgets.text_lines import TextLines
from playground.tui.widgets.timeline import BLOCKS


def spark(values: Sequence[int | None], width: int, scale: int) -> str:
    """One block a column (neighbouring steps bucketed by their largest value); a step without a value
    is a blank cell."""
    count = min(len(values), max(1, width))
    cells = []
    for c in range(count):
        bucket = values[c * len(values) // count : (c + 1) * len(values) // count]
        chunk = [v for v in bucket if v is not None]
        top = max(chunk) if chunk else None
        cells.append(" " if top is None else BLOCKS[max(1, min(8, round(top / max(scale, 1) * 8)))])
    return "".join(cells)


class RecordChart(TextLines):
    COMPONENT_CLASSES: ClassVar[set[str]] = {"record--recorded", "record--policy", "record--label"}
    DEFAULT_CSS = """
    RecordChart {
        height: 2;
        display: none;
        & > .record--recorded { color: $warning; }
        & > .record--policy { color: $primary; }
        & > .record--label { color: $text-muted; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.steps: list[StepCost] = []
        self.step: int | None = None

    def show(self, steps: Sequence[StepCost]) -> None:
        """A new replay of the current policy; shown when any step has a recorded call."""
        self.steps = list(steps)
        self.display = any(s.recorded_prompt_tokens is not None for s in self.steps)
        self.refresh()

    def select(self, step: int | None) -> None:
        if step != self.step:
            self.step = step
            self.refresh()

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 2

    def _current(self) -> StepCost | None:
        return next((s for s in self.steps if s.step == self.step), self.steps[-1] if self.steps else None)

    def labels(self) -> tuple[str, str]:
        step = self._current()
        if step is None:
            return "", ""
        recorded, rebuilt = step.recorded_prompt_tokens, step.as_recorded_prompt_tokens
        error = ""
        if step.rebuild_error is not None:
            error = f" ({100 * step.rebuild_error:+.1f}%)"
        elif recorded is not None and rebuilt is not None:
            error = " (learns the offset)"  # the first call of a model or after a compaction
        first = f" recorded {_tokens(recorded)} · as recorded {_tokens(rebuilt)}{error}"
        return first, f" this policy {_tokens(step.predicted_prompt_tokens)} · step {step.step}"

    def text_lines(self) -> list[Text]:
        first, second = self.labels()
        width = max(1, self.content_size.width - max(len(first), len(second)))
        recorded = [s.recorded_prompt_tokens for s in self.steps]
        policy = [s.predicted_prompt_tokens for s in self.steps]
        scale = max([v for v in recorded + policy if v is not None], default=1)
        style = self.component_style
        top = Text(spark(recorded, width, scale), style("record--recorded"), no_wrap=True, end="")
        top.append(first, style("record--label"))
        bottom = Text(spark(policy, width, scale), style("record--policy"), no_wrap=True, end="")
        bottom.append(second, style("record--label"))
        return [top, bottom]


def _tokens(value: int | None) -> str:
    return "—" if value is None else tokens_long(value)
