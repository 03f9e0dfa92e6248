"""OpenHands event streams (trajectories) as linnkit messages.

A stream is a list of events (a JSON array, JSONL, or `{"history": [...]}`): actions and observations with a
`source` (`user`, `agent`, `environment`). A user `message` action → `user_input`; an agent action with
`tool_call_metadata` → the model response it came from (`model_response.choices[0].message`: its text and
every tool call of that response, parallel calls together) as one `tool_calls` message; an observation
with `tool_call_metadata` → the `tool_output` of that call (each model response's `usage`, litellm's, is its
call's usage, once); `finish` and agent `message` actions →
`final_answer`; a `system` action → `system_prompt`. Actions without metadata (older streams) become a call
named after the action, answered by the observation whose `cause` is that action. State changes, recalls
and other bookkeeping events are counted, not imported.

An evaluation's `output.jsonl` holds one record a line (`{instance_id, instruction, history, metrics, ...}`):
each record is a conversation (`conversation` picks one, default the first). OpenDevin's early records
(2024) hold `history` as `[action, observation]` pairs, without `source`, `id` or `cause`: an action is the
agent's and the observation in its pair answers it; the task (`instruction`) comes first as the user's
turn when the history has no user message.

OpenHands V1 (the agent SDK) writes events whose `action`/`observation` is an object and whose `kind` names
the event (`ActionEvent`, `ObservationEvent`, `MessageEvent`, `SystemPromptEvent`, ...). Detection claims
them with half a score (a V1 importer, when registered, is preferred); read here, they give what can be
read without crashing: the system prompt, messages, each model response's tool calls and their results.
Other V1 event kinds are left out by kind.
"""

from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from engine.importers._common import (
    Collector,
    ImportResult,
    Names,
    compact_json,
    iso_to_ms,
    pick_conversation,
    read_items,
)
from engine.importers.openai_chat import normalize_call
from engine.messages import AiMessage
from engine.session_lines import json_type
from engine.usage import UsageProblem, openai_usage

FORMAT = "openhands"
SOURCES = Names({"user", "agent", "environment"})
BOOKKEEPING = Names({"change_agent_state", "recall", "agent_state_changed", "null", "condensation"})


def _events(value: Any) -> list[Any] | None:
    if isinstance(value, dict) and isinstance(value.get("history"), list):
        return value["history"]
    return value if isinstance(value, list) else None


def _is_event(item: Any) -> bool:
    return (
        isinstance(item, dict)
        and item.get("source") in SOURCES
        and ("action" in item or "observation" in item)
    )


def detect_openhands(sniff: Any) -> bool:
    """V0 events (`action`/`observation` names); V1 SDK events (objects) are `openhands-v1`'s."""
    items = [(None, sniff.document)] if sniff.document is not None else [(None, i) for i in sniff.items]
    runs = _runs(_unwrapped(items))
    events = _events(sniff.document)
    if runs:
        events = _flat(runs[0][1]["history"])
    sample = [e for e in (events[:50] if events is not None else list(sniff.items)) if _is_event(e)]
    return any(not _is_v1(e) for e in sample)


def _unwrapped(items: list[tuple[int | None, Any]]) -> list[tuple[int | None, Any]]:
    """The elements of a whole-document array (of events or of records), else the items as they are."""
    if len(items) == 1 and items[0][0] is None and isinstance(items[0][1], list):
        return [(None, element) for element in items[0][1]]
    return items


def _runs(items: list[tuple[int | None, Any]]) -> list[tuple[int | None, dict[str, Any]]]:
    """The records among the items that hold a run's `history` (an evaluation's output.jsonl lines)."""
    return [
        (line, item)
        for line, item in items
        if isinstance(item, dict) and isinstance(item.get("history"), list)
    ]


def _flat(history: list[Any]) -> list[Any]:
    """A history's events; OpenDevin's `[action, observation]` pairs given what later streams write: the
    action's source and id, and the observation's source and cause (the action of its pair)."""
    if not any(isinstance(event, list) for event in history):
        return history
    events: list[Any] = []
    for n, pair in enumerate(history):
        if not isinstance(pair, list):
            events.append(pair)
            continue
        action = pair[0] if pair and isinstance(pair[0], dict) else None
        if action is not None:
            action = {"source": "agent", "id": f"pair-{n}", **action}
            events.append(action)
        for observation in pair[1:]:
            if isinstance(observation, dict):
                cause = action.get("id") if action is not None else None
                events.append({"source": "environment", "cause": cause, **observation})
    return events


def _is_v1(event: dict[str, Any]) -> bool:
    return isinstance(event.get("action"), dict) or isinstance(event.get("observation"), dict)


