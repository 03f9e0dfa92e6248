"""One input widget per policy field kind, all speaking the same two words.

`write(value)` shows a policy value (wire form; `None` for an unset optional field) and `ValueChanged`
reports what the user picked, already converted back to the policy's form. Whether that value is valid
is the engine's business: the field posts it and shows the engine's answer.
"""

from __future__ import annotations

import json
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.message import Message
from textual.widgets import Input, Label, Select, SelectionList, Switch

from engine import ControlSpec, ValueRange
from playground.tui.widgets import Slider


class ValueChanged(Message):
    """The user picked `value` (policy form) in a field control."""

    def __init__(self, value: Any) -> None:
        super().__init__()
        self.value = value


class ControlError(Message):
    """The user's text is not even of the right shape (e.g. not JSON); nothing was sent to the engine."""

    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


def shown(spec: ControlSpec, value: Any) -> Any:
    """What an unset optional field shows: the value the engine uses in its place."""
    return spec.unset_value if value is None else value


class NumberControl(Slider):
    """A slider over the suggested range, widened when a value lies outside it."""

    def __init__(self, spec: ControlSpec, value: Any) -> None:
        self.spec = spec
        integer = spec.kind.endswith("int")
        low = spec.ui_min if spec.ui_min is not None else (spec.minimum or 0)
        high = spec.ui_max if spec.ui_max is not None else max(low + 100, spec.maximum or 0)
        step = spec.step or (1 if integer else 0.01)
        number = shown(spec, value)
        number = low if number is None else number
        super().__init__(
            number,
            min=min(low, number),
            max=max(high, number),
            step=step,
            coarse_step=spec.coarse_step,
            integer=integer,
            tooltip=spec.help,
            log_scale=spec.log_scale,
        )

    def write(self, value: Any) -> None:
        number = shown(self.spec, value)
        if number is None:
            return
        self.min, self.max = min(self.min, number), max(self.max, number)
        self.value = number

    def limit(self, allowed: ValueRange, value: Any) -> None:
        """Follow the policy's own constraints (e.g. `maxTokens` > `reservedForResponse`): the track ends
        where the engine would refuse, but always reaches the field's current value."""
        number = shown(self.spec, value)
        low = allowed.ui_min if allowed.ui_min is not None else self.min
        high = allowed.ui_max if allowed.ui_max is not None else self.max
        if number is not None:
            low, high = min(low, number), max(high, number)
        if (low, high) != (self.min, self.max):
            with self.prevent(Slider.Changed, ValueChanged):
                self.set_range(low, high)

    def watch_value(self, value: float) -> None:
        super().watch_value(value)
        self.post_message(ValueChanged(value))


class BoolControl(Switch):
    def __init__(self, spec: ControlSpec, value: Any) -> None:
        super().__init__(bool(shown(spec, value)), tooltip=spec.help)
        self.spec = spec

    def write(self, value: Any) -> None:
        self.value = bool(shown(self.spec, value))

    @on(Switch.Changed)
    def _changed(self, event: Switch.Changed) -> None:
        event.stop()
        self.post_message(ValueChanged(event.value))


class EnumControl(Select[Any]):
    """Choices of an enum; an optional one has a blank entry meaning unset."""

    def __init__(self, spec: ControlSpec, value: Any) -> None:
        optional = spec.optional
        prompt = f"(unset: {spec.unset_value})" if optional else "Select"
        super().__init__(
            [(str(c), c) for c in spec.choices],
            value=Select.NULL if value is None else value,
            allow_blank=optional,
            prompt=prompt,
            type_to_search=False,
            compact=True,
            tooltip=spec.help,
        )
        self.spec = spec

    def write(self, value: Any) -> None:
        self.value = Select.NULL if value is None else value

    @on(Select.Changed)
    def _changed(self, event: Select.Changed) -> None:
        event.stop()
        self.post_message(ValueChanged(None if event.value is Select.NULL else event.value))


