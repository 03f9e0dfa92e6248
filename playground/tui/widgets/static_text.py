"""Set a `Static`'s text only when it changed.

Many panes are given their text again on every build, mostly the same text. `Static.update` asks for a
layout pass of the whole screen (which repaints every widget: 30-50 ms on a long session), so an unchanged
text is not set again.
"""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


def update_if_changed(widget: Static, content: str | Content, *, layout: bool = True) -> bool:
    """`widget.update(content, layout=layout)` unless it already shows that text; True when it updated."""
    if str(widget.content) == str(content):
        return False
    widget.update(content, layout=layout)
    return True
