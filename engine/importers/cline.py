"""Cline, Roo Code and Kilo Code task folders as linnkit messages.

The three extensions (Roo Code and Kilo Code are forks of Cline) keep a task as a folder
`<globalStorage>/tasks/<task id>/` holding:
- `api_conversation_history.json`: what was sent to the model, as Anthropic `MessageParam`s plus the
  extension's own fields (`ClineStorageMessage` in Cline's src/shared/messages/content.ts): `ts` (epoch ms),
  `modelInfo`, and on newer Cline `metrics.tokens {prompt, completion, cached}` (`prompt` is the request's
  `tokensIn`, without the cache; `cached` is its cache write and read together: Task.ts sets
  `cached: cacheWriteTokens + cacheReadTokens`);
  Roo Code marks a condensed history's summary with `isSummary`;
- `ui_messages.json`: what the panel showed (`ClineMessage`s); each `say: "api_req_started"` carries the
  request's `ClineApiReqInfo` as JSON text: `tokensIn`, `tokensOut`, `cacheWrites`, `cacheReads`, `cost`
  (Anthropic units: `tokensIn` excludes the cache read and write; Roo Code and Kilo Code add `apiProtocol`,
  and with "openai" `tokensIn` includes the cache read).
Blocks map as for Anthropic payloads: `text` → `user_input` / `final_answer`, `thinking` → `thought`, the
`tool_use` blocks of one message → one `tool_calls` message, `tool_result` → `tool_output`, images as
placeholders. Cline 3.x with native tool calls often stores a call's result as a text block, not a
`tool_result` (ToolResultUtils falls back to text when its id map misses the call): a user text block
`[<tool> for '…'] Result:` or `Tool [<tool>] was not executed because …` answers the first call of that
name still open from the assistant message before, and becomes its `tool_output`. Older tasks call tools
as XML inside the text: that text is kept as it was sent. The system prompt and tool definitions are not
stored in a task folder.
Cline's own truncation of long tasks (`conversationHistoryDeletedRange` on a request) is not applied: the
whole history comes in, and the policy decides what a build keeps.
Usage: the n-th `api_req_started` that counted tokens goes to the n-th assistant message, when the two
counts agree (a problem says so when they do not); a message's own `metrics` when there is no
`ui_messages.json` to pair, or it pairs no request: then the cache write and read are known only together,
taken as read.
"""

from __future__ import annotations

import json
import re
from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.importers._blocks import AssistantTurn, as_blocks, flatten_blocks, tool_output, wrong_block
from engine.importers._common import (
    TITLE_CHARS,
    Collector,
    ImportResult,
    Problem,
    load_json_document,
    summary_metadata,
)
from engine.importers.folders import FolderError, has_part, read_part
from engine.messages import AiMessage
from engine.usage import RecordedUsage, UsageProblem, anthropic_usage, openai_usage

FORMAT = "cline"
HISTORY = "api_conversation_history.json"
UI = "ui_messages.json"
TASK = re.compile(r"<task>(.*?)</task>", re.S)
TASK_TAGS = ("<task>", "<environment_details>", "<feedback>", "<answer>", "<user_message>")
TEXT_RESULT = re.compile(  # the `for '…'` part may hold line breaks (a follow-up question's)
    r"\[([\w.-]+)(?: for (?:'(?s:.*?)'|[^\n]*?))?\] Result:|Tool \[([\w.-]+)\] was not executed because"
)


def detect_cline(sniff: Any) -> bool:
    """An `api_conversation_history.json` on its own: Anthropic-shaped messages stamped with `ts`, or
    (Cline 3.x, no `ts`) assistant messages carrying the extension's `modelInfo` or `metrics`, the first user
    message wrapping the task in the extension's tags."""
    doc = sniff.document
    if not isinstance(doc, list) or not doc or not isinstance(doc[0], dict) or doc[0].get("role") != "user":
        return False
    stamped = (
        isinstance(m, dict) and (isinstance(m.get("ts"), int) or isinstance(m.get("modelInfo"), dict))
        for m in doc[:20]
    )
    if not any(stamped):
        return False
    text, _ = flatten_blocks(as_blocks(doc[0].get("content")) or [])
    return text.lstrip().startswith(TASK_TAGS)


def claims_folder(root: Path) -> bool:
    return has_part(root, HISTORY)


