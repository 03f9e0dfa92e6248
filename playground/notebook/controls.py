"""The policy controls as ipywidgets, built from `engine.policy.policy_controls()`.

One row per field: a label (● when it differs from the defaults), the input, a reset button and a
line for problems and notes. Numbers get sliders over the field's suggested range (logarithmic when the
control description says `scale: log`, as for `budget.maxTokens`), enums dropdowns, booleans checkboxes,
lists multi-selects (or tags for open lists), lists of objects a JSON text box. An optional field has a
"set" checkbox; unticked, the engine uses its documented unset value. Nothing here knows a field by
name: a new policy field shows up with no change.

A group's rows are made when the group is first opened (or a field of it is asked for): a closed group
costs no widget models. Rows share their Layout objects for the same reason.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from html import escape
from typing import Any

import ipywidgets as W

from engine import ContextPolicy, ControlSpec, get_value, policy_controls, policy_groups
from playground.app.workspace import Workspace

__all__ = ["FieldEditor", "PolicyControls"]

Path = tuple[str, ...]
Read = Callable[[W.ValueWidget], Any]
Write = Callable[[W.ValueWidget, Any], None]
CHANGED = "●"


class Layouts:
    """The Layout models the rows of one PolicyControls share (one model each, not one per widget;
    not module-wide, so closing one Playground leaves the others whole)."""

    def __init__(self) -> None:
        self.label = W.Layout(width="170px", min_width="170px")
        self.input = W.Layout(width="260px", min_width="200px")
        self.slider = W.Layout(width="320px", min_width="260px")
        self.toggle = W.Layout(width="48px", min_width="48px")
        self.reset = W.Layout(width="34px", min_width="34px")
        self.row = W.Layout(flex_flow="row wrap", align_items="center")
        self.note = W.Layout(min_width="0", flex="1 1 160px")


class FieldEditor:
    """The row of one policy field; `value` is the policy value it shows (None: an unset optional)."""

    def __init__(self, spec: ControlSpec, value: Any, ly: Layouts | None = None) -> None:
        ly = ly or Layouts()
        self.spec = spec
        self.input, self._read, self._write = _input_for(spec, ly)
        self.toggle = W.Checkbox(description="set", indent=False, layout=ly.toggle) if spec.optional else None
        self.label = W.HTML(layout=ly.label)
        self.error = W.HTML(layout=ly.note)  # problems, and a note when an edit changed nothing
        self.note = ""
        self.reset_button = W.Button(icon="undo", tooltip=f"reset {spec.key} to its default", layout=ly.reset)
        parts = [self.label, self.input] if self.toggle is None else [self.label, self.toggle, self.input]
        self.row = W.HBox([*parts, self.reset_button, self.error], layout=ly.row)
        self.row.add_class("lp-field")
        self.row.add_class("lp-field-" + "-".join(spec.path))  # a stable hook for browser tests
        self.show(value)

    @property
    def value(self) -> Any:
        """The field's value as the row shows it; raises ValueError for text that does not parse."""
        if self.toggle is not None and not self.toggle.value:
            return None
        return self._read(self.input)

    def show(self, value: Any) -> None:
        """Put `value` in the widgets (an optional's unset value shows greyed)."""
        if self.toggle is not None:
            self.toggle.value = value is not None
            self.input.disabled = value is None
        shown = value if value is not None else _fallback(self.spec)
        if shown is not None:
            self._write(self.input, shown)

    def mark(self, changed: bool, problems: list[str]) -> None:
        dot = f'<b style="color:#7c3aed">{CHANGED}</b> ' if changed else ""
        tip = escape(self.spec.help, quote=True)
        self.label.value = (
            f'<span title="{tip}" style="white-space:normal">{dot}{escape(self.spec.label)}</span>'
        )
        errors = "".join(f'<span class="lp-error">{escape(p)}</span>' for p in problems)
        note = (
            f'<span class="lp-muted lp-note">{escape(self.note)}</span>' if self.note and not errors else ""
        )
        self.error.value = errors + note

    def observe(self, callback: Callable[[], None]) -> None:
        self.input.observe(lambda _change: callback(), "value")
        if self.toggle is not None:
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
        self.layouts = Layouts()
        self.boxes = [W.VBox() for _ in self.groups]
        self.last_edited: Path | None = None  # the field of the last edit (None: a reset)
        self.accordion = W.Accordion(children=self.boxes)
        self.accordion.observe(lambda change: self._open(change["new"]), "selected_index")
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
        return self.editor(path).input

    def editor(self, path: Path) -> FieldEditor:
        """The row of a field, made (with its group's) on first use."""
        if path not in self.editors:
            group = next((i for i, g in enumerate(self.groups) if g.key == path[0]), None)
            if group is not None:
                self._open(group)
        return self.editors[path]

    def note(self, path: Path | None, text: str) -> None:
        """Show `text` beside a field (and clear the other fields' notes); None clears every note."""
        for key, editor in self.editors.items():
            editor.note = text if key == path else ""
        self._refresh()

    def _open(self, index: int | None) -> None:
        if index is None or self.boxes[index].children:
            return
        self.boxes[index].children = self._group_rows(self.groups[index].key)
        self._refresh()

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

    def _group_rows(self, group: str) -> list[W.Widget]:
        rows: list[W.Widget] = []
        for spec in policy_controls():
            if spec.group != group:
                continue
            editor = FieldEditor(spec, get_value(self.policy, spec.path), self.layouts)
            editor.observe(lambda path=spec.path: self._edited(path))
            editor.reset_button.on_click(
                lambda _b, path=spec.path: self._apply(self.workspace.reset_field(path))
            )
            self.editors[spec.path] = editor
            rows.append(editor.row)
        button = W.Button(description=f"reset {group}", icon="undo", layout=W.Layout(width="auto"))
        button.on_click(lambda _b: self._apply(self.workspace.reset_group(group)))
        return [*rows, button]

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
        if isinstance(self.editors[path].input, W.FloatLogSlider) and self.editors[path].input.value != value:
            self._show_rounded(path, value)  # the readout shows what the policy got
        self.last_edited = path
        changed = self.workspace.edit(path, value)
        self._refresh()
        if changed and self.on_change is not None:
            self.on_change()

    def _show_rounded(self, path: Path, value: Any) -> None:
        self._syncing = True
        try:
            self.editors[path].show(value)
        finally:
            self._syncing = False

    def _apply(self, changed: bool) -> None:
        self.last_edited = None
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
            g.label
            + (f" {CHANGED}" if any(p[0] == g.key for p in changed) else "")
            + (" ⚠" if any(p[0] == g.key for p in errors) else "")
            for g in self.groups
        )
        note = f"({CHANGED} = changed from {ws.defaults})"
        self.title.value = f"<b>POLICY</b> <span class='lp-muted'>{escape(note)}</span>"