class TextControl(Input):
    """A string, or (for `json` fields) a JSON value; applied on enter."""

    def __init__(self, spec: ControlSpec, value: Any) -> None:
        super().__init__(self._text(spec, value), compact=True, tooltip=spec.help)
        self.spec = spec
        if spec.optional:
            self.placeholder = f"(unset: {spec.unset_value})"

    @staticmethod
    def _text(spec: ControlSpec, value: Any) -> str:
        if spec.kind == "json":
            return json.dumps(value or [], ensure_ascii=False)
        return "" if value is None else str(value)

    def write(self, value: Any) -> None:
        if not self.has_focus:
            self.value = self._text(self.spec, value)

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.spec.kind != "json":
            self.post_message(ValueChanged(event.value or (None if self.spec.optional else "")))
            return
        try:
            value = json.loads(event.value)
        except json.JSONDecodeError as error:
            self.post_message(ControlError(f"not JSON: {error.msg} (column {error.colno})"))
            return
        self.post_message(ValueChanged(value))


class ListControl(Vertical):
    """Items to pick; an optional list has a switch (off = unset), an open list an input for new items."""

    DEFAULT_CSS = """
    ListControl {
        height: auto;
        & > Horizontal { height: 1; }
        & SelectionList { height: auto; max-height: 10; border: none; padding: 0; }
        & Input { width: 1fr; }
    }
    """

    def __init__(self, spec: ControlSpec, value: Any) -> None:
        super().__init__()
        self.spec = spec
        self._items = list(value or [])
        self._choices = list(spec.choices or spec.suggestions)
        self._use = Switch(value is not None, tooltip="off: no allowlist (unset)")
        self._list: SelectionList[str] = SelectionList(*self._selections(), compact=True)
        self._list.tooltip = spec.help
        self._new = Input(placeholder="add an item, enter", compact=True)

    def _selections(self) -> list[tuple[str, str, bool]]:
        names = list(dict.fromkeys([*self._choices, *self._items]))
        return [(name, name, name in self._items) for name in names]

    def compose(self) -> ComposeResult:
        if self.spec.optional:
            with Horizontal():
                yield Label("allowlist ")
                yield self._use
        yield self._list
        if not self.spec.choices:
            yield self._new

    def on_mount(self) -> None:
        self._list.disabled = self.spec.optional and not self._use.value

    def set_choices(self, extra: list[str]) -> None:
        """Offer more items (e.g. the registered fence kinds)."""
        choices = list(dict.fromkeys([*(self.spec.choices or self.spec.suggestions), *extra]))
        if choices != self._choices:
            self._choices = choices
            self._reload()

    def write(self, value: Any) -> None:
        items = list(value or [])
        with self.prevent(Switch.Changed, SelectionList.SelectedChanged):
            self._use.value = value is not None
            self._list.disabled = self.spec.optional and value is None
            if items != self._items:
                self._items = items
                self._reload()

    def _reload(self) -> None:
        with self.prevent(SelectionList.SelectedChanged):
            self._list.clear_options()
            self._list.add_options(self._selections())

    def _value(self) -> list[str] | None:
        if self.spec.optional and not self._use.value:
            return None
        order = [name for name, _, _ in self._selections()]
        return sorted(self._list.selected, key=order.index)

    @on(Switch.Changed)
    def _switched(self, event: Switch.Changed) -> None:
        event.stop()
        self._list.disabled = not event.value
        self.post_message(ValueChanged(self._value()))

    @on(SelectionList.SelectedChanged)
    def _picked(self, event: SelectionList.SelectedChanged) -> None:
        event.stop()
        self._items = list(self._list.selected)
        self.post_message(ValueChanged(self._value()))

    @on(Input.Submitted)
    def _added(self, event: Input.Submitted) -> None:
        event.stop()
        item = event.value.strip()
        if item and item not in self._items:
            self._items.append(item)
            self._reload()
            self._new.value = ""
            self.post_message(ValueChanged(self._value()))


FieldControl = NumberControl | BoolControl | EnumControl | TextControl | ListControl


def make_control(spec: ControlSpec, value: Any) -> FieldControl:
    base = spec.kind.removeprefix("optional-")
    if base in ("int", "float"):
        return NumberControl(spec, value)
    if base == "bool":
        return BoolControl(spec, value)
    if base == "enum":
        return EnumControl(spec, value)
    if base == "list":
        return ListControl(spec, value)
    return TextControl(spec, value)
