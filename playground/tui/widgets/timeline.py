"""Tokens per step against the budget, with S/C/R markers and a step cursor."""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from operator import gt
from typing import ClassVar, NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive

from playground.app.views import StepSample, tokens_long
from playground.tui.keys import keys_of
from playground.tui.widgets.text_lines import TextLines

BLOCKS = " ▁▂▃▄▅▆▇█"
MARKER_ORDER = "SCR"  # summarization, checkpoint, reminder: the first one present is drawn
# marker, what it marks, key (shift+key goes back)
JUMPS = (
    ("S", "summary", "s"),
    ("C", "checkpoint", "c"),
    ("R", "reminder", "r"),
    ("over", "over-budget", "o"),
)


class Column(NamedTuple):
    first: int  # index range [first, last] of the points drawn in this column
    last: int
    tokens: int
    over: bool
    marker: str


class Figures(NamedTuple):
    """What the chart reads of each step, as lists: a column reads a slice of each in C (walking 32,000
    steps in Python took 130 ms a repaint, and the series repaints as it fills in)."""

    tokens: list[int]
    budgets: list[int]
    over: list[bool]
    marks: list[str]

    @classmethod
    def of(cls, points: Sequence[StepSample]) -> Figures:
        tokens, budgets = [p.final_tokens for p in points], [p.total_budget for p in points]
        return cls(tokens, budgets, list(map(gt, tokens, budgets)), [p.markers for p in points])

    def put(self, start: int, points: Sequence[StepSample]) -> None:
        """Steps from `start` on are now `points`."""
        new, end = Figures.of(points), start + len(points)
        for held, made in zip(self, new, strict=True):
            held[start:end] = made


def columns(points: Sequence[StepSample], width: int) -> list[Column]:
    """One column per point, or buckets of neighbouring points when there are more points than cells."""
    return figure_columns(Figures.of(points), width)


def figure_columns(figures: Figures, width: int) -> list[Column]:
    size = len(figures.tokens)
    count = min(size, max(1, width))
    out = []
    for c in range(count):
        first, end = c * size // count, (c + 1) * size // count
        marks = "".join(figures.marks[first:end])
        marker = next((m for m in MARKER_ORDER if m in marks), " ")
        over = True in figures.over[first:end]
        out.append(Column(first, end - 1, max(figures.tokens[first:end]), over, marker))
    return out


