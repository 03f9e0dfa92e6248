"""Random conformance-format cases (single builds and replays) for the linnkit differential oracle: messy
agent sessions (multi-call groups, unanswered calls, second outputs, far outputs, thoughts, fences of every
placement, summaries and compressed history in the input, legacy types, repeated ids, checkpoints, CJK) under
random policies, tokenizers, summary agents and ticks. Deterministic for a seed.

A second random stream (`wide`) adds what the base cases never exercise (`widen_*`): odd message shapes
(top-level or empty call lists, blank ids and names, roles that do not match the type, text outside the BMP,
long outputs of every summary shape, odd summary metadata), every policy group's remaining fields, free
fence descriptors and edge ticks. It draws apart from the base stream, so a seed's base cases stay as
they were. A third stream (`edge_*`, off with `EDGES = False`) adds policy values at the limits linnkit
accepts, must-keep truncation rules over fenced messages, fence shares past 1, odd reminder rules and
metadata, and replays of up to 60 steps under a small budget (several summaries)."""

from __future__ import annotations

import json
import random
from typing import Any

WORDS = "the invoice total rounding test fails because worker race lock 订单 导出 数据 竞争 修复 测试".split()
FENCES = [  # kind, role, placement, lifetime
    ("memory-context", "user", "after-system", "persisted"),
    ("repo-map", "system", "after-system", "turn-only"),
    ("time-note", "user", "before-current-user", "turn-only"),
    ("follow-up", "user", "after-current-user", "turn-only"),
    ("tool-hint", "user", "after-last-tool-result", "persisted"),
    ("sys-note", "system", "before-current-user", "persisted"),
]
TOOLS = ["read_file", "grep", "run_shell", "text_to_image", "phase_checkpoint"]
ARGUMENTS = [
    '{"path": "a.py"}',
    "{}",
    '{"q": null, "n": 2}',
    "not json",
    '{"1": "x", "b": [1, 2.5]}',
    '{"n": 0}',
    "",
]
RULES = [
    "tool_call_streak_every_ten",
    "last_steps_hint",
    "context_budget_warning",
    "max_steps_force_final_answer",
]


EDGES = True  # the third stream's draws (`edge_*`); False reproduces the cases of before they were added

