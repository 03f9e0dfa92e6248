"""What a line of a session file may hold: the header's checks and each message line's errors (the line is
skipped) and warnings (the line loads), as (field, reason) pairs; `engine.session` turns them into
`file:line: field: reason` problems. Also how a line is read: the file's raw lines, and a plain line's object
in one scanner call.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import replace
from sys import intern
from typing import Any, BinaryIO

from engine.fences import FenceError, parse_fences_skipping
from engine.messages import ROLE_TYPES, AiMessage
from engine.policy.lint import suggestion
from engine.safe_input import MAX_DEPTH, make_json_decoder

SESSION_VERSION = 1
DECODER = make_json_decoder(check_numbers=False)  # session lines: numbers unchecked (make_json_decoder)
_SCAN = DECODER.scan_once  # the C scanner `decode` calls, without decode's Python layers around it


def plain_object(text: str) -> dict[str, Any] | None:
    """The line's object when the line is exactly one JSON object nested within MAX_DEPTH, read in one
    scanner call (what `decode_json` would return); None for anything else: `decode_json` then reads the
    line and names what is wrong (whitespace around, a deep or bad line, another value)."""
    if text.count("[") + text.count("{") > MAX_DEPTH:
        return None
    try:
        data, end = _SCAN(text, 0)
    except (StopIteration, ValueError, RecursionError):
        return None
    return data if end == len(text) and type(data) is dict else None


def raw_lines(handle: BinaryIO, limit: int) -> Iterator[tuple[int, int, bytes | None, int]]:
    """(line number, file offset, bytes without the newline or None when over `limit`, byte length)."""
    number = offset = 0
    while chunk := handle.readline(limit + 1):
        number += 1
        consumed = len(chunk)
        if chunk.endswith(b"\n") or consumed <= limit:
            body = chunk.removesuffix(b"\n")
            # a BOM inside the file (UTF-8 files joined end to end) is no part of the line's JSON
            yield number, offset, body.removeprefix(b"\xef\xbb\xbf"), len(body)
        else:  # longer than the limit: count the rest of the line without keeping it
            newline = 0
            while more := handle.readline(1 << 20):
                consumed += len(more)
                if more.endswith(b"\n"):
                    newline = 1
                    break
            yield number, offset, None, consumed - newline
        offset += consumed


def json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "an array" if isinstance(value, list) else "an object"


def field_type(record: Mapping[str, Any], key: str) -> str:
    """`json_type` of `record[key]`, or "missing" when the record has no such key."""
    return "missing" if key not in record else json_type(record[key])


_MAX_NUMBER = sys.float_info.max  # JS Number.MAX_VALUE
_PAIRS = frozenset((role, type_) for role, types in ROLE_TYPES.items() for type_ in types)


def check_header(data: dict[str, Any]) -> list[tuple[str, str]]:
    """(field, reason) warnings for a header; the header is kept as written either way."""
    found: list[tuple[str, str]] = []
    version = data.get("version")
    if version != SESSION_VERSION or isinstance(version, bool):
        found.append(("version", f"expected {SESSION_VERSION}, got {_scalar(version)}; read as version 1"))
    for key in ("title", "lesson", "modelId"):
        if key in data and not isinstance(data[key], str):
            found.append((key, f"must be a string, got {json_type(data[key])}; ignored"))
    steps = data.get("maxSteps")
    if "maxSteps" in data and (not isinstance(steps, int) or isinstance(steps, bool) or steps < 1):
        found.append(("maxSteps", f"must be a positive integer, got {_scalar(steps)}; ignored"))
    if "contextPolicy" in data and not isinstance(data["contextPolicy"], dict):
        found.append(
            ("contextPolicy", f"must be an object, got {json_type(data['contextPolicy'])}; ignored")
        )
    tools = data.get("availableTools", [])
    odd = [t for t in tools if not isinstance(t, str)] if isinstance(tools, list) else [tools]
    if odd:
        what = f"an array holding {json_type(odd[0])}" if isinstance(tools, list) else json_type(tools)
        found.append(("availableTools", f"must be an array of tool names, got {what}; ignored"))
    if "fences" in data:
        try:
            skipped = parse_fences_skipping(data["fences"], "fences")[1]
        except FenceError as exc:
            skipped = [exc]
        for exc in skipped:
            reason = str(exc).removeprefix("fences: ")
            field_name, colon, rest = reason.partition(": ")
            if colon and field_name.startswith("fences["):
                found.append((field_name, f"{rest.rstrip('.')}; the fence is left out"))
            else:
                found.append(("fences", f"{reason}; ignored"))
    return found


# the keys a header's reader uses (`SessionHeader`, the importers' `importedFrom` and `recordedCalls`,
# Cursor's `toolResultsRecorded`); any other key is kept as written and read by no one
HEADER_KEYS = (
    "kind", "version", "title", "lesson", "modelId", "maxSteps", "contextPolicy", "availableTools", "fences",
    "importedFrom", "recordedCalls", "toolResultsRecorded",
)  # fmt: skip
# keys a user may write in a header for what only a command-line option sets
_OPTION_KEYS = {
    "policy": "--policy FILE (or the header's `contextPolicy`)",
    "defaults": "--defaults",
    "copy": "--copy",
    "systemPrompt": "--system-prompt FILE",
    "model": "--model (or the header's `modelId`)",
    "tools": "--tools FILE (or the header's `availableTools`)",
}


def header_key_warnings(data: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Header keys that look meant for something the header does not set: an option's name, or a near miss
    of a key it reads (`contextpolicy`). Any other unknown key is the writer's own and is kept silently."""
    found: list[tuple[str, str]] = []
    for key in data:
        if key in HEADER_KEYS:
            continue
        if key in _OPTION_KEYS:
            found.append((key, f"not read from a header: set with {_OPTION_KEYS[key]}; kept as written"))
            continue
        hint = suggestion(key, HEADER_KEYS, cutoff=0.8)  # stricter than a policy's: a header holds any key
        if hint:
            found.append((key, f"unknown header key, kept as written and not read{hint}"))
    return found


