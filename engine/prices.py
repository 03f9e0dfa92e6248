"""Model prices for the cost estimate of a replay (`engine.cost`): USD per million tokens.

Four prices a model: `input` (a prompt sent without caching), `cached_input` (the part a provider's
prompt cache serves), `cache_write` (the part written to the cache; Anthropic bills it at 1.25× input for
the 5-minute cache, OpenAI and DeepSeek bill no premium, so there it equals `input`) and `output`.

The built-in table states its date and where each row was published. Prices change: a YAML file overrides
or adds rows (`load_price_table`), read with `yaml.safe_load` through `engine.safe_input`:

    date: 2026-12-03
    models:
      claude-sonnet-4-5: {input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15, source: https://...}

A model id picks the row whose name is the longest prefix of the id that ends at a separator, so
`claude-sonnet-4-5-20250929` finds `claude-sonnet-4-5` and never `claude-sonnet-4`.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from engine.safe_input import InputError, decode_utf8, load_yaml, read_regular_file

__all__ = [
    "BUILTIN_PRICES",
    "DEFAULT_PRICE_MODEL",
    "Price",
    "PriceTable",
    "load_price_table",
    "resolve_price",
]

MAX_PRICE_FILE_BYTES = 1_000_000
_SEPARATORS = "-_.:/@ "


@dataclass(frozen=True, slots=True)
class Price:
    """One model's prices, USD per million tokens, and where they were published."""

    model: str
    input: float
    cached_input: float
    cache_write: float
    output: float
    source: str = ""

    def cost(self, *, cached: int = 0, written: int = 0, uncached: int = 0, output: int = 0) -> float:
        """USD for token counts: read from the cache, written to it, sent uncached, generated."""
        total = (
            cached * self.cached_input
            + written * self.cache_write
            + uncached * self.input
            + output * self.output
        )
        return total / 1_000_000


@dataclass(frozen=True, slots=True)
class PriceTable:
    date: str  # when the prices were read from their sources
    prices: dict[str, Price] = field(default_factory=dict)
    note: str = ""

    def find(self, model_id: str | None) -> Price | None:
        """The row for a model id (exact, else the longest prefix ending at a separator), or None."""
        if not model_id:
            return None
        wanted = model_id.strip().lower()
        if wanted in self.prices:
            return self.prices[wanted]
        best = None
        for name, price in self.prices.items():
            if wanted.startswith(name) and wanted[len(name)] in _SEPARATORS:
                if best is None or len(name) > len(best.model):
                    best = price
        return best

    def names(self) -> list[str]:
        return sorted(self.prices)

    def merged(self, other: PriceTable) -> PriceTable:
        """These rows with `other`'s over them (added or replaced by name); `other`'s date."""
        return PriceTable(other.date, {**self.prices, **other.prices}, other.note or self.note)


def _table(date: str, rows: Iterable[Price], note: str = "") -> PriceTable:
    return PriceTable(date, {row.model: row for row in rows}, note)


_ANTHROPIC = "https://platform.claude.com/docs/en/about-claude/pricing"
_ANTHROPIC_SONNET_55 = "https://platform.claude.com/docs/en/models/sonnet-5-5/overview"
_OPENAI = "https://developers.openai.com/api/docs/pricing (as quoted by tokenmix.ai, verified 2026-06-04)"
_OPENAI_41 = "github/docs data/tables/copilot/models-and-pricing.yml (OpenAI rows)"
_DEEPSEEK = "https://api-docs.deepseek.com/quick_start/pricing-details-usd (page of 2025-02)"

