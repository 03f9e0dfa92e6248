"""The form for one fence descriptor: kind, role, placement, lifetime, must-keep, budget share, template."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Label, Select, Static, Switch

from engine import DEFAULT_TEMPLATE, LIFETIMES, LLM_ROLES, PLACEMENTS, FenceDescriptor, FenceError

NEW_FENCE = FenceDescriptor("new-fence", "user", "before-current-user", "turn-only")


def _select(choices: tuple[str, ...], value: str, id: str) -> Select[str]:
    return Select([(c, c) for c in choices], value=value, allow_blank=False, compact=True, id=id)


class FenceForm(ModalScreen[FenceDescriptor | None]):
    """`apply(descriptor)` registers the result and may raise `FenceError`; its message stays on the form."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape", "cancel", "Cancel", id="fence_form.cancel", tooltip="Close without changing anything"
        ),
    ]

    DEFAULT_CSS = """
    FenceForm {
        align: center middle;
        & > Vertical { width: 84; height: auto; border: thick $primary; background: $surface; padding: 0 1; }
        & .fence-form--title { text-style: bold; padding-bottom: 1; }
        & Horizontal { height: auto; }
        & Label { width: 16; padding-top: 0; }
        & Input, Select { width: 1fr; }
        & Switch { border: none; padding: 0; height: 1; }
        & .fence-form--error { color: $error; height: auto; }
        & .fence-form--buttons { margin-top: 1; }
        & Button { margin-right: 2; }
    }
    """

    def __init__(
        self, title: str, descriptor: FenceDescriptor, apply: Callable[[FenceDescriptor], object]
    ) -> None:
        super().__init__()
        self._title, self._start, self._apply = title, descriptor, apply
        self.error = Static("", classes="fence-form--error", markup=False)

    def compose(self) -> ComposeResult:
        d = self._start
        share = "" if d.max_budget_fraction is None else f"{d.max_budget_fraction:g}"
        rows = [
            ("kind", Input(d.kind, id="fence-kind", compact=True)),
            ("role", _select(LLM_ROLES, d.llm_role, "fence-role")),
            ("placement", _select(PLACEMENTS, d.placement, "fence-placement")),
            ("lifetime", _select(LIFETIMES, d.lifetime, "fence-lifetime")),
            ("must keep", Switch(d.must_keep, id="fence-must-keep")),
            ("budget share", Input(share, placeholder="none, or in (0, 1]", id="fence-share", compact=True)),
            (
                "template",
                Input(d.formatter or "", placeholder=DEFAULT_TEMPLATE, id="fence-template", compact=True),
            ),
        ]
        with Vertical():
            yield Static(self._title, classes="fence-form--title", markup=False)
            for label, widget in rows:
                with Horizontal():
                    yield Label(label)
                    yield widget
            yield self.error
            with Horizontal(classes="fence-form--buttons"):
                yield Button("Save", variant="primary", id="fence-save")
                yield Button("Cancel", id="fence-cancel")

    def descriptor(self) -> FenceDescriptor:
        """The form as a descriptor; raises `FenceError` naming the bad field."""
        share = self.query_one("#fence-share", Input).value.strip()
        try:
            fraction = float(share) if share else None
        except ValueError:
            raise FenceError(
                f"maxBudgetFraction: must be a number (got {share!r})", "maxBudgetFraction"
            ) from None
        return FenceDescriptor(
            kind=self.query_one("#fence-kind", Input).value.strip(),
            llm_role=self.query_one("#fence-role", Select).value,
            placement=self.query_one("#fence-placement", Select).value,
            lifetime=self.query_one("#fence-lifetime", Select).value,
            must_keep=self.query_one("#fence-must-keep", Switch).value,
            max_budget_fraction=fraction,
            formatter=self.query_one("#fence-template", Input).value or None,
        )

    @on(Input.Submitted)
    @on(Button.Pressed, "#fence-save")
    def save(self) -> None:
        try:
            descriptor = self.descriptor()
            self._apply(descriptor)
        except FenceError as error:
            self.error.update(str(error))
            return
        self.dismiss(descriptor)

    @on(Button.Pressed, "#fence-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