class _Object(dict[str, Any]):
    """A decoded JSON object that remembers the keys it was given more than once."""

    repeated: tuple[str, ...] = ()


def _object_of(pairs: list[tuple[str, Any]]) -> _Object:
    out = _Object(pairs)
    if len(out) < len(pairs):
        seen: set[str] = set()
        out.repeated = tuple(key for key, _ in pairs if key in seen or seen.add(key))
    return out


def repeated_keys(text: str) -> list[str]:
    """The dotted paths of the keys written twice in one object of a JSON line (a header: one line, read
    once; JSON keeps the last value, as linnkit's `JSON.parse` does)."""
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(json.loads(text, object_pairs_hook=_object_of), "")]
    while stack:
        value, path = stack.pop()
        if isinstance(value, _Object):
            found += [f"{path}.{key}" if path else key for key in dict.fromkeys(value.repeated)]
            stack += [(item, f"{path}.{key}" if path else key) for key, item in value.items()]
        elif isinstance(value, list):
            stack += [(item, f"{path}[{i}]") for i, item in enumerate(value)]
    return sorted(found)


def available_tools(header: dict[str, Any]) -> tuple[str, ...]:
    """The header's `availableTools` (the tools a replay's reminders see), or none when it is not an array
    of names (`check_header` warns)."""
    tools = header.get("availableTools")
    if not isinstance(tools, list) or not all(isinstance(t, str) for t in tools):
        return ()
    return tuple(tools)


def _scalar(value: Any) -> str:
    """A JSON scalar as written (shortened), or what kind of value it is."""
    if isinstance(value, dict | list):
        return json_type(value)
    return _quoted(value) if isinstance(value, str) else json.dumps(value)


def _role_type_problem(role: Any, type_: Any) -> tuple[str, str] | None:
    for key, value in (("role", role), ("type", type_)):
        if value is None:
            return key, "missing"
        if not isinstance(value, str):
            return key, f"must be a string, got {json_type(value)}"
    if role in ROLE_TYPES and type_ in ROLE_TYPES[role]:
        return None
    owners = [r for r, types in ROLE_TYPES.items() if type_ in types]
    shown_role, shown_type = _quoted(role), _quoted(type_)  # escaped: a value never adds a line
    if role not in ROLE_TYPES:
        hint = f"roles are {', '.join(ROLE_TYPES)}"
    elif owners:
        hint = f'{shown_type} goes with role {" or ".join(owners)}'
    else:
        hint = f"{shown_type} is not a message type"
    return "role/type", f"unknown role/type pair {shown_role}/{shown_type}; {hint}"


def _quoted(text: str) -> str:
    return json.dumps(text if len(text) <= 60 else text[:59] + "…", ensure_ascii=False)


