"""One policy field: its label (● when it differs from the defaults), its control, the engine's error."""

from __future__ import annotations

from typing import Any, ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.content import Content
from textual.message import Message
from textual.widgets import Label, Static

from engine import ControlSpec
from playground.tui.panels.field_controls import ControlError, ListControl, ValueChanged, make_control
from playground.tui.widgets.static_text import update_if_changed

CHANGED_MARK = "●"
WIDE_KINDS = ("list", "optional-list", "json")


class PolicyField(Vertical):
    """Posts `Edited` with the picked value, or `ResetRequested`; `show` syncs it to the policy quietly."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "r", "reset", "Reset field", id="policy.reset_field", tooltip="Put this field back at its default"
        ),
    ]

    DEFAULT_CSS = """
    PolicyField {
        height: auto;
        & > Horizontal { height: auto; }
        & .policy-field--label { width: 24; color: $text-muted; }
        &:focus-within .policy-field--label { color: $accent; }
        & .policy-field--error { display: none; color: $error; padding-left: 2; }
        &.-error .policy-field--error { display: block; }
        &.-error .policy-field--label { color: $error; }
    }
    """

    class Edited(Message):
        """The user set `path` to `value` (not yet checked by the engine)."""

        def __init__(self, field: PolicyField, value: Any) -> None:
            super().__init__()
            self.field = field
            self.path = field.spec.path
            self.value = value

        @property
        def control(self) -> PolicyField:
            return self.field

    class ResetRequested(Message):
        def __init__(self, field: PolicyField) -> None:
            super().__init__()
            self.field = field
            self.path = field.spec.path

        @property
        def control(self) -> PolicyField:
            return self.field

    def __init__(self, spec: ControlSpec, value: Any) -> None:
        super().__init__(id="field-" + spec.key.replace(".", "-"))
        self.spec = spec
        self.value = value
        self.changed = False
        # Values posted in `Edited` that the policy has not shown back yet, oldest first. The control may
        # be ahead of the policy (keys come faster than rebuilds); it must not be set back to an older value.
        self._sent: list[Any] = []
        self.input = make_control(spec, value)
        self._label = Label(spec.label, classes="policy-field--label")
        self._label.tooltip = f"{spec.key}\n{spec.help}"
        self._error = Static("", classes="policy-field--error", markup=False)

    def compose(self) -> ComposeResult:
        if self.spec.kind in WIDE_KINDS:
            yield self._label
            yield self.input
        else:
            with Horizontal():
                yield self._label
                yield self.input
        yield self._error

    def show(self, value: Any, changed: bool, error: str | None) -> None:
        """Reflect the policy's value, whether it differs from the defaults, and the engine's error.

        Our own edit coming back leaves the control alone; any other new value (a reset, a loaded file,
        another profile) is written to it.
        """
        if value in self._sent:
            del self._sent[: self._sent.index(value) + 1]
            self.value = value
        elif value != self.value:
            self.value, self._sent = value, []
            self.input.write(value)
        if changed != self.changed:
            # Styled in the label, not by a CSS class: a class change restyles the field's every widget
            # (~10 ms), and its width is fixed, so the screen need not be re-laid out either.
            self.changed = changed
            mark = Content.styled(f"{CHANGED_MARK} {self.spec.label}", "bold")
            self._label.update(mark if changed else self.spec.label, layout=False)
        self.show_error(error)

    def show_error(self, error: str | None) -> None:
        update_if_changed(self._error, error or "")  # every edit comes here
        self.set_class(bool(error), "-error")

    def set_choices(self, extra: list[str]) -> None:
        if isinstance(self.input, ListControl):
            self.input.set_choices(extra)

    def action_reset(self) -> None:
        self.post_message(self.ResetRequested(self))

    def refused(self, value: Any, error: str) -> None:
        """The engine refused `value`: show its error and put the control back on the policy's value."""
        self._sent = [v for v in self._sent if v != value]
        if not self._sent:
            self.input.write(self.value)
        self.show_error(error)

    @on(ValueChanged)
    def _picked(self, event: ValueChanged) -> None:
        event.stop()
        if event.value != (self._sent[-1] if self._sent else self.value):
            self._sent.append(event.value)
            self.post_message(self.Edited(self, event.value))

    @on(ControlError)
    def _bad_text(self, event: ControlError) -> None:
        event.stop()
        self.show_error(event.error)
