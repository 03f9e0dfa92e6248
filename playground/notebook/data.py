"""The build and the step series as tables and a chart, for a notebook: pandas DataFrames and an SVG chart.

pandas is an optional extra (`linn-playground[pandas]`); without it the frame functions raise an
ImportError with the install line. The rows come from engine records as they are (no rule is
re-derived here). The chart is our own SVG (`playground.web.charts.step_chart`): no plotting library,
so it needs nothing installed, works offline and shows in a saved notebook, on GitHub and in nbviewer
(a Vega/Altair chart loads its JavaScript from a CDN; matplotlib is a large dependency for one chart).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine import BuildResult, write_atomic
from playground.app.compare import BuildComparison
from playground.app.views import StepSample, category_names
from playground.web.charts import step_chart
from playground.web.views import STYLE

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PANDAS_HINT",
    "StepChart",
    "comparison_frame",
    "decisions_frame",
    "events_frame",
    "steps_frame",
]

PANDAS_HINT = "pip install 'linn-playground[pandas]'"
DECISION_COLUMNS = (
    "index", "message_id", "role", "type", "kept", "stage", "phase", "reason", "strategy", "tokens",
    "wire_index", "replaced_by", "note",
)  # fmt: skip


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as err:
        raise ImportError(f"tables need pandas; install it with: {PANDAS_HINT}") from err
    return pandas


def decisions_frame(result: BuildResult) -> pd.DataFrame:
    """One row per decision (each session message and each message the build created)."""
    rows = [{name: getattr(d, name) for name in DECISION_COLUMNS} for d in result.decisions]
    return _pandas().DataFrame(rows, columns=list(DECISION_COLUMNS))


def events_frame(result: BuildResult) -> pd.DataFrame:
    """One row per event: kind, title, the ids of the messages it touched, its data."""
    rows = [
        {"kind": e.kind, "title": e.title, "message_ids": list(e.message_ids), "data": dict(e.data)}
        for e in result.events
    ]
    return _pandas().DataFrame(rows, columns=["kind", "title", "message_ids", "data"])


def steps_frame(samples: Sequence[StepSample]) -> pd.DataFrame:
    """One row per step: final tokens, one column per token category (stacking order), the budget, the
    trigger, the markers (S summarization, C checkpoint pruning, R reminder, ! error) and one bool each."""
    names = category_names({name for s in samples for name, _ in s.by_category})
    rows = []
    for s in samples:
        counts = dict(s.by_category)
        row: dict[str, Any] = {"step": s.step, "final_tokens": s.final_tokens}
        row.update({name: counts.get(name, 0) for name in names})
        row.update(total_budget=s.total_budget, trigger_tokens=s.trigger_tokens, markers=s.markers)
        row.update(summary_made="S" in s.markers, checkpoint_pruned="C" in s.markers)
        row["reminder_fired"] = "R" in s.markers
        row["over_budget"] = s.final_tokens > s.total_budget
        rows.append(row)
    columns = ["step", "final_tokens", *names, "total_budget", "trigger_tokens", "markers"]
    columns += ["summary_made", "checkpoint_pruned", "reminder_fired", "over_budget"]
    return _pandas().DataFrame(rows, columns=columns).set_index("step")


def comparison_frame(compared: BuildComparison) -> pd.DataFrame:
    """What B adds, drops and re-counts against A, one row per message; `.attrs` has the totals and the
    per-category deltas."""
    rows = [
        {
            "change": d.change, "message_id": d.message_id, "role": d.role, "type": d.type,
            "tokens_a": d.a_tokens, "tokens_b": d.b_tokens, "delta": d.delta,
        }
        for d in compared.deltas
    ]  # fmt: skip
    columns = ["change", "message_id", "role", "type", "tokens_a", "tokens_b", "delta"]
    frame = _pandas().DataFrame(rows, columns=columns).astype({"tokens_a": "Int64", "tokens_b": "Int64"})
    frame.attrs.update(
        messages_a=compared.a_messages, messages_b=compared.b_messages,
        tokens_a=compared.a.final_tokens, tokens_b=compared.b.final_tokens,
        categories=dict(compared.category_deltas),
    )  # fmt: skip
    return frame


@dataclass(frozen=True)
class StepChart:
    """Tokens per step, stacked by category, with the budget and trigger lines and the S/C/R markers.
    Shows itself in a notebook (SVG); `.svg` is the markup, `.save(path)` writes it, `.frame()` the data."""

    samples: tuple[StepSample, ...]
    current: int | None = None
    width: int = 720
    protected: tuple[Path, ...] = ()  # what `save` never writes over: the files the playground opened

    @property
    def svg(self) -> str:
        return step_chart(self.samples, self.current, width=self.width, stacked=True)

    def frame(self) -> pd.DataFrame:
        return steps_frame(self.samples)

    def save(self, path: Any) -> Path:
        """Write the SVG atomically: never over a file the playground opened, nor into a FIFO or a device
        (raises `PolicyFileError` naming the path)."""
        return write_atomic(path, self.svg, protected=self.protected)

    def _repr_html_(self) -> str:
        return f"{STYLE}<div class='lp-view'>{self.svg}</div>"

    def _repr_svg_(self) -> str:
        return self.svg