def plainly_valid(data: dict[str, Any]) -> bool:
    """The common case, checked fast: nothing for `message_errors` or `message_warnings` to say."""
    try:
        message_id, role, type_, content, stamp = (
            data["id"], data["role"], data["type"], data["content"], data["timestamp"]
        )  # fmt: skip
    except KeyError:
        return False
    metadata = data.get("metadata")
    if metadata is not None and not _plain_metadata(metadata):
        return False
    return (
        type(message_id) is str
        and message_id != ""
        and type(role) is str
        and type(type_) is str
        and (role, type_) in _PAIRS
        and type(content) is str
        and (type(stamp) is int or type(stamp) is float)
        and -_MAX_NUMBER <= stamp <= _MAX_NUMBER
    )


def _plain_metadata(metadata: Any) -> bool:
    if type(metadata) is not dict or "fenceAttrs" in metadata:
        return False
    if "tool_call_id" in metadata and type(metadata["tool_call_id"]) is not str:
        return False
    if "tool_calls" not in metadata:
        return True
    calls = metadata["tool_calls"]
    if type(calls) is not list:
        return False
    for call in calls:
        if type(call) is not dict or ("function" in call and type(call["function"]) is not dict):
            return False
        if "id" in call and type(call["id"]) is not str:
            return False
    return True


def share_names(data: dict[str, Any]) -> None:
    """Make a plainly valid line's names one string each across the session: the role, type and tool names,
    the metadata's and the tool calls' keys. The JSON scanner makes each line's strings anew, and a long
    session held them once per message (~280 bytes a message in `bench_build`'s sessions)."""
    data["role"], data["type"] = intern(data["role"]), intern(data["type"])
    metadata = data.get("metadata")
    if not metadata:
        return
    shared = dict(zip(map(intern, metadata), metadata.values(), strict=True))
    if type(name := shared.get("tool_name")) is str:
        shared["tool_name"] = intern(name)
    if "tool_calls" in shared:
        shared["tool_calls"] = [_shared_call(call) for call in shared["tool_calls"]]
    data["metadata"] = shared


def _shared_call(call: dict[str, Any]) -> dict[str, Any]:
    shared = dict(zip(map(intern, call), call.values(), strict=True))
    if type(kind := shared.get("type")) is str:
        shared["type"] = intern(kind)
    function = shared.get("function")
    if function is not None:  # a dict (plainly valid)
        named = dict(zip(map(intern, function), function.values(), strict=True))
        if type(name := named.get("name")) is str:
            named["name"] = intern(name)
        shared["function"] = named
    return shared


def message_errors(data: dict[str, Any]) -> list[tuple[str, str]]:
    """What makes a line unusable as an AiMessage, as (field, reason)."""
    found: list[tuple[str, str]] = []
    if "id" not in data:
        found.append(("id", "missing"))
    elif not isinstance(data["id"], str) or not data["id"]:
        shown = "an empty string" if data["id"] == "" else json_type(data["id"])
        found.append(("id", f"must be a non-empty string, got {shown}"))
    pair = _role_type_problem(data.get("role"), data.get("type"))
    if pair is not None:
        found.append(pair)
    content = data.get("content")
    if content is not None and not isinstance(content, str):
        found.append(("content", f"must be a string, got {json_type(content)}"))
    if "timestamp" in data:
        stamp = data["timestamp"]
        if isinstance(stamp, bool) or not isinstance(stamp, int | float):
            found.append(("timestamp", f"must be a number, got {json_type(stamp)}"))
        elif not -_MAX_NUMBER <= stamp <= _MAX_NUMBER:  # 1e400 is read as infinity, 10**400 as an int
            found.append(("timestamp", "out of range: beyond a JS number"))
    metadata = data.get("metadata")
    if metadata is not None and not isinstance(metadata, dict):
        found.append(("metadata", f"must be an object or null, got {json_type(metadata)}"))
    elif metadata is not None:
        found += _metadata_errors(metadata)
    return found


def _metadata_errors(metadata: dict[str, Any]) -> list[tuple[str, str]]:
    """Shapes the pipeline reads as objects: fence attributes (tool calls are `_call_warnings`)."""
    found: list[tuple[str, str]] = []
    attrs = metadata.get("fenceAttrs")
    if attrs is not None and not isinstance(attrs, dict):
        found.append(("metadata.fenceAttrs", f"must be an object, got {json_type(attrs)}"))
    return found


