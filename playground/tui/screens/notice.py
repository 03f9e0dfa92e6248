"""A notice to read before going on: e.g. the lines of the session file that could not be loaded."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class NoticeScreen(ModalScreen[None]):
    """A title, some lines, and a button to go on."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,enter", "dismiss", "Close", id="notice.close", tooltip="Close this notice"),
    ]

    DEFAULT_CSS = """
    NoticeScreen {
        align: center middle;
        & > Vertical {
            width: 110; height: auto; max-height: 80%;
            border: thick $warning; background: $surface; padding: 0 1;
        }
        & .notice--title { text-style: bold; color: $warning; padding-bottom: 1; }
        & VerticalScroll { height: auto; max-height: 24; }
        & Button { margin-top: 1; }
    }
    """

    def __init__(self, title: str, lines: list[str], footer: str = "") -> None:
        super().__init__()
        self._title, self._lines, self._footer = title, lines, footer

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title, classes="notice--title", markup=False)
            with VerticalScroll():
                yield Static("\n".join(self._lines), markup=False)
            if self._footer:
                yield Static(self._footer, markup=False)
            yield Button("Go on", variant="primary", id="notice-ok")

    def on_button_pressed(self, event: Button.Pressed) -> None:
        self.dismiss()

    async def action_dismiss(self, result: None = None) -> None:
        self.dismiss()
