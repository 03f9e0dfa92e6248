"""Pure view models of a build: what both front ends show, derived once from `BuildResult`.

No UI import: the TUI's widgets and the notebook's HTML only draw these rows and strings.
- numbers: `tokens_short`, `tokens_long`, `tokens_delta`, `percent`;
- the budget: `bar_segments` (one category order, `category_names`) and `apportion` for cell widths;
- the wire: `wire_rows` (cards, and dropped messages where they stood: a decision that is not kept),
  `anthropic_rows` for the Anthropic shape;
- the step series: `StepSample`; a report's rows, `ReportStep` (`steps_of` a replay), and `ReportView`.
A decision's explanation is `playground.app.explain.decision_rows`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import accumulate
from operator import attrgetter
from typing import Any, NamedTuple, overload

from engine.messages import AiMessage
from engine.replay import StepBuild
from engine.result import CATEGORY_ORDER, BuildResult, Decision, TokenAccount, WireCard, WireCards


# -- numbers -------------------------------------------------------------------------------------
def tokens_short(n: int | float) -> str:
    """Compact token count: `412`, `1.2k`, `18k`, `1.4M`."""
    n = round(n)
    sign = "-" if n < 0 else ""
    n = abs(n)
    if n < 1000:
        return f"{sign}{n}"
    if n < 9_950:
        return f"{sign}{n / 1000:.1f}k"
    if n < 1_000_000:
        return f"{sign}{n // 1000}k"
    return f"{sign}{n / 1_000_000:.1f}M"


def tokens_long(n: int | float) -> str:
    """Full token count with space thousands separators: `18 412`."""
    return f"{round(n):,}".replace(",", " ")


def percent(part: float, whole: float) -> str:
    """`76.7 %`, or `–` when the whole is zero."""
    if whole <= 0:
        return "–"
    return f"{100 * part / whole:.1f} %"


def tokens_delta(n: int | float) -> str:
    """A signed compact count: `+1.2k`, `-300`, `±0`."""
    if round(n) == 0:
        return "±0"
    return ("+" if n > 0 else "") + tokens_short(n)



CHANGE_SIGNS = {"added": "+", "removed": "−", "changed": "~"}  # a message in a comparison of builds A, B


# -- step series ---------------------------------------------------------------------------------
class StepSample(NamedTuple):
    """One step of the series; `markers` as `engine.replay.StepBuild.markers` (S, C, R, !)."""

    step: int  # 1-based
    final_tokens: int
    total_budget: int
    trigger_tokens: float
    markers: str
    by_category: tuple[tuple[str, int], ...] = ()  # tokens per budget category (`TokenAccount.by_category`)

    @classmethod
    def of(cls, step: int, result: BuildResult, markers: str) -> StepSample:
        tokens = result.tokens
        categories = tuple(tokens.by_category.items())
        return cls(step, tokens.final_tokens, tokens.total_budget, tokens.trigger_tokens, markers, categories)

    @classmethod
    def pending(cls, step: int) -> StepSample:
        """A step the series has not built yet."""
        return cls(step, 0, 0, 0.0, "")


# -- budget ------------------------------------------------------------------------------------
LABELS = {"working_memory": "wm", "tool_history": "tools", "reserved": "reserved", "free": "free"}
ALWAYS_SHOWN = ("core", "user", "working_memory", "tool_history", "summary", "reminder")
STYLED = {*CATEGORY_ORDER, "reserved", "free"}


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
    def style(self) -> str:
        """The colour family: a `CATEGORY_ORDER` entry (fence kinds share "fence"), "reserved",
        "free", or "other"."""
        kind = self.name.split(":")[0]
        return kind if kind in STYLED else "other"

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


# -- wire --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class WireRow:
    """A card (a wire message), a dropped message, or a plain message of another wire shape."""

    kind: str  # "card" | "dropped" | "plain"
    role: str
    type: str
    text: str
    message_id: str | None = None
    tokens: int | None = None
    marks: tuple[str, ...] = ()
    source_ids: tuple[str, ...] = ()
    reason: str = ""
    replaced_by: str | None = None
    reminder: str = ""  # the appended <system-reminder> block, kept apart from `text`

    @property
    def height(self) -> int:
        """Lines the row takes in the list."""
        if self.kind == "dropped":
            return 1
        return 3 if self.reminder else 2


def message_text(message: dict[str, Any]) -> str:
    """Readable text of a chat message: its content, then one `name(arguments)` line per tool call."""
    lines = [content_text(message.get("content"))]
    for call in message.get("tool_calls") or ():
        fn = call.get("function", {})
        lines.append(f"{fn.get('name', '?')}({fn.get('arguments', '')})")
    return "\n".join(line for line in lines if line)


def content_text(content: Any) -> str:
    """Text of a string content or of a list of content blocks (OpenAI parts or Anthropic blocks)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(block_text(b) for b in content)
    return json.dumps(content, ensure_ascii=False)


