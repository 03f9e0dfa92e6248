"""Export the policy (only-changed or full YAML, or AgentSpec JSON) or the fences, to a confirmed path."""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Button, Input, RadioButton, RadioSet, Static

from engine import PolicyFileError
from playground.app.workspace import Workspace
from playground.web.exports import EXPORTS, export, export_text, suggested_path

PREVIEW_LINES = 14


class ExportScreen(ModalScreen[Path | None]):
    """Dismissed with the written path, or None when cancelled. Writes atomically, never over the session."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="export.cancel", tooltip="Close without writing"),
    ]

    DEFAULT_CSS = """
    ExportScreen {
        align: center middle;
        & > Vertical {
            width: 100; height: auto; max-height: 90%;
            border: thick $primary; background: $surface; padding: 0 1;
        }
        & .export--title { text-style: bold; padding-bottom: 1; }
        & RadioSet { width: 1fr; }
        & .export--error { color: $error; height: auto; }
        & VerticalScroll { height: auto; max-height: 16; border: round $panel-lighten-2; }
        & .export--preview { color: $text-muted; }
        & Horizontal { height: auto; margin-top: 1; }
        & Button { margin-right: 2; }
    }
    """

    def __init__(self, workspace: Workspace, kind: str = "policy-changed") -> None:
        super().__init__()
        self.workspace = workspace
        self.kind = kind
        self._path = Input(str(suggested_path(workspace, kind)), id="export-path")
        self._error = Static("", classes="export--error", markup=False)
        self._preview = Static("", classes="export--preview", markup=False)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Export", classes="export--title")
            with RadioSet(id="export-kind"):
                for kind, (label, _) in EXPORTS.items():
                    yield RadioButton(label, value=kind == self.kind, name=kind)
            yield self._path
            yield self._error
            with VerticalScroll():
                yield self._preview
            with Horizontal():
                yield Button("Export", variant="primary", id="export-ok")
                yield Button("Cancel", id="export-cancel")

    def on_mount(self) -> None:
        self._show_preview()
        self._path.focus()

    def _show_preview(self) -> None:
        lines = export_text(self.workspace, self.kind).splitlines()
        more = [f"… {len(lines) - PREVIEW_LINES} more lines"] if len(lines) > PREVIEW_LINES else []
        self._preview.update("\n".join(lines[:PREVIEW_LINES] + more) or "(empty)")

    @on(RadioSet.Changed)
    def _kind_changed(self, event: RadioSet.Changed) -> None:
        old = str(suggested_path(self.workspace, self.kind))
        self.kind = event.pressed.name or self.kind
        if self._path.value == old:  # only replace a path the user has not typed over
            self._path.value = str(suggested_path(self.workspace, self.kind))
        self._error.update("")
        self._show_preview()

    @on(Input.Submitted)
    @on(Button.Pressed, "#export-ok")
    def _export(self) -> None:
        path = self._path.value.strip()
        if not path:
            self._error.update("enter a path")
            return
        try:
            written = export(self.workspace, self.kind, Path(path).expanduser())
        except (PolicyFileError, OSError) as error:
            self._error.update(str(error))
            return
        self.dismiss(written)

    @on(Button.Pressed, "#export-cancel")
    def action_cancel(self) -> None:
        self.dismiss(None)
