"""How a notebook `Playground` looks: its widgets and their layout (three columns that wrap in a narrow
pane), its header line, and the static HTML that a saved notebook, GitHub or nbviewer show without a
kernel. The Playground (`playground.notebook.app`) holds the state and reacts to the widgets."""

from __future__ import annotations

from html import escape
from typing import Any

import ipywidgets as W

from playground.app.workspace import DEFAULTS_PROFILES
from playground.notebook.controls import PolicyControls
from playground.notebook.cost import CostView
from playground.notebook.fences import FenceEditor
from playground.notebook.timeline import Timeline
from playground.notebook.views import ResultViews
from playground.web import views as html
from playground.web.charts import step_bars


class PlaygroundLayout:
    """The widgets of a `Playground` (a base class of it: the callbacks are the Playground's)."""

    # -- widgets ----------------------------------------------------------------------------------

    def _make_widgets(self, show_dropped: bool) -> None:
        self.controls = PolicyControls(self.workspace, on_change=self._policy_edited)
        self.fence_editor = FenceEditor(self.workspace, on_change=self._fences_edited)
        self.views = ResultViews(show_dropped=show_dropped)
        self.timeline = Timeline(self.step_count)
        self.timeline.slider.observe(lambda _c: self._step_moved(), "value")
        self.defaults_switch = W.ToggleButtons(
            options=DEFAULTS_PROFILES, value=self.workspace.defaults, description="defaults"
        )
        self.defaults_switch.observe(lambda change: self._defaults_switched(change["new"]), "value")
        fits = W.Layout(width="auto", min_width="fit-content")  # a button's label is never clipped
        self.pin_button = W.Button(
            description="pin A",
            icon="thumb-tack",
            tooltip="pin this build as A; edits then build B",
            layout=fits,
        )
        self.pin_button.on_click(lambda _b: self.pin())
        self.unpin_button = W.Button(description="unpin", tooltip="forget build A", layout=fits)
        self.unpin_button.on_click(lambda _b: self.unpin())
        self.as_recorded_button: W.Button | None = None  # for a recorded session only
        if self.workspace.record.own_calls:
            self.as_recorded_button = W.Button(
                description="as recorded",
                tooltip="rebuild what the agent itself sent, to set beside what the provider counted",
                layout=fits,
            )
            self.as_recorded_button.on_click(lambda _b: self.as_recorded())
        self.compare_view = W.HTML()
        self.cost = CostView(self.workspace)
        self.timeline.slider.add_class("lp-step-view")
        self.title = W.HTML()
        self.status = W.HTML()
        self.export_path = W.Text(
            str(self.sources.export_path), description="export to", continuous_update=False,
            layout=W.Layout(flex="1 1 220px", min_width="160px"),
        )  # fmt: skip
        self.export_only_changed = W.Checkbox(
            True, description="only changed", indent=False, layout=W.Layout(width="auto")
        )
        self.export_button = W.Button(
            description="Export", icon="save", tooltip="write the policy YAML", layout=fits
        )
        self.export_button.on_click(self._export_clicked)
        self.export_status = W.HTML()
        self.widget = self._layout()

    def _layout(self) -> W.VBox:
        """Three columns that wrap under each other in a narrow pane (flex-wrap with minimum widths)."""
        _restyle(self.controls.accordion.layout, max_height="640px", overflow="auto")
        wrap = W.Layout(flex_flow="row wrap", align_items="flex-start", width="100%")
        export = W.HBox([self.export_path, self.export_only_changed, self.export_button], layout=wrap)
        left = W.VBox(
            [self.controls.widget, export, self.export_status],
            layout=W.Layout(flex="1 1 480px", min_width="min(480px, 100%)", max_width="100%"),
        )
        middle, right = self.views.middle(), self.views.right()
        _restyle(middle.layout, flex="1 1 360px", min_width="min(300px, 100%)", max_width="100%")
        _restyle(right.layout, flex="1 1 240px", min_width="min(240px, 100%)", max_width="100%")
        fences = W.Accordion([self.fence_editor.widget], titles=("Fences",))
        fences.selected_index = 0 if self.fences else None
        buttons = [self.defaults_switch, self.pin_button, self.unpin_button]
        tools = W.HBox(buttons + ([self.as_recorded_button] if self.as_recorded_button else []), layout=wrap)
        body = W.HBox([left, middle, right], layout=wrap)
        lesson = [self.lesson.widget] if self.lesson is not None else []
        compare = W.VBox(
            [W.HTML("<b>COMPARE</b> <span class='lp-muted'>A pinned · B current</span>"), self.compare_view]
        )
        parts = [self.title, *lesson, self.status, tools, body, compare, self.timeline.widget]
        parts += [self.cost.widget, fences]
        box = W.VBox(parts, layout=W.Layout(width="100%", max_width="100%", overflow="hidden"))
        box.add_class("lp-playground")
        return box

    def _show_header(self) -> None:
        count, step = self.step_count, self.step
        self.timeline.describe(self.workspace.points[step - 1] if count else None, count)
        where = f"step {step}/{count}" if count else "whole session"
        line = f"<b>linn-playground</b> · {escape(self.sources.title)} ({len(self.messages)} msgs) · "
        line += f"defaults: {escape(self.defaults)} · {where}"
        lesson = self.sources.lesson
        if lesson:
            line += f"<div class='lp-muted' style='white-space:pre-line'>{escape(lesson)}</div>"
        self.title.value = line
        notes = "".join(f"<div>{escape(note)}</div>" for note in self.sources.notes[:5])
        self.status.value = f'<div style="color:#b45309">{notes}</div>' if notes else ""

    # -- showing and closing -------------------------------------------------------------------

    def static_html(self) -> str:
        """The build as one HTML page fragment with no widget: the title, the wire summary, the budget
        bar and the step chart. What a saved notebook, GitHub or nbviewer show without a kernel."""
        result = self.result
        count = self.step_count
        where = f"step {self.step}/{count}" if count else "whole session"
        head = (
            f"<b>linn-playground</b> · {escape(self.sources.title)} ({len(self.messages)} msgs) · "
            f"defaults: {escape(self.defaults)} · {where}"
        )
        chart = step_bars(self.series, self.step) if count else ""
        parts = [
            f"<div>{head}</div>",
            "<div style='display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start'>",
            "<div style='flex:1 1 360px;min-width:0'><b>WIRE</b>"
            f"{html.wire_summary(result, first=40, last=10)}</div>",
            "<div style='flex:1 1 260px;min-width:0'><b>BUDGET</b>"
            f"{html.budget_bar(result.tokens, result.summarization_check)}</div></div>",
            f"<div><b>TOKENS PER STEP</b><div>{chart}</div></div>" if chart else "",
        ]
        return f"{html.STYLE}<div class='lp-view lp-static'>{''.join(parts)}</div>"

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widgets for a live kernel, and the static view beside them: front ends that cannot show
        the widgets (no kernel, GitHub, nbviewer, an untrusted notebook) show the HTML."""
        bundle = {} if self._closed else self.widget._repr_mimebundle_(**kwargs)
        bundle["text/html"] = self.static_html()
        tokens = self.result.tokens
        bundle["text/plain"] = (
            f"Playground({self.sources.title!r}: {len(self.result.cards)} wire messages, "
            f"{tokens.final_tokens} of {tokens.total_budget} tokens)"
        )
        return bundle


def _restyle(layout: W.Layout, **traits: str) -> None:
    """Set a widget's layout traits in place (a new Layout would leave the old model behind)."""
    for name, value in traits.items():
        setattr(layout, name, value)


def close_tree(widget: W.Widget) -> None:
    """Close a widget, its layout and style and, for a box, its children (recursively)."""
    seen: set[int] = set()
    stack = [widget]
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        for name in item.keys:
            value = getattr(item, name, None)
            values = value if isinstance(value, tuple | list) else (value,)
            stack += [v for v in values if isinstance(v, W.Widget)]
        item.close()
