"""The line at the top: what is open, the defaults profile, the step, and what the playground is doing."""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget


@dataclass(frozen=True, slots=True)
class TopBarState:
    title: str
    messages: int
    defaults: str
    step: int | None
    steps: int
    changed: int
    pinned: bool
    status: str
    status_style: str = "$text-muted"
    copy: str = "zh"  # linnkit's own words; another copy set is named in the bar


class TopBar(Widget):
    """One fixed line; every part keeps its place so the bar never jumps around (and never re-lays out)."""

    DEFAULT_CSS = """
    TopBar {
        dock: top;
        height: 1;
        width: 1fr;
        background: $panel;
        color: $text;
        padding: 0 1;
    }
    """

    state: reactive[TopBarState | None] = reactive(None)
    """What the bar shows."""

    def render(self) -> Content:
        s = self.state
        if s is None:
            return Content("linn-playground")
        where = f"step {s.step}/{s.steps}" if s.step is not None else "no steps: whole session"
        changed = (f"● {s.changed} changed", "$warning") if s.changed else ("policy as loaded", "$text-muted")
        parts: list[str | tuple[str, str]] = [
            ("linn-playground", "bold $accent"),
            f" ─ {s.title} ({s.messages} msgs) ─ defaults: ",
            (s.defaults, "bold"),
            f" ─ {where} ─ ",
            changed,
        ]
        if s.copy != "zh":
            parts += [" ─ ", (f"copy {s.copy}", "bold $accent")]
        if s.pinned:
            parts += [" ─ ", ("A pinned", "bold $secondary")]
        parts += [" ─ ", (s.status, s.status_style)]
        return Content.assemble(*parts)
