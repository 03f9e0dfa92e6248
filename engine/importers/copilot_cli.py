"""GitHub Copilot CLI sessions (`~/.copilot/session-state/<id>/events.jsonl`) as linnkit messages.

One event a line: `{type, data, id, timestamp, parentId}`; the types and their `data` are the session
events of github/copilot-sdk (nodejs/src/generated/session-events.ts):
- `session.start` (`sessionId`, `copilotVersion`, `selectedModel`, `context.cwd`),
  `session.model_change` (`newModel`) and `session.tools_updated` (`model`: a `-p` run has no
  `session.start`) → `session`;
- `system.message` (`role` system or developer) → `system_prompt` before the first user turn, a
  `context_injection` after it;
- `user.message` → `user_input`: `transformedContent` (what was sent: the text with the CLI's wrapping and
  reminders) when recorded, else `content`; one with a `source` (a loaded skill's `<skill-context>`) is
  sent as a user message too, marked `metadata.generated` with that source and never taken for a title;
- `assistant.reasoning` and an `assistant.message`'s `reasoningText` → `thought`; the CLI writes both for
  one reasoning (the event after its message, whose `parentId` it is), so the event is then left out; an
  `assistant.message` → `tool_calls` (its `toolRequests`) or `final_answer`;
- `tool.execution_complete` → the `tool_output` of its `toolCallId`: `result.content` (what the model
  gets; `detailedContent` is the timeline's), or the error's message;
- `session.compaction_complete` with a `summaryContent` → `history_summary`; its `compactionTokensUsed` is
  an other billed call;
- `assistant.usage` (`inputTokens` including the cache read and write, `outputTokens`, `cacheReadTokens`,
  `cacheWriteTokens`; the `apiCallId` of the message it paid for) → that call's `metadata.usage`;
- events of a sub-agent (`agentId`, or `parentToolCallId` in `data`) are its own conversation: left out
  and counted, their `assistant.usage` kept as other billed calls;
- `session.shutdown` (written each time the CLI leaves the session, so a resumed session has several):
  its `modelMetrics` per model (`requests.count`, `usage` counts) are summed into `session.modelMetrics`
  (a session of one call takes them as that call's usage), the session's only usage on disk:
  `assistant.usage` is ephemeral (copilot-sdk types it `ephemeral: true`), seen in a `-p` run's stream or
  an SDK client, not in `events.jsonl`;
- everything else (turn starts and ends, tool starts and progress, hooks, infos, title changes, deltas)
  is the timeline's: counted by type under "left out".
A session folder opens by its root (`events.jsonl` beside `workspace.yaml`). `copilot -p --output-format
json` prints the same events (ephemeral ones too, no `session.start`) and ends with a `{type: "result",
sessionId, exitCode, usage}` line: its `sessionId` is kept, the line counted under "left out".
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.importers._common import (
    TITLE_CHARS,
    Collector,
    ImportResult,
    Names,
    compact_json,
    iso_to_ms,
    iter_jsonl,
    summary_metadata,
    with_usage,
)
from engine.importers.folders import has_part, read_part
from engine.messages import AiMessage
from engine.usage import UsageProblem, openai_usage

FORMAT = "copilot-cli"
EVENTS = "events.jsonl"
ONE_WORD_TYPES = frozenset({"abort"})  # event types without an area (copilot-sdk session-events.ts)
MODEL_TYPES = Names(
    {
        "user.message",
        "assistant.message",
        "assistant.reasoning",
        "tool.execution_complete",
        "system.message",
        "session.compaction_complete",
        "assistant.usage",
    }
)


def _is_event(item: Any) -> bool:
    """An event envelope; most types are `<area>.<event>`, a few are one word (`abort`: the user stopped
    a turn)."""
    return (
        isinstance(item, dict)
        and isinstance(item.get("type"), str)
        and isinstance(item.get("data"), dict)
        and ("." in item["type"] or item["type"] in ONE_WORD_TYPES)
        and ("id" in item or "timestamp" in item)
    )


def detect_copilot_cli(sniff: Any) -> bool:
    """Event envelopes `{type: "<area>.<event>", data: {...}}`: a `session.start` from the Copilot agent,
    or the events only it writes."""
    events = [i for i in sniff.items if _is_event(i)]
    return any(
        (e["type"] == "session.start" and ("copilotVersion" in e["data"] or "producer" in e["data"]))
        or e["type"] in ("tool.execution_complete", "assistant.turn_start")
        for e in events
    )


def claims_folder(root: Path) -> bool:
    return has_part(root, EVENTS) and (has_part(root, "workspace.yaml") or has_part(root, "checkpoints"))


def import_folder(root: Path, conversation: int | None = None) -> ImportResult:
    return import_copilot_cli(read_part(root, EVENTS), str(root / EVENTS), conversation)


def import_copilot_cli(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    reader = _Reader(Collector(path))
    for number, item, error in iter_jsonl(text):
        if error:
            reader.out.problem(number, error)
        elif isinstance(item, dict) and item.get("type") == "result" and "data" not in item:
            reader.result(number, item)
        elif not _is_event(item):
            reader.out.problem(number, "not a session event (no 'type' and 'data' object)")
        else:
            reader.event(number, item)
    reader.one_call_totals()
    return reader.out.result(FORMAT, session=reader.session, title=reader.title)


class _Reader:
    def __init__(self, out: Collector) -> None:
        self.out = out
        self.session: dict[str, Any] = {}
        self.names: dict[str, str] = {}
        self.calls: dict[str, int] = {}  # apiCallId → index of the last message of that call
        self.reasoned: set[str] = set()  # ids of the assistant.message events whose reasoningText was taken
        self.seen_user = False
        self.system_prompt: str | None = None  # the first system.message's text
        self.title: str | None = None  # the first prompt as typed (the sent text has the CLI's wrapping)
        self.summaries = -1

    def event(self, number: int, event: dict[str, Any]) -> None:
        kind, data = event["type"], event["data"]
        self._session_event(kind, data)
        sub_agent = event.get("agentId") or data.get("parentToolCallId")
        if sub_agent and kind in MODEL_TYPES:  # a sub-agent's own conversation, interleaved with the main one
            self._sub_agent(number, kind, data)
        elif kind not in MODEL_TYPES:
            self.out.skip(kind, number)
        elif kind == "user.message":
            self._user(number, event, data)
        elif kind == "system.message" and str(data.get("content") or "") == self.system_prompt:
            # written again for each interaction: the same prompt sent in its place, not added to it
            self.out.skip("system.message repeating the system prompt", number)
        elif kind == "system.message":
            type_ = "context_injection" if self.seen_user else "system_prompt"
            self._add(number, event, "system", type_, str(data.get("content") or ""))
            if type_ == "system_prompt":
                self.system_prompt = str(data.get("content") or "")
        elif kind == "assistant.reasoning" and event.get("parentId") in self.reasoned:
            self.out.skip("assistant.reasoning repeating its message's reasoningText", number)
        elif kind == "assistant.reasoning":
            self._add(number, event, "assistant", "thought", str(data.get("content") or ""))
        elif kind == "assistant.message":
            self._assistant(number, event, data)
        elif kind == "tool.execution_complete":
            self._result(number, event, data)
        elif kind == "session.compaction_complete":
            self._compaction(number, event, data)
        else:
            self._usage(number, data)

    def result(self, number: int, item: dict[str, Any]) -> None:
        if isinstance(item.get("sessionId"), str):
            self.session.setdefault("sessionId", item["sessionId"])
        self.out.skip("result (the run's exit code, premium requests and durations)", number)

    def _session_event(self, kind: str, data: dict[str, Any]) -> None:
        """What the session's own events say of it (they are still counted under "left out")."""
        if kind == "session.start":
            self._start(data)
        elif kind == "session.model_change" and isinstance(data.get("newModel"), str):
            self.session.setdefault("model", data["newModel"])
        elif kind == "session.tools_updated" and isinstance(data.get("model"), str):  # a `-p` run's model
            self.session.setdefault("model", data["model"])
        elif kind == "session.shutdown":
            self._shutdown(data)

    def one_call_totals(self) -> None:
        """A session of one model call whose usage no event kept (`assistant.usage` is ephemeral): the
        shutdown's totals are that call's counts."""
        metrics = self.session.get("modelMetrics") or {}
        messages = self.out.messages
        if len(metrics) != 1 or self.out.other_calls or any(m.meta("usage") for m in messages):
            return
        ((model, counts),) = metrics.items()
        if counts.get("requests") != 1:
            return
        usage = self.out.usage(None, _usage({**counts, "model": model}))
        replies = [i for i, m in enumerate(messages) if m.role == "assistant" and m.type != "thought"]
        if usage is None:
            return
        if len(replies) == 1:
            messages[replies[0]] = with_usage(messages[replies[0]], usage)
        else:  # its reply was empty (reasoning only): the call was billed all the same
            self.out.other_call(usage, None, "the session's one call, whose reply holds no message")

    def _shutdown(self, data: dict[str, Any]) -> None:
        metrics = data.get("modelMetrics")
        if not isinstance(metrics, dict):
            return
        totals: dict[str, dict[str, int]] = self.session.setdefault("modelMetrics", {})
        for model, entry in metrics.items():
            if not isinstance(entry, dict):
                continue
            counts = dict(entry.get("usage") or {}) if isinstance(entry.get("usage"), dict) else {}
            requests = entry.get("requests")
            counts["requests"] = requests.get("count") if isinstance(requests, dict) else None
            into = totals.setdefault(str(model), {})
            for key, value in counts.items():
                if isinstance(value, int | float) and not isinstance(value, bool):
                    into[key] = into.get(key, 0) + value

    def _user(self, number: int, event: dict[str, Any], data: dict[str, Any]) -> None:
        self.seen_user = True
        source = data.get("source") if isinstance(data.get("source"), str) else None
        content = data.get("content")
        if self.title is None and source is None and isinstance(content, str) and content.strip():
            self.title = content.strip().splitlines()[0][:TITLE_CHARS]
        text = data.get("transformedContent") or content or ""
        meta = {"generated": source} if source else None
        self._add(number, event, "user", "user_input", str(text), meta)

    def _sub_agent(self, number: int, kind: str, data: dict[str, Any]) -> None:
        self.out.skip(f"sub-agent {kind} (agentId / parentToolCallId)", number)
        if kind == "assistant.usage":
            usage = self.out.usage(number, _usage(data))
            if usage is not None:
                self.out.other_call(usage, number, "a sub-agent's call")

    def _start(self, data: dict[str, Any]) -> None:
        for key in ("sessionId", "copilotVersion", "startTime"):
            if isinstance(data.get(key), str):
                self.session[key] = data[key]
        if isinstance(data.get("selectedModel"), str):
            self.session["model"] = data["selectedModel"]
        context = data.get("context")
        if isinstance(context, dict) and isinstance(context.get("cwd"), str):
            self.session["cwd"] = context["cwd"]

    def _assistant(self, number: int, event: dict[str, Any], data: dict[str, Any]) -> None:
        if isinstance(data.get("reasoningText"), str) and data["reasoningText"].strip():
            self._add(number, event, "assistant", "thought", data["reasoningText"], suffix="-thought")
            if isinstance(event.get("id"), str):
                self.reasoned.add(event["id"])
        text = str(data.get("content") or "")
        requests = [r for r in data.get("toolRequests") or [] if isinstance(r, dict)]
        meta: dict[str, Any] = {"model": data["model"]} if isinstance(data.get("model"), str) else {}
        if meta:  # a `-p` run's stream has no session.start to name the model
            self.session.setdefault("model", meta["model"])
        if requests:
            calls = [_call(r) for r in requests]
            self.names.update({c["id"]: c["function"]["name"] for c in calls})
            self._add(number, event, "assistant", "tool_calls", text, {**meta, "tool_calls": calls})
        elif text.strip():
            self._add(number, event, "assistant", "final_answer", text, meta or None)
        else:
            self.out.skip("empty assistant.message", number)
            return
        if isinstance(data.get("apiCallId"), str):
            self.calls[data["apiCallId"]] = len(self.out.messages) - 1

    def _result(self, number: int, event: dict[str, Any], data: dict[str, Any]) -> None:
        call_id = data.get("toolCallId")
        if not isinstance(call_id, str):
            self.out.problem(number, "tool.execution_complete without a toolCallId")
            return
        result = data.get("result") if isinstance(data.get("result"), dict) else {}
        error = data.get("error") if isinstance(data.get("error"), dict) else {}
        text = result.get("content") if isinstance(result.get("content"), str) else error.get("message")
        text = text if isinstance(text, str) else ""
        meta = {"tool_call_id": call_id, "raw_output": text, "tool_name": self.names.get(call_id, "")}
        if data.get("success") is False:
            meta["is_error"] = True
        self._add(number, event, "tool", "tool_output", text, meta, suffix="-out")

    def _compaction(self, number: int, event: dict[str, Any], data: dict[str, Any]) -> None:
        summary = data.get("summaryContent")
        if not data.get("success") or not isinstance(summary, str) or not summary:
            self.out.skip("session.compaction_complete without a summary", number)
        else:
            replaced = [m for m in self.out.messages if m.type != "system_prompt"]
            self.summaries += 1
            meta = summary_metadata(summary, replaced, self.summaries)
            self._add(number, event, "system", "history_summary", summary, meta)
        used = data.get("compactionTokensUsed")
        if isinstance(used, dict):
            usage = self.out.usage(number, _usage(used))
            if usage is not None:
                self.out.other_call(usage, number, "the compaction's own call")

    def _usage(self, number: int, data: dict[str, Any]) -> None:
        usage = self.out.usage(number, _usage(data))
        if usage is None:
            return
        index = self.calls.get(data.get("apiCallId")) if isinstance(data.get("apiCallId"), str) else None
        if index is None:
            self.out.other_call(usage, number, "assistant.usage with no message of its apiCallId")
        else:
            self.out.messages[index] = with_usage(self.out.messages[index], usage)

    def _add(
        self,
        number: int,
        event: dict[str, Any],
        role: str,
        kind: str,
        text: str,
        meta: dict[str, Any] | None = None,
        suffix: str = "",
    ) -> None:
        base = event["id"] if isinstance(event.get("id"), str) else f"copilot-{number}"
        ts = iso_to_ms(event.get("timestamp"))
        message_id = self.out.unique_id(base + suffix)
        self.out.add(AiMessage(message_id, role, kind, text, number if ts is None else ts, meta))


