"""Session files: round trip, every kind of bad input, strict mode, atomic and careful saving."""

from __future__ import annotations

import json
import os
import stat

import pytest

from engine.messages import AiMessage
from engine.session import (
    LoadProblem,
    Session,
    SessionHeader,
    SessionLoadError,
    SessionReader,
    SessionSaveError,
    dump_session_text,
    load_session,
    parse_session_text,
    save_session,
)

HEADER = {
    "kind": "linn-session",
    "version": 1,
    "title": "Tool heavy",
    "lesson": "watch the groups",
    "modelId": "gpt-4o",
    "maxSteps": 40,
    "contextPolicy": {"budget": {"maxTokens": 8000}},
    "fences": [
        {"kind": "memory-context", "llmRole": "user", "placement": "after-system", "lifetime": "persisted"}
    ],
    "author": {"name": "someone", "tags": ["x"]},
}
CALL = {
    "id": "c1",
    "type": "function",
    "function": {"name": "search", "arguments": '{"q":"ü"}'},
    "extra_content": {},
}
MESSAGES = [
    {"id": "s", "role": "system", "type": "system_prompt", "content": "You are helpful.", "timestamp": 0},
    {"id": "u1", "role": "user", "type": "user_input", "content": "Grüße 你好 😀 a\u2028b", "timestamp": 1.5},
    {
        "id": "a1",
        "role": "assistant",
        "type": "tool_calls",
        "content": "",
        "timestamp": 2,
        "metadata": {"tool_calls": [CALL]},
    },
    {
        "id": "t1",
        "role": "tool",
        "type": "tool_output",
        "content": "lone \ud800 surrogate",
        "timestamp": 3,
        "metadata": {"tool_call_id": "c1", "custom": {"deep": [1, None, True]}},
        "parentUuid": "p-1",
    },
    {
        "id": "u1",
        "role": "user",
        "type": "user_input",
        "content": "same id again",
        "timestamp": 4,
        "metadata": None,
    },
]


def write_lines(path, objects) -> None:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")


def test_round_trip_keeps_every_field(tmp_path):
    source = tmp_path / "in.jsonl"
    write_lines(source, [HEADER, *MESSAGES])
    session = load_session(source)
    assert [str(p) for p in session.problems] == [
        f'{source}:6: id: duplicate id "u1" (first on line 3); kept'
    ]
    assert session.warnings == session.problems and session.errors == []
    assert [m.id for m in session.messages] == ["s", "u1", "a1", "t1", "u1"]
    assert session.message_lines == [2, 3, 4, 5, 6]
    assert session.header.title == "Tool heavy"
    assert session.header.model_id == "gpt-4o"
    assert session.header.max_steps == 40
    assert session.header.context_policy == {"budget": {"maxTokens": 8000}}
    assert session.header.extra == {"author": {"name": "someone", "tags": ["x"]}}

    saved = save_session(session, tmp_path / "out.jsonl")
    original = [json.loads(line) for line in source.read_text(encoding="utf-8").splitlines()]
    written_text = saved.read_text(encoding="utf-8")
    written = [json.loads(line) for line in written_text.split("\n") if line]
    assert written == original
    assert "Grüße 你好 😀" in written_text  # not \u-escaped
    again = load_session(saved)
    assert [m.to_dict() for m in again.messages] == [m.to_dict() for m in session.messages]
    assert again.header == session.header


