"""Where the tokens go: a stacked bar of `maxTokens` by category, with the budget lines marked."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.geometry import Size
from textual.reactive import reactive
from textual.widget import Widget

from engine.result import CATEGORY_ORDER, TokenAccount
from playground.tui.widgets._format import percent, tokens_delta, tokens_long, tokens_short

LABELS = {"working_memory": "wm", "tool_history": "tools", "reserved": "reserved", "free": "free"}
ALWAYS_SHOWN = ("core", "user", "working_memory", "tool_history", "summary", "reminder")
STYLED = {*CATEGORY_ORDER, "reserved", "free"}
WM_MARK, TRIGGER_MARK, MAX_MARK = "△", "▲", "┃"


@dataclass(frozen=True, slots=True)
class BarSegment:
    """One stacked part of the bar."""

    name: str  # a by_category key, or "reserved" / "free"
    tokens: int
    bar_tokens: int  # what it occupies on the bar (free is never negative there)

    @property
    def label(self) -> str:
        return LABELS.get(self.name, self.name)

    @property
    def component(self) -> str:
        kind = self.name.split(":")[0]
        return "budget-bar--" + (kind.replace("_", "-") if kind in STYLED else "other")

    @property
    def glyph(self) -> str:
        return {"reserved": "▒", "free": "░"}.get(self.name, "█")


def category_names(keys: set[str]) -> list[str]:
    """The categories in stacking order: `CATEGORY_ORDER`, fence kinds in place of `fence`, others last."""
    names: list[str] = []
    for cat in CATEGORY_ORDER:
        if cat == "fence":
            names += sorted(k for k in keys if k == "fence" or k.startswith("fence:"))
        elif cat in keys or cat in ALWAYS_SHOWN:
            names.append(cat)
    return names + sorted(k for k in keys if k not in names)


def bar_segments(account: TokenAccount, also: set[str] | frozenset[str] = frozenset()) -> list[BarSegment]:
    """Categories (and the `also` ones, at 0), then the response reserve, then what is left of maxTokens."""
    tokens = account.by_category
    parts = [BarSegment(n, tokens.get(n, 0), tokens.get(n, 0)) for n in category_names({*tokens, *also})]
    parts.append(BarSegment("reserved", account.reserved_for_response, account.reserved_for_response))
    left = account.max_tokens - sum(p.bar_tokens for p in parts)
    parts.append(BarSegment("free", account.free, max(0, left)))
    return parts


def apportion(values: list[int], width: int, scale: int) -> list[int]:
    """Cells per value on a bar of `width` cells worth `scale` tokens (largest remainder, exact total)."""
    if scale <= 0 or width <= 0:
        return [0] * len(values)
    exact = [v * width / scale for v in values]
    cells = [int(e) for e in exact]
    target = min(width, round(sum(exact)))
    by_remainder = sorted(range(len(values)), key=lambda i: (cells[i] - exact[i], i))
    for i in by_remainder[: max(0, target - sum(cells))]:
        cells[i] += 1
    return cells


class BudgetBar(Widget):
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

    account: reactive[TokenAccount | None] = reactive(None, layout=True)
    """The build's budget numbers."""
    pinned: reactive[TokenAccount | None] = reactive(None, layout=True)
    """A pinned build's numbers (A), drawn thin under the main bar."""

    def show(self, account: TokenAccount | None, pinned: TokenAccount | None = None) -> None:
        """Draw `account` (and `pinned` for comparison)."""
        self.account, self.pinned = account, pinned

    def watch_account(self, account: TokenAccount | None) -> None:
        self.set_class(account is not None and account.over_budget, "-over")

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.render().split())

    def _scale(self) -> int:
        accounts = [a for a in (self.account, self.pinned) if a is not None]
        return max(sum(s.bar_tokens for s in bar_segments(a)) for a in accounts)

    def _bar(self, account: TokenAccount, width: int, glyph: str | None = None) -> Text:
        segments = bar_segments(account)
        cells = apportion([s.bar_tokens for s in segments], width, self._scale())
        text = Text()
        for seg, n in zip(segments, cells, strict=True):
            text.append((glyph or seg.glyph) * n, self.get_component_rich_style(seg.component))
        return text

    def _markers(self, account: TokenAccount, width: int) -> Text:
        line = [" "] * width
        marks = [(account.wm_budget, WM_MARK), (account.trigger_tokens, TRIGGER_MARK)]
        if self._scale() > account.max_tokens:
            marks.append((account.max_tokens, MAX_MARK))
        for tokens, mark in marks:
            line[min(width - 1, int(tokens * width / self._scale()))] = mark
        return Text("".join(line), self.get_component_rich_style("budget-bar--marker"))

    def _legend(self, account: TokenAccount) -> list[Text]:
        pinned = {s.name: s.tokens for s in bar_segments(self.pinned)} if self.pinned else None
        segments = bar_segments(account, also=set(self.pinned.by_category) if self.pinned else set())
        pad = max(len(s.label) for s in segments)
        lines = []
        for seg in segments:
            line = Text(seg.glyph + " ", self.get_component_rich_style(seg.component))
            line.append(f"{seg.label:<{pad}} {tokens_short(seg.tokens):>5}")
            if pinned is not None and pinned.get(seg.name, 0) != seg.tokens:
                line.append(f" {tokens_delta(seg.tokens - pinned.get(seg.name, 0)):>5}")
            lines.append(line)
        return lines

    def _footer(self, account: TokenAccount) -> list[Text]:
        marker = self.get_component_rich_style("budget-bar--marker")
        summary = f"  summary budget {tokens_short(account.summary_budget)}"
        share = percent(account.final_tokens, account.total_budget)
        used = f"used {tokens_long(account.final_tokens)} · {share}"
        return [
            Text(f"{WM_MARK} wm budget {tokens_short(account.wm_budget)}", marker),
            Text(f"{TRIGGER_MARK} trigger   {tokens_short(account.trigger_tokens)}", marker),
            Text(summary, marker),
            Text(
                used + (" !" if account.over_budget else ""),
                self.get_component_rich_style("budget-bar--used"),
            ),
        ]

    def render(self) -> Text:
        account = self.account
        if account is None:
            return Text("no build yet")
        width = max(1, self.content_size.width)
        title = f"maxTokens {tokens_long(account.max_tokens)}" + (" · ▀ A" if self.pinned else "")
        lines = [Text(title), self._bar(account, width)]
        if self.pinned is not None:
            lines.append(self._bar(self.pinned, width, glyph="▀"))
        lines += [self._markers(account, width), *self._legend(account), *self._footer(account)]
        return Text("\n", no_wrap=True, overflow="crop").join(lines)
