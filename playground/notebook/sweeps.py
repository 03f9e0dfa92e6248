"""`sweep(...)` in a notebook: the rows as a pandas DataFrame, and a plot of cost against what is lost per
policy with the Pareto front marked.

    rows, plot = sweep(["sample_sessions"], ["budget.maxTokens=16000,32000"])
    plot            # the SVG scatter; plot.summary is the per-policy DataFrame, plot.front the best policies

pandas (the `pandas` extra) rather than polars: a sweep's table is small (sessions × policies rows), so
polars' speed buys nothing, while pandas is what notebooks, Dask and most plotting code already take and
show, and with pyarrow it writes the `.parquet` output too. The plot is plain inline SVG
(`playground.web.cost_views`): no plotting library to install, nothing loaded from the network, and it shows
the same in Jupyter, Voilà and an exported notebook.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine import BUILTIN_PRICES, PriceTable
from playground.app.recording import record_replay, workspace_inputs
from playground.app.sweep import columns, plan_sweep, run_sweep, summarize
from playground.web.cost_views import pareto_front, pareto_plot, points_of

__all__ = ["SweepPlot", "record", "sweep"]

LOSSES = {
    "userRequestsDropped": "user requests lost (sum over sessions)",
    "overBudgetSteps": "steps over budget (sum over sessions)",
    "cacheBreaks": "cache breaks (sum over sessions)",
}


def record(workspace: Any, store: str | Path | None = None, shape: str = "openai") -> str:
    """Replay the workspace's session under its current policy, fences and defaults, and keep the run in
    the audit store (`store`: None for the default path); the run's id (`pg.record()`)."""
    run_id, _, _ = record_replay(workspace_inputs(workspace), workspace.policy, store, shape)
    return run_id


def _pandas() -> Any:
    try:
        import pandas
    except ImportError as err:
        hint = "pip install 'linn-playground[pandas]'"
        raise ImportError(f"sweep() returns a pandas DataFrame: {hint}") from err
    return pandas


@dataclass
class SweepPlot:
    """Cost against loss per policy; `front` lists the Pareto-best policies (cheapest first)."""

    summary: Any  # the per-policy DataFrame: sum, median, p90 over sessions
    front: list[str] = field(default_factory=list)
    svg: str = ""

    def _repr_html_(self) -> str:
        return self.svg


def sweep(
    sessions: Sequence[str | Path],
    vary: Sequence[str] = (),
    *,
    policy: str | Path | None = None,
    workers: int | None = None,
    scheduler: Any = None,
    out: str | Path | None = None,
    shape: str = "openai",
    model: str | None = None,
    prices: PriceTable = BUILTIN_PRICES,
    lost: str = "userRequestsDropped",
) -> tuple[Any, SweepPlot]:
    """Replay every session under every policy of the `vary` grid (`linn-playground sweep`'s arguments:
    processes, or a Dask `scheduler` address or Client; `out` resumes). Returns (rows DataFrame, plot);
    `lost` picks the loss axis: userRequestsDropped, overBudgetSteps or cacheBreaks."""
    if lost not in LOSSES:
        raise ValueError(f"lost={lost!r}: expected one of {', '.join(LOSSES)}")
    pd = _pandas()
    jobs = plan_sweep(sessions, vary, base_policy=policy, shape=shape, model=model, prices=prices)
    rows = run_sweep(jobs, out=out, workers=workers, scheduler=scheduler)
    names = columns([name for name, _ in jobs[0].overrides])
    frame = pd.DataFrame([{k: row.get(k) for k in names} for row in rows], columns=names)
    summary = summarize(rows)
    points = points_of(summary, lost=f"{lost}.sum")
    plot = SweepPlot(
        pd.DataFrame(summary),
        [p.policy for p in pareto_front(points)],
        pareto_plot(points, lost_label=LOSSES[lost]),
    )
    return frame, plot