def test_text_round_trip_without_header():
    text = "".join(json.dumps(m, ensure_ascii=False) + "\n" for m in MESSAGES[:3])
    session = parse_session_text(text, "mem")
    assert session.header is None and session.problems == [] and session.path is None
    assert [json.loads(x) for x in dump_session_text(session.messages).split("\n") if x] == MESSAGES[:3]


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            "{not json",
            "s.jsonl:2: json: not valid JSON: Expecting property name enclosed in double quotes at column 2",
        ),
        ('{"id": "x", "timestamp": NaN}', "s.jsonl:2: json: not valid JSON: NaN is not valid JSON"),
        ("[1, 2]", "s.jsonl:2: line: expected a JSON object, got an array"),
        ('"text"', "s.jsonl:2: line: expected a JSON object, got a string"),
        ("null", "s.jsonl:2: line: expected a JSON object, got null"),
        (
            '{"id": "x", "role": "assistant", "type": "user_input", "content": "", "timestamp": 0}',
            's.jsonl:2: role/type: unknown role/type pair "assistant"/"user_input"; '
            '"user_input" goes with role user',
        ),
        (
            '{"id": "x", "role": "user", "type": "context_injection", "content": "", "timestamp": 0, "x": 1}',
            None,
        ),
        (
            '{"id": "x", "role": "tool", "type": "thought", "content": "", "timestamp": 0}',
            's.jsonl:2: role/type: unknown role/type pair "tool"/"thought"; '
            '"thought" goes with role assistant',
        ),
        (
            '{"id": "x", "role": "bot", "type": "chat", "content": "", "timestamp": 0}',
            's.jsonl:2: role/type: unknown role/type pair "bot"/"chat"; '
            "roles are system, user, assistant, tool",
        ),
        (
            '{"id": "x", "role": "user", "type": "chat", "content": "", "timestamp": 0}',
            's.jsonl:2: role/type: unknown role/type pair "user"/"chat"; "chat" is not a message type',
        ),
        ('{"id": "x", "type": "user_input", "content": "", "timestamp": 0}', "s.jsonl:2: role: missing"),
        ('{"role": "user", "type": "user_input", "content": "", "timestamp": 0}', "s.jsonl:2: id: missing"),
        (
            '{"id": 7, "role": "user", "type": "user_input", "content": "", "timestamp": 0}',
            "s.jsonl:2: id: must be a non-empty string, got a number",
        ),
        (
            '{"id": "", "role": "user", "type": "user_input", "content": "", "timestamp": 0}',
            "s.jsonl:2: id: must be a non-empty string, got an empty string",
        ),
        (
            '{"id": "x", "role": "user", "type": "user_input", "content": ["a"], "timestamp": 0}',
            "s.jsonl:2: content: must be a string, got an array",
        ),
        (
            '{"id": "x", "role": "user", "type": "user_input", "content": "", "timestamp": "2024-01-01"}',
            "s.jsonl:2: timestamp: must be a number, got a string",
        ),
        (
            '{"id": "x", "role": "user", "type": "user_input", "content": "", "timestamp": true}',
            "s.jsonl:2: timestamp: must be a number, got a boolean",
        ),
        (
            '{"id": "x", "role": "user", "type": "user_input", "content": "", "metadata": "m"}',
            "s.jsonl:2: metadata: must be an object or null, got a string",
        ),
        (
            '{"kind": "linn-session", "version": 1}',
            "s.jsonl:2: kind: a linn-session header is allowed only on the first line; skipped",
        ),
    ],
)
def test_each_bad_line_is_reported_and_skipped(line, expected):
    good = '{"id": "g", "role": "user", "type": "user_input", "content": "ok", "timestamp": 0}'
    other = good.replace('"g"', '"h"')
    session = parse_session_text(f"{good}\n{line}\n{other}\n", "s.jsonl")
    if expected is None:
        assert session.problems == [] and len(session.messages) == 3
        return
    assert [str(p) for p in session.problems] == [expected]
    assert session.problems[0].severity == "error"
    assert [m.id for m in session.messages] == ["g", "h"]


def test_lines_off_the_one_call_path_load_or_fail_as_before():
    """Most lines are read in one scanner call; whitespace around a line, brackets over the depth limit
    (in strings too) and anything else go through `decode_json`, with the same result or message."""
    good = '{"id": "ID", "role": "user", "type": "user_input", "content": "CONTENT", "timestamp": 0}'
    deep = good.replace("ID", "d").replace('"CONTENT"', '""').replace("0}", '0, "metadata": {"x": %s}}')
    text = "\n".join(
        [
            "  " + good.replace("CONTENT", "padded").replace("ID", "a") + " \t",
            good.replace("CONTENT", "[" * 150 + "{" * 10).replace("ID", "b"),
            good.replace("CONTENT", "two") + " " + good,
            deep % ("[" * 98 + "]" * 98),
            deep % ("[" * 99 + "]" * 99),
            good.replace("0}", "1" * 5000 + "}"),
        ]
    )
    session = parse_session_text(text, "f.jsonl")
    assert [str(p) for p in session.problems] == [
        "f.jsonl:3: json: not valid JSON: Extra data at column 86",
        "f.jsonl:5: json: nested deeper than 100 levels",
        "f.jsonl:6: json: number too large: more than 4300 digits",
    ]
    assert [(m.id, m.content) for m in session.messages] == [
        ("a", "padded"),
        ("b", "[" * 150 + "{" * 10),
        ("d", ""),
    ]
    assert session.messages[2].metadata == {"x": json.loads("[" * 98 + "]" * 98)}