# linnkit's own reminder trigger kinds, in the order the generator draws from
TRIGGER_KINDS = (
    "agent-has-tool",
    "step-count-modulo",
    "tool-call-streak",
    "remaining-steps-leq",
    "phase-equals",
    "budget-warning",
)


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        # the draws added for wider coverage use their own stream, so a seed's base cases stay as they were
        self.wide = random.Random(seed * 7919 + 17)
        # a third stream (`edge_*`): boundary values and odd JSON, drawn after the other two, so a seed's base
        # and wide draws stay as they were
        self.edge = random.Random(seed * 104729 + 31)
        self._host: dict[str, Any] = {}  # host fallback groups `widen_host` adds to the case being made
        self._messages: list[dict[str, Any]] = []  # the session `insertions` puts messages into
        self._extra = 0

    def rarely(self, p: float) -> bool:
        return self.wide.random() < p

    def maybe(self, p: float) -> bool:
        return self.rng.random() < p

    def text(self, n: int) -> str:
        words = [self.rng.choice(WORDS) for _ in range(n)]
        if self.maybe(0.01):
            words.append("<|endoftext|>")  # a special token: tiktoken refuses it without a fallback in places
        return " ".join(words)

    # -- sessions -----------------------------------------------------------------------------------
    def session(self, turns: int | None = None) -> list[dict[str, Any]]:
        s = _Session()
        rng = self.rng
        if self.maybe(0.9):
            s.add("system", "system_prompt", self.text(rng.randint(5, 40)))
        if self.maybe(0.3):
            s.add(
                "user",
                "context_injection",
                self.text(rng.randint(3, 200)),
                fenceKind="memory-context",
                fenceAttrs={"scope": "repo"},
                fencePlacement="after-system",
            )
        for _ in range(turns or rng.randint(1, rng.choice([6, 6, 15, 50]))):
            self.fence(s, 0.2, {})
            s.add(
                "user",
                "user_input",
                rng.choice([self.text(rng.randint(2, 20)), "  \n", "<user_request>\nhi\n</user_request>"]),
            )
            self.fence(s, 0.15, {"n": 3})
            for _ in range(rng.randint(0, 5)):
                self.turn_item(s)
        if self.maybe(0.15) and len(s.messages) > 3:
            i, j = rng.sample(range(len(s.messages)), 2)
            s.messages[j]["id"] = s.messages[i]["id"]
        return self.widen_session(s.messages)

    # -- wider coverage (own random stream) -----------------------------------------------------------
    def widen_session(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Shapes the base session never makes: blank or missing call ids and names, object arguments, calls
        without `function`, `extra_content`, odd `summarySeq` values, empty
        sidecars, top-level `tool_calls`, empty call lists, outputs without ids or content, execution-time
        observation metadata, checkpoint markers at the top level or malformed, thoughts already in
        `<think>`, empty answers, document fragments and user messages with a tool name, summaries without
        or with empty replaced ids, compressed history naming real ids; then inserted orphans, wide parallel
        groups answered out of order, long tool streaks, unregistered or placement-less fences."""
        ids = [m["id"] for m in messages]
        widen = {
            "tool_calls": self._widen_calls,
            "tool_output": self._widen_output,
            "thought": self._widen_thought,
            "final_answer": self._widen_answer,
            "history_summary": self._widen_summary,
            "user_input": self._widen_input,
        }
        for m in messages:
            if m["type"] in widen and (
                m.get("metadata") or m["type"] in ("thought", "final_answer", "user_input")
            ):
                widen[m["type"]](m, ids)
        w, rarely = self.wide, self.rarely
        anchors = [
            m for m in messages if m["type"] == "tool_calls" and "tool_calls" in (m.get("metadata") or {})
        ]
        if anchors and rarely(0.03):
            w.choice(anchors)["metadata"]["tool_calls"] = []
        elif anchors and rarely(0.05):  # top level, as some hosts store them (linnkit reads metadata only)
            m = w.choice(anchors)
            m["tool_calls"] = m["metadata"].pop("tool_calls")
        self.insertions(messages)
        self.odd_messages(messages)
        return messages

    def _widen_calls(self, m: dict[str, Any], ids: list[str]) -> None:
        w, rarely, meta = self.wide, self.rarely, m["metadata"]
        for call in meta["tool_calls"]:
            if rarely(0.03):
                call["id"] = w.choice(["", "  "])
            if rarely(0.03):
                call["function"]["name"] = ""
            if rarely(0.05):
                call["extra_content"] = {"google": {"thought_signature": "c2ln"}}
            if rarely(0.02):
                call["function"]["arguments"] = {"path": "a.py", "n": 1}  # an object, not a string
            elif rarely(0.01):
                del call["function"]
        if rarely(0.05):
            meta["reasoning_details"] = []

    def _widen_output(self, m: dict[str, Any], ids: list[str]) -> None:
        w, rarely, meta = self.wide, self.rarely, m["metadata"]
        if rarely(0.02):
            meta.pop("tool_call_id", None)
        if rarely(0.03):
            m["content"] = ""
        if rarely(0.03):
            meta.pop("tool_name", None)
        if rarely(0.05):
            meta["observation"] = m["content"][:80]
            meta["observationTruncation"] = {
                "originalChars": len(m["content"]) * 3 + 1,
                "previewChars": max(1, len(m["content"])),
            }
        if rarely(0.04):
            meta["raw_output"] = w.choice(
                [
                    json.dumps({"_type": "context_checkpoint", "summary": "top level"}),
                    json.dumps({"data": {"_type": "context_checkpoint", "summary": 3}}),
                    json.dumps({"data": {"_type": "context_checkpoint"}}),
                    'not json "context_checkpoint" here',
                    "",
                ]
            )

    def _widen_thought(self, m: dict[str, Any], ids: list[str]) -> None:
        if self.rarely(0.1):
            m["content"] = f"<think>{m['content']}</think>"
        elif self.rarely(0.03):
            m["content"] = ""

    def _widen_answer(self, m: dict[str, Any], ids: list[str]) -> None:
        rarely, meta = self.rarely, m.get("metadata")
        if rarely(0.03):
            m["content"] = ""
        if rarely(0.03):
            m.setdefault("metadata", {})["reasoning_details"] = []
        if rarely(0.02):
            m.setdefault("metadata", {})["provider_empty_replay_field"] = True
        if meta and meta.get("isCompressedToolHistory") and rarely(0.5):
            meta["replacementSourceIds"] = self.wide.sample(ids, min(len(ids), 2))

    def _widen_summary(self, m: dict[str, Any], ids: list[str]) -> None:
        w, meta = self.wide, m["metadata"]
        r = w.random()
        if r < 0.1:
            meta.pop("replacedMessageIds")
        elif r < 0.2:
            meta["replacedMessageIds"] = []
        elif r < 0.3:
            meta["replacementSourceIds"] = w.sample(ids, 1)
        elif r < 0.4:
            meta["summarySeq"] = w.choice(["2", "10", 2.5, -1, 0])  # strings compare as JS does
        elif r < 0.45:
            meta.pop("originalMessageCount", None)

    def _widen_input(self, m: dict[str, Any], ids: list[str]) -> None:
        if self.rarely(0.03):
            m["content"] = ""

    def odd_messages(self, messages: list[dict[str, Any]]) -> None:
        """Text outside the BMP (UTF-16 lengths), long outputs of every summary shape (big objects, nested or
        non-string observations, string arrays, multi-line text), a type with an unexpected role, a type
        linnkit does not know, and an explicit `metadata: null`."""
        w, rarely = self.wide, self.rarely
        astral = rarely(0.25)
        for m in messages:
            if astral and rarely(0.3):
                m["content"] += " " + w.choice(["🙂🚀", "𠮷野家", "a🙂b" * 40, "👩‍👩‍👧 ok"])
            if m["type"] == "tool_output" and rarely(0.15):
                m["content"] = self.wide_output()
                if rarely(0.5):
                    m["metadata"]["raw_output"] = self.wide_output()
        if messages and rarely(0.05):
            m = w.choice(messages)
            m["role"] = w.choice([r for r in ("system", "user", "assistant", "tool") if r != m["role"]])
        if rarely(0.03):
            messages.insert(
                w.randint(0, len(messages)),
                {
                    "id": "w_odd",
                    "role": "assistant",
                    "type": "custom_event",
                    "content": "odd",
                    "timestamp": 9000,
                },
            )
        plain = [
            m for m in messages if m["type"] in ("user_input", "final_answer", "thought", "system_prompt")
        ]
        if plain and rarely(0.05):
            w.choice(plain)["metadata"] = None

    def wide_output(self) -> str:
        w, r = self.wide, self.wide.random()
        if r < 0.2:
            return json.dumps(
                {f"field_{i}": self.wide_text(3) for i in range(w.randint(6, 60))}, ensure_ascii=False
            )
        if r < 0.35:
            return json.dumps({"observation": {"rows": list(range(w.randint(50, 200)))}, "k": 1})
        if r < 0.5:
            return json.dumps(
                {"observation": self.wide_text(w.randint(100, 300)) + " 🙂" * 3}, ensure_ascii=False
            )
        if r < 0.65:
            return json.dumps(
                [self.wide_text(w.randint(5, 20)) for _ in range(w.randint(1, 40))], ensure_ascii=False
            )
        if r < 0.75:
            return json.dumps(list(range(w.randint(100, 300))))
        if r < 0.85:
            return "\n".join(self.wide_text(w.randint(3, 12)) for _ in range(w.randint(20, 80)))
        return ("𠮷" * w.randint(150, 400)) + self.wide_text(5)

    def insertions(self, messages: list[dict[str, Any]]) -> None:
        """Messages put into the session: loose ones anywhere, then whole groups."""
        self._messages, self._extra = messages, 0
        self._insert_loose()
        self._insert_groups()

    def _put(self, role: str, type: str, content: str, at: int | None = None, **metadata: Any) -> None:
        self._extra += 1
        message: dict[str, Any] = {
            "id": f"w{self._extra:03d}",
            "role": role,
            "type": type,
            "content": content,
            "timestamp": 5000 + self._extra,
        }
        if metadata:
            message["metadata"] = metadata
        self._messages.insert(len(self._messages) if at is None else at, message)

    def _put_call(self, call_id: str, name: str, arguments: str) -> None:
        """An assistant `tool_calls` message of one call, at the end."""
        call = {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
        self._put("assistant", "tool_calls", "", None, tool_calls=[call])

    def _anywhere(self) -> int:
        return self.wide.randint(0, len(self._messages))

    def _insert_loose(self) -> None:
        w, rarely, put, anywhere = self.wide, self.rarely, self._put, self._anywhere
        if rarely(0.1):
            put(
                "tool",
                "tool_output",
                self.wide_text(5),
                anywhere(),
                tool_call_id="call_orphan",
                tool_name="grep",
            )
        if rarely(0.05):
            put("user", "context_after", self.wide_text(6), anywhere())
        if rarely(0.08):
            put(
                "user",
                w.choice(["document_fragment", "context_before", "user_input"]),
                self.wide_text(20),
                anywhere(),
                **w.choice([{"fragmentType": "document"}, {"tool_name": "read_file"}]),
            )
        if rarely(0.06):
            put(
                "assistant",
                "tool_code",
                "",
                anywhere(),
                **w.choice(
                    [
                        {"args": {"q": 1}},
                        {"tool_name": "grep", "args": '{"q": "s"}'},
                        {"tool_name": "grep", "args": None},
                    ]
                ),
            )
        if rarely(0.08):  # a fence the descriptors may not register, or with a part of its metadata missing
            meta = w.choice(
                [
                    {"fenceKind": "note-x", "fenceAttrs": {}, "fencePlacement": "after-system"},
                    {"fenceKind": "memory-context"},
                    {"fenceKind": "tool-hint", "fenceAttrs": {"n": 1, "ok": True, "z": None}},
                    {},
                ]
            )
            put(w.choice(["user", "system"]), "context_injection", self.wide_text(8), anywhere(), **meta)

    def _insert_groups(self) -> None:
        w, rarely, put, anywhere, messages = self.wide, self.rarely, self._put, self._anywhere, self._messages
        if rarely(0.1):  # a wide parallel group, answered out of order, maybe after the last input
            n = w.randint(3, 6)
            calls = [
                {
                    "id": f"call_p{self._extra}_{i}",
                    "type": "function",
                    "function": {"name": w.choice(TOOLS[:4]), "arguments": w.choice(ARGUMENTS)},
                }
                for i in range(n)
            ]
            at = w.choice([len(messages), anywhere()])
            put("assistant", "tool_calls", "", at, tool_calls=calls)
            order = calls[:]
            w.shuffle(order)
            for k, call in enumerate(order):
                if rarely(0.1):
                    continue
                put(
                    "tool",
                    "tool_output",
                    self.wide_text(w.randint(1, 300)),
                    at + 1 + k,
                    tool_call_id=call["id"],
                    tool_name=call["function"]["name"],
                )
        if rarely(0.06):  # a long streak of calls in the current run (the streak reminder at 10, 20)
            for k in range(w.choice([9, 10, 19, 20])):
                call_id = f"call_s{self._extra}_{k}"
                self._put_call(call_id, "read_file", '{"path": "a.py"}')
                put(
                    "tool",
                    "tool_output",
                    self.wide_text(w.randint(1, 30)),
                    None,
                    tool_call_id=call_id,
                    tool_name="read_file",
                )
        if rarely(0.05):  # a checkpoint through a tool named only by the policy, answered with a marker
            call_id = f"call_c{self._extra}"
            self._put_call(call_id, "read_file", "{}")
            marker = {"data": {"_type": "context_checkpoint", "summary": "custom"}, "observation": "ok"}
            put(
                "tool",
                "tool_output",
                "ok",
                None,
                tool_call_id=call_id,
                tool_name="read_file",
                raw_output=json.dumps(marker),
            )

    def wide_text(self, n: int) -> str:
        return " ".join(self.wide.choice(WORDS) for _ in range(n))

    def fence(self, s: _Session, p: float, attrs: dict[str, Any]) -> None:
        if self.maybe(p):
            kind, role, placement, _ = self.rng.choice(FENCES)
            if self.maybe(0.2):
                attrs = {**attrs, "src": 'a&b "c" <d>'}  # the formatter escapes & and " only
            s.add(
                role,
                "context_injection",
                self.text(self.rng.randint(2, 30)),
                fenceKind=kind,
                fenceAttrs=attrs,
                fencePlacement=placement,
            )

    def turn_item(self, s: _Session) -> None:
        rng, r = self.rng, self.rng.random()
        if r < 0.15:
            s.add("assistant", "thought", self.text(rng.randint(2, 30)))
        elif r < 0.65:
            self.group(s, checkpoint=self.maybe(0.07))
        elif r < 0.7:
            s.add("assistant", "tool_code", "", tool_name="grep", args=rng.choice([{"q": 1}, {}, ""]))
        elif r < 0.73:
            s.add("user", rng.choice(["context_before", "image", "document_fragment"]), self.text(3))
        elif r < 0.78:
            ids = [m["id"] for m in s.messages if m["type"] != "system_prompt"]
            replaced = rng.sample(ids, min(len(ids), rng.randint(1, 5)))
            s.add(
                "system",
                "history_summary",
                "[历史对话摘要]\n\n" + self.text(10),
                messageType="summary",
                replacedMessageIds=replaced,
                summarySeq=rng.choice([1, 2, 3, None]),
                originalMessageCount=len(replaced),
            )
        elif r < 0.8:
            s.add(
                "assistant",
                "final_answer",
                self.text(6),
                isCompressedToolHistory=True,
                replacementSourceIds=[f"old_{rng.randint(1, 3)}"],
            )
        elif r < 0.82:
            s.add("assistant", "task_completion", self.text(4))
        elif r < 0.83:
            s.add("user", "task_request", self.text(4))
        else:
            sidecar = {"reasoning_details": [{"t": 1}]} if self.maybe(0.1) else {}
            s.add("assistant", "final_answer", self.text(rng.randint(1, 60)), **sidecar)

    def group(self, s: _Session, checkpoint: bool) -> None:
        rng = self.rng
        calls = []
        for _ in range(rng.choice([1, 1, 1, 2, 3])):
            name = "context_checkpoint" if checkpoint else rng.choice(TOOLS)
            arguments = rng.choice(ARGUMENTS)
            reused = self.maybe(0.05) and s.calls > 0  # a call id an earlier anchor declared
            call_id = f"call_{rng.randint(1, s.calls):03d}" if reused else s.call_id()
            calls.append(
                {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}
            )
        meta: dict[str, Any] = {"tool_calls": calls}
        if self.maybe(0.2):
            meta["reasoning_details"] = [{"type": "reasoning.text", "text": self.text(5)}]
        s.add("assistant", "tool_calls", rng.choice(["", "", self.text(4)]), **meta)
        for call in calls:
            if self.maybe(0.1):
                continue  # an unanswered call
            if self.maybe(0.15):
                s.add("assistant", "final_answer", self.text(3))  # an output far from its call
            name = call["function"]["name"]
            output: dict[str, Any] = {"tool_call_id": call["id"], "tool_name": name}
            if name in ("context_checkpoint", "phase_checkpoint"):
                marker = {"_type": "context_checkpoint", "summary": rng.choice(["phase done", ""])}
                output["raw_output"] = json.dumps({"data": marker, "observation": "ok"})
            elif self.maybe(0.2):
                output["raw_output"] = self.output()
            s.add("tool", "tool_output", self.output(), **output)
            if self.maybe(0.05):
                s.add("tool", "tool_output", self.text(3), tool_call_id=call["id"])  # a second output

    def output(self) -> str:
        rng, r = self.rng, self.rng.random()
        if r < 0.3:
            return json.dumps(
                [{"id": i, "name": self.text(2)} for i in range(rng.randint(0, 60))], ensure_ascii=False
            )
        if r < 0.5:
            return json.dumps({"observation": self.text(rng.randint(1, 300)), "k": 1}, ensure_ascii=False)
        if r < 0.6:
            return json.dumps({f"k{i}": i for i in range(rng.randint(0, 9))})
        return self.text(rng.randint(1, 400))

    # -- settings -----------------------------------------------------------------------------------
    def policy(self) -> dict[str, Any]:
        rng, maybe = self.rng, self.maybe
        max_tokens = rng.choice([300, 800, 1500, 3000, 6000, 12000, 30000, 120000])
        reserved = max(1, min(rng.choice([1, 50, 100, 500]), max_tokens - 1))
        tool_history = self.tool_history()
        p: dict[str, Any] = {
            "budget": {"maxTokens": max_tokens, "reservedForResponse": reserved},
            "toolHistory": tool_history,
            "contextTrace": {"enabled": True},
        }
        if maybe(0.2):
            p["contextTrace"]["maxTraceEvents"] = rng.choice([1, 2, 5, 50])
        if maybe(0.5):
            p["budget"]["workingMemoryBudgetPercentage"] = rng.choice([0.1, 0.3, 0.5, 0.7, 0.9, 1])
        memory = {
            k: v
            for k, v in [
                ("maxRecentToolInteractions", rng.randint(0, 3)),
                ("minToolInteractionsToKeep", rng.randint(0, 3)),
                ("toolPairingSearchRange", rng.randint(1, 6)),
            ]
            if maybe(0.4)
        }
        memory["maxRecentToolInteractions"] = min(
            memory.get("maxRecentToolInteractions", 2), tool_history.get("maxInteractionGroups", 12)
        )
        p["workingMemory"] = memory
        return self.other_groups(p)

    def tool_history(self) -> dict[str, Any]:
        rng, maybe = self.rng, self.maybe
        tool_history: dict[str, Any] = {"retentionMode": rng.choice(["drop", "compress"])}
        for key, value in [
            ("strategy", rng.choice(["per-run", "per-pair", "none"])),
            ("keepLatestRuns", rng.randint(0, 3)),
            ("keepLatestToolPairs", rng.randint(0, 4)),
        ]:
            if maybe(0.6):
                tool_history[key] = value
        if maybe(0.4):
            tool_history["maxInteractionGroups"] = rng.randint(1, 6)
            if maybe(0.3):
                tool_history["overflowStrategy"] = "fail-fast"
        if maybe(0.4):
            tool_history["maxPairTokens"] = rng.choice([50, 100, 200, 400, 1000])
            tool_history["maxOutputSummaryTokens"] = rng.choice([20, 50, tool_history["maxPairTokens"]])
        return tool_history

    def other_groups(self, p: dict[str, Any]) -> dict[str, Any]:
        rng, maybe = self.rng, self.maybe
        if maybe(0.3):
            p["reasoningRetention"] = {"keepLatestThoughts": rng.randint(0, 3)}
        if maybe(0.3):
            p["checkpoint"] = {"keepPairsBefore": rng.randint(0, 4)}
            if maybe(0.5):
                p["checkpoint"]["triggerToolName"] = rng.choice(["context_checkpoint", "phase_checkpoint"])
        if maybe(0.4):
            p["summarization"] = self.summarization()
        if maybe(0.3):
            kinds = [
                "system_prompt",
                "user_input",
                "final_answer",
                "thought",
                "history_summary",
                "tool_calls",
                "tool_output",
            ]
            p["mustKeep"] = {"alwaysKeepTypes": rng.sample(kinds, rng.randint(0, 3))}
            if maybe(0.5):
                p["mustKeep"]["alwaysKeepFenceKinds"] = ["memory-context"]
                rule = {
                    "fenceKind": "memory-context",
                    "maxBudgetFraction": rng.choice([0.01, 0.05, 0.2]),
                    "strategyName": "memory-truncate",
                }
                p["mustKeep"]["truncationRules"] = [rule] if maybe(0.5) else []
        if maybe(0.3):
            p["tokenEstimation"] = {"avgCharsPerToken": rng.choice([1.5, 1.7, 2, 3.3, 4])}
            if maybe(0.3):
                p["tokenEstimation"]["encoding"] = rng.choice(["o200k_base", "cl100k_base", "gpt-4o"])
        if maybe(0.3):
            p["systemReminder"] = {
                "thresholds": {
                    "toolCallStreak": rng.randint(1, 4),
                    "lastStepsHintThreshold": rng.randint(0, 5),
                    "taskstateReflectionPeriod": rng.randint(2, 6),
                }
            }
        if maybe(0.2):
            behavior = rng.choice(["degrade_to_text", "provider_empty_replay_field"])
            p["providerReplay"] = {
                "provider": "deepseek",
                "requiresReasoningDetailsForToolReplay": True,
                "missingSidecarBehavior": behavior,
            }
        return p

    def summarization(self) -> dict[str, Any]:
        rng, maybe = self.rng, self.maybe
        group: dict[str, Any] = {
            "triggerThreshold": rng.choice([0.05, 0.2, 0.5, 0.7, 0.95]),
            "oldestMessagesPercentage": rng.choice([0.3, 0.5, 0.75, 1]),
        }
        if maybe(0.3):
            group["failureBehavior"] = "continue-if-within-budget"
        if maybe(0.2):
            group["agentId"] = "host_summarizer"
        return group

    def tick(self, step: int | None = None) -> dict[str, Any] | None:
        rng = self.rng
        if self.maybe(0.5):
            return None
        max_steps = rng.choice([10, 20, 40, 80])
        tools = rng.sample(["context_checkpoint", "phase_checkpoint", "read_file"], rng.randint(0, 3))
        count = rng.randint(0, max_steps) if step is None else step
        tick: dict[str, Any] = {"stepCount": count, "maxSteps": max_steps, "availableTools": tools}
        if self.maybe(0.2):
            tick.update(finalStepPolicy="force_tools", finalStepForcedTools=["read_file"])
        return tick

    def common(self, name: str, messages: list[dict[str, Any]]) -> dict[str, Any]:
        rng = self.rng
        tokenizers = [
            {"kind": "default"},
            {"kind": "mock", "tokensPerMessage": 5, "charsPerToken": 4},
            {"kind": "mock", "tokensPerMessage": 3, "charsPerToken": 2.5},
            {"kind": "mock", "tokensPerMessage": 20, "tokensPerText": 10},
        ]
        case: dict[str, Any] = {
            "name": name,
            "description": "",
            "mechanisms": [],
            "messages": messages,
            "contextPolicy": self.policy(),
            "fences": [],
            "tokenizer": rng.choice(tokenizers),
            "options": {"now": 1700000000000},
            "summary": {"error": "agent down"} if self.maybe(0.15) else {"text": "the gist " + self.text(5)},
        }
        if self.maybe(0.7):
            case["fences"] = [
                {"kind": k, "llmRole": r, "placement": p, "lifetime": lt, **self.fence_share()}
                for k, r, p, lt in FENCES
                if self.maybe(0.8)
            ]
        if self.maybe(0.2):
            enabled = rng.sample(RULES, 2)
            case["hostFallbackPolicy"] = {
                "budget": {"workingMemoryBudgetPercentage": rng.choice([0.2, 0.6])},
                "workingMemory": {"minToolInteractionsToKeep": rng.randint(0, 2)},
                "toolHistory": {"keepLatestToolPairs": rng.randint(0, 3), "strategy": "per-pair"},
                "systemReminder": {"enabledRuleIds": enabled, "thresholds": {"toolCallStreak": 2}},
            }
            case["contextPolicy"].pop("systemReminder", None)
        if self.maybe(0.15):
            case["contextPolicy"].setdefault("systemReminder", {})["extraRules"] = [
                self.extra_rule(i) for i in range(2)
            ]
        self._host = {}
        self.widen_policy(case["contextPolicy"], case.get("hostFallbackPolicy"))
        self.widen_tokens(case)
        if self._host:
            host = case.setdefault("hostFallbackPolicy", {})
            for group, value in self._host.items():
                host.setdefault(group, value)
            if "enabledRuleIds" in host.get("systemReminder", {}):
                host["systemReminder"].pop("disabledRuleIds", None)
            agent = case["contextPolicy"].get("systemReminder", {})
            if agent.get("enabledRuleIds") is not None and "disabledRuleIds" in host.get(
                "systemReminder", {}
            ):
                host["systemReminder"].pop("disabledRuleIds")  # else the merged lists conflict
        self.widen_fences(case)
        return case

    def widen_policy(self, p: dict[str, Any], host: dict[str, Any] | None) -> None:
        """Fields the base policy never sets: the call overhead, the summary budget share, the budget
        warning ratio, allow/deny lists of reminder rules (and a null allowlist over a host's list), wider
        extra rules, the trace switched off or stripped, partial and `allow` replay settings, must-keep over
        any of the 15 types and any fence kind with several (first-match) truncation rules, an explicit
        `keep-latest`, a policy-named checkpoint tool and execution-time `toolOutput`. (Values the engine
        config refuses are left out: the oracle reports them as refused, not compared.)"""
        w, rarely = self.wide, self.rarely
        if rarely(0.25):
            p.setdefault("tokenEstimation", {})["toolCallOverhead"] = w.choice([0, 10, 50, 200])
        if rarely(0.2):
            p.setdefault("summarization", {})["budgetPercentage"] = w.choice([0.01, 0.12, 0.3, 0.5])
        self._widen_reminder(p, host)
        self._widen_trace_and_replay(p)
        if rarely(0.3):
            self.widen_must_keep(p)
        if rarely(0.15):
            p["toolHistory"]["overflowStrategy"] = "keep-latest"
            cap = p["toolHistory"].setdefault("maxInteractionGroups", w.randint(1, 4))
            memory = p["workingMemory"]
            memory["maxRecentToolInteractions"] = min(memory.get("maxRecentToolInteractions", 2), cap)
        if rarely(0.1):
            p.setdefault("checkpoint", {})["triggerToolName"] = "read_file"
        if rarely(0.1):
            p["toolOutput"] = {
                "observationGovernance": {"enabled": w.random() < 0.5, "maxChars": 100, "maxLines": 5}
            }
        if rarely(0.1):
            p.setdefault("reasoningRetention", {})["keepLatestThoughts"] = w.choice([0, 5, 20])
        self._widen_edges(p)

    def _widen_reminder(self, p: dict[str, Any], host: dict[str, Any] | None) -> None:
        w, rarely = self.wide, self.rarely
        if rarely(0.3):
            reminder = p.setdefault("systemReminder", {})
            if rarely(0.5):
                reminder.setdefault("thresholds", {})["budgetWarningRatio"] = w.choice([0, 0.1, 0.5, 0.9, 1])
            r = w.random()
            every = RULES + ["periodic_taskstate_reflection"]
            if r < 0.3:
                reminder["enabledRuleIds"] = w.sample(every, w.randint(0, 3))
            elif r < 0.6:
                reminder["disabledRuleIds"] = w.sample(every, w.randint(1, 3))
                if host is not None:
                    reminder["enabledRuleIds"] = None  # else the host's allowlist conflicts
            elif r < 0.8 and host is not None:
                reminder["enabledRuleIds"] = None  # no allowlist, over the host's
            if rarely(0.4):
                reminder["extraRules"] = [self.wide_rule(i) for i in range(w.randint(1, 3))]

    def _widen_trace_and_replay(self, p: dict[str, Any]) -> None:
        w, rarely = self.wide, self.rarely
        if rarely(0.2):
            trace = p.setdefault("contextTrace", {})
            trace.update(
                w.choice(
                    [
                        {"enabled": False},
                        {"includeMessageIds": False},
                        {"includeTokenBreakdown": False},
                        {"includeMessageIds": False, "includeTokenBreakdown": False, "maxTraceEvents": 3},
                    ]
                )
            )
        if rarely(0.15):
            p["providerReplay"] = w.choice(
                [
                    {"missingSidecarBehavior": "degrade_to_text"},
                    {"requiresReasoningDetailsForToolReplay": True},
                    {"requiresReasoningDetailsForToolReplay": True, "missingSidecarBehavior": "allow"},
                    {
                        "requiresReasoningDetailsForToolReplay": False,
                        "missingSidecarBehavior": "degrade_to_text",
                    },
                    {
                        "provider": "moonshot",
                        "requiresReasoningDetailsForToolReplay": True,
                        "missingSidecarBehavior": w.choice(
                            ["degrade_to_text", "provider_empty_replay_field"]
                        ),
                    },
                ]
            )

    def _widen_edges(self, p: dict[str, Any]) -> None:
        """A streak threshold of 0, summarisation at its limits, large keep counts, keys the schema drops,
        and a host fallback with more groups."""
        w, rarely = self.wide, self.rarely
        if rarely(0.05):
            p.setdefault("systemReminder", {}).setdefault("thresholds", {})["toolCallStreak"] = 0
        if rarely(0.05):
            p.setdefault("summarization", {}).update(
                w.choice(
                    [
                        {"triggerThreshold": 1},
                        {"oldestMessagesPercentage": 0},
                        {"oldestMessagesPercentage": 1},
                    ]
                )
            )
        if rarely(0.05):
            p.setdefault("checkpoint", {})["keepPairsBefore"] = 10
            p["toolHistory"]["keepLatestRuns"] = 10
        if rarely(0.05):  # keys 0.21.0's schema does not know: dropped silently
            p["budget"]["extra"] = 1
            p.setdefault("summarization", {})["enabled"] = False
        if rarely(0.15):
            self.widen_host(p)

    def widen_tokens(self, case: dict[str, Any]) -> None:
        """Encodings named every way the resolver maps them (case-insensitive, model names, o1, unknown), host
        tokenizers at the edges, and summary agents that answer blank, long or outside the BMP."""
        w, rarely = self.wide, self.rarely
        if case["tokenizer"]["kind"] == "default" and rarely(0.25):
            case["contextPolicy"].setdefault("tokenEstimation", {})["encoding"] = w.choice(
                [
                    "gpt2",
                    "r50k_base",
                    "p50k_base",
                    "p50k_edit",
                    "O200K_BASE",
                    "GPT-4o-mini",
                    "o1-preview",
                    "deepseek-chat",
                    "claude-3-5-sonnet",
                    "no-such-encoding",
                ]
            )
        if rarely(0.1):
            case["tokenizer"] = w.choice(
                [
                    {"kind": "mock", "tokensPerMessage": 0, "charsPerToken": 1},
                    {"kind": "mock", "tokensPerMessage": 1, "charsPerToken": 0.5},
                    {"kind": "mock", "tokensPerMessage": 200},
                ]
            )
        if "text" in case["summary"] and rarely(0.1):
            case["summary"] = {"text": w.choice(["", "   \n ", "🙂" * 50, "x " * 3000])}

    def widen_host(self, p: dict[str, Any]) -> None:
        """A host fallback with groups the base one never sets, under lists the agent may or may not
        replace."""
        w = self.wide
        host: dict[str, Any] = {
            "mustKeep": {
                "alwaysKeepTypes": ["system_prompt", "user_input", "thought"],
                "alwaysKeepFenceKinds": ["tool-hint"],
                "truncationRules": [
                    {"fenceKind": "tool-hint", "maxBudgetFraction": 0.01, "strategyName": "host-cut"}
                ],
            },
            "tokenEstimation": {"avgCharsPerToken": 1.6, "toolCallOverhead": 7},
            "checkpoint": {"keepPairsBefore": 0, "triggerToolName": "phase_checkpoint"},
            "contextTrace": {"enabled": True, "includeTokenBreakdown": False},
            "reasoningRetention": {"keepLatestThoughts": 3},
            "summarization": {"triggerThreshold": 0.1, "oldestMessagesPercentage": 0.5},
            "providerReplay": {
                "requiresReasoningDetailsForToolReplay": True,
                "missingSidecarBehavior": "degrade_to_text",
            },
            "systemReminder": {
                "disabledRuleIds": ["periodic_taskstate_reflection"],
                "thresholds": {"lastStepsHintThreshold": 6},
            },
        }
        self._host = {k: v for k, v in host.items() if w.random() < 0.5}

    def widen_must_keep(self, p: dict[str, Any]) -> None:
        w, rarely = self.wide, self.rarely
        types = [
            "system_prompt",
            "history_summary",
            "context_injection",
            "user_input",
            "context_before",
            "context_after",
            "document_fragment",
            "task_request",
            "image",
            "thought",
            "final_answer",
            "tool_code",
            "tool_calls",
            "task_completion",
            "tool_output",
        ]
        kinds = [k for k, *_ in FENCES] + ["note-x"]
        keep: dict[str, Any] = {}
        if rarely(0.7):
            keep["alwaysKeepTypes"] = w.sample(types, w.randint(0, 5))
        if rarely(0.7):
            keep["alwaysKeepFenceKinds"] = w.sample(kinds, w.randint(0, 4))
        if rarely(0.6):
            rules = []
            for _ in range(w.randint(1, 3)):
                rule: dict[str, Any] = {
                    "fenceKind": w.choice(kinds),
                    "maxBudgetFraction": w.choice([0.001, 0.01, 0.05, 0.3, 1]),
                    "strategyName": w.choice(["cut-a", "cut-b"]),
                }
                if rarely(0.2):
                    rule["messageType"] = "user_input"  # not in 0.21.0's schema: dropped
                rules.append(rule)
            keep["truncationRules"] = rules
        p["mustKeep"] = keep

    def wide_rule(self, i: int) -> dict[str, Any]:
        """An extra rule with the trigger fields the base ones never vary (minStep, number and boolean
        values, other tools and ratios) and contentArgs."""
        w = self.wide
        kind = w.choice(list(TRIGGER_KINDS))
        trigger: dict[str, Any] = {"kind": kind}
        for key, values in [
            ("threshold", [0, 1, 2, 5, 10]),
            ("period", [1, 3, 7]),
            ("minStep", [0, 1, 4, 12]),
            ("ratio", [0, 0.25, 0.8, 1]),
            ("toolName", ["context_checkpoint", "phase_checkpoint", "grep"]),
            ("value", ["force_final_answer", "force_tools", "running", "grep", 3, True]),
            ("moduloStep", [True, False]),
        ]:
            if w.random() < 0.5:
                trigger[key] = w.choice(values)
        rule: dict[str, Any] = {
            "id": w.choice([f"w_rule_{i}", f"w_rule_{i}", "w_rule_0", "tool_call_streak_every_ten"]),
            "trigger": trigger,
            "contentTemplate": w.choice(
                [
                    "toolCallStreak",
                    "lastStepsHint",
                    "periodicTaskstateReflection",
                    "contextBudgetWarning",
                    "maxStepsForceFinalAnswer",
                    "noSuchTemplate",
                ]
            ),
        }
        if w.random() < 0.3:
            rule["contentArgs"] = {"note": "x", "n": 2}
        return rule

    def widen_fences(self, case: dict[str, Any]) -> None:
        """Descriptors in combinations the fixed table never has (any role, placement and lifetime per
        kind) and an extra registered kind no message uses."""
        w, rarely = self.wide, self.rarely
        if case["fences"] and rarely(0.3):
            for d in case["fences"]:
                if rarely(0.5):
                    d["llmRole"] = w.choice(["user", "system"])
                    d["placement"] = w.choice(
                        [
                            "after-system",
                            "before-current-user",
                            "after-current-user",
                            "after-last-tool-result",
                        ]
                    )
                    d["lifetime"] = w.choice(["turn-only", "persisted"])
        if rarely(0.1):
            case["fences"].append(
                {
                    "kind": "spare-kind",
                    "llmRole": "user",
                    "placement": "after-system",
                    "lifetime": "turn-only",
                }
            )

    def widen_tick(self, tick: dict[str, Any] | None) -> dict[str, Any] | None:
        """Ticks at the edges: past maxSteps, the last step, the step before it under force_tools (with other
        forced tools), step 0, and tiny maxSteps."""
        w, rarely = self.wide, self.rarely
        if tick is None or not rarely(0.3):
            return tick
        m = w.choice([tick["maxSteps"], 1, 2, 3])
        tick["maxSteps"] = m
        tick["stepCount"] = w.choice([0, m - 1, m, m + 1, m + 5])
        if rarely(0.4):
            tick.update(
                finalStepPolicy="force_tools",
                finalStepForcedTools=w.choice([[], ["grep", "read_file"], ["context_checkpoint"]]),
            )
        return tick

    def fence_share(self) -> dict[str, Any]:
        """A descriptor's must-keep flag and budget share (the seed's D6; the `linnkit-0.21` overlay ignores
        them, as 0.21.0 does)."""
        share: dict[str, Any] = {}
        if self.maybe(0.2):
            share["mustKeep"] = self.maybe(0.5)
        if self.maybe(0.2):
            share["maxBudgetFraction"] = self.rng.choice([0.01, 0.1, 0.5, 1])
        return share

    def extra_rule(self, i: int) -> dict[str, Any]:
        """A host rule built from linnkit's own trigger kinds and templates."""
        kind = self.rng.choice([*TRIGGER_KINDS, "no-such-kind"])
        trigger = {
            "kind": kind,
            "toolName": "read_file",
            "period": 2,
            "threshold": 3,
            "value": "running",
            "ratio": 0.5,
            "moduloStep": self.maybe(0.5),
        }
        template = self.rng.choice(
            [
                "toolCallStreak",
                "lastStepsHint",
                "periodicTaskstateReflection",
                "contextBudgetWarning",
                "maxStepsForceFinalAnswer",
            ]
        )
        return {
            "id": self.rng.choice([f"x_rule_{i}", "last_steps_hint"]),
            "trigger": trigger,
            "contentTemplate": template,
        }

    def single(self, n: int) -> dict[str, Any]:
        case = self.common(f"s{self.seed}_{n}", self.session())
        case["tick"] = self.widen_tick(self.tick())
        if EDGES:
            self.edge_case(case)
            case["tick"] = self.edge_tick(case["tick"])
        return case

    def replay(
        self, n: int, turns: int | None = None, messages: list[dict[str, Any]] | None = None
    ) -> dict[str, Any]:
        """One build per block of assistant messages, and one at the end (the corpus convention). `turns`:
        that many user inputs (a long session: the engine's incremental paths past their thresholds);
        `messages`: these instead of a drawn session (an imported transcript)."""
        messages = self.session(turns) if messages is None else messages
        starts = {
            i
            for i, m in enumerate(messages)
            if i and m["role"] == "assistant" and messages[i - 1]["role"] != "assistant"
        }
        steps = [
            {"upto": u, "tick": self.widen_tick(self.tick(2 * k + 1))}
            for k, u in enumerate(sorted(starts | {len(messages)}))
        ]
        case = self.common(f"r{self.seed}_{n}", messages)
        if self.maybe(0.6):
            case["contextPolicy"]["summarization"] = {"triggerThreshold": self.rng.choice([0.05, 0.1, 0.3])}
        case.update(kind="replay", steps=steps)
        if EDGES:
            self.edge_case(case)
            for step in steps:
                step["tick"] = self.edge_tick(step["tick"])
            self.edge_replay(case)
        return case

    # -- boundary values and odd JSON (third stream) ------------------------------------------------------
    def edging(self, p: float) -> bool:
        return self.edge.random() < p

    def edge_case(self, case: dict[str, Any]) -> None:
        """Policy fields at their boundaries, must-keep truncation rules over the fences the messages carry,
        descriptor budget shares that add up past 1, and message metadata holding odd JSON."""
        e, edging, p = self.edge, self.edging, case["contextPolicy"]
        if edging(0.12):
            b = p["budget"]
            b["maxTokens"] = e.choice([2, 10, 50, 200, b["maxTokens"]])
            b["reservedForResponse"] = e.choice([1, b["maxTokens"] - 1, b["maxTokens"] // 2 or 1])
        self._edge_values(p)
        self._edge_thresholds(p)
        if edging(0.15):
            self.edge_must_keep(case)
        if case["fences"] and edging(0.15):
            for d in case["fences"]:
                d["maxBudgetFraction"] = e.choice([0.6, 0.9, 1])
                if edging(0.5):
                    d["mustKeep"] = e.random() < 0.7
        if edging(0.1):
            rules = p.setdefault("systemReminder", {}).setdefault("extraRules", [])
            rules.append(self.edge_rule(len(rules)))
        if edging(0.3):
            self.edge_metadata(case["messages"])

    def _edge_values(self, p: dict[str, Any]) -> None:
        """Budget shares, tool-history and working-memory settings at the boundaries linnkit's config check
        still accepts."""
        e, edging = self.edge, self.edging
        if edging(0.12):
            p["budget"]["workingMemoryBudgetPercentage"] = e.choice([0.001, 0.999, 1])
        if edging(0.15):
            th = p["toolHistory"]
            if edging(0.6):  # linnkit's config check: 0 < summary tokens <= pair tokens
                th["maxPairTokens"] = e.choice([1, 5, 10**6])
                th["maxOutputSummaryTokens"] = e.choice([1, min(3, th["maxPairTokens"]), th["maxPairTokens"]])
            for key, values in [
                ("keepLatestToolPairs", [0, 100]),
                ("keepLatestRuns", [0, 100]),
                ("maxInteractionGroups", [1, 100]),
            ]:
                if edging(0.4):
                    th[key] = e.choice(values)
            memory = p.setdefault("workingMemory", {})
            memory["maxRecentToolInteractions"] = min(
                memory.get("maxRecentToolInteractions", 2), th.get("maxInteractionGroups", 12)
            )
        if edging(0.12):
            memory = p.setdefault("workingMemory", {})
            cap = p["toolHistory"].get("maxInteractionGroups", 12)
            for key, values in [
                ("toolPairingSearchRange", [1, 100]),
                ("minToolInteractionsToKeep", [0, 10]),
                ("maxRecentToolInteractions", [0, cap]),
            ]:
                if edging(0.5):
                    memory[key] = e.choice(values)

    def _edge_thresholds(self, p: dict[str, Any]) -> None:
        """Summarisation, estimation, reminder and reasoning settings at their accepted extremes."""
        e, edging = self.edge, self.edging
        if edging(0.12):
            s = p.setdefault("summarization", {})
            for key, values in [
                ("triggerThreshold", [0.001, 0.999, 1]),
                ("oldestMessagesPercentage", [0.01, 0.99]),
                ("budgetPercentage", [0.001, 0.5]),
            ]:
                if edging(0.5):
                    s[key] = e.choice(values)
        if edging(0.1):
            te = p.setdefault("tokenEstimation", {})
            if e.random() < 0.5:
                te["avgCharsPerToken"] = e.choice([0.1, 1, 100])
            else:
                te["toolCallOverhead"] = e.choice([1, 1000])
        if edging(0.1):
            th = p.setdefault("systemReminder", {}).setdefault("thresholds", {})
            th.update(
                e.choice(
                    [
                        {"budgetWarningRatio": 0.001},
                        {"budgetWarningRatio": 0.999},
                        {"taskstateReflectionPeriod": 1},
                        {"lastStepsHintThreshold": 100},
                        {"toolCallStreak": 1},
                    ]
                )
            )
        if edging(0.08):
            p.setdefault("reasoningRetention", {})["keepLatestThoughts"] = e.choice([0, 100])

    def edge_must_keep(self, case: dict[str, Any]) -> None:
        """Truncation rules (several per kind, first match; shares of 0, tiny, half, over 1; blank strategy
        names) over kinds the messages use, a long fenced message to cut, and kinds kept always."""
        e, p = self.edge, case["contextPolicy"]
        used = sorted({(m.get("metadata") or {}).get("fenceKind") for m in case["messages"]} - {None})
        kinds = [k for k in used if isinstance(k, str)] or ["memory-context"]
        keep = p.setdefault("mustKeep", {})
        keep["alwaysKeepFenceKinds"] = e.sample(kinds, e.randint(1, len(kinds)))
        keep["truncationRules"] = [
            {
                "fenceKind": e.choice(kinds),
                "maxBudgetFraction": e.choice([1e-6, 0.001, 0.05, 0.5, 1]),
                "strategyName": e.choice(["cut-a", "cut-b", "cut a"]),
            }
            for _ in range(e.randint(1, 4))
        ]
        if e.random() < 0.6:
            keep["alwaysKeepTypes"] = e.sample(
                ["context_injection", "system_prompt", "user_input"], e.randint(0, 2)
            )
        if e.random() < 0.6:
            at = next((i for i, m in enumerate(case["messages"]) if m["type"] != "system_prompt"), 0)
            kind = e.choice(kinds)
            case["messages"].insert(
                at,
                {
                    "id": "edge_fence",
                    "role": "user",
                    "type": "context_injection",
                    "content": " ".join(e.choice(WORDS) for _ in range(e.choice([50, 400, 3000]))),
                    "timestamp": 999,
                    "metadata": {"fenceKind": kind, "fencePlacement": "after-system", "fenceAttrs": {"n": 1}},
                },
            )

    def edge_rule(self, i: int) -> dict[str, Any]:
        """A rule whose kind or template name is padded or unknown, with odd contentArgs."""
        e = self.edge
        kind = e.choice(list(TRIGGER_KINDS))
        return {
            "id": e.choice([f"e_rule_{i}", "context_budget_warning", "e rule"]),
            "trigger": {
                "kind": e.choice([kind, f" {kind}", kind.upper()]),
                "threshold": e.choice([0, 1, 10**9]),
                "period": e.choice([1, 2, 10**9]),
                "ratio": e.choice([0, 1e-9, 0.999999, 1]),
                "value": e.choice(["running", "", 0]),
            },
            "contentTemplate": e.choice(
                [
                    "toolCallStreak",
                    " toolCallStreak",
                    "lastStepsHint ",
                    "contextBudgetWarning",
                    "custom-template",
                ]
            ),
            "contentArgs": e.choice([{}, {"a": {"b": [1, None, True]}}, {"🙂": "x", "n": 1e21}]),
        }

    def edge_metadata(self, messages: list[dict[str, Any]]) -> None:
        """Metadata with odd JSON: fence attributes of every JSON type (floats JS prints differently,
        booleans, null, nested objects, unicode keys), deep unknown keys, and known keys of the wrong type."""
        e = self.edge
        odd_values = [
            True,
            False,
            None,
            1.0,
            1e21,
            1e-7,
            0.1 + 0.2,
            -0.0,
            2**53,
            [1, "a"],
            {"x": {"y": 1}},
            "",
        ]
        for m in messages:
            meta = m.get("metadata")
            if not isinstance(meta, dict) or e.random() > 0.3:
                continue
            if "fenceKind" in meta:
                attrs = dict(meta.get("fenceAttrs") or {})
                for key in e.sample(["a", "ключ", "🙂", "x y", 'q"', "&"], e.randint(1, 3)):
                    attrs[key] = e.choice(odd_values)
                meta["fenceAttrs"] = attrs
            if e.random() < 0.3:
                meta[e.choice(["extra", "nested", "ünï"])] = {
                    "d": [{"e": [None, {"f": 1e300}]}],
                    "s": "\u0000\u2028",
                }
            if m["type"] == "tool_calls" and e.random() < 0.2:
                meta["reasoning_details"] = e.choice([[], {}, [{"type": "reasoning.text"}], "text", None])
            if m["type"] == "tool_output" and e.random() < 0.1:
                meta["raw_output"] = e.choice([None, 0, {"data": {"_type": "context_checkpoint"}}, [1, 2]])

    def edge_tick(self, tick: dict[str, Any] | None) -> dict[str, Any] | None:
        """Ticks past the edges: step 0 of 0, negative or huge counts, tool lists with repeats and blanks."""
        e = self.edge
        if tick is None or e.random() > 0.15:
            return tick
        tick = dict(tick)
        tick.update(
            e.choice(
                [
                    {"stepCount": 0, "maxSteps": 0},
                    {"stepCount": -1},
                    {"stepCount": 10**6, "maxSteps": 10**6 + 1},
                    {"availableTools": ["read_file", "read_file", ""]},
                    {"finalStepPolicy": "force_tools", "finalStepForcedTools": ["", "grep", "grep"]},
                    {"finalStepPolicy": "none"},
                ]
            )
        )
        return tick

    def edge_replay(self, case: dict[str, Any]) -> None:
        """A many-step replay that summarises several times: a build at every assistant message (and some
        others) under a small budget and a low trigger, so each summary folds the one before."""
        e = self.edge
        if e.random() > 0.2:
            return
        messages = case["messages"]
        n = len(messages)
        if n < 4:
            return
        ups = sorted({i for i in range(1, n) if e.random() < 0.5} | {n})[-60:]
        case["steps"] = [{"upto": u, "tick": None} for u in ups]
        p = case["contextPolicy"]
        p["budget"]["maxTokens"] = e.choice([600, 1200, 2500])
        p["budget"]["reservedForResponse"] = e.choice([1, 100])
        p["summarization"] = {
            "triggerThreshold": e.choice([0.05, 0.1, 0.3]),
            "oldestMessagesPercentage": e.choice([0.3, 0.5, 1]),
            "budgetPercentage": e.choice([0.12, 0.3]),
        }
        if e.random() < 0.5:
            p["summarization"]["failureBehavior"] = "continue-if-within-budget"


class _Session:
    def __init__(self) -> None:
        self.messages: list[dict[str, Any]] = []
        self.calls = 0

    def add(self, role: str, type: str, content: str, **metadata: Any) -> None:
        message = {
            "id": f"m{len(self.messages) + 1:03d}",
            "role": role,
            "type": type,
            "content": content,
            "timestamp": 1000 + len(self.messages),
        }
        if metadata:
            message["metadata"] = metadata
        self.messages.append(message)

    def call_id(self) -> str:
        self.calls += 1
        return f"call_{self.calls:03d}"


def generate(seed: int, count: int, replay_share: float = 0.25) -> list[dict[str, Any]]:
    generator = Generator(seed)
    return [
        generator.replay(n) if generator.maybe(replay_share) else generator.single(n) for n in range(count)
    ]


def generate_real(seed: int, count: int, sessions: list[list[dict[str, Any]]]) -> list[dict[str, Any]]:
    """Replays of real sessions (imported transcripts, as `AiMessage.to_dict` gives them) under drawn
    policies, fences, ticks and tokenizers: real contents (long tool outputs, CJK, images, sidecars) where the
    other streams draw words."""
    generator = Generator(seed)
    return [generator.replay(n, messages=generator.rng.choice(sessions)) for n in range(count)]


def generate_long(seed: int, count: int, turns: tuple[int, int] = (100, 400)) -> list[dict[str, Any]]:
    """Replays of long sessions (`turns` user inputs: ~400-2,500 messages, a build at every assistant block),
    where a step's build goes on from the last step's (the spares, runs and plans of `engine.lineage`,
    `engine.providers.text_runs` and the compressor) rather than reading a few dozen messages."""
    generator, budgets = Generator(seed), random.Random(seed * 31 + 7)
    cases = [generator.replay(n, generator.rng.randint(*turns)) for n in range(count)]
    for case in cases:  # half with a budget that keeps hundreds of messages (P2's runs of plain text)
        if budgets.random() < 0.5:
            case["contextPolicy"]["budget"]["maxTokens"] = budgets.choice([30_000, 120_000, 200_000])
    return cases
