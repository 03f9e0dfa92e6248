"""JavaScript value semantics: UTF-16 lengths and String(v)."""

from __future__ import annotations

import pytest

from engine.jsvalues import js_string, utf16_len


def test_utf16_len():
    assert utf16_len("") == 0
    assert utf16_len("abc") == 3
    assert utf16_len("你好") == 2
    assert utf16_len("a😀") == 3
    assert utf16_len("\ud800") == 1  # a lone surrogate is one unit, as in JS


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("s", "s"),
        (21, "21"),
        (1.0, "1"),
        (0.5, "0.5"),
        (-2.25, "-2.25"),
        (1e21, "1e+21"),
        (1e-7, "1e-7"),
        (float("nan"), "NaN"),
        (float("-inf"), "-Infinity"),
        (True, "true"),
        (False, "false"),
        (None, "null"),
        ([1, None, "a"], "1,,a"),
        ({"a": 1}, "[object Object]"),
    ],
)
def test_js_string(value, expected):
    assert js_string(value) == expected