def import_cline(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    """`api_conversation_history.json` alone (no usage unless its messages carry `metrics`)."""
    out = Collector(path)
    _convert(out, text, None)
    return out.result(FORMAT, session=_session(out), title=_title(out))


def import_folder(root: Path, conversation: int | None = None) -> ImportResult:
    """A task folder. `ui_messages.json` is optional: without it only messages' own metrics give usage."""
    out = Collector(str(root / HISTORY))
    try:
        ui_text: str | None = read_part(root, UI)
    except FolderError as error:
        out.problems.append(Problem(str(root / UI), None, f"{str(error).split(': ', 1)[1]}; usage not read"))
        ui_text = None
    _convert(out, read_part(root, HISTORY), _ui_calls(out, root / UI, ui_text) if ui_text else None)
    return out.result(FORMAT, session=_session(out), title=_title(out))


def _title(out: Collector) -> str | None:
    """The task the user gave: the first line inside the first `<task>` tag."""
    first = next((m.content for m in out.messages if m.type == "user_input"), "")
    match = TASK.search(first)
    lines = match.group(1).strip().splitlines() if match else []
    return lines[0][:TITLE_CHARS] if lines else None


def _session(out: Collector) -> dict[str, Any]:
    model = next((m.meta("source", {}).get("model") for m in out.messages if m.role == "assistant"), None)
    return {"model": model} if model else {}


def _ui_calls(out: Collector, ui_path: Path, text: str) -> list[tuple[int, dict[str, Any]]]:
    """(index, ClineApiReqInfo) of each `api_req_started` that counted tokens."""
    value, error, line = load_json_document(text)
    if error is not None or not isinstance(value, list):
        out.problems.append(Problem(str(ui_path), line, error or "expected a JSON array; usage not read"))
        return []
    calls = []
    for index, message in enumerate(value):
        if not isinstance(message, dict) or message.get("say") != "api_req_started":
            continue
        try:
            info = json.loads(message.get("text") or "{}")
        except json.JSONDecodeError:
            out.problems.append(Problem(str(ui_path), None, f"[{index}]: api_req_started text is not JSON"))
            continue
        if isinstance(info, dict) and ("tokensIn" in info or "tokensOut" in info):
            calls.append((index, info))
    return calls


def _convert(out: Collector, text: str, ui_calls: list[tuple[int, dict[str, Any]]] | None) -> None:
    value, error, line = load_json_document(text)
    if error is not None or not isinstance(value, list):
        out.problem(line, error or f"expected a JSON array of messages, found {type(value).__name__}")
        return
    names: dict[str, str] = {}
    open_calls: list[tuple[str, str]] = []  # (id, name) of the last assistant message's unanswered calls
    ends: list[tuple[int, int, dict[str, Any]]] = []  # (start, end, message) of each assistant message
    for index, message in enumerate(value):
        if not isinstance(message, dict):
            out.problem(None, f"[{index}]: expected a message object, found {type(message).__name__}")
            continue
        blocks = as_blocks(message.get("content"))
        if blocks is None:
            out.problem(None, f"[{index}].content: neither text nor a list of blocks")
            continue
        wrong = wrong_block(blocks, f"[{index}].content")
        if wrong is not None:  # a block kept as a note, a text dropped: said, and the message left out
            out.problem(None, f"{wrong}; left out")
            continue
        start = len(out.messages)
        ts = message["ts"] if isinstance(message.get("ts"), int | float) else index
        base = message["id"] if isinstance(message.get("id"), str) else f"cline-{index}"
        if message.get("isSummary"):
            _summary(out, base, ts, blocks)
        elif message.get("role") == "assistant":
            _assistant(out, index, base, ts, blocks, message, names)
            ends.append((start, len(out.messages), message))
            uses = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_use"]
            open_calls[:] = [(str(b.get("id") or ""), str(b.get("name") or "")) for b in uses]
        elif message.get("role") == "user":
            _user(out, index, base, ts, _results_from_text(blocks, open_calls), names)
        else:
            out.problem(None, f"[{index}].role: unknown role {message.get('role')!r}")
    _usage(out, ends, ui_calls)


def _results_from_text(blocks: list[Any], open_calls: list[tuple[str, str]]) -> list[Any]:
    """The blocks, each text block that answers an open call of its name turned into that call's
    `tool_result`; answered calls leave `open_calls`."""
    answered = {
        b.get("tool_use_id") for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"
    }
    open_calls[:] = [c for c in open_calls if c[0] not in answered]
    out: list[Any] = []
    for block in blocks:
        text = block.get("text") if isinstance(block, dict) and block.get("type") == "text" else None
        match = TEXT_RESULT.match(text) if isinstance(text, str) else None
        name = (match.group(1) or match.group(2)) if match else None
        # `use_subagents` is answered as `[subagents] Result:`
        call = next((c for c in open_calls if c[1] in (name, f"use_{name}")), None) if name else None
        if call is None:
            out.append(block)
            continue
        open_calls.remove(call)
        out.append(
            {"type": "tool_result", "tool_use_id": call[0], "content": text, "cline_text_result": True}
        )
    return out


def _user(out: Collector, index: int, base: str, ts: float, blocks: list[Any], names: dict[str, str]) -> None:
    results = [b for b in blocks if isinstance(b, dict) and b.get("type") == "tool_result"]
    for block in results:
        name = names.get(block.get("tool_use_id") or "")
        out.add(tool_output(block, out.unique_id(base), ts, name, {}))
    text, notes = flatten_blocks([b for b in blocks if b not in results])
    if text.strip() or notes:
        out.add(AiMessage(out.unique_id(base), "user", "user_input", text, ts, notes or None))
    elif not results:
        out.skip("empty message", index + 1)


def _assistant(
    out: Collector,
    index: int,
    base: str,
    ts: float,
    blocks: list[Any],
    message: dict[str, Any],
    names: dict[str, str],
) -> None:
    turn = AssistantTurn(None, names)
    info = message.get("modelInfo") if isinstance(message.get("modelInfo"), dict) else {}
    extra = {"source": {"model": info["modelId"]}} if isinstance(info.get("modelId"), str) else {}
    for block in blocks:
        reason = turn.add_block(block, lambda: out.unique_id(base), ts, extra)
        if reason:
            out.skip(reason, index + 1)
    produced = turn.finish()
    if not produced:
        out.skip("empty message", index + 1)
    for m in produced:
        out.add(m)


def _summary(out: Collector, base: str, ts: float, blocks: list[Any]) -> None:
    text, _ = flatten_blocks(blocks)
    replaced = [m for m in out.messages if m.type != "system_prompt"]
    seq = sum(1 for m in out.messages if m.type == "history_summary")
    meta = summary_metadata(text, replaced, seq)
    out.add(AiMessage(out.unique_id(base), "system", "history_summary", text, ts, meta))


def _usage(
    out: Collector,
    ends: list[tuple[int, int, dict[str, Any]]],
    ui_calls: list[tuple[int, dict[str, Any]]] | None,
) -> None:
    with_metrics = [(s, e, m) for s, e, m in ends if isinstance(m.get("metrics"), dict)]
    if with_metrics and not _pairs(ends, ui_calls):
        for start, end, message in with_metrics:
            tokens = message["metrics"].get("tokens")
            model = (message.get("modelInfo") or {}).get("modelId")
            raw = tokens if isinstance(tokens, dict) else {}
            counts = {"input_tokens": raw.get("prompt"), "output_tokens": raw.get("completion"),
                      "cache_read_input_tokens": raw.get("cached") or 0}  # fmt: skip
            _attach(out, start, end, anthropic_usage(counts, model), "metrics")
        return
    if ui_calls is None:
        return
    if len(ui_calls) != len(ends):
        out.problem(
            None,
            f"{len(ui_calls)} api_req_started with tokens in {UI} for {len(ends)} assistant messages: "
            "usage not paired",
        )
        return
    for (start, end, message), (index, info) in zip(ends, ui_calls, strict=True):
        _attach(
            out,
            start,
            end,
            _request_usage(info, (message.get("modelInfo") or {}).get("modelId")),
            f"{UI}[{index}]",
        )


def _pairs(
    ends: list[tuple[int, int, dict[str, Any]]], ui_calls: list[tuple[int, dict[str, Any]]] | None
) -> bool:
    """Each assistant message's `metrics` are its request's counts in `ui_messages.json`, n-th to n-th."""
    if ui_calls is None or len(ui_calls) != len(ends):
        return False
    for (_, _, message), (_, info) in zip(ends, ui_calls, strict=True):
        tokens = (message.get("metrics") or {}).get("tokens")
        if isinstance(tokens, dict) and (tokens.get("prompt"), tokens.get("completion")) != (
            info.get("tokensIn"), info.get("tokensOut")
        ):  # fmt: skip
            return False
    return True


def _request_usage(info: dict[str, Any], model: Any) -> RecordedUsage | UsageProblem:
    """A `ClineApiReqInfo`'s counts. Roo Code and Kilo Code name the protocol (`apiProtocol`): with
    "openai" `tokensIn` includes the cache read and the cache writes (Roo's `cost.ts` prices the rest as
    uncached); otherwise (and always in Cline) it is Anthropic's uncached input."""
    model = model if isinstance(model, str) else None
    counts = {"output_tokens": info.get("tokensOut") or 0, "cost": info.get("cost")}
    if info.get("apiProtocol") == "openai":
        counts.update(input_tokens=info.get("tokensIn") or 0, cached_input_tokens=info.get("cacheReads") or 0)
        usage = openai_usage(counts, model)
        written = info.get("cacheWrites")
        if not isinstance(usage, RecordedUsage) or not isinstance(written, int) or isinstance(written, bool):
            return usage
        if 0 < written <= usage.uncached_tokens:
            usage = replace(usage, cache_write_tokens=written, raw={**usage.raw, "cache_writes": written})
        return usage
    counts.update(
        input_tokens=info.get("tokensIn") or 0,
        cache_creation_input_tokens=info.get("cacheWrites") or 0,
        cache_read_input_tokens=info.get("cacheReads") or 0,
    )
    return anthropic_usage(counts, model)


def _attach(out: Collector, start: int, end: int, parsed: RecordedUsage | UsageProblem, where: str) -> None:
    if isinstance(parsed, UsageProblem):
        out.problem(None, f"{where}: {parsed}")
    else:
        out.attach_usage(start, end, parsed, None, f"{where}: a request with no message")
