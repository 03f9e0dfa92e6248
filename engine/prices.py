"""Model prices for cost figures (`engine.cost`, `engine.recorded`): USD per million tokens.

A model's prices: `input` (a prompt sent without caching), `cached_input` (the part a provider's prompt
cache serves), `cache_write` (written to the 5-minute cache; Anthropic bills 1.25x input, OpenAI and Google
no premium, so there it equals `input`), `cache_write_1h` (written to the 1-hour cache; Anthropic: 2x input)
and `output`. Some models cost more per token once a prompt passes a size (Claude Sonnet 4.5 above 200k,
GPT-5.4 above 272k): `tiers` holds those prices, the whole call priced at the tier its prompt reaches.

Where prices come from: `genai-prices` (pydantic's maintained price data, bundled with the package, read
offline: no update is ever fetched), looked up by the model a call names; the snapshot's version says when
it was made. It knows the models a real transcript names (`claude-opus-4-6`, `claude-haiku-4-5-20251001`,
`gpt-5-codex`, `gemini-2.5-pro`, …), their 1-hour cache-write prices and their long-context tiers, which
a hand-kept table kept missing. A YAML file adds or overrides rows (`load_price_table`), read with
`yaml.safe_load` through `engine.safe_input`; its rows win over the catalogue:

    date: 2026-12-03
    models:
      claude-sonnet-4-5: {input: 3, cachedInput: 0.3, cacheWrite: 3.75, cacheWrite1h: 6, output: 15}

A model id picks the file's row whose name is the longest prefix of the id that ends at a separator, so
`claude-sonnet-4-5-20250929` finds `claude-sonnet-4-5` and never `claude-sonnet-4`; the catalogue does its
own matching (dated ids, provider prefixes).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from decimal import Decimal
from functools import lru_cache
from importlib.metadata import version
from pathlib import Path
from typing import Any

from engine.safe_input import InputError, decode_utf8, load_yaml, read_regular_file

__all__ = [
    "BUILTIN_PRICES",
    "CATALOGUE",
    "DEFAULT_PRICE_MODEL",
    "FEATURED_MODELS",
    "Price",
    "PriceTable",
    "catalogue_price",
    "load_price_table",
    "resolve_price",
]

MAX_PRICE_FILE_BYTES = 1_000_000
_SEPARATORS = "-_.:/@ "
CATALOGUE = f"genai-prices {version('genai-prices')}"
# provider names of `engine.usage` → genai-prices provider ids
_PROVIDER_IDS = {"anthropic": "anthropic", "openai": "openai", "gemini": "google"}


@dataclass(frozen=True, slots=True)
class Price:
    """One model's prices, USD per million tokens, and where they were published."""

    model: str
    input: float
    cached_input: float
    cache_write: float
    output: float
    source: str = ""
    cache_write_1h: float | None = None  # None: as `cache_write`
    tiers: tuple[tuple[int, Price], ...] = field(default=(), compare=False)  # (prompt above, prices)

    def at(self, prompt_tokens: int) -> Price:
        """The prices a call with a prompt of this size pays (a tier, once the prompt passes its start)."""
        chosen = self
        for start, tier in self.tiers:
            if prompt_tokens > start:
                chosen = tier
        return chosen

    def cost(
        self, *, cached: int = 0, written: int = 0, uncached: int = 0, output: int = 0, written_1h: int = 0
    ) -> float:
        """USD for one call's counts: read from the cache, written to it (5-minute and 1-hour), sent
        uncached, generated; at the tier the call's prompt reaches."""
        p = self.at(cached + written + uncached + written_1h)
        one_hour = p.cache_write if p.cache_write_1h is None else p.cache_write_1h
        total = (
            cached * p.cached_input
            + written * p.cache_write
            + written_1h * one_hour
            + uncached * p.input
            + output * p.output
        )
        return total / 1_000_000


@dataclass(frozen=True, slots=True)
class PriceTable:
    """Rows of a price file over the catalogue (`use_catalogue`)."""

    date: str  # when the prices were read from their sources
    prices: dict[str, Price] = field(default_factory=dict)
    note: str = ""
    use_catalogue: bool = True

    def find(self, model_id: str | None, provider: str | None = None) -> Price | None:
        """The row for a model id (exact, else the longest prefix ending at a separator), else the
        catalogue's price for it, else None."""
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
        if best is None and self.use_catalogue:
            return catalogue_price(wanted, provider)
        return best

    def describe(self) -> str:
        """Where the prices come from, for a reader: the catalogue, a price file's rows, or both."""
        if not self.prices:
            return CATALOGUE if self.use_catalogue else "no prices"
        rows = f"price file of {self.date}" if self.date else "price file"
        return f"{rows} over {CATALOGUE}" if self.use_catalogue else rows

    def names(self) -> list[str]:
        """The rows, and the featured models of the catalogue: the choices a front end offers."""
        featured = FEATURED_MODELS if self.use_catalogue else ()
        return sorted(set(self.prices) | set(featured))

    def merged(self, other: PriceTable) -> PriceTable:
        """These rows with `other`'s over them (added or replaced by name); `other`'s date."""
        rows = {**self.prices, **other.prices}
        return PriceTable(other.date, rows, other.note or self.note, self.use_catalogue)


