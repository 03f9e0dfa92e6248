"""The fence descriptors as an editable table: one row per kind, add and delete buttons.

Every edit re-makes the whole `FenceRegistry` from the rows; the registry's own checks (kebab-case
kinds, `maxBudgetFraction` in (0, 1], template fields) decide, and their message is shown under the
table. An empty table means no registry, as an empty fence list does for `build_context`.
"""

from __future__ import annotations

from collections.abc import Callable
from html import escape

import ipywidgets as W

from engine import LIFETIMES, LLM_ROLES, PLACEMENTS, FenceDescriptor, FenceError, FenceRegistry
from playground.app.workspace import Workspace

__all__ = ["COLUMNS", "FenceEditor", "FenceRow"]

COLUMNS = ("kind", "llmRole", "placement", "lifetime", "mustKeep", "maxBudgetFraction", "formatter", "")
_GRID = "150px 90px 190px 100px 80px 150px minmax(160px, 1fr) 40px"


class FenceRow:
    """The widgets of one descriptor."""

    def __init__(self, descriptor: FenceDescriptor, origin: str | None = None) -> None:
        self.origin = origin  # the kind this row had in the workspace (None: a new row)
        narrow = W.Layout(width="auto")
        self.kind = W.Text(descriptor.kind, continuous_update=False, layout=narrow)
        self.llm_role = W.Dropdown(options=LLM_ROLES, value=descriptor.llm_role, layout=narrow)
        self.placement = W.Dropdown(options=PLACEMENTS, value=descriptor.placement, layout=narrow)
        self.lifetime = W.Dropdown(options=LIFETIMES, value=descriptor.lifetime, layout=narrow)
        self.must_keep = W.Checkbox(descriptor.must_keep, indent=False, layout=narrow)
        fraction = "" if descriptor.max_budget_fraction is None else f"{descriptor.max_budget_fraction:g}"
        self.fraction = W.Text(fraction, placeholder="none", continuous_update=False, layout=narrow)
        self.formatter = W.Textarea(  # a template may hold newlines
            descriptor.formatter or "",
            placeholder="<{kind}{attrs}>{content}</{kind}>",
            rows=1,
            continuous_update=False,
            layout=narrow,
        )
        self.delete = W.Button(icon="trash", tooltip="delete this fence kind", layout=narrow)

    @property
    def cells(self) -> list[W.Widget]:
        return [*self.inputs, self.delete]

    @property
    def inputs(self) -> list[W.ValueWidget]:
        return [
            self.kind,
            self.llm_role,
            self.placement,
            self.lifetime,
            self.must_keep,
            self.fraction,
            self.formatter,
        ]

    def close(self) -> None:
        for widget in self.cells:
            for part in (getattr(widget, "style", None), widget.layout):
                if isinstance(part, W.Widget):
                    part.close()
            widget.close()

    def descriptor(self) -> FenceDescriptor:
        """The row as a descriptor; raises FenceError naming the bad field."""
        text = self.fraction.value.strip()
        try:
            fraction = float(text) if text else None
        except ValueError:
            raise FenceError(
                f"maxBudgetFraction: must be a number (got {text!r})", "maxBudgetFraction"
            ) from None
        return FenceDescriptor(
            kind=self.kind.value.strip(),
            llm_role=self.llm_role.value,
            placement=self.placement.value,
            lifetime=self.lifetime.value,
            must_keep=self.must_keep.value,
            max_budget_fraction=fraction,
            formatter=self.formatter.value or None,
        )


class FenceEditor:
    """Edits a workspace's descriptors: each valid state of the rows goes to `workspace.set_fences`
    (which re-places the session fences of an edited kind), then `on_change()` is called."""

    def __init__(self, workspace: Workspace, *, on_change: Callable[[], None] | None = None) -> None:
        self.workspace = workspace
        self.on_change = on_change
        self.rows: list[FenceRow] = []
        self._header: list[W.HTML] = []
        self.grid = W.GridBox(layout=W.Layout(grid_template_columns=_GRID, grid_gap="2px 4px"))
        self.error = W.HTML()
        self.add_button = W.Button(description="add fence", icon="plus", tooltip="register a new fence kind")
        self.add_button.on_click(lambda _b: self.add())
        title = W.HTML("<b>FENCES</b>")
        self.widget = W.VBox([title, self.grid, W.HBox([self.add_button, self.error])])
        for descriptor in workspace.fences or ():
            self._append(descriptor, descriptor.kind)
        self._layout()

    @property
    def registry(self) -> FenceRegistry | None:
        return self.workspace.fences

    def add(self, descriptor: FenceDescriptor | None = None) -> FenceRow:
        """Add a row (a fresh `new-fence-N` user fence by default) and apply."""
        row = self._append(
            descriptor or FenceDescriptor(self._new_kind(), "user", "before-current-user", "turn-only")
        )
        self._layout()
        self._apply()
        return row

    def delete(self, row: FenceRow) -> None:
        self.rows.remove(row)
        self._layout()
        row.close()
        self._apply()

    def sync(self) -> None:
        """Show the workspace's descriptors, without reporting it as an edit."""
        old, self.rows = self.rows, []
        for descriptor in self.workspace.fences or ():
            self._append(descriptor, descriptor.kind)
        self._layout()
        for row in old:
            row.close()
        self.error.value = ""

    def _append(self, descriptor: FenceDescriptor, origin: str | None = None) -> FenceRow:
        row = FenceRow(descriptor, origin)
        for widget in row.inputs:
            widget.observe(lambda _change: self._apply(), "value")
        row.delete.on_click(lambda _b: self.delete(row))
        self.rows.append(row)
        return row

    def _layout(self) -> None:
        if self.rows and not self._header:
            head = W.Layout(overflow="hidden", min_width="0")  # a header cell never runs into the next
            self._header = [W.HTML(f"<b>{name}</b>", layout=head) for name in COLUMNS]
        cells = [cell for row in self.rows for cell in row.cells]
        self.grid.children = [*self._header, *cells] if self.rows else []

    def note(self, text: str) -> None:
        """A note under the table (e.g. that the last edit changed nothing at the shown step)."""
        if not self.error.value.startswith('<span style="color:#dc2626">'):
            self.error.value = f'<span class="lp-muted lp-note">{escape(text)}</span>' if text else ""

    def _new_kind(self) -> str:
        kinds = {row.kind.value for row in self.rows}
        return next(k for n in range(1, len(kinds) + 2) if (k := f"new-fence-{n}") not in kinds)

    def _apply(self) -> None:
        try:
            rows = [(row.origin, row.descriptor()) for row in self.rows]
            self.workspace.set_fences(rows)
        except FenceError as err:
            position = next((i for i, r in enumerate(self.rows) if not _valid(r)), None)
            where = f"row {position + 1}: " if position is not None else ""
            self.error.value = f'<span style="color:#dc2626">{escape(where + str(err))}</span>'
            return
        self.error.value = ""
        for row, (_, descriptor) in zip(self.rows, rows, strict=True):
            row.origin = descriptor.kind
        if self.on_change is not None:
            self.on_change()


def _valid(row: FenceRow) -> bool:
    try:
        FenceRegistry([row.descriptor()])
    except FenceError:
        return False
    return True
