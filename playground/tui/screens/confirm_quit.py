"""Asked before quitting with edits nobody exported: quit anyway, export first, or stay."""

from __future__ import annotations

from typing import ClassVar, Literal

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static

Choice = Literal["quit", "export", "stay"]


class ConfirmQuit(ModalScreen[Choice]):
    """Dismissed with 'quit', 'export' or 'stay'."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "choose('stay')", "Stay", id="quit.stay", tooltip="Go back to the playground"),
        Binding("q", "choose('quit')", "Quit", id="quit.anyway", tooltip="Quit without exporting"),
        Binding("e", "choose('export')", "Export", id="quit.export", tooltip="Export first"),
    ]

    DEFAULT_CSS = """
    ConfirmQuit {
        align: center middle;
        & > Vertical {
            width: 72; height: auto; border: thick $warning; background: $surface; padding: 0 1;
        }
        & .confirm--title { text-style: bold; color: $warning; padding-bottom: 1; }
        & Horizontal { height: auto; margin-top: 1; }
        & Button { margin-right: 2; }
    }
    """

    def __init__(self, unsaved: list[str]) -> None:
        super().__init__()
        self._unsaved = unsaved

    def compose(self) -> ComposeResult:
        what = " and ".join(self._unsaved)
        with Vertical():
            title = f"The {what} changed since it was opened or last exported."
            yield Static(title, classes="confirm--title")
            yield Static("Quit anyway (q), export first (e), or stay (escape)?")
            with Horizontal():
                yield Button("Quit anyway", variant="error", id="quit")
                yield Button("Export first", variant="primary", id="export")
                yield Button("Stay", id="stay")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id)  # type: ignore[arg-type]

    def action_choose(self, choice: Choice) -> None:
        self.dismiss(choice)
