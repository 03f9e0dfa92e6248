"""Where the tokens go: a stacked bar of `maxTokens` by category, with the budget lines marked."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive

from engine import TokenAccount
from playground.app.views import (
    BarSegment,
    apportion,
    bar_segments,
    percent,
    tokens_delta,
    tokens_long,
    tokens_short,
)
from playground.tui.widgets.text_lines import TextLines

WM_MARK, TRIGGER_MARK, MAX_MARK = "△", "▲", "┃"


def _component(segment: BarSegment) -> str:
    return "budget-bar--" + segment.style.replace("_", "-")


class BudgetBar(TextLines):
    """Renders a `TokenAccount`; a pinned one (A) is drawn as a thin bar underneath for comparison."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "budget-bar--core",
        "budget-bar--user",
        "budget-bar--fence",
        "budget-bar--working-memory",
        "budget-bar--tool-history",
        "budget-bar--summary",
        "budget-bar--reminder",
        "budget-bar--reserved",
        "budget-bar--free",
        "budget-bar--other",
        "budget-bar--marker",
        "budget-bar--used",
    }
    """One class per category (`budget-bar--<category>`), plus the markers and the `used` line."""

    DEFAULT_CSS = """
    BudgetBar {
        height: auto;
        & > .budget-bar--core { color: $primary; }
        & > .budget-bar--user { color: $secondary; }
        & > .budget-bar--fence { color: $accent; }
        & > .budget-bar--working-memory { color: $success; }
        & > .budget-bar--tool-history { color: $warning; }
        & > .budget-bar--summary { color: $primary-lighten-3; }
        & > .budget-bar--reminder { color: $error-lighten-2; }
        & > .budget-bar--reserved { color: $text-muted; }
        & > .budget-bar--free { color: $text-disabled; }
        & > .budget-bar--other { color: $foreground-darken-1; }
        & > .budget-bar--marker { color: $foreground; }
        & > .budget-bar--used { color: $text; }
        &.-over > .budget-bar--used { color: $error; text-style: bold; }
    }
    """

    account: reactive[TokenAccount | None] = reactive(None)
    """The build's budget numbers."""
    pinned: reactive[TokenAccount | None] = reactive(None)
    """A pinned build's numbers (A), drawn thin under the main bar."""

    def show(self, account: TokenAccount | None, pinned: TokenAccount | None = None) -> None:
        """Draw `account` (and `pinned` for comparison); the screen is re-laid out only when the bar's
        number of lines changes (a layout pass repaints every widget)."""
        lines = self._line_count()
        self.account, self.pinned = account, pinned
        if self._line_count() != lines:
            self.refresh(layout=True)

    def watch_account(self, account: TokenAccount | None) -> None:
        self.set_class(account is not None and account.over_budget, "-over")

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return self._line_count()

    def _line_count(self) -> int:
        """The lines `render` makes: title, bar, (pinned bar,) markers, legend, four footer lines."""
        account = self.account
        if account is None:
            return 1
        also = set(self.pinned.by_category) if self.pinned else set()
        return 3 + (self.pinned is not None) + len(bar_segments(account, also=also)) + 4

    def _scale(self) -> int:
        accounts = [a for a in (self.account, self.pinned) if a is not None]
        return max(sum(s.bar_tokens for s in bar_segments(a)) for a in accounts)

    def _bar(self, account: TokenAccount, width: int, glyph: str | None = None) -> Text:
        segments = bar_segments(account)
        cells = apportion([s.bar_tokens for s in segments], width, self._scale())
        text = Text()
        for seg, n in zip(segments, cells, strict=True):
            text.append((glyph or seg.glyph) * n, self.component_style(_component(seg)))
        return text

    def _markers(self, account: TokenAccount, width: int) -> Text:
        line = [" "] * width
        marks = [(account.wm_budget, WM_MARK), (account.trigger_tokens, TRIGGER_MARK)]
        if self._scale() > account.max_tokens:
            marks.append((account.max_tokens, MAX_MARK))
        for tokens, mark in marks:
            line[min(width - 1, int(tokens * width / self._scale()))] = mark
        return Text("".join(line), self.component_style("budget-bar--marker"))

    def _legend(self, account: TokenAccount) -> list[Text]:
        pinned = {s.name: s.tokens for s in bar_segments(self.pinned)} if self.pinned else None
        segments = bar_segments(account, also=set(self.pinned.by_category) if self.pinned else set())
        pad = max(len(s.label) for s in segments)
        lines = []
        for seg in segments:
            line = Text(seg.glyph + " ", self.component_style(_component(seg)))
            line.append(f"{seg.label:<{pad}} {tokens_short(seg.tokens):>5}")
            if pinned is not None and pinned.get(seg.name, 0) != seg.tokens:
                line.append(f" {tokens_delta(seg.tokens - pinned.get(seg.name, 0)):>5}")
            lines.append(line)
        return lines

    def _footer(self, account: TokenAccount) -> list[Text]:
        marker = self.component_style("budget-bar--marker")
        summary = f"  summary budget {tokens_short(account.summary_budget)}"
        share = percent(account.final_tokens, account.total_budget)
        used = f"used {tokens_long(account.final_tokens)} · {share}"
        return [
            Text(f"{WM_MARK} wm budget {tokens_short(account.wm_budget)}", marker),
            Text(f"{TRIGGER_MARK} trigger   {tokens_short(account.trigger_tokens)}", marker),
            Text(summary, marker),
            Text(
                used + (" !" if account.over_budget else ""),
                self.component_style("budget-bar--used"),
            ),
        ]

    def text_lines(self) -> list[Text]:
        account = self.account
        if account is None:
            return [Text("no build yet")]
        width = max(1, self.content_size.width)
        title = f"maxTokens {tokens_long(account.max_tokens)}" + (" · ▀ A" if self.pinned else "")
        lines = [Text(title), self._bar(account, width)]
        if self.pinned is not None:
            lines.append(self._bar(self.pinned, width, glyph="▀"))
        return [*lines, self._markers(account, width), *self._legend(account), *self._footer(account)]