def test_every_problem_of_a_line_is_reported():
    session = parse_session_text('{"role": "bot", "content": 5, "metadata": []}', "s.jsonl")
    assert [(p.line, p.field) for p in session.problems] == [
        (1, "id"),
        (1, "type"),
        (1, "content"),
        (1, "metadata"),
    ]
    assert session.messages == []


def test_warnings_load_the_line():
    text = "\n".join(
        [
            '{"id": "a", "role": "user", "type": "user_input"}',
            '{"id": "b", "role": "user", "type": "user_input", "content": null, "timestamp": 0}',
            '{"id": "c", "role": "assistant", "type": "tool_calls", "content": "", "timestamp": 0,'
            ' "metadata": {"tool_calls": {"id": "x"}}}',
            '{"id": "d", "role": "tool", "type": "tool_output", "content": "", "timestamp": 0,'
            ' "metadata": {"tool_call_id": 5}}',
        ]
    )
    session = parse_session_text(text, "w.jsonl")
    assert [str(p) for p in session.problems] == [
        'w.jsonl:1: content: missing; loaded as ""',
        "w.jsonl:1: timestamp: missing; loaded as 0",
        'w.jsonl:2: content: null; loaded as ""',
        "w.jsonl:3: metadata.tool_calls: must be an array, got an object; read as no calls",
        "w.jsonl:4: metadata.tool_call_id: must be a string, got a number",
    ]
    assert {p.severity for p in session.problems} == {"warning"}
    assert [m.id for m in session.messages] == ["a", "b", "c", "d"]


def test_header_problems_are_warnings():
    header = {
        "kind": "linn-session",
        "version": 2,
        "title": 5,
        "maxSteps": 0,
        "contextPolicy": [],
        "fences": [{"kind": "Bad", "llmRole": "user", "placement": "after-system", "lifetime": "persisted"}],
    }
    session = parse_session_text(json.dumps(header), "h.jsonl")
    assert [str(p) for p in session.problems] == [
        "h.jsonl:1: version: expected 1, got 2; read as version 1",
        "h.jsonl:1: title: must be a string, got a number; ignored",
        "h.jsonl:1: maxSteps: must be a positive integer, got 0; ignored",
        "h.jsonl:1: contextPolicy: must be an object, got an array; ignored",
        'h.jsonl:1: fences[0].kind: Fence kind "Bad" must be kebab-case; the fence is left out',
    ]
    assert session.header.to_dict() == header  # kept as written
    assert (session.header.title, session.header.max_steps, session.header.context_policy) == (
        None,
        None,
        None,
    )


def test_blank_lines_bom_and_crlf(tmp_path):
    path = tmp_path / "crlf.jsonl"
    line = '{"id": "a", "role": "user", "type": "user_input", "content": "x", "timestamp": 0}'
    path.write_bytes(
        b"\xef\xbb\xbf" + line.encode() + b"\r\n\r\n   \r\n" + line.replace('"a"', '"b"').encode()
    )
    session = load_session(path)
    assert session.problems == []
    assert [m.id for m in session.messages] == ["a", "b"]
    assert session.message_lines == [1, 4]


