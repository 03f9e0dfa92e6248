"""OpenHands V1 (software-agent-sdk) events and conversation folders as linnkit messages.

The SDK persists a conversation as a folder: `base_state.json` (the agent: its LLM, tools, condenser;
execution status; `stats`) and `events/event-NNNNN-<id>.json`, one event a file, ordered by NNNNN
(`openhands/sdk/conversation/persistence_const.py`). The same events also travel as JSONL or a JSON array.
An event is `{id, timestamp, source, kind, ...}`; `kind` names its class (`openhands/sdk/event/`):
- `SystemPromptEvent` → `system_prompt` (`system_prompt.text`, then `dynamic_context.text`), its `tools`
  (the tool definitions sent) kept on it as `metadata.tools`;
- `MessageEvent` → `user_input` (source user) or the agent's `thought` (reasoning) and `final_answer`; its
  `extended_content` (text the agent context added) is part of what the model read;
- `ActionEvent`s of one `llm_response_id` → one model response: its reasoning as a `thought`, then one
  `tool_calls` message (the `thought` text, each `tool_call`), as `events_to_messages` sends them;
- `ObservationEvent`, `UserRejectObservation`, `AgentErrorEvent` → the `tool_output` of their
  `tool_call_id` (images as placeholders);
- `Condensation` with a `summary` and its `summary_offset` (the SDK shows the summary only then) → a
  `history_summary` replacing the forgotten events' messages;
- state updates, condensation requests, pauses, token ids, streaming deltas: bookkeeping, counted. The last
  `stats` update's accumulated token usage is kept as `session.usageTotals`.
Usage per call: a conversation folder's `base_state.json` keeps every call's `TokenUsage` (under
`stats.usage_to_metrics.<usage id>.token_usages`, with its `response_id`); each goes on the last message of
the response with that `llm_response_id`; events alone carry only running totals.
An event of a kind this reader does not know is counted under "left out" by kind and named once in
`problems`, so a newer SDK's stream opens with what can be read.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    Names,
    Problem,
    compact_json,
    image_note,
    image_placeholder,
    iso_to_ms,
    pick_conversation,
    read_items,
    summary_metadata,
    with_usage,
)
from engine.importers.folders import FolderError, has_part, list_parts, part_problem, read_part
from engine.messages import AiMessage
from engine.usage import otel_usage

FORMAT = "openhands-v1"
RESULT_KINDS = Names({"ObservationEvent", "UserRejectObservation", "AgentErrorEvent"})
KNOWN_KINDS = Names({"SystemPromptEvent", "MessageEvent", "ActionEvent", "Condensation", *RESULT_KINDS})
BOOKKEEPING = Names(
    {
        "ConversationStateUpdateEvent",
        "CondensationRequest",
        "CondensationSummaryEvent",
        "PauseEvent",
        "TokenEvent",
        "StreamingDeltaEvent",
        "ConversationErrorEvent",
        "HookExecutionEvent",
        "LLMCompletionLogEvent",
        "InterruptEvent",
        "UserActionEvent",
    }
)
SEPARATOR = "\n\n"


def is_v1_event(item: Any) -> bool:
    """An SDK event: a `kind` naming an event class and a `source`; an action's `action` is an object."""
    if not isinstance(item, dict) or not isinstance(item.get("kind"), str) or "source" not in item:
        return False
    kind = item["kind"]
    return kind in KNOWN_KINDS or kind in BOOKKEEPING or kind.endswith("Event")


def detect_openhands_v1(sniff: Any) -> bool:
    items = sniff.items
    if len(items) == 1 and isinstance(items[0], dict) and isinstance(items[0].get("events"), list):
        items = tuple(items[0]["events"][:50])
    records = _records([(None, item) for item in items])
    if records:
        items = tuple(records[0][1]["history"][:50])
    return any(is_v1_event(i) and i["kind"] in KNOWN_KINDS for i in items)