# Read 2026-12-03 from stored copies of the pages named in each row's source.
BUILTIN_PRICES = _table(
    "2026-12-03",
    [
        Price("claude-sonnet-4-5", 3.00, 0.30, 3.75, 15.00, _ANTHROPIC),
        Price("claude-sonnet-4", 3.00, 0.30, 3.75, 15.00, _ANTHROPIC),
        Price("claude-sonnet-5-5", 2.00, 0.20, 2.50, 10.00, _ANTHROPIC_SONNET_55),
        Price("claude-opus-4-5", 5.00, 0.50, 6.25, 25.00, _ANTHROPIC),
        Price("claude-opus-4-1", 15.00, 1.50, 18.75, 75.00, _ANTHROPIC),
        Price("claude-haiku-4-5", 1.00, 0.10, 1.25, 5.00, _ANTHROPIC),
        Price("gpt-5.5", 5.00, 0.50, 5.00, 30.00, _OPENAI),
        Price("gpt-5.4", 2.50, 0.25, 2.50, 15.00, _OPENAI),
        Price("gpt-5.4-mini", 0.75, 0.075, 0.75, 4.50, _OPENAI),
        Price("gpt-4.1", 2.00, 0.50, 2.00, 8.00, _OPENAI_41),
        Price("deepseek-chat", 0.27, 0.07, 0.27, 1.10, _DEEPSEEK),
    ],
    note="Anthropic: 5-minute cache writes (1.25x input); OpenAI and DeepSeek charge no cache-write premium",
)
DEFAULT_PRICE_MODEL = "claude-sonnet-4-5"  # when neither the session header nor the user names a model

_FIELDS = {"input": "input", "cachedInput": "cached_input", "cacheWrite": "cache_write", "output": "output"}


def load_price_table(path: str | Path, base: PriceTable | None = BUILTIN_PRICES) -> PriceTable:
    """A price file's rows over `base` (the built-in table; None: the file alone). Raises `InputError`
    naming file, line and field."""
    source = str(path)
    document = load_yaml(decode_utf8(read_regular_file(path, max_bytes=MAX_PRICE_FILE_BYTES), source), source)
    data = document.data
    if not isinstance(data, Mapping) or not isinstance(data.get("models"), Mapping):
        raise InputError(source, "a price file is a mapping with `models:` (model name → prices)")
    rows = []
    for name, row in data["models"].items():
        line = document.line_of(("models", name))
        rows.append(_row(str(name), row, source, line))
    date = data.get("date", "")
    table = PriceTable(str(date), {row.model: row for row in rows}, str(data.get("note", "")))
    return base.merged(table) if base is not None else table


def _row(name: str, row: Any, source: str, line: int | None) -> Price:
    where = f"models.{name}"
    if not isinstance(row, Mapping):
        raise InputError(source, "expected a mapping of prices", line=line, field=where)
    unknown = sorted(set(row) - set(_FIELDS) - {"source"})
    if unknown:
        raise InputError(source, f"unknown key {unknown[0]!r} (known: {', '.join(_FIELDS)}, source)",
                         line=line, field=where)  # fmt: skip
    values: dict[str, float] = {}
    for key, attr in _FIELDS.items():
        value = row.get(key)
        if key == "cacheWrite" and value is None:
            value = row.get("input")  # no write premium unless one is given
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or value < 0
        ):
            raise InputError(source, "a price is a number ≥ 0 (USD per million tokens)",
                             line=line, field=f"{where}.{key}")  # fmt: skip
        values[attr] = float(value)
    return replace(Price(name.lower(), 0, 0, 0, 0, str(row.get("source", ""))), **values)


def resolve_price(
    table: PriceTable, header_model: str | None, chosen: str | None = None
) -> tuple[Price | None, str]:
    """The row a session is priced with, and why: the header's `modelId` when the table has it, else the
    user's choice (`--model`, the UI), else `DEFAULT_PRICE_MODEL`. None (and the reason) when unpriced."""
    for model, why in ((header_model, "the session's modelId"), (chosen, "the chosen model")):
        price = table.find(model)
        if price is not None:
            return price, f"{price.model} ({why})"
    if chosen:
        return None, f"no price for {chosen!r} in the table of {table.date}"
    price = table.find(DEFAULT_PRICE_MODEL)
    return price, f"{DEFAULT_PRICE_MODEL} (default: the session names no priced model)"