def test_strict_raises_on_the_first_error(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(
        '{"id": "a", "role": "user", "type": "user_input", "content": "", "timestamp": 0}\n'
        '{"id": "a", "role": "user", "type": "user_input", "content": "", "timestamp": 0}\n'
        "oops\n[]\n",
        encoding="utf-8",
    )
    with pytest.raises(SessionLoadError) as caught:
        load_session(path, strict=True)
    assert str(caught.value) == f"{path}:3: json: not valid JSON: Expecting value at column 1"
    assert caught.value.problem == LoadProblem(
        str(path), 3, "json", "not valid JSON: Expecting value at column 1"
    )
    assert len(load_session(path).errors) == 2


def test_empty_file(tmp_path):
    for content in ("", "\n \n"):
        path = tmp_path / "empty.jsonl"
        path.write_text(content, encoding="utf-8")
        session = load_session(path)
        assert [str(p) for p in session.problems] == [f"{path}: file: is empty: no header and no messages"]
        assert session.messages == [] and session.header is None
        with pytest.raises(SessionLoadError, match="is empty"):
            load_session(path, strict=True)


def test_missing_file_and_directory(tmp_path):
    with pytest.raises(SessionLoadError) as caught:
        load_session(tmp_path / "nope.jsonl")
    assert str(caught.value) == f"{tmp_path / 'nope.jsonl'}: file: no such file"
    with pytest.raises(SessionLoadError) as caught:
        load_session(tmp_path)
    assert str(caught.value) == f"{tmp_path}: file: is a directory, not a regular file"


def test_invalid_utf8_names_line_and_offset(tmp_path):
    path = tmp_path / "bad.jsonl"
    first = b'{"id": "a", "role": "user", "type": "user_input", "content": "", "timestamp": 0}\n'
    path.write_bytes(first + b'{"id": "b\xff"}\n' + first.replace(b'"a"', b'"c"'))
    session = load_session(path)
    offset = len(first) + 9
    assert [str(p) for p in session.problems] == [
        f"{path}:2: encoding: invalid UTF-8 at byte 9 of the line (file offset {offset})"
    ]
    assert [m.id for m in session.messages] == ["a", "c"]


def test_a_line_over_the_limit_is_skipped_unparsed(tmp_path):
    path = tmp_path / "long.jsonl"
    good = '{"id": "a", "role": "user", "type": "user_input", "content": "", "timestamp": 0}'
    other = good.replace('"a"', '"b"')
    path.write_text(f"{good}\n{'x' * 5000}\n{other}", encoding="utf-8")
    session = load_session(path, max_line_bytes=1000)
    assert [str(p) for p in session.problems] == [
        f"{path}:2: line: too long: 5000 bytes (limit 1000); skipped without parsing"
    ]
    assert [m.id for m in session.messages] == ["a", "b"]
    text_session = parse_session_text(path.read_text(encoding="utf-8"), "t", max_line_bytes=1000)
    assert [str(p) for p in text_session.problems] == [
        "t:2: line: too long: 5000 bytes (limit 1000); skipped without parsing"
    ]


def test_a_50_mb_line(tmp_path):
    path = tmp_path / "huge.jsonl"
    size = 50 * 1024 * 1024
    with path.open("wb") as handle:
        handle.write(b'{"id": "h", "content": "' + b"y" * (size - 26) + b'"}\n')
        handle.write(b'{"id": "a", "role": "user", "type": "user_input", "content": "", "timestamp": 0}\n')
    session = load_session(path)
    assert [str(p) for p in session.problems] == [
        f"{path}:1: line: too long: {size} bytes (limit 20971520); skipped without parsing"
    ]
    assert [m.id for m in session.messages] == ["a"]


def test_save_refuses_the_source_and_existing_files(tmp_path):
    source = tmp_path / "s.jsonl"
    write_lines(source, MESSAGES[:2])
    before = source.read_bytes()
    session = load_session(source)
    with pytest.raises(SessionSaveError) as caught:
        save_session(session, source)
    assert (
        str(caught.value) == f"{source}: refusing to overwrite the session's source file; pass overwrite=True"
    )
    other = tmp_path / "other.jsonl"
    other.write_text("keep me", encoding="utf-8")
    with pytest.raises(SessionSaveError) as caught:
        save_session(session.messages, other)
    assert str(caught.value) == f"{other}: already exists; pass overwrite=True to replace it"
    link = tmp_path / "link.jsonl"
    link.symlink_to(source)
    with pytest.raises(SessionSaveError, match="refusing to overwrite the session's source file"):
        save_session(session, link)
    assert source.read_bytes() == before and other.read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["link.jsonl", "other.jsonl", "s.jsonl"]


def test_save_to_a_new_file_leaves_the_source_alone(tmp_path):
    source = tmp_path / "s.jsonl"
    write_lines(source, MESSAGES[:2])
    before = source.read_bytes(), source.stat().st_mtime_ns
    session = load_session(source)
    edited = Session(
        session.path, session.header, [*session.messages, AiMessage("n", "user", "user_input", "new")]
    )
    target = save_session(edited, tmp_path / "edited.jsonl", header={"title": "edited"})
    assert (source.read_bytes(), source.stat().st_mtime_ns) == before
    lines = target.read_text(encoding="utf-8").split("\n")[:-1]
    assert json.loads(lines[0]) == {"kind": "linn-session", "version": 1, "title": "edited"}
    assert [json.loads(x)["id"] for x in lines[1:]] == ["s", "u1", "n"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["edited.jsonl", "s.jsonl"]


def test_overwrite_replaces_atomically_and_keeps_the_mode(tmp_path):
    source = tmp_path / "s.jsonl"
    write_lines(source, MESSAGES[:2])
    os.chmod(source, 0o640)
    session = load_session(source)
    session.messages.pop()
    save_session(session, source, overwrite=True)
    assert [m.id for m in load_session(source).messages] == ["s"]
    assert stat.S_IMODE(source.stat().st_mode) == 0o640
    assert [p.name for p in tmp_path.iterdir()] == ["s.jsonl"]


def test_a_failed_save_changes_nothing(tmp_path):
    target = tmp_path / "t.jsonl"
    target.write_text("old", encoding="utf-8")
    bad = AiMessage("x", "user", "user_input", "", metadata={"f": {1, 2}})
    with pytest.raises(SessionSaveError, match="message 'x' cannot be written as JSON"):
        save_session([bad], target, overwrite=True)
    with pytest.raises(SessionSaveError, match="is a directory"):
        save_session([], tmp_path)
    assert target.read_text(encoding="utf-8") == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["t.jsonl"]


def test_header_create():
    header = SessionHeader.create(title="T", modelId="m", maxSteps=5, lesson=None, tone="calm")
    assert header.to_dict() == {
        "kind": "linn-session",
        "version": 1,
        "title": "T",
        "modelId": "m",
        "maxSteps": 5,
        "tone": "calm",
    }
    assert header.extra == {"tone": "calm"}
    assert header.fences is None and header.version == 1


def test_a_reader_reads_as_it_is_asked_and_ends_with_the_loaded_session(tmp_path):
    lines = [json.dumps(HEADER), *(json.dumps(m) for m in MESSAGES), "{bad", json.dumps(MESSAGES[0])]
    path = tmp_path / "s.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    reader = SessionReader(path)
    assert reader.session.header is None and reader.session.messages == []
    assert reader.read_line() and reader.session.header.title == "Tool heavy"
    messages = reader.messages()
    first = next(messages)
    assert first.id == MESSAGES[0]["id"] and reader.session.message_lines == [2]  # one line read for it
    assert [m.id for m in messages] == [m["id"] for m in MESSAGES[1:]] + [MESSAGES[0]["id"]]
    assert reader.done and not reader.read_line()
    whole = load_session(path)
    assert reader.session == whole
    reason = "not valid JSON: Expecting property name enclosed in double quotes at column 2"
    assert [str(p) for p in whole.errors] == [f"{path}:{len(MESSAGES) + 2}: json: {reason}"]


def test_a_strict_reader_stops_at_the_first_error_with_the_file_closed(tmp_path):
    path = tmp_path / "s.jsonl"
    path.write_text(json.dumps(MESSAGES[0]) + "\n[1]\n", encoding="utf-8")
    reader = SessionReader(path, strict=True)
    assert reader.read_line()
    with pytest.raises(SessionLoadError, match=r"s\.jsonl:2: line: expected a JSON object, got an array"):
        reader.read_line()
    assert reader.done and not reader.read_line()


def test_a_long_session_holds_one_string_per_name(tmp_path):
    """The names every message repeats (role, type, tool names, the metadata's and the calls' keys) are one
    string each across the loaded session; the messages are those written."""
    source = tmp_path / "names.jsonl"
    rows = []
    for i in range(2):
        call = {"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
        rows.append({"id": f"a{i}", "role": "assistant", "type": "tool_calls", "content": "", "timestamp": i,
                     "metadata": {"tool_calls": [call]}})  # fmt: skip
        rows.append({"id": f"t{i}", "role": "tool", "type": "tool_output", "content": "ok", "timestamp": i,
                     "metadata": {"tool_call_id": f"c{i}", "tool_name": "read_file"}})  # fmt: skip
    write_lines(source, [HEADER, *rows])
    messages = load_session(source).messages
    assert [m.to_dict() for m in messages] == rows
    (a0, t0, a1, t1) = messages
    assert a0.role is a1.role and a0.type is a1.type and t0.role is t1.role and t0.type is t1.type
    calls = [a0.metadata["tool_calls"][0], a1.metadata["tool_calls"][0]]
    for key in ("id", "type", "function"):
        assert [k for k in calls[0] if k == key][0] is [k for k in calls[1] if k == key][0]
    assert calls[0]["type"] is calls[1]["type"]
    assert calls[0]["function"]["name"] is calls[1]["function"]["name"]
    assert [k for k in calls[0]["function"] if k == "arguments"][0] is [
        k for k in calls[1]["function"] if k == "arguments"
    ][0]
    assert [k for k in t0.metadata if k == "tool_name"][0] is [k for k in t1.metadata if k == "tool_name"][0]
    assert t0.metadata["tool_name"] is t1.metadata["tool_name"]
