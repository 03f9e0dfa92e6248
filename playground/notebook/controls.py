"""The policy controls as ipywidgets, built from `engine.policy.policy_controls()`.

One row per field: a label (● when it differs from the defaults), the input, a reset button and a
line for problems. Numbers get sliders over the field's suggested range, enums dropdowns, booleans
checkboxes, lists multi-selects (or tags for open lists), lists of objects a JSON text box. An optional
field has a "set" checkbox; unticked, the engine uses its documented unset value. Nothing here knows a
field by name: a new policy field shows up with no change.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from html import escape
from typing import Any

import ipywidgets as W

from engine import ContextPolicy, ControlSpec, get_value, policy_controls, policy_groups
from playground.workspace import Workspace

__all__ = ["FieldEditor", "PolicyControls"]

Path = tuple[str, ...]
Read = Callable[[W.ValueWidget], Any]
Write = Callable[[W.ValueWidget, Any], None]
CHANGED = "●"
_LABEL = W.Layout(width="190px", min_width="190px")
_INPUT = W.Layout(width="260px")


class FieldEditor:
    """The row of one policy field; `value` is the policy value it shows (None: an unset optional)."""

    def __init__(self, spec: ControlSpec, value: Any) -> None:
        self.spec = spec
        self.input, self._read, self._write = _input_for(spec)
        self.toggle = W.Checkbox(description="set", indent=False, layout=W.Layout(width="48px"))
        self.label = W.HTML(layout=_LABEL)
        self.error = W.HTML()
        self.reset_button = W.Button(
            icon="undo", tooltip=f"reset {spec.key} to its default", layout=W.Layout(width="34px")
        )
        parts = [self.label, self.toggle, self.input] if spec.optional else [self.label, self.input]
        self.row = W.HBox([*parts, self.reset_button, self.error])
        self.row.add_class("lp-field")
        self.row.add_class("lp-field-" + "-".join(spec.path))  # a stable hook for browser tests
        self.show(value)

    @property
    def value(self) -> Any:
        """The field's value as the row shows it; raises ValueError for text that does not parse."""
        if self.spec.optional and not self.toggle.value:
            return None
        return self._read(self.input)

    def show(self, value: Any) -> None:
        """Put `value` in the widgets (an optional's unset value shows greyed)."""
        if self.spec.optional:
            self.toggle.value = value is not None
            self.input.disabled = value is None
        shown = value if value is not None else _fallback(self.spec)
        if shown is not None:
            self._write(self.input, shown)

    def mark(self, changed: bool, problems: list[str]) -> None:
        dot = f'<b style="color:#7c3aed">{CHANGED}</b> ' if changed else ""
        tip = escape(self.spec.help, quote=True)
        self.label.value = f'<span title="{tip}">{dot}{escape(self.spec.label)}</span>'
        self.error.value = "".join(f'<span style="color:#dc2626">{escape(p)}</span>' for p in problems)

    def observe(self, callback: Callable[[], None]) -> None:
        self.input.observe(lambda _change: callback(), "value")
        if self.spec.optional:
            self.toggle.observe(lambda _change: callback(), "value")


class PolicyControls:
    """An accordion of the 12 policy groups over a `Workspace`: each edit is `workspace.edit(path, value)`
    (or a reset), each field shows the workspace's error for it; `on_change()` follows a changed policy."""

    def __init__(self, workspace: Workspace, *, on_change: Callable[[], None] | None = None) -> None:
        self.workspace = workspace
        self.on_change = on_change
        self.editors: dict[Path, FieldEditor] = {}
        self._syncing = False
        self._unparsed: dict[Path, str] = {}  # JSON text that does not parse, by field
        self.groups = policy_groups()
        self.accordion = W.Accordion(children=[self._group_box(g.key) for g in self.groups])
        self.reset_all_button = W.Button(
            description="reset all", icon="undo", tooltip="every field to default"
        )
        self.reset_all_button.on_click(lambda _b: self._apply(workspace.reset_all()))
        self.title = W.HTML()
        self.widget = W.VBox([W.HBox([self.title, self.reset_all_button]), self.accordion])
        self._refresh()

    @property
    def policy(self) -> ContextPolicy:
        return self.workspace.policy

    def input(self, path: Path) -> W.ValueWidget:
        """The input widget of a field (camelCase path), e.g. to set `.value` from code or a test."""
        return self.editors[path].input

    def sync(self) -> None:
        """Show the workspace's policy in every row without reporting it as an edit."""
        self._syncing = True
        try:
            for path, editor in self.editors.items():
                editor.show(get_value(self.policy, path))
        finally:
            self._syncing = False
        self._unparsed.clear()
        self._refresh()

    def _group_box(self, group: str) -> W.VBox:
        rows = []
        for spec in policy_controls():
            if spec.group != group:
                continue
            editor = FieldEditor(spec, get_value(self.policy, spec.path))
            editor.observe(lambda path=spec.path: self._edited(path))
            editor.reset_button.on_click(
                lambda _b, path=spec.path: self._apply(self.workspace.reset_field(path))
            )
            self.editors[spec.path] = editor
            rows.append(editor.row)
        button = W.Button(description=f"reset {group}", icon="undo", layout=W.Layout(width="auto"))
        button.on_click(lambda _b: self._apply(self.workspace.reset_group(group)))
        return W.VBox([*rows, button])

    def _edited(self, path: Path) -> None:
        if self._syncing:
            return
        try:
            value = self.editors[path].value
        except ValueError as err:  # JSON text that does not parse
            self._unparsed[path] = f"not valid JSON: {err}"
            self._refresh()
            return
        self._unparsed.pop(path, None)
        changed = self.workspace.edit(path, value)
        self._refresh()
        if changed and self.on_change is not None:
            self.on_change()

    def _apply(self, changed: bool) -> None:
        self.sync()
        if changed and self.on_change is not None:
            self.on_change()

    def _refresh(self) -> None:
        ws = self.workspace
        changed = ws.changed()
        errors = {**ws.errors(), **self._unparsed}
        for path, editor in self.editors.items():
            editor.mark(path in changed, [errors[path]] if path in errors else [])
        self.accordion.titles = tuple(
            f"{g.label} {CHANGED}" if any(p[0] == g.key for p in changed) else g.label for g in self.groups
        )
        note = f"({CHANGED} = changed from {ws.defaults})"
        self.title.value = f"<b>POLICY</b> <span style='color:#64748b'>{escape(note)}</span>"


