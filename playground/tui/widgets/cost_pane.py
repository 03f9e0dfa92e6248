"""What the policy costs over the whole session: totals beside the budget (`CostPane`) and A vs B in the
Compare tab (`CostCompare`). The numbers come from `playground.app.costing` (the engine replays); the pane
runs that replay in a thread worker (a long session's in a forked child process), once a policy: moving the
step does not replay again.

Keys while the pane has focus: `m` the next price row (the session's `modelId` wins when the table has it),
`k` the cache's wire shape (OpenAI messages or Anthropic turns).

A recorded session (its transcript kept the provider's usage) adds what was billed, the as-recorded
rebuild's error against the record, and this policy's cost beside the recorded calls' (each call priced by
its own model); the per-step chart of those prompts is `RecordChart`, under the timeline.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

from textual.binding import Binding, BindingType
from textual.content import Content
from textual.widgets import Static
from textual.worker import get_current_worker

from engine import BUILTIN_PRICES, ContextPolicy, PriceTable, SessionCost, StepCost, recorded_cost
from playground.app.costing import (
    CostRequest,
    cost_compact,
    cost_job,
    cost_rows,
    price_choice,
    record_lines,
    run_cost,
)
from playground.app.forked import FORK_FROM, ReplayProcess, can_fork
from playground.app.workspace import Workspace
from playground.tui.priority import UiPriority
from playground.tui.widgets.record_chart import RecordChart
from playground.tui.widgets.static_text import update_if_changed

SESSION_CHOICE = None  # the session's modelId, else the default row
SHAPES = ("openai", "anthropic")
Key = tuple[str, str, str | None]


class CostCompare(Static):
    """Session totals of build A (pinned) against B, with B − A."""

    DEFAULT_CSS = "CostCompare { height: auto; padding: 0 1; margin-bottom: 1; }"

    def show(self, a: SessionCost | None, b: SessionCost | None, note: str = "") -> None:
        if a is None or b is None:
            update_if_changed(self, note)  # every build comes here
            self.display = bool(note)
            return
        parts: list[str | tuple[str, str]] = [(f"{'session cost':<16}{'A':>11}{'B':>11}  B − A", "bold")]
        for label, x, y, delta in cost_rows(a, b):
            style = "$text-muted" if delta in ("±0", "+0 pt", "—") else "$warning"
            parts += [f"\n{label:<16}{x:>11}{y:>11}  ", (delta, style)]
        self.update(Content.assemble(*parts))
        self.display = True


CostFigures = tuple[list[StepCost], SessionCost]


class CostPane(Static, can_focus=True):
    """`track(workspace)` after each build and on pin/unpin; shows the current policy's session totals."""

    fork_from = FORK_FROM  # messages from which the replay runs in a child process (when this OS forks)

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("m", "next_model", "price row"),
        Binding("k", "next_shape", "cache shape"),
    ]
    DEFAULT_CSS = """
    CostPane { height: auto; margin: 1 0 0 0; }
    CostPane:focus { background: $boost; }
    """

    def __init__(
        self, priority: UiPriority, *, prices: PriceTable = BUILTIN_PRICES, id: str | None = None
    ) -> None:
        super().__init__("session cost: waiting for the first build", id=id)
        self.priority = priority
        self.prices = prices
        self.choices: list[str | None] = [SESSION_CHOICE, *prices.names()]
        self.choice = 0
        self.shape = SHAPES[0]
        self.workspace: Workspace | None = None
        self.totals: dict[Key, SessionCost] = {}
        self.steps: dict[Key, list[StepCost]] = {}
        self._billed: tuple[Workspace, Any] | None = None  # what the record cost, per workspace
        self._chart: list[RecordChart] = []
        self._options: Any = None
        self._version = 0  # of the newest replay request
        self._process = ReplayProcess(every=math.inf)  # a long session's replay runs there (one batch)
        self._dumps: list[tuple[ContextPolicy, str]] = []
        self._compare: list[CostCompare] = []

    # -- what to show ------------------------------------------------------------------------------
    def _price(self) -> tuple[Any, str]:
        assert self.workspace is not None
        return price_choice(self.prices, self.workspace.header.model_id, self.choices[self.choice])

    def _key(self, policy: ContextPolicy) -> Key:
        price, _ = self._price()
        return self._policy_text(policy), self.shape, price.model if price else None

    def _policy_text(self, policy: ContextPolicy) -> str:
        """The policy as JSON, remembered for the current and the pinned one (a dump costs ~1 ms)."""
        for known, text in self._dumps:
            if known is policy:
                return text
        text = policy.model_dump_json()
        self._dumps = [(policy, text), *self._dumps[:1]]
        return text

    def track(self, workspace: Workspace) -> None:
        """Show the costs of the current (and pinned) policy, replaying in a worker what is not known yet."""
        self.workspace = workspace
        if self._options is not workspace.options:  # fences or the defaults profile changed
            self.totals, self.steps, self._options = {}, {}, workspace.options
        policies = [workspace.policy] + ([workspace.pinned.policy] if workspace.pinned else [])
        missing = [p for p in policies if self._key(p) not in self.totals]
        if missing:
            self._show("session cost: replaying the session…")
            self._version += 1  # an older replay still running stops now
            self.call_after_refresh(self._compute, workspace, missing)  # paint the build first
        self._render_costs()

    def _compute(self, ws: Workspace, policies: list[ContextPolicy]) -> None:
        price, _ = self._price()
        record = ws.record if ws.record.own_calls else None
        requests = [
            (self._key(p), CostRequest(tuple(ws.messages), p, ws.options, ws.max_steps, ws.available_tools,
                                       self.shape, price, record, self.prices, ws.inputs.calibration,
                                       ws.inputs.given_offset))  # fmt: skip
            for p in policies
        ]

        self._version += 1
        version = self._version

        def replay() -> None:  # a newer request makes this one stop at its next step (and end normally)
            worker = get_current_worker()  # and so does the app's end: it waits for its worker threads

            def stopped() -> bool:
                return version != self._version or worker.is_cancelled

            stopped_or_user = self.priority.polite(stopped)

            for key, request in requests:
                forks = self._forks(request)
                done = self._forked(request, stopped) if forks else run_cost(request, stopped_or_user)
                if done is None:
                    return
                self.app.call_from_thread(self._computed, key, *done)

        self.run_worker(replay, thread=True, group="cost", exit_on_error=False)

    def on_unmount(self) -> None:
        self._process.close()

    def _forks(self, request: CostRequest) -> bool:
        return len(request.messages) >= self.fork_from and can_fork()

    def _forked(self, request: CostRequest, stopped: Callable[[], bool]) -> CostFigures | None:
        """`run_cost` in a child process (`playground.app.forked`): a long session's replay takes minutes,
        which in a thread would share the GIL with every key meanwhile. None when stopped."""
        self.priority.wait(stopped)  # the first job forks (~10 ms holding the GIL): not while the user waits
        payload = replace(request, messages=())
        figures = None
        for batch in self._process.run(cost_job, payload, request.messages, stopped):
            figures = batch[0]
        return figures

    def _computed(self, key: Key, steps: list[StepCost], totals: SessionCost) -> None:
        self.totals[key], self.steps[key] = totals, steps
        self._render_costs()

    def _render_costs(self) -> None:
        ws = self.workspace
        if ws is None:
            return
        current = self.totals.get(self._key(ws.policy))
        compare = self._compare_panels()
        if ws.pinned is None:
            before = None
            pin_note = ""
        else:
            before = self.totals.get(self._key(ws.pinned.policy))
            pin_note = "session cost A vs B: replaying…" if before is None or current is None else ""
        for panel in compare:
            panel.show(before, current, pin_note)
        if current is None:
            return
        price, _ = self._price()
        title = f"{self.shape} · {price.model if price else 'unpriced'}"
        lines: list[str | tuple[str, str]] = [("COST ", "bold"), (title, "$text-muted")]
        lines += [f"\n{line}" for line in cost_compact(current)]
        if ws.record.own_calls:
            lines.append(("\nRECORDED", "bold"))
            lines += [f"\n{line}" for line in record_lines(current, self._billed_of(ws))]
        for chart in self._record_charts():
            chart.show(self.steps.get(self._key(ws.policy), []))
        self._show(Content.assemble(*lines))

    def _billed_of(self, ws: Workspace) -> Any:
        """What the record cost (every call priced by its model), made once per workspace."""
        if self._billed is None or self._billed[0] is not ws:
            self._billed = (ws, recorded_cost(ws.record, self.prices))
        return self._billed[1]

    def _record_charts(self) -> list[RecordChart]:
        if not self._chart and self.is_attached:
            self._chart = list(self.screen.query(RecordChart))
        return self._chart

    def _compare_panels(self) -> list[CostCompare]:
        """The screen's A vs B cost panels, looked up once they are there (a query walks the whole screen:
        ~2 ms on every build, a step move included)."""
        if not self._compare and self.is_attached:
            self._compare = list(self.screen.query(CostCompare))
        return self._compare

    def _show(self, content: str | Content) -> None:
        """Every build updates the pane: re-lay out the screen only when its number of lines changes."""
        lines_changed = str(content).count("\n") != str(self.content).count("\n")
        update_if_changed(self, content, layout=lines_changed)

    # -- choices -----------------------------------------------------------------------------------
    def on_click(self) -> None:
        self.focus()

    def action_next_model(self) -> None:
        self.choice = (self.choice + 1) % len(self.choices)
        if self.workspace is not None:
            self.track(self.workspace)

    def action_next_shape(self) -> None:
        self.shape = SHAPES[(SHAPES.index(self.shape) + 1) % len(SHAPES)]
        if self.workspace is not None:
            self.track(self.workspace)