def import_openhands_v1(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    """Events as JSONL, a JSON array, one event, or `{"events": [...]}`; or an evaluation's output.jsonl,
    one record a line, each a conversation (`conversation` picks one, default the first)."""
    out = Collector(path)
    items = read_items(text, out)
    if len(items) == 1 and items[0][0] is None:
        value = items[0][1]
        events = value.get("events") if isinstance(value, dict) and "kind" not in value else value
        if isinstance(events, list):
            items = [(None, e) for e in events]
    reader = EventReader(out)
    records = _records(items)
    if records:
        chosen = pick_conversation(records, conversation or 0, path)
        items = _record_events(chosen[1], reader) if chosen is not None else []
    for index, (line, event) in enumerate(items):
        reader.event(event, line if line is not None else index + 1, None)
    return reader.finish(conversations=max(len(records), 1))


def _records(items: list[tuple[int | None, Any]]) -> list[tuple[int | None, dict[str, Any]]]:
    """An evaluation's records (`{instance_id, instruction, history: [events], metrics, ...}`) whose history
    holds SDK events (the benchmarks harness of SDK 1.0 writes them)."""
    return [
        (line, item)
        for line, item in items
        if isinstance(item, dict)
        and isinstance(item.get("history"), list)
        and any(is_v1_event(e) for e in item["history"][:50])
    ]


_USER_MESSAGE = ("MessageEvent", "user")


def _record_events(record: dict[str, Any], reader: EventReader) -> list[tuple[int | None, Any]]:
    """A record's events, its task (`instruction`) first as the user's turn when no user message opens them:
    the harness sends it as the first message and does not write it to the history."""
    events = record["history"]
    if isinstance(record.get("instance_id"), str):
        reader.session["instanceId"] = record["instance_id"]
    said = any(isinstance(e, dict) and (e.get("kind"), e.get("source")) == _USER_MESSAGE for e in events)
    task = record.get("instruction")
    if not said and isinstance(task, str) and task.strip():
        message = {"role": "user", "content": [{"type": "text", "text": task}]}
        opening = {"kind": "MessageEvent", "source": "user", "id": "instruction", "llm_message": message}
        events = [opening, *events]
    return [(None, event) for event in events]


class EventReader:
    """Reads SDK events one by one (from any file); `finish` closes the last model response."""

    def __init__(self, out: Collector) -> None:
        self.out = out
        self.session: dict[str, Any] = {}
        self.batch: list[tuple[int, dict[str, Any], str | None]] = []  # ActionEvents of one response
        self.names: dict[str, str] = {}
        self.by_event: dict[str, list[str]] = {}  # event id → ids of the messages it produced
        self.unknown: dict[str, int] = {}
        self.summaries = -1
        self.responses: dict[str, int] = {}  # llm_response_id → index of the last message of that response
        self.token_usages: list[tuple[str, dict[str, Any]]] = []  # (usage_id, TokenUsage) of base_state

    def event(self, event: Any, where: int, file: str | None) -> None:
        """One event; `where` is its line (or position), `file` the event file it came from, if any."""
        if not isinstance(event, dict):
            self._problem(where, file, f"expected an event object, found {type(event).__name__}")
            return
        kind = event.get("kind")
        if kind != "ActionEvent" or (
            self.batch and self.batch[-1][1].get("llm_response_id") != event.get("llm_response_id")
        ):
            self._flush()
        if kind == "ActionEvent":
            self.batch.append((where, event, file))
        elif kind == "SystemPromptEvent":
            self._system(where, event)
        elif kind == "MessageEvent":
            self._message(where, event)
        elif kind in RESULT_KINDS:
            self._result(where, event, file)
        elif kind == "Condensation":
            self._condensation(where, event)
        elif kind in BOOKKEEPING:
            if kind == "ConversationStateUpdateEvent" and event.get("key") == "stats":
                self._stats(event.get("value"))
            self.out.skip(f"{kind} (bookkeeping)", where)
        else:
            name = kind if isinstance(kind, str) else "an event without a 'kind'"
            self.out.skip(f"unknown event kind {name}", where)
            self.unknown[name] = self.unknown.get(name, 0) + 1

    def finish(self, conversations: int = 1) -> ImportResult:
        self._flush()
        self._attach_usage()
        for kind, count in self.unknown.items():
            self.out.problem(None, f"{count} event(s) of kind {kind} not read (a newer OpenHands SDK?)")
        return self.out.result(FORMAT, session=self.session, conversations=conversations)

    def _problem(self, where: int | None, file: str | None, reason: str) -> None:
        if file is None:
            self.out.problem(where, reason)
        else:
            self.out.problems.append(Problem(file, None, reason))

    # -- events ----------------------------------------------------------------------------------
    def _system(self, where: int, event: dict[str, Any]) -> None:
        texts = [_text_of(event.get("system_prompt")), _text_of(event.get("dynamic_context"))]
        tools = _list(event, "tools")
        meta = {"tools": tools} if tools else None
        self._add(where, event, "system", "system_prompt", SEPARATOR.join(t for t in texts if t), meta)

    def _message(self, where: int, event: dict[str, Any]) -> None:
        message = event.get("llm_message") if isinstance(event.get("llm_message"), dict) else {}
        content = message.get("content")
        text, notes = _content(content if isinstance(content, list) else [content])
        more, _ = _content(_list(event, "extended_content"))
        text = SEPARATOR.join(t for t in (text, more) if t)
        if event.get("source") == "user" or message.get("role") == "user":
            self._add(where, event, "user", "user_input", text, notes or None)
            return
        self._reasoning(where, event, message)
        self._add(where, event, "assistant", "final_answer", text, notes or None)
        self._response_end(event)

    def _flush(self) -> None:
        if not self.batch:
            return
        batch, self.batch = self.batch, []
        where, first, _ = batch[0]
        self._reasoning(where, first, first)
        calls = []
        for line, event, file in batch:
            call = event.get("tool_call") if isinstance(event.get("tool_call"), dict) else None
            call_id = event.get("tool_call_id") or (call or {}).get("id")
            if call is None or not isinstance(call_id, str):
                self._problem(line, file, "ActionEvent without a tool_call (id, name, arguments)")
                continue
            arguments = call.get("arguments")
            name = str(call.get("name") or event.get("tool_name") or "")
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {
                        "name": name,
                        "arguments": arguments if isinstance(arguments, str) else compact_json(arguments),
                    },
                }
            )
            self.names[call_id] = name
        if not calls:
            return
        thought, _ = _content(_list(first, "thought"))
        meta: dict[str, Any] = {"tool_calls": calls}
        if isinstance(first.get("llm_response_id"), str):
            meta["source"] = {"llmResponseId": first["llm_response_id"]}
        self._add(where, first, "assistant", "tool_calls", thought, meta)
        self._response_end(first)
        for _, event, _ in batch[1:]:  # every event of the response answers to this one message
            self.by_event.setdefault(str(event.get("id")), []).extend(
                self.by_event.get(str(first.get("id")), [])
            )

    def _reasoning(self, where: int, event: dict[str, Any], holder: dict[str, Any]) -> None:
        """The response's reasoning as thoughts: Anthropic thinking blocks, else `reasoning_content`, else
        an OpenAI Responses reasoning item's summary. `holder` is the ActionEvent, or a MessageEvent's
        `llm_message`."""
        blocks = _list(holder, "thinking_blocks")
        texts = [b["thinking"] for b in blocks if isinstance(b, dict) and isinstance(b.get("thinking"), str)]
        reasoning = holder.get("reasoning_content")
        item = holder.get("responses_reasoning_item")
        if not texts and isinstance(reasoning, str) and reasoning.strip():
            texts = [reasoning]
        elif not texts and isinstance(item, dict):
            texts = [t for t in _list(item, "summary") if isinstance(t, str) and t.strip()]
        for text in texts:
            self._add(where, event, "assistant", "thought", text, None, suffix="-thought")

    def _result(self, where: int, event: dict[str, Any], file: str | None) -> None:
        call_id = event.get("tool_call_id")
        if not isinstance(call_id, str):
            self._problem(where, file, f"{event.get('kind')} without a tool_call_id")
            return
        kind = event.get("kind")
        notes: dict[str, Any] = {}
        if kind == "UserRejectObservation":
            text = f"Action rejected: {event.get('rejection_reason') or 'User rejected the action'}"
        elif kind == "AgentErrorEvent":
            text = str(event.get("error") or "")
        else:
            observation = event.get("observation") if isinstance(event.get("observation"), dict) else {}
            content = observation.get("content")
            if content is None:  # SDK 1.0: a command's `output`, a finish's `message`
                texts = (observation[k] for k in _OLD_TEXT if isinstance(observation.get(k), str))
                content = next(texts, None)
            text, notes = _content(content if isinstance(content, list) else [content])
            more, _ = _content(_list(event, "extended_content"))
            text = SEPARATOR.join(t for t in (text, more) if t)
            if observation.get("is_error") or observation.get("error") is True:
                notes["is_error"] = True
        name = str(event.get("tool_name") or self.names.get(call_id, ""))
        meta = {"tool_call_id": call_id, "raw_output": text, "tool_name": name, **notes}
        self._add(where, event, "tool", "tool_output", text, meta, suffix="-out")

    def _condensation(self, where: int, event: dict[str, Any]) -> None:
        forgotten = _list(event, "forgotten_event_ids")
        summary = event.get("summary")
        if not isinstance(summary, str) or not summary or event.get("summary_offset") is None:
            # the SDK inserts a summary into the model's view only with its offset (Condensation.apply)
            self.out.skip(f"Condensation without a summary in view (forgets {len(forgotten)} events)", where)
            return
        gone = {mid for eid in forgotten for mid in self.by_event.get(str(eid), [])}
        replaced = [m for m in self.out.messages if m.id in gone]
        self.summaries += 1
        meta = summary_metadata(summary, replaced, self.summaries)
        meta["source"] = {"forgottenEvents": len(forgotten)}
        self._add(where, event, "system", "history_summary", summary, meta)

    def _response_end(self, event: dict[str, Any]) -> None:
        if isinstance(event.get("llm_response_id"), str):
            self.responses[event["llm_response_id"]] = len(self.out.messages) - 1

    def _attach_usage(self) -> None:
        """Each recorded call (`stats.usage_to_metrics.*.token_usages` of base_state.json) onto the last
        message of its response; a call no event answers to (the condenser's, a title's) is an other call.
        LiteLLM's `prompt_tokens` include the cache read and write, as OpenTelemetry's input does."""
        for usage_id, token_usage in self.token_usages:
            response = token_usage.get("response_id")
            attributes = {
                "gen_ai.usage.input_tokens": token_usage.get("prompt_tokens"),
                "gen_ai.usage.output_tokens": token_usage.get("completion_tokens"),
                "gen_ai.usage.cache_read.input_tokens": token_usage.get("cache_read_tokens"),
                "gen_ai.usage.cache_creation.input_tokens": token_usage.get("cache_write_tokens"),
            }
            model = token_usage.get("model") if isinstance(token_usage.get("model"), str) else None
            parsed = otel_usage({k: v for k, v in attributes.items() if v is not None}, model, response)
            usage = self.out.usage(None, parsed)
            index = self.responses.get(response) if isinstance(response, str) else None
            if usage is None:
                continue
            if index is None:
                self.out.other_call(usage, None, f"a {usage_id} call no event answers to")
            else:
                self.out.messages[index] = with_usage(self.out.messages[index], usage)

    def _stats(self, value: Any) -> None:
        metrics = value.get("usage_to_metrics") if isinstance(value, dict) else None
        if not isinstance(metrics, dict):
            return
        totals = {
            usage_id: m["accumulated_token_usage"]
            for usage_id, m in metrics.items()
            if isinstance(m, dict) and isinstance(m.get("accumulated_token_usage"), dict)
        }
        if totals:
            self.session["usageTotals"] = totals
            model = next((m.get("model_name") for m in metrics.values() if isinstance(m, dict)), None)
            if isinstance(model, str):
                self.session.setdefault("model", model)

    def _add(
        self,
        where: int,
        event: dict[str, Any],
        role: str,
        kind: str,
        text: str,
        meta: dict[str, Any] | None,
        suffix: str = "",
    ) -> None:
        event_id = event.get("id") if isinstance(event.get("id"), str) else f"ohv1-{where}"
        message_id = self.out.unique_id(event_id + suffix)
        self.by_event.setdefault(event_id, []).append(message_id)
        ts = iso_to_ms(event.get("timestamp"))
        self.out.add(AiMessage(message_id, role, kind, text, where if ts is None else ts, meta))