# -- one input per kind ------------------------------------------------------------------------------


def _fallback(spec: ControlSpec) -> Any:
    """What an unset optional shows: the engine's unset value, else the default, else the range start."""
    for value in (spec.unset_value, spec.default):
        if value is not None:
            return value
    return spec.ui_min if spec.ui_min is not None else spec.minimum


def _input_for(spec: ControlSpec) -> tuple[W.ValueWidget, Read, Write]:
    kind = spec.kind.removeprefix("optional-")
    if kind in ("int", "float"):
        return _number(spec, kind)
    if kind == "bool":
        return W.Checkbox(indent=False, layout=_INPUT), _plain_read, _plain_write
    if kind == "enum":
        return W.Dropdown(options=list(spec.choices), layout=_INPUT), _plain_read, _plain_write
    if kind == "str":
        return W.Text(continuous_update=False, layout=_INPUT), _plain_read, _plain_write
    if kind == "list":
        return _list(spec)
    return (
        W.Textarea(continuous_update=False, layout=W.Layout(width="260px", height="70px")),
        _json_read,
        _json_write,
    )


def _plain_read(widget: W.ValueWidget) -> Any:
    return widget.value


def _plain_write(widget: W.ValueWidget, value: Any) -> None:
    widget.value = value


def _number(spec: ControlSpec, kind: str) -> tuple[W.ValueWidget, Read, Write]:
    if spec.ui_min is None or spec.ui_max is None:
        box = W.IntText if kind == "int" else W.FloatText
        return box(continuous_update=False, layout=_INPUT), _plain_read, _plain_write
    if kind == "int":
        widget: W.ValueWidget = W.IntSlider(
            min=int(spec.ui_min), max=int(spec.ui_max), step=int(spec.step or 1), continuous_update=False
        )
    else:
        digits = max(0, len(f"{spec.step or 0.01:g}".partition(".")[2]))
        widget = W.FloatSlider(
            min=spec.ui_min,
            max=spec.ui_max,
            step=spec.step or 0.01,
            readout_format=f".{digits}f",
            continuous_update=False,
        )
    widget.layout = _INPUT
    return widget, _plain_read, _slider_write


def _slider_write(widget: W.ValueWidget, value: Any) -> None:
    """Widen the slider when a loaded value lies outside the suggested range (sliders clamp)."""
    if value > widget.max:
        widget.max = value
    if value < widget.min:
        widget.min = value
    widget.value = value


def _list(spec: ControlSpec) -> tuple[W.ValueWidget, Read, Write]:
    options = list(spec.choices or spec.suggestions)
    if not options:
        return W.TagsInput(allow_duplicates=False, layout=_INPUT), _list_read, _list_write
    rows = min(len(options), 6)
    return W.SelectMultiple(options=options, rows=rows, layout=_INPUT), _list_read, _select_write


def _list_read(widget: W.ValueWidget) -> list[Any]:
    return list(widget.value)


def _list_write(widget: W.ValueWidget, value: Any) -> None:
    widget.value = list(value)


def _select_write(widget: W.ValueWidget, value: Any) -> None:
    extra = [v for v in value if v not in widget.options]
    if extra:
        widget.options = [*widget.options, *extra]
    widget.value = tuple(value)


def _json_read(widget: W.ValueWidget) -> Any:
    return json.loads(widget.value or "[]")


def _json_write(widget: W.ValueWidget, value: Any) -> None:
    widget.value = json.dumps(value, ensure_ascii=False, indent=1)