def _call(request: dict[str, Any]) -> dict[str, Any]:
    arguments = request.get("arguments")
    return {
        "id": str(request.get("toolCallId") or ""),
        "type": "function",
        "function": {
            "name": str(request.get("name") or ""),
            "arguments": arguments if isinstance(arguments, str) else compact_json(arguments or {}),
        },
    }


def _usage(data: dict[str, Any]) -> Any:
    """Copilot's counts in OpenAI's terms: `inputTokens` includes the cache read and the cache write (a
    real 1.0.55 shutdown: opus `inputTokens` 81,666 = its `tokenDetails` input 8 + cache read 54,064 +
    cache write 27,594), so `cacheWriteTokens` is the part of the prompt written to the cache."""
    model = data.get("model") if isinstance(data.get("model"), str) else None
    counts = {
        "input_tokens": data.get("inputTokens"),
        "output_tokens": data.get("outputTokens"),
        "cached_input_tokens": data.get("cacheReadTokens"),
        "cache_write_tokens": data.get("cacheWriteTokens"),
    }
    if isinstance(data.get("reasoningTokens"), int):
        counts["reasoning_output_tokens"] = data["reasoningTokens"]
    call_id = data.get("apiCallId") if isinstance(data.get("apiCallId"), str) else None
    usage = openai_usage({k: v for k, v in counts.items() if v is not None}, model, call_id)
    written = data.get("cacheWriteTokens")
    if isinstance(usage, UsageProblem) or not isinstance(written, int) or isinstance(written, bool):
        return usage
    if written < 0 or usage.cache_read_tokens + written > usage.prompt_tokens:
        return UsageProblem("cacheWriteTokens", f"{written} does not fit in inputTokens less the cache read")
    return replace(usage, cache_write_tokens=written)