def _decimal(value: Any) -> tuple[float, tuple[tuple[int, float], ...]] | None:
    """A genai-prices price (a Decimal, or tiered: a base and (start, price) tiers) as floats."""
    if value is None:
        return None
    if isinstance(value, Decimal | int | float):
        return float(value), ()
    return float(value.base), tuple((int(t.start), float(t.price)) for t in value.tiers)


def _from_catalogue(model: str, prices: Any, source: str) -> Price | None:
    read = {name: _decimal(getattr(prices, f"{name}_mtok", None))
            for name in ("input", "cache_read", "cache_write", "cache_write_1h", "output")}  # fmt: skip
    if read["input"] is None or read["output"] is None:
        return None
    starts = sorted({start for value in read.values() if value for start, _ in value[1]})

    def at(name: str, start: int | None, fallback: float) -> float:
        value = read[name]
        if value is None:
            return fallback
        chosen = value[0]
        for tier_start, price in value[1]:
            if start is not None and start >= tier_start:
                chosen = price
        return chosen

    def price(start: int | None) -> Price:
        base = at("input", start, 0.0)
        write = at("cache_write", start, base)
        return Price(model, base, at("cache_read", start, base), write, at("output", start, 0.0), source,
                     at("cache_write_1h", start, write))  # fmt: skip

    return replace(price(None), tiers=tuple((start, price(start)) for start in starts))


@lru_cache(maxsize=256)
def catalogue_price(model_id: str, provider: str | None = None, day: str | None = None) -> Price | None:
    """genai-prices' price for a model (`provider` an `engine.usage` provider name, as a hint), on `day`
    (ISO date; today when None), or None when it does not know the model."""
    from genai_prices.data_snapshot import get_snapshot  # its data loads on first use

    snapshot = get_snapshot()
    hint = _PROVIDER_IDS.get(provider or "")
    try:
        found, model = snapshot.find_provider_model(model_id, None, hint, None)
    except LookupError:
        if hint is None:
            return None
        try:
            found, model = snapshot.find_provider_model(model_id, None, None, None)
        except LookupError:
            return None
    when = datetime.fromisoformat(day).replace(tzinfo=UTC) if day else datetime.now(UTC)
    prices = model.get_prices(when)
    return _from_catalogue(model.id, prices, f"{CATALOGUE}: {found.id}/{model.id}")


# The choices a front end lists (the price row to cycle through); any other id still finds its price.
FEATURED_MODELS = (
    "claude-sonnet-4-5",
    "claude-sonnet-4",
    "claude-opus-4-6",
    "claude-opus-4-5",
    "claude-opus-4-1",
    "claude-haiku-4-5",
    "gpt-5.5",
    "gpt-5.4",
    "gpt-5.4-mini",
    "gpt-5",
    "gpt-4.1",
    "gemini-2.5-pro",
    "gemini-2.5-flash",
    "deepseek-chat",
)
BUILTIN_PRICES = PriceTable(CATALOGUE, note="genai-prices' bundled data, read offline")
DEFAULT_PRICE_MODEL = "claude-sonnet-4-5"  # when neither the session header nor the user names a model

_FIELDS = {
    "input": "input",
    "cachedInput": "cached_input",
    "cacheWrite": "cache_write",
    "cacheWrite1h": "cache_write_1h",
    "output": "output",
}


# USD per million tokens: far above any model's, and low enough that a cost over a billion tokens stays a
# finite number (1e308 made every cost Infinity, which no JSON reader takes)
MAX_PRICE = 1_000_000


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
    note = str(data.get("note", ""))
    table = PriceTable(str(date), {row.model: row for row in rows}, note, use_catalogue=base is not None)
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
        if key == "cacheWrite1h" and value is None:
            value = row.get("cacheWrite", row.get("input"))
        if value is None:
            raise InputError(source, "missing: every row gives it (USD per million tokens)",
                             line=line, field=f"{where}.{key}")  # fmt: skip
        if (
            isinstance(value, bool)
            or not isinstance(value, (int, float))
            or not math.isfinite(value)
            or not 0 <= value <= MAX_PRICE
        ):
            raise InputError(source, f"a price is a number from 0 to {MAX_PRICE:,} (USD per million tokens)",
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
        return None, f"no price for {chosen!r} in {table.describe()}"
    price = table.find(DEFAULT_PRICE_MODEL)
    return price, f"{DEFAULT_PRICE_MODEL} (default: the session names no priced model)"
