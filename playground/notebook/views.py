"""The views of one BuildResult: wire cards, budget, events and the trace explorer, as HTML widgets.

They only render (`playground.html_views`) and choose what to show (dropped lines, which message to
trace); a new result comes in through `show`.
"""

from __future__ import annotations

import ipywidgets as W

from engine import BuildResult, Decision
from playground import html_views as html

__all__ = ["ResultViews"]


class ResultViews:
    """`wire`, `budget`, `events`, `trace` (HTML) with the `show_dropped` box and the `trace_picker`."""

    def __init__(self, *, show_dropped: bool = False) -> None:
        self.result: BuildResult | None = None
        self.wire = W.HTML(layout=W.Layout(max_height="760px", overflow="auto"))
        self.budget = W.HTML()
        self.events = W.HTML()
        self.trace = W.HTML()
        self.show_dropped = W.Checkbox(show_dropped, description="show dropped messages", indent=False)
        self.show_dropped.observe(lambda _c: self._render_wire(), "value")
        self.trace_picker = W.Dropdown(description="trace", options=[], layout=W.Layout(width="100%"))
        self.trace_picker.observe(lambda _c: self._render_trace(), "value")
        for widget, name in ((self.wire, "wire"), (self.budget, "budget"), (self.trace, "trace")):
            widget.add_class(f"lp-{name}-view")  # stable hooks for browser tests

    def show(self, result: BuildResult) -> None:
        self.result = result
        self.budget.value = html.budget_bar(result.tokens, result.summarization_check)
        self.events.value = html.events_list(result)
        self._render_wire()
        self._update_trace_options(result)

    def middle(self) -> W.VBox:
        return W.VBox([W.HTML("<b>WIRE</b>"), self.show_dropped, self.wire])

    def right(self) -> W.VBox:
        parts = [W.HTML("<b>BUDGET</b>"), self.budget, W.HTML("<b>EVENTS</b>"), self.events]
        return W.VBox([*parts, self.trace_picker, self.trace])

    def _render_wire(self) -> None:
        if self.result is not None:
            self.wire.value = html.wire_cards(self.result, show_dropped=self.show_dropped.value)

    def _render_trace(self) -> None:
        chosen = self.trace_picker.value
        if self.result is not None and chosen:
            self.trace.value = html.trace_view(self.result, chosen)

    def _update_trace_options(self, result: BuildResult) -> None:
        """Every message the build decided on; the chosen one stays chosen while it exists."""
        chosen = self.trace_picker.value
        options = [(_label(d), d.message_id) for d in result.decisions]
        ids = [value for _, value in options]
        if list(self.trace_picker.options) != options:  # resend a long list only when it changes
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
