"""Compare two builds (A pinned, B current): which messages the model receives in one and not the other.

Front ends render the `BuildComparison`; nothing here is Textual or ipywidgets.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.result import BuildResult, TokenAccount, WireCard


@dataclass(frozen=True, slots=True)
class MessageDelta:
    """One message kept in A, in B, or in both with a different token count."""

    change: str  # "added" (only in B), "removed" (only in A), "changed" (both, tokens differ)
    message_id: str
    role: str
    type: str
    a_tokens: int | None
    b_tokens: int | None

    @property
    def delta(self) -> int:
        return (self.b_tokens or 0) - (self.a_tokens or 0)


@dataclass(frozen=True, slots=True)
class BuildComparison:
    a: TokenAccount
    b: TokenAccount
    a_messages: int
    b_messages: int
    deltas: tuple[MessageDelta, ...]  # added, then removed, then changed; each in wire order
    category_deltas: dict[str, int]  # B − A per budget category, only the ones that differ

    def of(self, change: str) -> list[MessageDelta]:
        return [d for d in self.deltas if d.change == change]

    @property
    def identical(self) -> bool:
        return not self.deltas and not self.category_deltas and self.a == self.b


def _cards_by_id(result: BuildResult) -> dict[str, WireCard]:
    return {card.message_id: card for card in sorted(result.cards, key=lambda c: c.index)}


def _delta(change: str, card_a: WireCard | None, card_b: WireCard | None) -> MessageDelta:
    card = card_b or card_a
    assert card is not None
    return MessageDelta(
        change,
        card.message_id,
        str(card.message.get("role", "?")),
        card.type,
        card_a.tokens if card_a else None,
        card_b.tokens if card_b else None,
    )


def compare_builds(a: BuildResult, b: BuildResult) -> BuildComparison:
    """What B (the current build) adds, drops and re-counts against A (the pinned one)."""
    cards_a, cards_b = _cards_by_id(a), _cards_by_id(b)
    added = [_delta("added", None, c) for i, c in cards_b.items() if i not in cards_a]
    removed = [_delta("removed", c, None) for i, c in cards_a.items() if i not in cards_b]
    changed = [
        _delta("changed", cards_a[i], c)
        for i, c in cards_b.items()
        if i in cards_a and cards_a[i].tokens != c.tokens
    ]
    categories = a.tokens.by_category.keys() | b.tokens.by_category.keys()
    by_category = {
        name: b.tokens.by_category.get(name, 0) - a.tokens.by_category.get(name, 0)
        for name in sorted(categories)
    }
    return BuildComparison(
        a.tokens,
        b.tokens,
        len(a.cards),
        len(b.cards),
        (*added, *removed, *changed),
        {name: n for name, n in by_category.items() if n},
    )
