"""The views of one BuildResult: wire cards, budget, events and the trace explorer, as HTML widgets.

They only render (`playground.web.views`) and choose what to show (dropped lines, which page of the
wire, which message to trace); a new result comes in through `show`. The wire is shown a page of
`PAGE_ROWS` rows at a time, and the trace picker lists every message of the session up to
`PICK_ALL` of them, else the shown page's: an edit on a session of thousands of messages then sends a few
kB to the browser, not the whole wire. `trace_message(message_id)` shows any message.
"""

from __future__ import annotations

import ipywidgets as W

from engine import BuildResult, Decision
from playground.app.views import WireRow, wire_rows
from playground.web import views as html

__all__ = ["PAGE_ROWS", "ResultViews"]

PAGE_ROWS = 25
PICK_ALL = 200


class ResultViews:
    """`wire`, `budget`, `events`, `trace` (HTML) with the `show_dropped` box and the `trace_picker`."""

    def __init__(self, *, show_dropped: bool = False) -> None:
        self.result: BuildResult | None = None
        self.rows: list[WireRow] = []
        self.page_start = 0  # the first wire row shown; kept across rebuilds
        self.wire = W.HTML(layout=W.Layout(max_height="760px", overflow="auto"))
        self.budget = W.HTML()
        self.events = W.HTML()
        self.trace = W.HTML()
        self.show_dropped = W.Checkbox(show_dropped, description="show dropped messages", indent=False)
        self.show_dropped.observe(lambda _c: self._render_wire(), "value")
        fits, style = W.Layout(width="auto", min_width="fit-content"), W.ButtonStyle()  # shared: fewer models
        self.pager = {
            name: W.Button(description=label, tooltip=tip, layout=fits, style=style)
            for name, label, tip in (
                ("first", "⏮", "the first rows"),
                ("earlier", "◀", f"the {PAGE_ROWS} rows before"),
                ("later", "▶", f"the {PAGE_ROWS} rows after"),
                ("last", "⏭", "the last rows"),
            )
        }
        for name, button in self.pager.items():
            button.on_click(lambda _b, name=name: self.turn_page(name))
        self.page_label = W.HTML()
        self.trace_picker = W.Dropdown(
            description="trace", options=[], layout=W.Layout(width="100%"), tooltip="a message of this page"
        )
        self.trace_picker.observe(lambda _c: self._render_trace(), "value")
        for widget, name in ((self.wire, "wire"), (self.budget, "budget"), (self.trace, "trace")):
            widget.add_class(f"lp-{name}-view")  # stable hooks for browser tests

    def show(self, result: BuildResult) -> None:
        self.result = result
        self.budget.value = html.budget_bar(result.tokens, result.summarization_check)
        self.events.value = html.events_list(result)
        self._render_wire()

    def turn_page(self, where: str) -> None:
        """Show the first, earlier, later or last page of wire rows."""
        starts = {
            "first": 0,
            "earlier": self.page_start - PAGE_ROWS,
            "later": self.page_start + PAGE_ROWS,
            "last": len(self.rows) - 1,
        }
        self.page_start = starts[where]
        self._render_wire()

    def middle(self) -> W.VBox:
        pager = W.HBox([*self.pager.values(), self.page_label], layout=W.Layout(align_items="center"))
        return W.VBox([W.HTML("<b>WIRE</b>"), W.HBox([self.show_dropped, pager]), self.wire])

    def right(self) -> W.VBox:
        parts = [W.HTML("<b>BUDGET</b>"), self.budget, W.HTML("<b>EVENTS</b>"), self.events]
        return W.VBox([*parts, self.trace_picker, self.trace])

    def _render_wire(self) -> None:
        result = self.result
        if result is None:
            return
        self.rows = [] if result.error is not None else wire_rows(result, self.show_dropped.value)
        last_page = max(0, (len(self.rows) - 1) // PAGE_ROWS * PAGE_ROWS)
        self.page_start = min(max(0, self.page_start), last_page) // PAGE_ROWS * PAGE_ROWS
        window = (self.page_start, self.page_start + PAGE_ROWS)
        dropped = self.show_dropped.value
        self.wire.value = html.wire_cards(result, show_dropped=dropped, window=window, rows=self.rows)
        if len(self.rows) > PAGE_ROWS:
            shown = f"{self.page_start + 1}–{min(len(self.rows), window[1])} of {len(self.rows)}"
            self.page_label.value = f'<span class="lp-muted">rows {shown}</span>'
        else:
            self.page_label.value = ""
        for name, button in self.pager.items():
            back = name in ("first", "earlier")
            button.disabled = self.page_start == 0 if back else self.page_start == last_page
            button.layout.display = None if len(self.rows) > PAGE_ROWS else "none"
        self._update_trace_options(result, self.rows[window[0] : window[1]])

    def _render_trace(self) -> None:
        chosen = self.trace_picker.value
        if self.result is not None and chosen:
            self.trace.value = html.trace_view(self.result, chosen)

    def trace_message(self, message_id: str) -> str:
        """Show `message_id`'s decision in the trace explorer (added to the picker when it is not listed);
        the explorer's HTML."""
        decision = self.result.decision_for(message_id) if self.result is not None else None
        if decision is None:
            raise KeyError(f"no decision for message {message_id!r} in this build")
        if message_id not in [value for _, value in self.trace_picker.options]:
            self.trace_picker.options = [*self.trace_picker.options, (_label(decision), message_id)]
        self.trace_picker.value = message_id
        return self.trace.value

    def _update_trace_options(self, result: BuildResult, page: list[WireRow]) -> None:
        """Every decision of a short session, else those of the shown page's messages; the chosen one stays
        chosen while the build has a decision for it."""
        decisions = result.decisions
        if len(decisions) > PICK_ALL:
            on_page = {source for row in page for source in (row.message_id, *row.source_ids)}
            decisions = [d for d in decisions if d.message_id in on_page]
        chosen = self.trace_picker.value
        options = [(_label(d), d.message_id) for d in decisions]
        ids = [value for _, value in options]
        still = result.decision_for(chosen) if chosen and chosen not in ids else None
        if still is not None:  # picked off the page (`trace`): it stays while the build has it
            options.append((_label(still), still.message_id))
            ids.append(still.message_id)
        if list(self.trace_picker.options) != options:  # resend the list only when it changes
            self.trace_picker.options = options
        if chosen in ids:
            self.trace_picker.value = chosen
        elif ids:
            self.trace_picker.value = ids[-1]
        self._render_trace()


def _label(decision: Decision) -> str:
    where = "new" if decision.index < 0 else f"#{decision.index}"
    fate = "kept" if decision.kept else "dropped"
    return f"{where} {decision.role}·{decision.type} {decision.message_id} ({fate})"
