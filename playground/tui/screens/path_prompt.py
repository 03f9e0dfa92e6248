"""Ask for a file path and hand it to a function that may refuse it (its error is shown, the prompt stays)."""

from __future__ import annotations

from collections.abc import Callable
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Input, Static

from engine import FenceError
from playground.app.inputs import LOAD_ERRORS

PROMPT_ERRORS = (*LOAD_ERRORS, FenceError)


class PathPrompt(ModalScreen[str | None]):
    """Dismissed with the accepted path, or None when cancelled."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="prompt.cancel", tooltip="Close without doing anything"),
    ]

    DEFAULT_CSS = """
    PathPrompt {
        align: center middle;
        & > Vertical { width: 90; height: auto; border: thick $primary; background: $surface; padding: 0 1; }
        & .prompt--title { text-style: bold; padding-bottom: 1; }
        & .prompt--error { color: $error; height: auto; }
        & Horizontal { height: auto; margin-top: 1; }
        & Button { margin-right: 2; }
    }
    """

    def __init__(self, title: str, value: str, action: str, apply: Callable[[str], object]) -> None:
        super().__init__()
        self._title, self._value, self._action, self._apply = title, value, action, apply
        self.error = Static("", classes="prompt--error", markup=False)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title, classes="prompt--title", markup=False)
            yield Input(self._value, id="prompt-path")
            yield self.error
            with Horizontal():
                yield Button(self._action, variant="primary", id="prompt-ok")
                yield Button("Cancel", id="prompt-cancel")

    @on(Input.Submitted)
    @on(Button.Pressed, "#prompt-ok")
    def _accept(self) -> None:
        path = self.query_one(Input).value.strip()
        if not path:
            self.error.update("enter a path")
            return
        try:
            self._apply(path)
        except PROMPT_ERRORS as error:
            self.error.update(str(error))
            return
        self.dismiss(path)

    @on(Button.Pressed, "#prompt-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