def message_warnings(data: dict[str, Any]) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    if data.get("content") is None:
        found.append(("content", ("null" if "content" in data else "missing") + '; loaded as ""'))
    if "timestamp" not in data:
        found.append(("timestamp", "missing; loaded as 0"))
    metadata = data.get("metadata") or {}
    if "tool_calls" in metadata and not isinstance(metadata["tool_calls"], list):
        shown = json_type(metadata["tool_calls"])
        found.append(("metadata.tool_calls", f"must be an array, got {shown}; read as no calls"))
    if "tool_call_id" in metadata and not isinstance(metadata["tool_call_id"], str):
        found.append(
            ("metadata.tool_call_id", f"must be a string, got {json_type(metadata['tool_call_id'])}")
        )
    return found + _call_warnings(metadata.get("tool_calls"))


def _call_warnings(calls: Any) -> list[tuple[str, str]]:
    """Tool calls the pipeline cannot read as objects: the message loads without them (`message_of`)."""
    found: list[tuple[str, str]] = []
    for index, call in enumerate(calls if isinstance(calls, list) else ()):
        where = f"metadata.tool_calls[{index}]"
        if not isinstance(call, dict):
            found.append((where, f"must be an object, got {json_type(call)}; the call is left out"))
        else:
            for key in _unreadable_keys(call):
                wanted, read_as = _UNREADABLE[key]
                reason = f"must be {wanted}, got {json_type(call[key])}; read as a call {read_as}"
                found.append((f"{where}.{key}", reason))
    return found


# a call's keys the pipeline reads only in one shape: what it must be, and what the call is read as without
_UNREADABLE = {"function": ("an object", "of no function"), "id": ("a string", "without an id")}


def _unreadable_keys(call: dict[str, Any]) -> list[str]:
    """The keys of `call` whose value is neither null nor of the shape the pipeline reads (`_UNREADABLE`):
    a `function` that is no object, an `id` that is no string (linnkit reads such an id as none)."""
    function, call_id = call.get("function"), call.get("id")
    return [
        key
        for key, bad in (
            ("function", function is not None and not isinstance(function, dict)),
            ("id", call_id is not None and not isinstance(call_id, str)),
        )
        if bad
    ]


def messages_from(items: Any, source: str = "session") -> list[AiMessage]:
    """A caller's messages (AiMessage objects, or dicts shaped as a session line's message) as a list, or
    a TypeError / ValueError naming the item and the field, as a session file's line would be named."""
    if isinstance(items, str | bytes | Mapping) or not isinstance(items, Iterable):
        raise TypeError(f"{source}: expected a Session or a list of messages, not {type(items).__name__}")
    given = list(items)
    if all(issubclass(kind, AiMessage) for kind in set(map(type, given))):  # in C: a 64k history is 0.5 ms
        return given
    out: list[AiMessage] = []
    for index, item in enumerate(given):
        if isinstance(item, AiMessage):
            out.append(item)
            continue
        if not isinstance(item, Mapping):
            kind = type(item).__name__
            raise TypeError(f"{source}[{index}]: expected an AiMessage or a message dict, not {kind}")
        data = dict(item)
        errors = message_errors(data)
        if errors:
            field_name, reason = errors[0]
            raise ValueError(f"{source}[{index}].{field_name}: {reason}")
        out.append(message_of(data))
    return out


def message_of(data: dict[str, Any]) -> AiMessage:
    """The line's message. When some of its tool calls are not objects (or their `function` is not, or their
    `id` is no string), the pipeline reads the usable calls only (`_readable_call`), and the line is
    written back as it was (`extra` holds it)."""
    message = AiMessage.from_dict(data)
    metadata = message.metadata
    calls = metadata.get("tool_calls") if metadata is not None else None
    if not isinstance(calls, list) or not _call_warnings(calls):
        return message
    usable = [_readable_call(call) for call in calls if isinstance(call, dict)]
    as_written = {**message.extra, "metadata": metadata}  # to_dict() writes extra over the read metadata
    return replace(message, metadata={**metadata, "tool_calls": usable}, extra=as_written)


def _readable_call(call: dict[str, Any]) -> dict[str, Any]:
    """`call` without its unreadable keys (`_unreadable_keys`): a call without an id joins no group, and
    no output can answer it."""
    bad = _unreadable_keys(call)
    return {key: value for key, value in call.items() if key not in bad} if bad else call
