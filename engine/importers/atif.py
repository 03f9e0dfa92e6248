"""Harbor's Agent Trajectory Interchange Format (ATIF, v1.0–v1.4 and later) as linnkit messages.

Read from the specification (harbor `docs/rfcs/0001-trajectory-format.md`): a root `{schema_version:
"ATIF-v1.x", session_id, agent, steps: [...]}`; each step has a `source` (`system`, `user`, `agent`), a
`message`, and for agent steps `reasoning_content`, `tool_calls` (`tool_call_id`, `function_name`,
`arguments`), `observation.results` (`source_call_id`, `content`, `subagent_trajectory_ref`) and `metrics`
(`prompt_tokens` with `cached_tokens` inside it, `completion_tokens`).

Mapping: the first system steps → `system_prompt`; a later system step (context management, a reset) and
the user steps → `user_input` (the later system ones marked `generated`: linnkit keeps no mid-history
system message); an agent step → its reasoning as a `thought`, its message as the text of one `tool_calls`
message with every call (or a `final_answer`), then each observation result answering a call as a
`tool_output`; a result answering no call (a terminal agent's screen) is what the model reads next, a
`user_input` marked `generated`. A step whose observation answers none of its calls by id (Harbor's
Terminus 2 parses its commands from the reply's text, so the spec's id-less results "come from an action
that doesn't use the standard tool calling format") made no tool calls: it is a `final_answer` whose text
is the message and then each call's name and arguments, a line each (the calls kept in
`metadata.text_actions`), and its results are what the model reads next. The step's metrics are the
call's usage. Token ids and logprobs are left out (counted). Since ATIF-v1.6 a `message` or a result's
`content` may be a list of content parts (`{type: "text", text}`, `{type: "image", source: {media_type,
path}}`): their text joined by a blank line, an image as `[image: PATH]` with a note in `metadata.images`.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from engine.importers._blocks import flatten_blocks
from engine.importers._common import Collector, ImportResult, compact_json, iso_to_ms, load_json_document
from engine.importers.registry import Sniff
from engine.messages import AiMessage
from engine.session_lines import json_type
from engine.usage import openai_usage

FORMAT = "atif"
BULKY_METRICS = ("prompt_token_ids", "completion_token_ids", "logprobs")


def detect_atif(sniff: Sniff) -> bool:
    document = sniff.document
    if not isinstance(document, dict) or not isinstance(document.get("steps"), list):
        return False
    version = document.get("schema_version")
    return isinstance(version, str) and version.upper().startswith("ATIF-")


def import_atif(text: str, path: str = "<text>", conversation: int | None = None) -> ImportResult:
    out = Collector(path)
    document, error, line = load_json_document(text)
    if error is not None:
        out.problem(line, error)
        return out.result(FORMAT)
    agent = document.get("agent") if isinstance(document.get("agent"), dict) else {}
    default_model = agent.get("model_name") if isinstance(agent.get("model_name"), str) else None
    seen_other = False
    for index, step in enumerate(document["steps"]):
        if not isinstance(step, dict):
            out.problem(None, f"steps[{index}]: expected an object, found {type(step).__name__}")
            continue
        wrong = _wrong_type(step)
        if wrong is not None:
            out.problem(None, f"steps[{index}].{wrong}; left out")
            continue
        source = step.get("source")
        base = f"step-{step.get('step_id', index + 1)}"
        timestamp = iso_to_ms(step.get("timestamp")) or index
        text, notes = _content(step.get("message"))
        if source == "system" and not seen_other:
            out.add(AiMessage(out.unique_id(base), "system", "system_prompt", text, timestamp, notes or None))
        elif source in ("system", "user"):
            seen_other = True
            meta = {"generated": True, "source": {"atif": "system"}} if source == "system" else {}
            if text:
                out.add(
                    AiMessage(
                        out.unique_id(base), "user", "user_input", text, timestamp, {**meta, **notes} or None
                    )
                )
            _observations(out, step, base, timestamp, {})
        elif source == "agent":
            seen_other = True
            _agent(out, step, base, timestamp, default_model)
        else:
            out.problem(None, f"steps[{index}]: unknown source {source!r}")
    session = {"sessionId": document.get("session_id"), "schemaVersion": document.get("schema_version")}
    if default_model:
        session["model"] = default_model
    return out.result(FORMAT, session=session)


def _wrong_type(step: dict[str, Any]) -> str | None:
    """A step value of a type ATIF never writes where it would change what is read without a word, or stop
    the reader outside its errors (a `step_id` that is text), or None."""
    step_id = step.get("step_id")
    if "step_id" in step and not _whole(step_id):
        got = "a fraction" if isinstance(step_id, float) else json_type(step_id)
        return f"step_id: must be a step number (an integer), got {got}"
    message = step.get("message")
    if isinstance(message, bool | int | float | dict) or (isinstance(message, list) and not _parts(message)):
        got = "a list that is not content parts" if isinstance(message, list) else json_type(message)
        return f"message: must be text (or a list of content parts), got {got}"
    return None


def _parts(items: list[Any]) -> bool:
    """ATIF-v1.6 content parts: objects each naming its type."""
    return all(isinstance(part, dict) and isinstance(part.get("type"), str) for part in items)


def _content(value: Any) -> tuple[str, dict[str, Any]]:
    """A message or result content: text as it is; content parts as their text and image placeholders,
    with the notes of what they held (`flatten_blocks`)."""
    if isinstance(value, str):
        return value, {}
    if isinstance(value, list) and _parts(value):
        return flatten_blocks(value)
    return "", {}


def _whole(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and float(value).is_integer()


def _agent(
    out: Collector, step: dict[str, Any], base: str, timestamp: int, default_model: str | None
) -> None:
    start = len(out.messages)
    model = step.get("model_name") if isinstance(step.get("model_name"), str) else default_model
    source = {"model": model} if model else {}
    reasoning = step.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning.strip():
        out.add(AiMessage(out.unique_id(base), "assistant", "thought", reasoning, timestamp))
    text, notes = _content(step.get("message"))
    calls = [_call(c) for c in step.get("tool_calls") or [] if isinstance(c, dict)]
    names = {c["id"]: c["function"]["name"] for c in calls}
    meta: dict[str, Any] = {"source": source, **notes} if source else dict(notes)
    if calls and _answered_without_ids(step):
        lines = [text, *(f"{c['function']['name']} {c['function']['arguments']}" for c in calls)]
        meta["text_actions"] = calls
        out.add(
            AiMessage(
                out.unique_id(base), "assistant", "final_answer", "\n".join(lines).strip(), timestamp, meta
            )
        )
    elif calls:
        out.add(
            AiMessage(
                out.unique_id(base), "assistant", "tool_calls", text, timestamp, {"tool_calls": calls, **meta}
            )
        )
    elif text:
        out.add(AiMessage(out.unique_id(base), "assistant", "final_answer", text, timestamp, meta or None))
    elif start == len(out.messages):
        out.skip("empty agent step (by step id)", int(step.get("step_id") or 0))
    end = len(out.messages)
    metrics = step.get("metrics")
    if isinstance(metrics, dict) and "prompt_tokens" in metrics:
        for key in BULKY_METRICS:
            if key in metrics:
                out.skip(f"metrics.{key} (by step id)", int(step.get("step_id") or 0))
        raw = {k: v for k, v in metrics.items() if k not in BULKY_METRICS}
        usage = {
            "prompt_tokens": metrics.get("prompt_tokens"),
            "completion_tokens": metrics.get("completion_tokens"),
        }
        if metrics.get("cached_tokens") is not None:
            usage["prompt_tokens_details"] = {"cached_tokens": metrics["cached_tokens"]}
        parsed = out.usage(None, openai_usage(usage, model))
        if parsed is not None:
            out.attach_usage(start, end, replace(parsed, raw=raw), None, "an agent step with no message")
    _observations(out, step, base, timestamp, names)


def _answered_without_ids(step: dict[str, Any]) -> bool:
    """The step's observation has results and not one names the call it answers."""
    observation = step.get("observation")
    results = [r for r in (observation.get("results") or [] if isinstance(observation, dict) else [])
               if isinstance(r, dict)]  # fmt: skip
    return bool(results) and not any(r.get("source_call_id") for r in results)


