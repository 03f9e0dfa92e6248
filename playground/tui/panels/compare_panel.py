"""Build A (pinned) against build B (current): the numbers side by side and the messages that differ."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import DataTable, Static

from playground.app.compare import BuildComparison
from playground.app.views import CHANGE_SIGNS, tokens_delta, tokens_long
from playground.tui.widgets.static_text import update_if_changed

SIGNS = CHANGE_SIGNS
STYLES = {"added": "$success", "removed": "$error", "changed": "$warning"}


def _row(label: str, a: int | float, b: int | float) -> list[str | tuple[str, str]]:
    delta = b - a
    style = "$text-muted" if not delta else ("$success" if delta < 0 else "$warning")
    return [f"\n{label:<16}{tokens_long(a):>10}{tokens_long(b):>10}  ", (tokens_delta(delta), style)]


def summary(comparison: BuildComparison, policy_changes: list[str]) -> Content:
    """The header lines: messages, tokens and budgets of A and B, then the policy fields that differ."""
    a, b = comparison.a, comparison.b
    parts: list[str | tuple[str, str]] = [(f"{'':<16}{'A':>10}{'B':>10}  Δ", "bold")]
    parts += _row("messages", comparison.a_messages, comparison.b_messages)
    parts += _row("tokens", a.final_tokens, b.final_tokens)
    parts += _row("total budget", a.total_budget, b.total_budget)
    parts += _row("wm budget", a.wm_budget, b.wm_budget)
    parts += _row("trigger", a.trigger_tokens, b.trigger_tokens)
    for name, delta in comparison.category_deltas.items():
        parts += _row(f"  {name}", a.by_category.get(name, 0), a.by_category.get(name, 0) + delta)
    counts = {change: len(comparison.of(change)) for change in SIGNS}
    parts.append(
        f"\n\nB adds {counts['added']}, drops {counts['removed']}, re-counts {counts['changed']} message(s)"
    )
    if policy_changes:
        parts += [("\npolicy A → B: ", "bold"), "; ".join(policy_changes)]
    elif comparison.identical:
        parts.append(("\nA and B are the same build", "$text-muted"))
    return Content.assemble(*parts)


UNPINNED = "press a to pin the current build as A"


class ComparePanel(Vertical):
    """`show(comparison, policy_changes)`; `clear()` when nothing is pinned."""

    DEFAULT_CSS = """
    ComparePanel {
        & > .compare--summary { height: auto; padding: 0 1; }
        & > DataTable { height: 1fr; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._summary = Static("press a to pin the current build as A", classes="compare--summary")
        self.table: DataTable[str | Content] = DataTable(cursor_type="row", zebra_stripes=True)

    def compose(self) -> ComposeResult:
        yield self._summary
        yield self.table

    def on_mount(self) -> None:
        self.table.add_columns("", "message", "role", "type", "A tok", "B tok", "Δ")

    def clear(self) -> None:
        if update_if_changed(self._summary, UNPINNED):  # every build comes here
            self.table.clear()

    def show(self, comparison: BuildComparison, policy_changes: list[str]) -> None:
        self._summary.update(summary(comparison, policy_changes))
        self.table.clear()
        for d in comparison.deltas:
            sign = Content.styled(SIGNS[d.change], STYLES[d.change])
            a = "" if d.a_tokens is None else tokens_long(d.a_tokens)
            b = "" if d.b_tokens is None else tokens_long(d.b_tokens)
            self.table.add_row(
                sign, d.message_id, d.role, d.type, a, b, tokens_delta(d.delta), key=d.message_id
            )
