"""The line at the top: what is open, the defaults profile, the step, and what the playground is doing."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class TopBar(Static):
    """`show(...)` redraws it; every part keeps its place so the bar never jumps around."""

    DEFAULT_CSS = """
    TopBar {
        dock: top;
        height: 1;
        background: $panel;
        color: $text;
        padding: 0 1;
    }
    """

    def show(
        self,
        *,
        title: str,
        messages: int,
        defaults: str,
        step: int | None,
        steps: int,
        changed: int,
        pinned: bool,
        status: str,
        status_style: str = "$text-muted",
    ) -> None:
        where = f"step {step}/{steps}" if step is not None else "no steps: whole session"
        parts: list[str | tuple[str, str]] = [
            ("linn-playground", "bold $accent"),
            f" ─ {title} ({messages} msgs) ─ defaults: ",
            (defaults, "bold"),
            f" ─ {where} ─ ",
            (
                f"● {changed} changed" if changed else "policy as loaded",
                "$warning" if changed else "$text-muted",
            ),
        ]
        if pinned:
            parts += [" ─ ", ("A pinned", "bold $secondary")]
        parts += [" ─ ", (status, status_style)]
        self.update(Content.assemble(*parts))