def block_text(block: Any) -> str:
    if not isinstance(block, dict):
        return str(block)
    kind = block.get("type")
    if kind == "text":
        return str(block.get("text", ""))
    if kind == "tool_use":
        return f"{block.get('name', '?')}({json.dumps(block.get('input', {}), ensure_ascii=False)})"
    if kind == "tool_result":
        return f"[{block.get('tool_use_id', '?')}] {content_text(block.get('content'))}"
    return f"[{kind}]"


def card_row(card: WireCard, reminder: str | None) -> WireRow:
    """The row of `card`; the same row object for a card showing the same content the same way (a rebuild
    or the next step shows mostly what the last one showed, in new wire dicts holding the same content and
    calls: the list then draws those rows from its cache, and making 2,400 rows anew took ~7 ms on the UI
    thread)."""
    message = card.message
    content, calls = message.get("content"), message.get("tool_calls")
    shown_reminder = reminder if "reminder" in card.marks else None
    key = (card.message_id, card.type, card.tokens, card.marks, card.source_ids, shown_reminder,
           message.get("role"), id(content), id(calls))  # fmt: skip
    held = _ROWS.get(key)
    if held is not None and held[0] is content and held[1] is calls:
        return held[2]
    if len(_ROWS) >= _ROWS_LIMIT:
        _ROWS.clear()
    row = _made_row(card, shown_reminder)
    _ROWS[key] = (content, calls, row)  # holds what the ids name: they are not reused while cached
    return row


_ROWS: dict[tuple[Any, ...], tuple[Any, Any, WireRow]] = {}
_INDEX = attrgetter("index")
_ROWS_LIMIT = 20_000


def _made_row(card: WireCard, reminder: str | None) -> WireRow:
    text, apart = message_text(card.message), ""
    if reminder:
        apart = reminder.strip()
        text = text[: -len(reminder)] if text.endswith(reminder) else text
    return WireRow(
        "card",
        str(card.message.get("role", "?")),
        card.type,
        text,
        card.message_id,
        card.tokens,
        card.marks,
        card.source_ids,
        reminder=apart,
    )


def dropped_row(decision: Decision, original: AiMessage | None) -> WireRow:
    return WireRow(
        "dropped",
        decision.role,
        decision.type,
        original.content if original else "",
        decision.message_id,
        decision.tokens,
        reason=decision.reason,
        replaced_by=decision.replaced_by,
    )


def is_dropped(decision: Decision, carried: set[str]) -> bool:
    """The one definition of a dropped row: a session message the build did not keep, or kept only inside
    another message no card says it carries (summarised); `carried` is every card's `source_ids`."""
    return decision.index >= 0 and (not decision.kept or decision.message_id not in carried)


def wire_rows(result: BuildResult, show_dropped: bool = False) -> Sequence[WireRow]:
    """Cards in wire order; with `show_dropped`, each dropped message placed where it stood in the session.
    Without, a `WireRows` of the build's cards when they are made as read (`engine.result.WireCards`)."""
    reminder = result.reminder.appended_text
    if not show_dropped and isinstance(result.cards, WireCards):
        return WireRows(result.cards, reminder)
    cards = sorted(result.cards, key=_INDEX)
    rows = [card_row(c, reminder) for c in cards]
    if not show_dropped:
        return rows
    carried = {source for card in cards for source in card.source_ids}
    originals = {m.id: m for m in result.preprocessed}
    merged: list[WireRow] = []
    emitted = 0
    for decision in sorted((d for d in result.decisions if d.index >= 0), key=lambda d: d.index):
        if is_dropped(decision, carried):
            merged.append(dropped_row(decision, originals.get(decision.message_id)))
        elif decision.wire_index is not None:
            while emitted < len(cards) and cards[emitted].index <= decision.wire_index:
                merged.append(rows[emitted])
                emitted += 1
    return merged + rows[emitted:]


