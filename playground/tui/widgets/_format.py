"""Number formatting shared by the widgets."""

from __future__ import annotations


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
