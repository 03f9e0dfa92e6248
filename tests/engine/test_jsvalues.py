"""JavaScript value semantics: UTF-16 lengths and String(v)."""

from __future__ import annotations

import math

import pytest

from engine.jsvalues import js_json, js_number, js_string, utf16_len


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


def test_js_json_matches_json_stringify():
    from engine.jsvalues import js_json, js_key_order

    value = {"b": 1, "2": 2, "a": [1.0, 0.5, 1e-05, 1e21, 'x"y', "中"], "1": None, "01": True}
    # JSON.stringify: array-index keys first (ascending), whole floats without ".0", no exponent above 1e-6
    assert js_json(value) == '{"1":null,"2":2,"b":1,"a":[1,0.5,0.00001,1e+21,"x\\"y","中"],"01":true}'
    assert js_key_order({"z": 0, "10": 0, "9": 0, "-1": 0}) == ["9", "10", "z", "-1"]


def test_compressed_tool_text_uses_javascript_serialisation():
    from engine.preprocess.tool_history import _format_args

    args = {"limit": 10.0, "2": "b", "path": "a", "skip": None}
    assert _format_args(args) == '2="b", limit=10, path="a"'
    assert _format_args({"skip": None}) == ""


def test_utf16_slice_cuts_like_javascript():
    from engine.jsvalues import utf16_slice

    assert utf16_slice("a😀b", 0, 2) == "a\ud83d"  # half a surrogate pair, as 'a😀b'.slice(0, 2)
    assert utf16_slice("a😀b", -2) == "\ude00b"
    assert utf16_slice("a😀b", 1, 3) == "😀"
    assert utf16_slice("plain", -3) == "ain"


def test_text_summary_counts_utf16_units():
    from engine.tool_summary import summarize_output

    text = "😀" * 300  # 300 characters, 600 UTF-16 units: over the 400 limit in linnkit
    assert summarize_output(text).startswith("返回了600字符的文本")


def test_number_and_greater_follow_javascript():
    from engine.jsvalues import js_greater, js_to_number, js_truthy

    given = ("2", " 3 ", "", "0x1A", [5], [], True, None)
    assert [js_to_number(v) for v in given] == [2, 3, 0, 26, 5, 0, 1, 0]
    assert all(math.isnan(js_to_number(v)) for v in ("abc", "inf", "1_0", {}, [1, 2]))
    assert js_greater("2", 1) and not js_greater("10", "9") and not js_greater("abc", -1)
    assert js_greater([2], 1) and not js_greater(1, 1)
    truthy = [js_truthy(v) for v in ([], {}, 0, "", None, math.nan, "0")]
    assert truthy == [True, True, False, False, False, False, True]


def test_an_integer_past_2p53_prints_as_the_double_json_parse_reads():
    assert js_number(2**53) == "9007199254740992"
    assert js_number(2**53 + 1) == "9007199254740992"
    assert js_number(10**22 + 1) == "1e+22"
    assert js_number(-(10**400)) == "-Infinity"


def test_json_of_an_integer_past_2p53_is_that_of_the_double():
    assert js_json({"n": 2**53 + 1, "m": 10**21, "k": 10**400}) == '{"n":9007199254740992,"m":1e+21,"k":null}'
