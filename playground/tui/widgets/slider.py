"""A slider for int and float values, driven by keys, the mouse or a typed number."""

from __future__ import annotations

import math
from decimal import Decimal
from typing import ClassVar

from rich.text import Text
from textual import events, on
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Input, Label
from textual.widgets.input import Selection

from playground.tui.keys import keys_of
from playground.tui.widgets.text_lines import TextLines

_EPS = 1e-9


class SliderBar(TextLines):
    """The drawn part of a `Slider`: `━━━━○──  24000`."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "slider--filled",
        "slider--empty",
        "slider--knob",
        "slider--value",
    }
    """
    | Class | Description |
    | :- | :- |
    | `slider--filled` | The track left of the knob. |
    | `slider--empty` | The track right of the knob. |
    | `slider--knob` | The knob. |
    | `slider--value` | The number beside the track. |
    """

    def __init__(self, slider: Slider) -> None:
        super().__init__()
        self._slider = slider

    def text_lines(self) -> list[Text]:
        s = self._slider
        track = max(1, self.size.width - s.label_width - 1)
        knob = round(s.fraction * (track - 1))
        style = self.component_style
        text = Text(no_wrap=True, overflow="crop")
        text.append("━" * knob, style("slider--filled"))
        text.append("●" if s.has_focus else "○", style("slider--knob"))
        text.append("─" * (track - knob - 1), style("slider--empty"))
        text.append(" " + s.format(s.value).rjust(s.label_width), style("slider--value"))
        return [text]


class Slider(Widget, can_focus=True):
    """A number between `min` and `max`, changed in fine or coarse steps, by dragging, or by typing it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "Less", show=False, id="slider.less", tooltip="Decrease by one step"),
        Binding("right", "move(1)", "More", show=False, id="slider.more", tooltip="Increase by one step"),
        Binding(
            "shift+left",
            "move(-1, True)",
            "Much less",
            show=False,
            id="slider.much_less",
            tooltip="Decrease by a coarse step",
        ),
        Binding(
            "shift+right",
            "move(1, True)",
            "Much more",
            show=False,
            id="slider.much_more",
            tooltip="Increase by a coarse step",
        ),
        Binding(
            "pagedown",
            "move(-1, True)",
            "Much less",
            show=False,
            id="slider.page_down",
            tooltip="Coarse down",
        ),
        Binding("pageup", "move(1, True)", "Much more", show=False, id="slider.page_up", tooltip="Coarse up"),
        Binding("home", "to_min", "Minimum", show=False, id="slider.min", tooltip="Go to the minimum"),
        Binding("end", "to_max", "Maximum", show=False, id="slider.max", tooltip="Go to the maximum"),
        Binding("enter", "edit", "Type value", id="slider.edit", tooltip="Type a number"),
        Binding("escape", "cancel_edit", "Cancel", show=False, id="slider.cancel", tooltip="Stop typing"),
    ]
    """
    | Key(s) | Description |
    | :- | :- |
    | left, right | One step down / up. |
    | shift+left, shift+right, pagedown, pageup | One coarse step (ten steps unless set) down / up. |
    | home, end | Minimum / maximum. |
    | enter | Type a number (enter again to apply it, escape to cancel). |
    """
    VALUE_KEYS: ClassVar[frozenset[str]] = keys_of(BINDINGS, "move", "to_")
    """The keys that move the value (when the slider has focus and is not being typed into)."""

    DEFAULT_CSS = """
    Slider {
        layout: horizontal;
        width: 1fr;
        height: 1;
        pointer: pointer;
        & SliderBar { width: 1fr; height: 1; }
        & SliderBar > .slider--filled { color: $primary; }
        & SliderBar > .slider--empty { color: $text-muted; }
        & SliderBar > .slider--knob { color: $primary; text-style: bold; }
        & SliderBar > .slider--value { color: $text; }
        &:focus SliderBar { background: $boost; }
        &:focus SliderBar > .slider--knob { color: $accent; }
        &:disabled SliderBar > .slider--knob { color: $text-disabled; }
        & Input { display: none; width: 1fr; height: 1; border: none; padding: 0 1; }
        & Input.-invalid { background: $error 25%; }
        & .slider--error { display: none; width: auto; color: $error; padding: 0 1; }
        &.-editing SliderBar { display: none; }
        &.-editing Input { display: block; }
        &.-editing.-invalid .slider--error { display: block; }
    }
    """

    value: reactive[float] = reactive(0.0, init=False)
    """The current value, clamped to `[min, max]` (an `int` for an integer slider)."""

    class Changed(Message):
        """Posted when the value changes, from the user or from code (`with slider.prevent(Slider.Changed)`
        silences it when an app sets values it already knows)."""

        def __init__(self, slider: Slider, value: float) -> None:
            super().__init__()
            self.slider = slider
            self.value = value

        @property
        def control(self) -> Slider:
            """Alias for `self.slider`."""
            return self.slider

    def __init__(
        self,
        value: float | None = None,
        *,
        min: float = 0,
        max: float = 100,
        step: float = 1,
        coarse_step: float | None = None,
        integer: bool | None = None,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
        disabled: bool = False,
        tooltip: str | None = None,
        log_scale: bool = False,
    ) -> None:
        """Make a slider; it is an integer slider when `min`, `max` and `step` are all ints (or `integer`).
        With `log_scale` (and `min > 0`) the track is logarithmic; keys still move by `step`/`coarse_step`."""
        super().__init__(name=name, id=id, classes=classes, disabled=disabled)
        if max < min or step <= 0:
            raise ValueError(f"slider needs min <= max and step > 0, got {min}, {max}, {step}")
        self.integer = integer if integer is not None else all(isinstance(n, int) for n in (min, max, step))
        self.min, self.max, self.step = min, max, step
        self.origin = min  # where the step grid starts; it stays put when `set_range` moves the ends
        self.logarithmic = log_scale and min > 0
        self.coarse_step = coarse_step if coarse_step is not None else step * 10
        self.decimals = 0 if self.integer else max_decimals(step)
        self.set_reactive(Slider.value, self.validate_value(min if value is None else value))
        if tooltip is not None:
            self.tooltip = tooltip
        self._bar = SliderBar(self)
        # Selected in `action_edit`, not on focus: the focus event may come after the first typed keys.
        self._input = Input(type="integer" if self.integer else "number", compact=True, select_on_focus=False)

    def compose(self) -> ComposeResult:
        yield self._bar
        yield self._input
        yield Label("not a number", classes="slider--error")

    @property
    def fraction(self) -> float:
        """Where the value sits between `min` (0.0) and `max` (1.0), on the track's scale."""
        if self.logarithmic and self.max > self.min:
            return math.log(self.value / self.min) / math.log(self.max / self.min)
        span = self.max - self.min
        return (self.value - self.min) / span if span else 0.0

    def value_at_fraction(self, fraction: float) -> float:
        """The inverse of `fraction`: the value at a point of the track."""
        if self.logarithmic and self.max > self.min:
            return self.min * (self.max / self.min) ** fraction
        return self.min + fraction * (self.max - self.min)

    @property
    def label_width(self) -> int:
        return len(max((self.format(n) for n in (self.min, self.max, self.value)), key=len))

    def format(self, value: float) -> str:
        """The value as shown beside the track."""
        if self.integer:
            return str(int(value))
        text = f"{value:.{self.decimals}f}"
        return text if float(text) == value else f"{value:.{self.decimals + 4}f}".rstrip("0")

    def validate_value(self, value: float) -> float:
        value = min(max(value, self.min), self.max)
        return int(round(value)) if self.integer else round(value, self.decimals + 4)

    def watch_value(self, value: float) -> None:
        self._bar.refresh()
        self.post_message(self.Changed(self, value))

    def set_range(self, minimum: float, maximum: float) -> None:
        """Move the ends of the track (the value is clamped into the new range)."""
        self.min, self.max = minimum, max(minimum, maximum)
        self.value = self.validate_value(self.value)
        self._bar.refresh()

    def snap(self, value: float) -> float:
        """The step-grid point (counted from `origin`) nearest to `value`."""
        return self.origin + math.floor((value - self.origin) / self.step + 0.5) * self.step

    def action_move(self, direction: int, coarse: bool = False) -> None:
        """One step (or a coarse step's worth of steps) along the step grid in `direction`, clamped to the
        range; a value between grid points first goes to the next one."""
        count = max(1, round(self.coarse_step / self.step)) if coarse else 1
        steps = (self.value - self.origin) / self.step
        target = math.floor(steps + _EPS) + count if direction > 0 else math.ceil(steps - _EPS) - count
        self.value = self.origin + target * self.step

    def action_to_min(self) -> None:
        self.value = self.min

    def action_to_max(self) -> None:
        self.value = self.max

    def action_edit(self) -> None:
        """Open the number input, filled with the current value."""
        self._input.value = self.format(self.value)
        self._input.selection = Selection(0, len(self._input.value))  # the first key typed replaces it
        self._input.remove_class("-invalid")
        self.remove_class("-invalid")
        self.add_class("-editing")
        # Focus now, not after the queued events (`focus()` waits its turn): keys typed right after enter
        # may already be on their way here, and `_on_key` passes them on to the input.
        self.screen.set_focus(self._input)

    async def _on_key(self, event: events.Key) -> None:
        """Keys act in the order they came. A binding would run late (after the key bubbled up to the app),
        by when the editor may have opened and taken the focus; so the slider runs its own bindings here,
        and keys that reach it while its editor opens are the user's typing, passed on to the input."""
        editing = self.has_class("-editing")
        bindings = self._bindings.key_to_bindings.get(event.key)
        if not editing and not bindings:
            return
        event.stop()
        event.prevent_default()
        if not editing:
            await self.run_action(bindings[0].action)
        elif event.key == "escape":
            self._close_editor()
        elif event.key == "enter":
            await self._input.action_submit()
        elif event.key == "backspace":
            self._input.action_delete_left()
        elif event.is_printable and event.character is not None:
            selection = self._input.selection
            if selection.is_empty:
                self._input.insert_text_at_cursor(event.character)
            else:
                self._input.replace(event.character, *selection)

    def action_cancel_edit(self) -> None:
        if not self.has_class("-editing"):
            raise SkipAction()
        self._close_editor()

    @on(Input.Submitted)
    def _typed(self, event: Input.Submitted) -> None:
        event.stop()
        try:
            number = float(event.value)
        except ValueError:
            self.add_class("-invalid")
            event.input.add_class("-invalid")
            return
        self._close_editor()
        if math.isfinite(number):
            self.value = number

    @on(Input.Blurred)
    def _left_editor(self, event: Input.Blurred) -> None:
        event.stop()
        self.remove_class("-editing", "-invalid")

    def _close_editor(self) -> None:
        self.remove_class("-editing", "-invalid")
        self._input.remove_class("-invalid")
        self.focus()

    def _on_focus(self) -> None:
        self._bar.refresh()

    def _on_blur(self) -> None:
        self._bar.refresh()

    @property
    def _track_width(self) -> int:
        return max(1, self._bar.content_region.width - self.label_width - 1)

    def _value_at(self, screen_x: int) -> float:
        x = screen_x - self._bar.content_region.x
        if x >= self._track_width - 1:
            return self.max
        return self.snap(self.value_at_fraction(max(0, x) / max(1, self._track_width - 1)))

    def _on_mouse_down(self, event: events.MouseDown) -> None:
        if self.has_class("-editing") or self.disabled:
            return
        if event.screen_x - self._bar.content_region.x > self._track_width:
            self.action_edit()  # a click on the number types it
            return
        self.capture_mouse()
        self.value = self._value_at(event.screen_x)

    def _on_mouse_move(self, event: events.MouseMove) -> None:
        if self.app.mouse_captured is self:
            self.value = self._value_at(event.screen_x)

    def _on_mouse_up(self, event: events.MouseUp) -> None:
        self.release_mouse()


def max_decimals(step: float) -> int:
    """How many decimals a float step needs (0.05 -> 2)."""
    exponent = Decimal(str(step)).normalize().as_tuple().exponent
    return max(0, -exponent) if isinstance(exponent, int) else 0
