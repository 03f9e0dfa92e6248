"""The session's cost under the current policy, beside the build: totals, the per-step chart of sent vs
cached tokens, and A vs B when a build is pinned (`playground.app.costing`; the engine replays, nothing here
decides).

Costs are computed for a policy once and kept: moving the step slider does not replay again. Sessions of
more than `AUTO_STEPS` steps wait for the "compute" button, so an edit is never held up by a long replay.
"""

from __future__ import annotations

from html import escape
from typing import Any

import ipywidgets as W

from engine import BUILTIN_PRICES, ContextPolicy, PriceTable, SessionCost, StepCost, recorded_cost
from playground.app.costing import CostRequest, cost_rows, cost_summary, price_choice, record_lines, run_cost
from playground.app.workspace import Workspace
from playground.web import cost_views

AUTO_STEPS = 150
SESSION_CHOICE = "(session's modelId, else default)"


class CostView:
    """`update()` after each build; `.totals` (A's, the current policy) and `.steps` are the last numbers."""

    def __init__(self, workspace: Workspace, prices: PriceTable = BUILTIN_PRICES) -> None:
        self.workspace = workspace
        self.prices = prices
        self.model = W.Dropdown(options=[SESSION_CHOICE, *prices.names()], description="price row")
        self.shape = W.ToggleButtons(options=["openai", "anthropic"], description="cache shape")
        self.button = W.Button(
            description="compute cost",
            icon="calculator",
            layout=W.Layout(width="auto", min_width="fit-content"),
        )  # its label is never clipped
        self.button.on_click(lambda _b: self.update(compute=True))
        self.note = W.HTML()
        self.totals_html, self.chart, self.compare = W.HTML(), W.HTML(), W.HTML()
        recorded = bool(workspace.record.own_calls)  # a recorded session: its billed cost and prompts
        self.record, self.record_chart = (W.HTML(), W.HTML()) if recorded else (None, None)
        self._billed: Any = None
        for control in (self.model, self.shape):
            control.observe(lambda _c: self.update(compute=True), "value")
        head = W.HBox([self.model, self.shape, self.button], layout=W.Layout(flex_flow="row wrap"))
        totals = W.HBox([self.totals_html, self.compare])
        record = [self.record, self.record_chart] if recorded else []
        self.widget = W.VBox([head, self.note, totals, self.chart, *record])
        self.totals: SessionCost | None = None
        self.steps: list[StepCost] = []
        self._cache: dict[tuple[str, str, str | None], tuple[list[StepCost], SessionCost]] = {}
        self._options: Any = None

    def _price(self) -> tuple[Any, str]:
        chosen = None if self.model.value == SESSION_CHOICE else self.model.value
        return price_choice(self.prices, self.workspace.header.model_id, chosen)

    def cost_of(self, policy: ContextPolicy) -> tuple[list[StepCost], SessionCost]:
        ws = self.workspace
        if self._options is not ws.options:  # fences or the defaults profile changed: all costs are stale
            self._cache, self._options = {}, ws.options
        price, _ = self._price()
        key = (policy.model_dump_json(), self.shape.value, price.model if price else None)
        if key not in self._cache:
            shape = self.shape.value
            record = ws.record if ws.record.own_calls else None
            request = CostRequest(
                tuple(ws.messages), policy, ws.options, ws.max_steps, ws.available_tools, shape, price,
                record, self.prices, ws.inputs.calibration, ws.inputs.given_offset,
            )  # fmt: skip
            self._cache[key] = run_cost(request) or ([], SessionCost())
        return self._cache[key]

    def update(self, *, compute: bool = False) -> None:
        ws = self.workspace
        if not compute and len(ws.points) > AUTO_STEPS and self.totals is None:
            self.note.value = f"<i>{len(ws.points)} steps: press “compute cost” to replay the session</i>"
            return
        self.steps, self.totals = self.cost_of(ws.policy)
        _, why = self._price()
        where = escape(f"priced with {why}; from {self.prices.describe()}")
        self.note.value = f"<span style='color:#64748b'>{where}</span>"
        self.totals_html.value = cost_views.totals_table(cost_summary(self.totals))
        self.chart.value = cost_views.cost_chart(self.steps)
        self._show_record()
        pinned = ws.pinned
        if pinned is None:
            self.compare.value = ""
            return
        _, before = self.cost_of(pinned.policy)
        self.compare.value = cost_views.compare_table(cost_rows(before, self.totals))

    def _show_record(self) -> None:
        """What the provider counted and billed, beside this policy (nothing for a session without usage)."""
        ws = self.workspace
        if self.record is None or self.record_chart is None or self.totals is None:
            return
        if self._billed is None:  # what the record cost does not change with the policy: once
            self._billed = recorded_cost(ws.record, self.prices)
        lines = record_lines(self.totals, self._billed)
        items = "".join(f"<li>{escape(line)}</li>" for line in lines)
        self.record.value = f'<div class="lp-cost"><b>Recorded</b><ul>{items}</ul></div>'
        self.record_chart.value = cost_views.record_chart(self.steps)