def import_openhands(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    items = _unwrapped(read_items(text, out))
    runs = _runs(items)
    reader = _Reader(out)
    if runs:
        chosen = pick_conversation(runs, conversation or 0, path)
        items = _run_items(chosen[1], reader) if chosen is not None else []
    for index, (line, event) in enumerate(items):
        where = line if line is not None else index + 1
        if not isinstance(event, dict):
            out.problem(line, f"event {index}: expected an object, found {type(event).__name__}")
        elif (wrong := _wrong_type(event)) is not None:
            out.problem(line, f"event {index}: {wrong}; left out")
        elif isinstance(event.get("kind"), str) and event["kind"].endswith("Event"):
            reader.v1_event(where, event)
        elif "observation" in event:
            reader.observation(where, event)
        elif "action" in event:
            reader.action(where, event)
        else:
            out.skip("neither an action nor an observation", where)
    return out.result(FORMAT, session=reader.session, conversations=max(len(runs), 1))


def _wrong_type(event: dict[str, Any]) -> str | None:
    """A value of a type OpenHands never writes where it would change what is read without a word (a call's
    metadata that is no object made the action a call of an older stream, under an id of ours; a call id
    that is no string answered no call), or None."""
    meta = event.get("tool_call_metadata")
    if meta is not None and not isinstance(meta, dict):
        return f"tool_call_metadata: must be an object, got {json_type(meta)}"
    call_id = meta.get("tool_call_id") if isinstance(meta, dict) else None
    if call_id is not None and not isinstance(call_id, str):
        return f"tool_call_metadata.tool_call_id: must be a call id (a string), got {json_type(call_id)}"
    return None


def _run_items(record: dict[str, Any], reader: _Reader) -> list[tuple[int | None, Any]]:
    """A record's events, its task first when no user message opens them (OpenDevin's records)."""
    events = _flat(record["history"])
    if isinstance(record.get("instance_id"), str):
        reader.session["instanceId"] = record["instance_id"]
    said = any(
        isinstance(e, dict) and e.get("action") == "message" and e.get("source") == "user" for e in events
    )
    task = record.get("instruction")
    if not said and isinstance(task, str) and task.strip():
        events = [
            {"id": "instruction", "source": "user", "action": "message", "args": {"content": task}},
            *events,
        ]
    return [(None, event) for event in events]


class _Reader:
    def __init__(self, out: Collector) -> None:
        self.out = out
        self.responses: set[str] = set()  # model responses already written as a tool_calls message
        self.names: dict[str, str] = {}  # call id -> tool name
        self.session: dict[str, Any] = {}

    def v1_event(self, where: int, event: dict[str, Any]) -> None:
        """An OpenHands V1 SDK event: what can be read of it (see the module's doc)."""
        kind = event["kind"]
        if kind == "SystemPromptEvent":
            self._add(where, event, "system", "system_prompt", _v1_text(event.get("system_prompt")))
        elif kind == "MessageEvent" and isinstance(event.get("llm_message"), dict):
            message = event["llm_message"]
            role = "user" if message.get("role") == "user" else "assistant"
            kind_of = "user_input" if role == "user" else "final_answer"
            self._add(where, event, role, kind_of, _v1_text(message.get("content")))
        elif kind == "ActionEvent" and isinstance(event.get("tool_call"), dict):
            call = normalize_call(_v1_call(event["tool_call"]))
            self.names[call["id"]] = call["function"]["name"]
            key = event.get("llm_response_id")
            last = self.out.messages[-1] if self.out.messages else None
            if key and key in self.responses and last is not None and last.type == "tool_calls":
                calls = [*last.tool_calls, call]  # a parallel call of the same model response
                self.out.messages[-1] = last.with_(metadata={**(last.metadata or {}), "tool_calls": calls})
                return
            self.responses.add(key)
            self._add(
                where,
                event,
                "assistant",
                "tool_calls",
                _v1_text(event.get("thought")),
                {"tool_calls": [call]},
            )
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent") and event.get(
            "tool_call_id"
        ):
            observation = event.get("observation")
            text = _v1_text(
                observation.get("content") if isinstance(observation, dict) else event.get("error")
            )
            call_id = event["tool_call_id"]
            head = {"tool_call_id": call_id, "raw_output": text, "tool_name": self.names.get(call_id, "")}
            self._add(where, event, "tool", "tool_output", text, head)
        else:
            self.out.skip(f"V1 event {kind} (not read)", where)

    def action(self, where: int, event: dict[str, Any]) -> None:
        kind, args = event.get("action"), event.get("args") if isinstance(event.get("args"), dict) else {}
        text = args.get("content") if isinstance(args.get("content"), str) else event.get("message") or ""
        if kind == "system":
            self._add(where, event, "system", "system_prompt", text)
        elif kind == "message" and event.get("source") == "user":
            self._add(where, event, "user", "user_input", text)
        elif kind in ("message", "finish"):
            final = event.get("message") or args.get("final_thought") or args.get("thought") or text
            self._add(where, event, "assistant", "final_answer", final)
            self._usage(where, event.get("tool_call_metadata"))
        elif kind in BOOKKEEPING:
            self.out.skip(f"{kind} (bookkeeping)", where)
        elif isinstance(event.get("tool_call_metadata"), dict):
            self._model_call(where, event, event["tool_call_metadata"])
        else:  # an older stream: the action itself is the call
            call = {"id": f"oh-{event.get('id', where)}", "type": "function"}
            call["function"] = {"name": str(kind), "arguments": compact_json(args)}
            self.names[call["id"]] = str(kind)
            self._add(
                where, event, "assistant", "tool_calls", args.get("thought") or "", {"tool_calls": [call]}
            )

    def _model_call(self, where: int, event: dict[str, Any], meta: dict[str, Any]) -> None:
        response = meta.get("model_response") if isinstance(meta.get("model_response"), dict) else {}
        key = response.get("id") or meta.get("tool_call_id")
        if key in self.responses:
            return  # a parallel call of a response already written
        self.responses.add(key)
        if isinstance(response.get("model"), str):
            self.session.setdefault("model", response["model"])
        choices = response.get("choices") or [{}]
        message = choices[0].get("message") if isinstance(choices[0], dict) else None
        message = message if isinstance(message, dict) else {}
        calls = [normalize_call(c) for c in message.get("tool_calls") or []]
        for call in calls:
            call.pop("index", None)
            self.names[call["id"]] = call["function"]["name"]
        if not calls:  # metadata without the response: the one call it names
            arguments = compact_json(event.get("args") or {})
            function = {"name": meta.get("function_name") or "", "arguments": arguments}
            calls = [{"id": meta.get("tool_call_id") or "", "type": "function", "function": function}]
            self.names[calls[0]["id"]] = calls[0]["function"]["name"]
        content = message.get("content") if isinstance(message.get("content"), str) else ""
        self._add(where, event, "assistant", "tool_calls", content, {"tool_calls": calls})
        self._usage(where, meta)

    def _usage(self, where: int, meta: Any) -> None:
        """The usage of the model response an action came from (litellm's: OpenAI's counts, and Anthropic's
        cache writes inside the prompt), on the message just added for it."""
        response = meta.get("model_response") if isinstance(meta, dict) else None
        usage = response.get("usage") if isinstance(response, dict) else None
        if not isinstance(usage, dict):
            return
        model = response.get("model") if isinstance(response.get("model"), str) else None
        parsed = openai_usage(
            usage, model, response.get("id") if isinstance(response.get("id"), str) else None
        )
        written = usage.get("cache_creation_input_tokens")
        if not isinstance(parsed, UsageProblem) and isinstance(written, int) and written > 0:
            parsed = replace(parsed, cache_write_tokens=written)
        recorded = self.out.usage(where, parsed)
        if recorded is not None:
            end = len(self.out.messages)
            self.out.attach_usage(end - 1, end, recorded, where, "a response with no message")

    def observation(self, where: int, event: dict[str, Any]) -> None:
        meta = event.get("tool_call_metadata")
        if isinstance(meta, dict) and meta.get("tool_call_id"):
            call_id = meta["tool_call_id"]
        elif f"oh-{event.get('cause')}" in self.names:
            call_id = f"oh-{event.get('cause')}"
        else:
            self.out.skip(f"observation {event.get('observation')} without a call", where)
            return
        content = event.get("content")
        text = content if isinstance(content, str) else json.dumps(content, ensure_ascii=False)
        head = {"tool_call_id": call_id, "raw_output": text, "tool_name": self.names.get(call_id, "")}
        self._add(where, event, "tool", "tool_output", text, head)

    def _add(
        self, where: int, event: dict, role: str, kind: str, text: str, meta: dict | None = None
    ) -> None:
        ts = iso_to_ms(event.get("timestamp"))
        message_id = self.out.unique_id(f"oh-{event.get('id', where)}" + ("-out" if role == "tool" else ""))
        self.out.add(AiMessage(message_id, role, kind, text, where if ts is None else ts, meta))


def _v1_text(value: Any) -> str:
    """Text of a V1 content value: a string, a `{type: text, text}` part, or a list of parts."""
    if isinstance(value, str):
        return value
    parts = value if isinstance(value, list) else [value]
    texts = [p.get("text") for p in parts if isinstance(p, dict) and isinstance(p.get("text"), str)]
    return "\n\n".join(t for t in texts if t) if texts else ("" if value is None else compact_json(value))


def _v1_call(call: dict[str, Any]) -> dict[str, Any]:
    """A V1 `tool_call` (`{id, name, arguments}`, or already OpenAI-shaped) in OpenAI's shape."""
    if isinstance(call.get("function"), dict):
        return call
    function = {"name": call.get("name") or "", "arguments": call.get("arguments") or "{}"}
    return {"id": call.get("id") or "", "type": "function", "function": function}