class WireRows(Sequence[WireRow]):
    """The rows of a build's cards, each made when read: a list on screen draws a few dozen rows of a long
    build's thousands. Row k is card k's (`WireCards` are in wire order)."""

    def __init__(self, cards: WireCards, reminder: str | None) -> None:
        self.cards, self._reminder = cards, reminder
        self._rows: dict[int, WireRow] = {}

    @overload
    def __getitem__(self, index: int) -> WireRow: ...
    @overload
    def __getitem__(self, index: slice) -> list[WireRow]: ...
    def __getitem__(self, index: int | slice) -> WireRow | list[WireRow]:
        if isinstance(index, slice):
            return [self[k] for k in range(len(self))[index]]
        position = range(len(self.cards))[index]
        row = self._rows.get(position)
        if row is None:
            row = self._rows[position] = card_row(self.cards[position], self._reminder)
        return row

    def __len__(self) -> int:
        return len(self.cards)

    def __eq__(self, other: object) -> bool:
        """Equal to a list (or another `WireRows`) of the same rows, as a list of them is."""
        if isinstance(other, (list, WireRows)):
            return len(self) == len(other) and list(self) == list(other)
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]  # as a list's

    def position_of(self, message_id: str) -> int | None:
        return self.cards.position_of(message_id)

    def line_starts(self) -> list[int]:
        """Where each row starts in a list of two lines a card (three for the one showing the reminder: the
        last card, when one was appended), and the end."""
        starts = list(range(0, 2 * len(self) + 1, 2))
        if self and self[-1].height != 2:
            starts[-1] = starts[-2] + self[-1].height
        return starts


def line_starts(rows: Sequence[WireRow]) -> list[int]:
    """Where each row starts in a list of the rows' lines, and the end."""
    return rows.line_starts() if isinstance(rows, WireRows) else [0, *accumulate(r.height for r in rows)]


def position_of(rows: Sequence[WireRow], message_id: str) -> int | None:
    """The position of the first row of `message_id`."""
    if isinstance(rows, WireRows):
        return rows.position_of(message_id)
    return next((k for k, row in enumerate(rows) if row.message_id == message_id), None)


def anthropic_rows(payload: dict[str, Any]) -> list[WireRow]:
    """Rows for an Anthropic Messages payload: `{"system": ..., "messages": [...]}`."""
    rows = []
    if payload.get("system"):
        rows.append(WireRow("plain", "system", "system", content_text(payload["system"])))
    for message in payload.get("messages", ()):
        content = message.get("content")
        kinds = (
            [b.get("type", "?") for b in content if isinstance(b, dict)] if isinstance(content, list) else []
        )
        rows.append(
            WireRow(
                "plain",
                message.get("role", "?"),
                ",".join(dict.fromkeys(kinds)) or "text",
                content_text(content),
            )
        )
    return rows


@dataclass(frozen=True, slots=True)
class ReportStep:
    """One replay step as the chart and the step table need it (the build itself is not kept)."""

    step: int
    messages: int
    final_tokens: int
    total_budget: int
    trigger_tokens: float
    markers: str
    reminders: tuple[str, ...]
    carried: int


def steps_of(replayed: Iterable[StepBuild]) -> tuple[list[ReportStep], BuildResult | None]:
    """Reduce a streamed replay to its report rows, keeping only the last step's build."""
    rows: list[ReportStep] = []
    last: BuildResult | None = None
    for built in replayed:
        tokens = built.result.tokens
        rows.append(
            ReportStep(
                built.number,
                built.point.message_count,
                tokens.final_tokens,
                tokens.total_budget,
                tokens.trigger_tokens,
                built.markers,
                built.result.reminder.hit_rule_ids,
                len(built.carried_ids),
            )
        )
        last = built.result
    return rows, last


@dataclass(frozen=True, slots=True)
class ReportView:
    """A teacher's hand-out of one build: with `steps`, the chart of the session's steps (`current_step`
    marked)."""

    result: BuildResult
    title: str
    policy: dict[str, Any]
    steps: tuple[ReportStep, ...] = ()
    current_step: int | None = None
    note: str = ""