_OLD_TEXT = ("output", "message", "text")  # where SDK 1.0's observations hold their text, by kind


def _list(event: dict[str, Any], key: str) -> list[Any]:
    value = event.get(key)
    return value if isinstance(value, list) else []


def _text_of(value: Any) -> str:
    if isinstance(value, str):
        return value
    return value.get("text") or "" if isinstance(value, dict) else ""


def _content(parts: list[Any]) -> tuple[str, dict[str, Any]]:
    """SDK content (TextContent / ImageContent) as text, images as placeholders noted in metadata."""
    texts: list[str] = []
    images: list[dict[str, Any]] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict) and part.get("type") == "image":
            for url in part.get("image_urls") or []:
                note = image_note({"url": str(url)})
                images.append(note)
                texts.append(image_placeholder(note))
        elif isinstance(part, dict) and isinstance(part.get("text"), str):
            texts.append(part["text"])
    return SEPARATOR.join(t for t in texts if t), ({"images": images} if images else {})


# -- conversation folders ---------------------------------------------------------------------------
BASE_STATE = "base_state.json"
EVENTS_DIR = "events"
CLAIM_LOOKS = 1000  # entries of events/ looked at to tell an SDK conversation from any folder named so
EVENT_NAME = re.compile(r"^event-(\d{5,})-[0-9A-Za-z-]+\.json$")


