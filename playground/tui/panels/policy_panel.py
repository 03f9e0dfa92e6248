"""The policy on the left: the 12 groups as collapsibles, every field editable."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Collapsible, Static
from textual.widgets.collapsible import CollapsibleTitle

from engine import (
    ContextPolicy,
    ControlSpec,
    GroupSpec,
    get_value,
    policy_controls,
    policy_groups,
    value_range,
)
from playground.tui.panels.field_controls import NumberControl
from playground.tui.panels.policy_field import CHANGED_MARK, PolicyField

Path = tuple[str, ...]
OPEN_GROUPS = frozenset({"budget"})
ERROR_MARK = "✗"
FENCE_KIND_FIELDS = frozenset({("mustKeep", "alwaysKeepFenceKinds")})


class GroupTitle(CollapsibleTitle):
    """A group's title, as wide as the panel, so that its marks change without re-laying out the screen
    (a layout pass repaints every widget: ~50 ms on a long session)."""

    DEFAULT_CSS = "GroupTitle { width: 1fr; }"

    def _update_label(self) -> None:
        symbol = self.collapsed_symbol if self.collapsed else self.expanded_symbol
        self.update(Content.assemble(symbol, " ", self.label), layout=False)


class PolicyGroup(Collapsible):
    """One policy group; its title counts the changed fields. Fields are made on first expansion."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "R",
            "reset_group",
            "Reset group",
            id="policy.reset_group",
            tooltip="Put every field of this group back at its default",
        ),
    ]

    class ResetRequested(Message):
        def __init__(self, group: PolicyGroup) -> None:
            super().__init__()
            self.group = group
            self.key = group.spec.key

        @property
        def control(self) -> PolicyGroup:
            return self.group

    def __init__(self, spec: GroupSpec, specs: list[ControlSpec], fields: list[PolicyField] | None) -> None:
        super().__init__(*(fields or []), title=spec.label, collapsed=fields is None, id="group-" + spec.key)
        made = self._title  # Collapsible's own title, replaced by one that updates in place
        self._title = GroupTitle(
            label=spec.label,
            collapsed_symbol=made.collapsed_symbol,
            expanded_symbol=made.expanded_symbol,
            collapsed=made.collapsed,
        )
        self.spec = spec
        self.specs = specs
        self.fields: list[PolicyField] = fields or []
        self.tooltip = spec.help

    def populate(self, fields: list[PolicyField]) -> None:
        self.fields = fields
        self.query_one(Collapsible.Contents).mount_all(fields)

    def show_marks(self, changed: int, errors: int) -> None:
        """`Budget ● 2 ✗ 1`: how many fields differ from the defaults, how many the engine refuses."""
        marks = (f" {CHANGED_MARK} {changed}" if changed else "") + (
            f" {ERROR_MARK} {errors}" if errors else ""
        )
        self.title = self.spec.label + marks

    def action_reset_group(self) -> None:
        self.post_message(self.ResetRequested(self))


@dataclass(slots=True)
class PanelState:
    policy: ContextPolicy
    changed: set[Path] = field(default_factory=set)
    errors: Mapping[Path, str] = field(default_factory=dict)
    fence_kinds: list[str] = field(default_factory=list)


class PolicyPanel(VerticalScroll):
    """Call `sync` after every policy change; fields post `PolicyField.Edited` / `ResetRequested`.

    A group's fields are only made when it is first opened: sixty fields cost a second of start-up.
    """

    DEFAULT_CSS = """
    PolicyPanel {
        & > .policy-panel--title { color: $text-muted; text-style: bold; }
        & Collapsible { padding: 0; border-top: none; }
        & Collapsible Contents { padding: 0 0 0 1; }
    }
    """

    def __init__(self, policy: ContextPolicy, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.state = PanelState(policy)
        self.fields: dict[Path, PolicyField] = {}
        by_group: dict[str, list[ControlSpec]] = {}
        for spec in policy_controls():
            by_group.setdefault(spec.group, []).append(spec)
        self.groups = [
            PolicyGroup(
                g, by_group[g.key], self._make_fields(by_group[g.key]) if g.key in OPEN_GROUPS else None
            )
            for g in policy_groups()
        ]

    def compose(self) -> ComposeResult:
        yield Static(f"POLICY  ({CHANGED_MARK} = changed)", classes="policy-panel--title")
        yield from self.groups

    def _make_fields(self, specs: list[ControlSpec]) -> list[PolicyField]:
        made = []
        for spec in specs:
            made.append(made_field := PolicyField(spec, get_value(self.state.policy, spec.path)))
            self.fields[spec.path] = made_field
            self._show_field(made_field)
        return made

    def _show_field(self, made: PolicyField) -> None:
        path, state = made.spec.path, self.state
        if path in FENCE_KIND_FIELDS:
            made.set_choices(state.fence_kinds)
        value = get_value(state.policy, path)
        made.show(value, path in state.changed, state.errors.get(path))
        if isinstance(made.input, NumberControl):
            made.input.limit(value_range(state.policy, path), value)

    def _populate(self, group: PolicyGroup) -> None:
        if not group.fields:
            group.populate(self._make_fields(group.specs))

    @on(Collapsible.Expanded)
    def _expanded(self, event: Collapsible.Expanded) -> None:
        if isinstance(event.collapsible, PolicyGroup):
            self._populate(event.collapsible)

    def sync(
        self,
        policy: ContextPolicy,
        changed: set[Path],
        errors: Mapping[Path, str],
        fence_kinds: list[str],
    ) -> None:
        """Show `policy`, mark `changed` fields and show `errors` (by field path)."""
        self.state = PanelState(policy, changed, errors, fence_kinds)
        for made in self.fields.values():
            self._show_field(made)
        for group in self.groups:
            paths = [spec.path for spec in group.specs]
            group.show_marks(sum(p in changed for p in paths), sum(p in errors for p in paths))

    def refused(self, path: Path, value: object, error: str) -> None:
        if path in self.fields:
            self.fields[path].refused(value, error)

    def focus_field(self, path: Path) -> PolicyField:
        """Open the field's group, focus its control and scroll to it."""
        group = next(g for g in self.groups if any(spec.path == path for spec in g.specs))
        self._populate(group)
        group.collapsed = False
        made = self.fields[path]
        self.call_after_refresh(made.input.focus)
        self.call_after_refresh(self.scroll_to_widget, made, animate=False)
        return made