def _observations(
    out: Collector, step: dict[str, Any], base: str, timestamp: int, names: dict[str, str]
) -> None:
    observation = step.get("observation")
    results = observation.get("results") if isinstance(observation, dict) else None
    for result in results or []:
        if not isinstance(result, dict):
            continue
        content = result.get("content")
        text, notes = _content(content)
        if (
            content is not None
            and not isinstance(content, str)
            and not (isinstance(content, list) and _parts(content))
        ):
            text = compact_json(content)  # no content parts: kept as the JSON it is
        refs = result.get("subagent_trajectory_ref")
        meta: dict[str, Any] = dict(notes)
        if isinstance(refs, list) and refs:
            meta["subagents"] = refs
            if not text:
                text = "; ".join(f"[subagent {r.get('session_id')}]" for r in refs if isinstance(r, dict))
        call_id = result.get("source_call_id")
        if isinstance(call_id, str) and call_id:
            head = {"tool_call_id": call_id, "raw_output": text}
            if call_id in names:
                head["tool_name"] = names[call_id]
            out.add(AiMessage(out.unique_id(base), "tool", "tool_output", text, timestamp, {**head, **meta}))
        else:
            meta.update(generated=True, source={"atif": "observation"})
            out.add(AiMessage(out.unique_id(base), "user", "user_input", text, timestamp, meta))


def _call(call: dict[str, Any]) -> dict[str, Any]:
    arguments = call.get("arguments")
    text = arguments if isinstance(arguments, str) else compact_json({} if arguments is None else arguments)
    return {
        "id": str(call.get("tool_call_id") or ""),
        "type": "function",
        "function": {"name": str(call.get("function_name") or ""), "arguments": text},
    }
