"""Random conformance-format cases (single builds and replays) for the linnkit differential oracle: messy
agent sessions (multi-call groups, unanswered calls, second outputs, far outputs, thoughts, fences of every
placement, summaries and compressed history in the input, legacy types, repeated ids, checkpoints, CJK) under
random policies, tokenizers, summary agents and ticks. Deterministic for a seed."""

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


class Generator:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed

    def maybe(self, p: float) -> bool:
        return self.rng.random() < p

    def text(self, n: int) -> str:
        words = [self.rng.choice(WORDS) for _ in range(n)]
        if self.maybe(0.01):
            words.append("<|endoftext|>")  # a special token: tiktoken refuses it without a fallback in places
        return " ".join(words)

    # -- sessions -----------------------------------------------------------------------------------
    def session(self) -> list[dict[str, Any]]:
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
        for _ in range(rng.randint(1, rng.choice([6, 6, 15, 50]))):
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
        return s.messages

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
        return case

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
        kind = self.rng.choice(
            [
                "agent-has-tool",
                "step-count-modulo",
                "tool-call-streak",
                "remaining-steps-leq",
                "phase-equals",
                "budget-warning",
                "no-such-kind",
            ]
        )
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
        case["tick"] = self.tick()
        return case

    def replay(self, n: int) -> dict[str, Any]:
        """One build per block of assistant messages, and one at the end (the corpus convention)."""
        messages = self.session()
        starts = {
            i
            for i, m in enumerate(messages)
            if i and m["role"] == "assistant" and messages[i - 1]["role"] != "assistant"
        }
        steps = [
            {"upto": u, "tick": self.tick(2 * k + 1)} for k, u in enumerate(sorted(starts | {len(messages)}))
        ]
        case = self.common(f"r{self.seed}_{n}", messages)
        if self.maybe(0.6):
            case["contextPolicy"]["summarization"] = {"triggerThreshold": self.rng.choice([0.05, 0.1, 0.3])}
        case.update(kind="replay", steps=steps)
        return case


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