class Timeline(TextLines, can_focus=True):
    """A sparkline of `final_tokens` per step scaled to the largest budget; left/right pick the step."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "Previous step", show=False, id="timeline.prev", tooltip="Previous step"),
        Binding("right", "move(1)", "Next step", show=False, id="timeline.next", tooltip="Next step"),
        Binding(
            "shift+left", "move(-10)", "Back 10", show=False, id="timeline.back", tooltip="Ten steps back"
        ),
        Binding("shift+right", "move(10)", "On 10", show=False, id="timeline.on", tooltip="Ten steps on"),
        Binding(
            "home", "move(-1_000_000)", "First step", show=False, id="timeline.first", tooltip="First step"
        ),
        Binding("end", "move(1_000_000)", "Last step", show=False, id="timeline.last", tooltip="Last step"),
        *[
            Binding(
                key,
                f"jump('{mark}', {step})",
                f"{way} {what}",
                show=False,
                id=f"timeline.{what}.{way}",
                tooltip=f"{way.capitalize()} step with {what}",
            )
            for mark, what, letter in JUMPS
            for key, step, way in ((letter, 1, "next"), (letter.upper(), -1, "previous"))
        ],
    ]
    STEP_KEYS: ClassVar[frozenset[str]] = keys_of(BINDINGS, "move", "jump")
    """The keys that move to another step (when the timeline has focus)."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "timeline--bar",
        "timeline--over",
        "timeline--current",
        "timeline--marker",
        "timeline--label",
    }

    DEFAULT_CSS = """
    Timeline {
        height: 3;
        & > .timeline--bar { color: $primary; }
        & > .timeline--over { color: $error; }
        & > .timeline--current { background: $accent; color: $text; }
        & > .timeline--marker { color: $warning; text-style: bold; }
        & > .timeline--label { color: $text-muted; }
        &:focus > .timeline--label { color: $text; }
    }
    """

    index: reactive[int] = reactive(0, init=False)
    """Position of the current step in the points."""

    class StepChanged(Message):
        """Posted when the user moves to another step."""

        def __init__(self, timeline: Timeline, step: int) -> None:
            super().__init__()
            self.timeline = timeline
            self.step = step

        @property
        def control(self) -> Timeline:
            return self.timeline

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.points: list[StepSample] = []
        self._figures = Figures.of([])  # the points' numbers, for the chart
        self.note = ""  # what the shown step's summarization trigger decided, and why
        self._shown = 0  # counts `show` calls: new points
        self._chart: tuple[tuple[object, ...], Text, Text] | None = None  # see `_spark_and_marks`
        self._columns: tuple[tuple[int, int], list[Column], int] | None = None  # see `_scaled_columns`
        self._summaries = 0  # steps that made a summary, and the widest token figure: for `_label`
        self._figure_width = 1

    def show_note(self, note: str) -> None:
        if note != self.note:  # every build comes here; a repaint of the chart costs ~3 ms
            self.note = note
            self.refresh()

    def show(self, points: Sequence[StepSample], step: int | None = None) -> None:
        """New data; the cursor goes to `step` (default: the current step if still there, else the last)."""
        wanted = step if step is not None else self.step
        self.points = list(points)
        self._figures = Figures.of(self.points)
        self._shown += 1
        self._summaries = sum("S" in p.markers for p in self.points)
        self._figure_width = max((len(tokens_long(p.final_tokens)) for p in self.points), default=1)
        steps = [p.step for p in self.points]
        self.set_reactive(Timeline.index, steps.index(wanted) if wanted in steps else len(steps) - 1)
        self.refresh()

    def fill(self, start: int, points: Sequence[StepSample], *, final: bool = False) -> None:
        """Steps from `start` (0-based) on computed: they replace what was shown for them; the cursor stays.
        The token column only widens as steps come (`final`: fitted to all steps again)."""
        end = start + len(points)
        replaced, self.points[start:end] = self.points[start:end], points
        self._figures.put(start, points)
        self._shown += 1
        self._summaries += sum("S" in p.markers for p in points) - sum("S" in p.markers for p in replaced)
        shown = self.points if final else points
        width = max((len(tokens_long(p.final_tokens)) for p in shown), default=1)
        self._figure_width = width if final else max(self._figure_width, width)
        self.refresh()

    @property
    def step(self) -> int | None:
        return self.points[self.index].step if self.points else None

    def validate_index(self, index: int) -> int:
        return min(max(index, 0), max(len(self.points) - 1, 0))

    def watch_index(self) -> None:
        self.refresh()
        if self.step is not None:
            self.post_message(self.StepChanged(self, self.step))

    def action_move(self, delta: int) -> None:
        self.index += delta

    def action_jump(self, mark: str, direction: int) -> None:
        """Go to the next (1) or previous (-1) step marked `mark` (S, C, R) or over budget ("over")."""
        order = range(self.index + 1, len(self.points)) if direction > 0 else range(self.index - 1, -1, -1)
        found = next((i for i in order if _has(self.points[i], mark)), None)
        if found is None:
            self.notify(f"no {'over-budget' if mark == 'over' else mark} step that way", timeout=2)
            return
        self.index = found

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return 3

    def _label(self) -> str:
        if not self.points:
            return " no steps"
        point, last = self.points[self.index], self.points[-1].step
        digits = len(str(last))
        # As wide at every step, so the chart beside it keeps its width (and its columns) as the cursor moves.
        tokens = f"{tokens_long(point.final_tokens):>{self._figure_width}}"
        return f" ◀ step {point.step:>{digits}}/{last} ▶ {tokens} tok · S×{self._summaries}"

    def _spark_width(self) -> int:
        return max(1, self.content_size.width - len(self._label()))

    def text_lines(self) -> list[Text]:
        if not self.points:
            return [Text(self._label().strip(), self.component_style("timeline--label"))]
        spark, marks = self._spark_and_marks()
        return [spark, marks, Text(self.note, self.component_style("timeline--label"), no_wrap=True, end="")]

    def _spark_and_marks(self) -> tuple[Text, Text]:
        """The chart's two lines, made again only when the points, the step, the size or the theme changed
        (every build changes the note line; the chart costs ~3 ms on 300 steps)."""
        key = (self._shown, self.index, self.content_size.width, self.has_focus, self.app.theme)
        if self._chart is not None and self._chart[0] == key:
            return self._chart[1].copy(), self._chart[2].copy()
        cols, scale = self._scaled_columns(self._spark_width())
        style = self.component_style
        # One span per run of cells alike, not one per cell: a styled span costs far more to paint than a
        # character, and a wide timeline has hundreds of cells.
        kinds: list[tuple[str, bool]] = []
        blocks = []
        for col in cols:
            blocks.append(BLOCKS[max(1 if col.tokens else 0, round(col.tokens / scale * 8))])
            kinds.append(
                ("timeline--over" if col.over else "timeline--bar", col.first <= self.index <= col.last)
            )
        spark = Text(no_wrap=True, end="")
        for (kind, current), run in groupby(zip(kinds, blocks, strict=True), key=lambda cell: cell[0]):
            spark.append(
                "".join(block for _, block in run),
                style(kind) + (style("timeline--current") if current else Style()),
            )
        marks = Text("".join(col.marker for col in cols), style("timeline--marker"), no_wrap=True, end="")
        spark.append(self._label(), style("timeline--label"))
        self._chart = (key, spark, marks)
        return spark.copy(), marks.copy()

    def _scaled_columns(self, width: int) -> tuple[list[Column], int]:
        """The chart's columns for `width` cells and the tokens of a full cell: a step move keeps them
        (~1 ms on 500 steps), only the cursor's cells change."""
        key = (self._shown, width)
        if self._columns is None or self._columns[0] != key:
            cols = figure_columns(self._figures, width)
            scale = max(max(self._figures.budgets), max(c.tokens for c in cols), 1)
            self._columns = (key, cols, scale)
        return self._columns[1], self._columns[2]

    def _on_click(self, event: events.Click) -> None:
        offset = event.get_content_offset(self)
        if offset is None or not self.points:
            return
        cols, _ = self._scaled_columns(self._spark_width())
        if offset.x < len(cols):
            self.index = cols[offset.x].last


def _has(point: StepSample, mark: str) -> bool:
    return point.final_tokens > point.total_budget if mark == "over" else mark in point.markers
