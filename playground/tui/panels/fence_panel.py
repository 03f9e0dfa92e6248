"""The fence descriptors as a table, with add / edit / duplicate / delete, and the session's fences."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import DataTable, Static

from engine import AiMessage, FenceRegistry

DESCRIPTOR_COLUMNS = ("kind", "role", "placement", "lifetime", "keep", "share", "formatter")
SESSION_COLUMNS = ("#", "kind", "role", "placement", "content")


class FencePanel(Vertical):
    """Posts `EditRequested` (add, edit, duplicate) and `DeleteRequested`; `show` refills both tables."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "request('add')", "New fence", id="fences.add", tooltip="Register a new fence kind"),
        Binding("e", "request('edit')", "Edit", id="fences.edit", tooltip="Edit the selected descriptor"),
        Binding(
            "y", "request('duplicate')", "Duplicate", id="fences.duplicate", tooltip="Copy the selected kind"
        ),
        Binding("x", "delete", "Delete", id="fences.delete", tooltip="Unregister the selected kind"),
    ]

    DEFAULT_CSS = """
    FencePanel {
        & > .fence-panel--title { color: $text-muted; text-style: bold; }
        & > .fence-panel--hint { color: $text-muted; }
        & > #fence-descriptors { height: auto; max-height: 12; }
        & > #fence-messages { height: 1fr; }
    }
    """

    class EditRequested(Message):
        """`mode` is add, edit or duplicate; `kind` the selected kind (None for add)."""

        def __init__(self, panel: FencePanel, mode: str, kind: str | None) -> None:
            super().__init__()
            self.panel = panel
            self.mode = mode
            self.kind = kind

        @property
        def control(self) -> FencePanel:
            return self.panel

    class DeleteRequested(Message):
        def __init__(self, panel: FencePanel, kind: str) -> None:
            super().__init__()
            self.panel = panel
            self.kind = kind

        @property
        def control(self) -> FencePanel:
            return self.panel

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.descriptors: DataTable[str] = DataTable(
            id="fence-descriptors", cursor_type="row", zebra_stripes=True
        )
        self.messages: DataTable[str] = DataTable(id="fence-messages", cursor_type="row")

    def compose(self) -> ComposeResult:
        yield Static("FENCES", classes="fence-panel--title")
        yield Static("[n]ew  [e]dit  [y] duplicate  [x] delete", classes="fence-panel--hint", markup=False)
        yield self.descriptors
        yield Static("IN THE SESSION", classes="fence-panel--title")
        yield self.messages

    def on_mount(self) -> None:
        self.descriptors.add_columns(*DESCRIPTOR_COLUMNS)
        self.messages.add_columns(*SESSION_COLUMNS)

    @property
    def selected_kind(self) -> str | None:
        table = self.descriptors
        if not table.row_count:
            return None
        return str(table.get_row_at(table.cursor_row)[0])

    def show(self, registry: FenceRegistry | None, fences: list[tuple[int, AiMessage]]) -> None:
        """The registered descriptors and the session's fence messages (index, message)."""
        keep = self.descriptors.cursor_row
        self.descriptors.clear()
        for d in registry or ():
            share = "" if d.max_budget_fraction is None else f"{d.max_budget_fraction:g}"
            row = (
                d.kind,
                d.llm_role,
                d.placement,
                d.lifetime,
                "yes" if d.must_keep else "",
                share,
                d.formatter or "",
            )
            self.descriptors.add_row(*row, key=d.kind)
        if self.descriptors.row_count:
            self.descriptors.move_cursor(row=min(keep, self.descriptors.row_count - 1))
        self.messages.clear()
        for index, message in fences:
            preview = " ".join(message.content.split())[:60]
            placement = str(message.meta("fencePlacement") or "")
            self.messages.add_row(str(index), message.fence_kind or "?", message.role, placement, preview)

    def action_request(self, mode: str) -> None:
        kind = self.selected_kind
        if mode != "add" and kind is None:
            self.notify("no fence kind selected", severity="warning")
            return
        self.post_message(self.EditRequested(self, mode, kind))

    def action_delete(self) -> None:
        kind = self.selected_kind
        if kind is not None:
            self.post_message(self.DeleteRequested(self, kind))