def claims_folder(root: Path) -> bool:
    """`base_state.json`, or an `events/` folder with an event file among its first entries."""
    if has_part(root, BASE_STATE):
        return True
    events = root / EVENTS_DIR
    if events.is_symlink() or not events.is_dir():
        return False
    try:
        with os.scandir(events) as entries:
            return any(EVENT_NAME.match(e.name) for e, _ in zip(entries, range(CLAIM_LOOKS), strict=False))
    except OSError:
        return False


def import_folder(root: Path, conversation: int | None = None) -> ImportResult:
    """A conversation folder: `base_state.json` for the model and tools, then every event file in order.
    A missing `events/` folder is an error; a missing or unreadable `base_state.json`, or an event file
    that cannot be read, is a problem naming that file (the rest is imported)."""
    events_dir = root / EVENTS_DIR
    if events_dir.is_symlink():  # never entered: a link can loop or lead out of the conversation
        problem = part_problem(root, events_dir)
        reason = problem if problem and "symlink" in problem else "a symlinked folder; not entered"
        raise FolderError(f"{events_dir}: {reason}; no event can be read")
    if not events_dir.is_dir():
        raise FolderError(f"{events_dir}: missing part folder; no event can be read")
    out = Collector(str(root))
    reader = EventReader(out)
    try:
        _base_state(json.loads(read_part(root, BASE_STATE)), reader)
    except FolderError as error:
        out.problems.append(
            Problem(
                str(root / BASE_STATE), None, f"{str(error).split(': ', 1)[1]}; model and tool names not read"
            )
        )
    except json.JSONDecodeError as error:
        out.problems.append(Problem(str(root / BASE_STATE), error.lineno, f"invalid JSON ({error.msg})"))
    files, problems = list_parts(root, events_dir, lambda name: EVENT_NAME.match(name) is not None)
    out.problems.extend(problems)
    files.sort(key=lambda f: int(EVENT_NAME.match(f.name).group(1)))  # type: ignore[union-attr]
    for position, file in enumerate(files, 1):
        try:
            event = json.loads(read_part(root, file.relative_to(root)))
        except FolderError as error:
            out.problems.append(Problem(str(file), None, str(error).split(": ", 1)[1]))
            continue
        except json.JSONDecodeError as error:
            out.problems.append(Problem(str(file), error.lineno, f"invalid JSON ({error.msg})"))
            continue
        reader.event(event, position, str(file))
    return reader.finish()


def _base_state(state: Any, reader: EventReader) -> None:
    """The model, tool names and conversation id into the session; the recorded calls into the reader."""
    session = reader.session
    agent = state.get("agent") if isinstance(state, dict) else None
    llm = agent.get("llm") if isinstance(agent, dict) else None
    if isinstance(llm, dict) and isinstance(llm.get("model"), str):
        session["model"] = llm["model"]
    tools = agent.get("tools") if isinstance(agent, dict) else None
    if isinstance(tools, list):
        session["tools"] = [t.get("name") for t in tools if isinstance(t, dict)]
    if isinstance(state, dict) and isinstance(state.get("id"), str):
        session["conversationId"] = state["id"]
    stats = state.get("stats") if isinstance(state, dict) else None
    metrics = stats.get("usage_to_metrics") if isinstance(stats, dict) else None
    for usage_id, entry in metrics.items() if isinstance(metrics, dict) else ():
        usages = entry.get("token_usages") if isinstance(entry, dict) else None
        reader.token_usages += [(usage_id, u) for u in usages or () if isinstance(u, dict)]