# -- one input per kind ------------------------------------------------------------------------------


def _fallback(spec: ControlSpec) -> Any:
    """What an unset optional shows: the engine's unset value, else the default, else the range start."""
    for value in (spec.unset_value, spec.default):
        if value is not None:
            return value
    return spec.ui_min if spec.ui_min is not None else spec.minimum


def _input_for(spec: ControlSpec, ly: Layouts) -> tuple[W.ValueWidget, Read, Write]:
    kind = spec.kind.removeprefix("optional-")
    if kind in ("int", "float"):
        return _number(spec, kind, ly)
    if kind == "bool":
        return W.Checkbox(indent=False, layout=ly.input), _plain_read, _plain_write
    if kind == "enum":
        return W.Dropdown(options=list(spec.choices), layout=ly.input), _plain_read, _plain_write
    if kind == "str":
        return W.Text(continuous_update=False, layout=ly.input), _plain_read, _plain_write
    if kind == "list":
        return _list(spec, ly)
    return (
        W.Textarea(continuous_update=False, layout=W.Layout(width="260px", height="70px")),
        _json_read,
        _json_write,
    )


def _plain_read(widget: W.ValueWidget) -> Any:
    return widget.value


def _plain_write(widget: W.ValueWidget, value: Any) -> None:
    widget.value = value


def _number(spec: ControlSpec, kind: str, ly: Layouts) -> tuple[W.ValueWidget, Read, Write]:
    if spec.ui_min is None or spec.ui_max is None:
        box = W.IntText if kind == "int" else W.FloatText
        return box(continuous_update=False, layout=ly.input), _plain_read, _plain_write
    if spec.log_scale and spec.ui_min > 0:
        return _log_slider(spec, kind, ly)
    if kind == "int":
        widget: W.ValueWidget = W.IntSlider(
            min=int(spec.ui_min),
            max=int(spec.ui_max),
            step=int(spec.step or 1),
            continuous_update=False,
            layout=ly.slider,
        )
    else:
        digits = max(0, len(f"{spec.step or 0.01:g}".partition(".")[2]))
        widget = W.FloatSlider(
            min=spec.ui_min,
            max=spec.ui_max,
            step=spec.step or 0.01,
            readout_format=f".{digits}f",
            continuous_update=False,
            layout=ly.slider,
        )
    return widget, _plain_read, _slider_write


def _log_slider(spec: ControlSpec, kind: str, ly: Layouts) -> tuple[W.ValueWidget, Read, Write]:
    """A slider whose track is logarithmic over the suggested range; a key moves the value by about 7 %,
    and values are rounded to two significant digits (12 000, not 12 022.6; 7 200, not 7 183), so the
    small end of the track keeps its resolution where the field's linear step (1 000) would not."""
    low, high = math.log10(spec.ui_min), math.log10(spec.ui_max)
    widget = W.FloatLogSlider(
        min=low, max=high, step=(high - low) / 100, base=10, readout_format=",.0f",
        continuous_update=False, layout=ly.slider,
    )  # fmt: skip
    finest = 1 if kind == "int" else 0.01

    def read(w: W.ValueWidget) -> Any:
        grain = max(10 ** (math.floor(math.log10(w.value)) - 1), finest) if w.value > 0 else finest
        value = round(w.value / grain) * grain
        return int(value) if kind == "int" else value

    def write(w: W.ValueWidget, value: Any) -> None:
        exponent = math.log10(max(value, 1e-12))
        if exponent > w.max:
            w.max = exponent
        if exponent < w.min:
            w.min = exponent
        w.value = value

    return widget, read, write


def _slider_write(widget: W.ValueWidget, value: Any) -> None:
    """Widen the slider when a loaded value lies outside the suggested range (sliders clamp)."""
    if value > widget.max:
        widget.max = value
    if value < widget.min:
        widget.min = value
    widget.value = value


def _list(spec: ControlSpec, ly: Layouts) -> tuple[W.ValueWidget, Read, Write]:
    options = list(spec.choices or spec.suggestions)
    if not options:
        return W.TagsInput(allow_duplicates=False, layout=ly.input), _list_read, _list_write
    rows = min(len(options), 6)
    return W.SelectMultiple(options=options, rows=rows, layout=ly.input), _list_read, _select_write


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
