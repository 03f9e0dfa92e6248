"""JavaScript value semantics the port must reproduce: string lengths and `String(v)`.

linnkit measures text in UTF-16 code units (`s.length`) and renders values with `String(v)`; these helpers
give the same results in Python so counts and formatted text match the TypeScript build.
"""

from __future__ import annotations

import json
import math
from decimal import Decimal
from typing import Any

# JS `String.prototype.trim` whitespace (WhiteSpace + LineTerminator); Python's `str.strip()` differs
# (it strips U+001C-U+001F and U+0085, and keeps U+FEFF).
JS_WHITESPACE = "\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff"  # noqa: E501


def js_trim(text: str) -> str:
    """`text.trim()` as JavaScript does it."""
    return text.strip(JS_WHITESPACE)


def utf16_len(text: str) -> int:
    """Length in UTF-16 code units, as JS `s.length` (a character outside the BMP counts 2)."""
    if text.isascii():
        return len(text)
    return len(text.encode("utf-16-le", "surrogatepass")) // 2


def utf16_slice(text: str, start: int, end: int | None = None) -> str:
    """`text.slice(start, end)` in UTF-16 code units, as JS cuts strings (may split a surrogate pair)."""
    if text.isascii() or all(ord(c) < 0x10000 for c in text):
        return text[start:end]
    units = text.encode("utf-16-le", "surrogatepass")
    length = len(units) // 2
    first = max(0, length + start) if start < 0 else min(start, length)
    last = length if end is None else (max(0, length + end) if end < 0 else min(end, length))
    return units[2 * first : 2 * max(first, last)].decode("utf-16-le", "surrogatepass")


def js_number(value: float) -> str:
    """`String(n)` for a JS number: `21`, `0.5`, `1e+21`, `NaN`, `Infinity`. An integer JSON wrote beyond
    2^53 is the double JavaScript's `JSON.parse` reads it as (`9007199254740993` is `9007199254740992`)."""
    if isinstance(value, int) and abs(value) <= 2**53:
        return str(value)
    if isinstance(value, int):
        value = _as_double(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text and 1e-6 <= abs(value) < 1e21:  # JS writes these without an exponent
        return format(Decimal(text), "f")
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        text = f"{mantissa}e{sign}{int(exponent.lstrip('+-'))}"
    return text


def _as_double(value: int) -> float:
    """The double JavaScript's `JSON.parse` reads an integer as (Infinity past the largest)."""
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def js_string(value: Any) -> str:
    """`String(v)` as JavaScript computes it for JSON-like values."""
    if isinstance(value, str):
        return value
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return js_number(value)
    if isinstance(value, list | tuple):
        return ",".join("" if item is None else js_string(item) for item in value)
    if isinstance(value, dict):
        return "[object Object]"
    return str(value)


def js_key_order(obj: dict[str, Any]) -> list[str]:
    """Object key order in JavaScript: array-index keys ascending first, then the rest as inserted."""
    indices = [k for k in obj if _is_array_index(k)]
    if not indices:
        return list(obj)
    return sorted(indices, key=int) + [k for k in obj if not _is_array_index(k)]


def _is_array_index(key: str) -> bool:
    return (
        key.isdigit() and key.isascii() and (key == "0" or not key.startswith("0")) and int(key) < 2**32 - 1
    )


# What `json.dumps(text, ensure_ascii=False)` returns for a string, without making an encoder per call.
_json_string = json.encoder.encode_basestring


def js_json(value: Any) -> str:
    """`JSON.stringify(value)` for a value parsed from JSON: compact, JS key order and number format."""
    if isinstance(value, dict):
        parts = (f"{_json_string(k)}:{js_json(value[k])}" for k in js_key_order(value))
        return "{" + ",".join(parts) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(js_json(item) for item in value) + "]"
    if value is None or value is True or value is False:
        return {None: "null", True: "true", False: "false"}[value]
    if isinstance(value, float):
        return "null" if math.isnan(value) or math.isinf(value) else js_number(value)
    if isinstance(value, int):  # past 2^53 the double JSON.parse made: JSON.stringify(1e21) is 1e+21
        return str(value) if abs(value) <= 2**53 else js_json(_as_double(value))
    return _json_string(value) if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def js_to_number(value: Any) -> float:
    """`Number(v)` for a JSON-like value: null 0, booleans 0/1, strings parsed as JavaScript parses them
    (blank 0, `0x1f`, `Infinity`; anything else NaN), arrays and objects through their `String(v)`."""
    if value is None:
        return 0
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int | float):
        return value
    text = js_trim(js_string(value))
    if not text:
        return 0
    if text[:2].lower() in ("0x", "0o", "0b") and text[2:]:
        try:
            return int(text[2:], {"x": 16, "o": 8, "b": 2}[text[1].lower()])
        except ValueError:
            return math.nan
    if text.lstrip("+-") == "Infinity":
        return -math.inf if text.startswith("-") else math.inf
    if any(c.isalpha() and c not in "eE" for c in text) or "_" in text:
        return math.nan  # Python would read `inf`, `nan` and `1_0`; JavaScript does not
    try:
        return float(text)
    except ValueError:
        return math.nan


def js_greater(left: Any, right: Any) -> bool:
    """`left > right` for JSON-like values: two strings compare by UTF-16 code units, anything else as
    numbers (a comparison with NaN is false)."""
    left = js_string(left) if isinstance(left, list | dict) else left
    right = js_string(right) if isinstance(right, list | dict) else right
    if isinstance(left, str) and isinstance(right, str):
        return left.encode("utf-16-be", "surrogatepass") > right.encode("utf-16-be", "surrogatepass")
    a, b = js_to_number(left), js_to_number(right)
    return not (math.isnan(a) or math.isnan(b)) and a > b


def js_truthy(value: Any) -> bool:
    """JavaScript truthiness of a JSON value: empty arrays and objects are true; null, false, 0, NaN and ""
    false."""
    if isinstance(value, list | dict):
        return True
    if isinstance(value, float) and math.isnan(value):
        return False
    return bool(value)
