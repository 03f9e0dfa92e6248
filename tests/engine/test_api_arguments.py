"""The engine's and the notebook's entry points given arguments of the wrong kind: one TypeError or
ValueError naming the argument (and the item and field), never a Python error from deep inside."""

from __future__ import annotations

import math

import pytest

from engine import AiMessage, build_context, export_session, messages_from, write_atomic
from playground.notebook import Playground

USER = {"id": "u1", "role": "user", "type": "user_input", "content": "hi", "timestamp": 1}


def test_build_context_reads_message_dicts_as_a_session_file_line():
    result = build_context([USER])
    assert [m.id for m in result.messages] == ["u1"]
    assert [w["content"] for w in result.wire] == ["hi"]


@pytest.mark.parametrize(
    ("session", "error", "message"),
    [
        (None, TypeError, "session: expected a Session or a list of messages, not NoneType"),
        ("u1", TypeError, "session: expected a Session or a list of messages, not str"),
        ([USER, 3], TypeError, "session[1]: expected an AiMessage or a message dict, not int"),
        ([{**USER, "role": "robot"}], ValueError, "session[0].role/type: unknown role/type pair"),
        ([{k: v for k, v in USER.items() if k != "id"}], ValueError, "session[0].id: missing"),
    ],
)
def test_build_context_names_the_bad_argument(session, error, message):
    with pytest.raises(error) as raised:
        build_context(session)
    assert str(raised.value).startswith(message)


def test_messages_from_keeps_messages_and_names_the_source():
    message = AiMessage.from_dict(USER)
    assert messages_from([message, USER], "history")[0] is message
    with pytest.raises(TypeError, match=r"^history\[0\]: expected an AiMessage or a message dict, not list$"):
        messages_from([[USER]], "history")


@pytest.mark.parametrize("session", [None, 3])
def test_playground_names_a_session_of_the_wrong_kind(session):
    with pytest.raises(TypeError) as raised:
        Playground(session)
    kind = type(session).__name__
    assert str(raised.value) == f"session: expected a file path, a Session or a list of messages, not {kind}"


def test_export_session_refuses_a_header_that_is_not_a_mapping():
    with pytest.raises(TypeError, match=r"^header: expected a mapping of header keys or None, not list$"):
        export_session([AiMessage.from_dict(USER)], [1, 2], "openai")  # type: ignore[arg-type]


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "otel"])
def test_export_session_refuses_nan_rather_than_writing_invalid_json(fmt):
    with pytest.raises(ValueError, match="NaN or infinity, which JSON cannot write"):
        export_session([AiMessage.from_dict(USER)], {"title": "t", "budget": math.nan}, fmt)


def test_write_atomic_refuses_text_that_is_not_a_string_before_making_a_file(tmp_path):
    target = tmp_path / "out.yaml"
    with pytest.raises(TypeError, match=r"^write_atomic: the text to write must be a str, not NoneType$"):
        write_atomic(target, None)  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
