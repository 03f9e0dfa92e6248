"""The playground's widgets: each renders what it is given and posts messages; none decides anything."""

from playground.tui.widgets.budget_bar import BudgetBar
from playground.tui.widgets.events_view import EventsView
from playground.tui.widgets.slider import Slider
from playground.tui.widgets.timeline import Timeline
from playground.tui.widgets.trace_view import TraceView
from playground.tui.widgets.wire_list import WireList
from playground.tui.widgets.wire_view import WireView

__all__ = ["BudgetBar", "EventsView", "Slider", "Timeline", "TraceView", "WireList", "WireView"]
