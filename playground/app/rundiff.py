"""The diff of two runs, step by step: the core, no UI and no file. Front ends render a `RunDiff`.

A run is a stream of replayed steps (`engine.replay.StepBuild`, each with its `engine.cost.StepCost`) from a
`RunSource`: a session under a policy today, a stored run later. Steps are aligned first, from what each
run recorded (cheap: no build): by step index when both runs have the same user turns and tool-call ids,
otherwise by those anchors (`difflib` over them; a step only one run has stands alone). Then both streams
are read in that order, one step of each held at a time, and each aligned pair is compared: the wire
messages added, removed and changed (same id, or same position and role; a word-level diff of the text),
the token and cost deltas, the first wire position where the cacheable prefix differs (message index and
token offset), and each side's cache break at that step, so a policy edit that adds or removes a break
shows at its step with the cost it changes.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from engine.cache_breaks import WireUnit
from engine.cost import SessionCost, StepCost
from engine.messages import AiMessage
from engine.replay import StepBuild
from engine.result import WireCard
from engine.ticks import StepPoint
from playground.app.pacing import paced_collection

ALIGNMENTS = {"step": "by step index", "turns": "by user turns and tool-call ids"}
_WORDS = re.compile(r"\s*\S+|\s+")  # a word with the whitespace before it
WORD_DIFF_CELLS = 200_000  # beyond (words of A × words of B, once common ends are cut) the middle is replaced
_STEP_SCOPE = re.compile(r":s\d+:")  # a created id's replay step (`engine.replay`): steps 12 and 13 match


@dataclass(frozen=True, slots=True)
class StepAnchor:
    """What a step answers: its user turn (ordinal and text) and the tool calls whose results it reads."""

    turn: int
    user_text: str
    tool_call_ids: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SentStep:
    """What one step of a run sent, all a diff reads of it (no build: a stored run can give it too)."""

    number: int
    messages: int  # session messages the step built from
    cards: tuple[WireCard, ...]  # the wire messages (OpenAI-shaped) and their tokens
    units: tuple[WireUnit, ...]  # the same wire in the cost's shape, as the prompt cache sees it
    cost: StepCost

    @classmethod
    def of(cls, built: StepBuild, cost: StepCost) -> SentStep:
        """The step's wire units are the cost's (`wire_units` in the cost's shape, made once)."""
        return cls(built.number, built.point.message_count, built.result.cards, tuple(cost.units), cost)


class RunSource(Protocol):
    """One side of a diff. `anchors()` is cheap (no build); `steps()` replays once, in order; `totals()` is
    read after the steps are exhausted. Both sides of a diff have one wire `shape`."""

    label: str
    shape: str

    def anchors(self) -> list[StepAnchor]: ...

    def steps(self) -> Iterator[SentStep]: ...

    def totals(self) -> SessionCost: ...


def step_anchors(messages: Sequence[AiMessage], points: Sequence[StepPoint]) -> list[StepAnchor]:
    """Each step's anchor: the user turn it belongs to and the tool results just before its call."""
    anchors: list[StepAnchor] = []
    turn_text, done = "", 0
    for point in points:
        for message in messages[done : point.message_count]:
            if message.type == "user_input":
                turn_text = message.content
        done = point.message_count
        ids: list[str] = []
        for message in reversed(messages[: point.message_count]):
            if message.role != "tool":
                break
            ids.append(message.tool_call_id or message.id)
        anchors.append(StepAnchor(point.run_index, turn_text, tuple(reversed(ids))))
    return anchors


def align(
    a: Sequence[StepAnchor], b: Sequence[StepAnchor]
) -> tuple[str, list[tuple[int | None, int | None]]]:
    """The alignment used (a key of `ALIGNMENTS`) and the pairs of 0-based step indexes, in order; None
    on one side: a step only the other run has. Unmatched steps of one user turn pair up in order."""
    if list(a) == list(b):
        return "step", [(i, i) for i in range(len(a))]
    pairs: list[tuple[int | None, int | None]] = []
    matcher = difflib.SequenceMatcher(None, list(a), list(b), autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op == "equal":
            pairs += [(a0 + k, b0 + k) for k in range(a1 - a0)]
            continue
        i, j = a0, b0
        while i < a1 or j < b1:  # a merge by user turn: steps of one turn (same text) pair in order
            if i < a1 and j < b1 and (a[i].turn, a[i].user_text) == (b[j].turn, b[j].user_text):
                pairs.append((i, j))
                i, j = i + 1, j + 1
            elif j >= b1 or (i < a1 and a[i].turn <= b[j].turn):
                pairs.append((i, None))
                i += 1
            else:
                pairs.append((None, j))
                j += 1
    return "turns", pairs


@dataclass(frozen=True, slots=True)
class MessageChange:
    """One wire message that differs: `added` (only B), `removed` (only A), `changed` (both)."""

    change: str
    index_a: int | None
    index_b: int | None
    id_a: str | None
    id_b: str | None
    role: str
    tokens_a: int | None
    tokens_b: int | None
    words: tuple[tuple[str, str], ...] = ()  # changed: ("=", same) ("-", only A) ("+", only B) runs

    @property
    def delta(self) -> int:
        return (self.tokens_b or 0) - (self.tokens_a or 0)

    def to_json(self) -> dict[str, Any]:
        out = {"change": self.change, "idA": self.id_a, "idB": self.id_b, "role": self.role,
               "indexA": self.index_a, "indexB": self.index_b, "tokensA": self.tokens_a,
               "tokensB": self.tokens_b}  # fmt: skip
        if self.change == "changed":
            out["words"] = [[op, text] for op, text in self.words]
        return out


@dataclass(frozen=True, slots=True)
class PrefixSplit:
    """The first wire message (in the cost's wire shape) where A and B differ, and the tokens before it."""

    message: int
    token_offset: int


@dataclass(frozen=True, slots=True)
class CacheBreak:
    """One side's cache break at a step (`engine.cost`): where, the tokens rewritten, the mechanism."""

    at: int
    rewrite_tokens: int
    mechanism: str

    def to_json(self) -> dict[str, Any]:
        return {"at": self.at, "rewriteTokens": self.rewrite_tokens, "mechanism": self.mechanism}


@dataclass(frozen=True, slots=True)
class StepSide:
    """What one run sent at a step."""

    step: int
    messages: int  # session messages the step built from
    tokens: int  # tokens sent (the cost's count: cards and the reminder)
    cached: int
    cost_usd: float | None
    brk: CacheBreak | None
    failed: bool


@dataclass(frozen=True, slots=True)
class StepDiff:
    a: StepSide | None
    b: StepSide | None
    messages: tuple[MessageChange, ...]
    prefix: PrefixSplit | None  # None: both sent the same wire (or a side is missing)

    @property
    def tokens_delta(self) -> int:
        return (self.b.tokens if self.b else 0) - (self.a.tokens if self.a else 0)

    @property
    def cost_delta(self) -> float | None:
        costs = [side.cost_usd if side else 0.0 for side in (self.a, self.b)]
        return None if None in costs else costs[1] - costs[0]

    @property
    def break_change(self) -> str | None:
        """`added` (only B breaks), `removed` (only A), `changed` (other place or mechanism), or None."""
        brk_a, brk_b = (s.brk if s else None for s in (self.a, self.b))
        where = [(brk.at, brk.mechanism) if brk else None for brk in (brk_a, brk_b)]
        if where[0] == where[1]:
            return None
        if brk_a is None:
            return "added"
        return "removed" if brk_b is None else "changed"

    @property
    def changed(self) -> bool:
        return (
            self.a is None
            or self.b is None
            or bool(self.messages)
            or self.prefix is not None
            or (self.break_change is not None or self.tokens_delta != 0)
        )

    def of(self, change: str) -> list[MessageChange]:
        return [m for m in self.messages if m.change == change]

    def to_json(self) -> dict[str, Any]:
        def side(s: StepSide | None) -> dict[str, Any] | None:
            if s is None:
                return None
            cost = None if s.cost_usd is None else round(s.cost_usd, 6)
            brk = s.brk.to_json() if s.brk else None
            return {"step": s.step, "messages": s.messages, "tokensSent": s.tokens, "cachedTokens": s.cached,
                    "costUsd": cost, "cacheBreak": brk, "failed": s.failed}  # fmt: skip

        delta = self.cost_delta
        return {
            "stepA": self.a.step if self.a else None,
            "stepB": self.b.step if self.b else None,
            "differs": self.changed,
            "a": side(self.a),
            "b": side(self.b),
            "added": [m.to_json() for m in self.of("added")],
            "removed": [m.to_json() for m in self.of("removed")],
            "changed": [m.to_json() for m in self.of("changed")],
            "tokensDelta": self.tokens_delta,
            "costDeltaUsd": None if delta is None else round(delta, 6),
            "prefixDiffersAt": None if self.prefix is None else {
                "message": self.prefix.message, "tokenOffset": self.prefix.token_offset},
            "cacheBreakChange": self.break_change,
        }  # fmt: skip


@dataclass(slots=True)
class RunDiff:
    label_a: str
    label_b: str
    alignment: str  # a key of ALIGNMENTS
    shape: str
    steps: list[StepDiff] = field(default_factory=list)
    totals_a: SessionCost | None = None
    totals_b: SessionCost | None = None

    @property
    def changed_steps(self) -> list[int]:
        """Positions (in `steps`) of the steps that differ."""
        return [n for n, step in enumerate(self.steps) if step.changed]

    def to_json(self) -> dict[str, Any]:
        """The `diff --json` object (its shape is in the README: "Diff two runs")."""
        totals = {k: t.to_json() if t else None for k, t in (("a", self.totals_a), ("b", self.totals_b))}
        return {
            "a": self.label_a,
            "b": self.label_b,
            "alignment": self.alignment,
            "wireShape": self.shape,
            "steps": len(self.steps),
            "changedSteps": len(self.changed_steps),
            "totals": totals,
            "diff": [step.to_json() for step in self.steps],
        }


def message_parts(message: dict[str, Any]) -> tuple[str, ...]:
    """The text of an OpenAI-shaped wire message as the diff reads it, in lines: a tool result's call id
    (`[call_1]`), its content, then each tool call as `name(arguments) [id]` (runs differ in ids too).
    The content is the message's own string (its hash is kept: a diff looks it up at every step)."""
    content = message.get("content")
    if isinstance(content, list):
        content = " ".join(p.get("text", "") if isinstance(p, dict) else str(p) for p in content)
    parts = [f"[{message['tool_call_id']}]"] if message.get("tool_call_id") else []
    parts += [content] if isinstance(content, str) and content else []
    for call in message.get("tool_calls") or ():
        function = call.get("function", {})
        parts.append(f"{function.get('name', '?')}({function.get('arguments', '')}) [{call.get('id', '?')}]")
    return tuple(parts)


class WordDiffer:
    """Word-level diffs of two messages' texts, kept by the pair: a replay re-sends a message at every
    step."""

    def __init__(self) -> None:
        self._seen: dict[tuple[tuple[str, ...], tuple[str, ...]], tuple[tuple[str, str], ...]] = {}

    def __call__(self, a: dict[str, Any], b: dict[str, Any]) -> tuple[tuple[str, str], ...]:
        key = (message_parts(a), message_parts(b))
        if key not in self._seen:
            self._seen[key] = word_diff("\n".join(key[0]), "\n".join(key[1]))
        return self._seen[key]


def word_diff(a: str, b: str) -> tuple[tuple[str, str], ...]:
    """Runs of ("=", text), ("-", only in a), ("+", only in b), whitespace kept, adjacent ops merged.

    The common first and last words are cut before `difflib` runs; when what is left is still large
    (a raw tool output against its one-line compression), it is shown replaced as a whole."""
    words_a, words_b = _WORDS.findall(a), _WORDS.findall(b)
    head = 0
    while head < min(len(words_a), len(words_b)) and words_a[head] == words_b[head]:
        head += 1
    tail = 0
    while tail < min(len(words_a), len(words_b)) - head and words_a[-1 - tail] == words_b[-1 - tail]:
        tail += 1
    runs: list[list[str]] = []

    def put(op: str, words: Sequence[str]) -> None:
        if not words:
            return
        if runs and runs[-1][0] == op:
            runs[-1][1] += "".join(words)
        else:
            runs.append([op, "".join(words)])

    mid_a, mid_b = words_a[head : len(words_a) - tail], words_b[head : len(words_b) - tail]
    put("=", words_a[:head])
    if len(mid_a) * len(mid_b) > WORD_DIFF_CELLS:
        put("-", mid_a)
        put("+", mid_b)
    else:
        for op, a0, a1, b0, b1 in difflib.SequenceMatcher(None, mid_a, mid_b).get_opcodes():
            if op == "equal":
                put("=", mid_a[a0:a1])
            else:
                put("-", mid_a[a0:a1])
                put("+", mid_b[b0:b1])
    put("=", words_a[len(words_a) - tail :])
    return tuple((op, text) for op, text in runs)


def wire_changes(a: SentStep, b: SentStep, words: WordDiffer) -> list[MessageChange]:
    """Wire messages of B against A: same id with other content is `changed`; of the rest, one at the
    same index with the same role is `changed` too; what is left is `removed` (A) or `added` (B)."""
    cards_a = {_key(c.message_id): c for c in a.cards}
    cards_b = {_key(c.message_id): c for c in b.cards}
    pairs: list[tuple[WireCard | None, WireCard | None]] = []
    for key, card in cards_b.items():
        other = cards_a.get(key)
        if other is not None and other.message != card.message:
            pairs.append((other, card))
    only_a = {c.index: c for key, c in cards_a.items() if key not in cards_b}
    only_b = [c for key, c in cards_b.items() if key not in cards_a]
    for card in only_b:
        other = only_a.get(card.index)
        if other is not None and other.message.get("role") == card.message.get("role"):
            pairs.append((only_a.pop(card.index), card))
        else:
            pairs.append((None, card))
    pairs += [(card, None) for card in only_a.values()]
    return sorted((_change(x, y, words) for x, y in pairs), key=_order)


def _key(message_id: str) -> str:
    return _STEP_SCOPE.sub(":", message_id) if ":s" in message_id else message_id


def _change(a: WireCard | None, b: WireCard | None, words: WordDiffer) -> MessageChange:
    card = b or a
    assert card is not None
    kind = "changed" if a and b else "added" if b else "removed"
    diff = words(a.message, b.message) if a and b else ()
    return MessageChange(
        kind, a.index if a else None, b.index if b else None, a.message_id if a else None,
        b.message_id if b else None, str(card.message.get("role", "?")), a.tokens if a else None,
        b.tokens if b else None, diff,
    )  # fmt: skip


def _order(change: MessageChange) -> tuple[int, int]:
    kinds = ("added", "removed", "changed")
    return kinds.index(change.change), change.index_b if change.index_b is not None else change.index_a or 0


def prefix_split(a: SentStep, b: SentStep) -> PrefixSplit | None:
    """Where the wire of B stops being A's, whole messages in the cost's shape; None when the same."""
    units_a, units_b = a.units, b.units
    offset = 0
    for index, (x, y) in enumerate(zip(units_a, units_b, strict=False)):
        if x.payload != y.payload:
            return PrefixSplit(index, offset)
        offset += x.tokens
    if len(units_a) == len(units_b):
        return None
    return PrefixSplit(min(len(units_a), len(units_b)), offset)


def step_side(step: SentStep) -> StepSide:
    cost = step.cost
    brk = None
    if cost.mechanism is not None:
        brk = CacheBreak(cost.break_at or 0, cost.new_tokens, cost.mechanism)
    return StepSide(
        step.number, step.messages, cost.tokens_sent, cost.cached_tokens, cost.cost_usd, brk, cost.failed
    )


def diff_step(a: SentStep | None, b: SentStep | None, words: WordDiffer) -> StepDiff:
    side_a = step_side(a) if a else None
    side_b = step_side(b) if b else None
    if a is None or b is None:
        return StepDiff(side_a, side_b, (), None)
    return StepDiff(side_a, side_b, tuple(wire_changes(a, b, words)), prefix_split(a, b))


def iter_diff(a: RunSource, b: RunSource) -> tuple[str, Iterator[StepDiff]]:
    """The alignment and the step diffs, streamed: one step of each run held at a time."""
    if a.shape != b.shape:
        raise ValueError(f"diff: run A is costed in the {a.shape} shape, run B in {b.shape}")
    method, pairs = align(a.anchors(), b.anchors())
    words = WordDiffer()

    def run() -> Iterator[StepDiff]:
        steps_a, steps_b = a.steps(), b.steps()
        for i, j in pairs:
            yield diff_step(
                next(steps_a) if i is not None else None, next(steps_b) if j is not None else None, words
            )
        for name, rest in (("A", steps_a), ("B", steps_b)):  # each stream ends: its totals are final
            if next(rest, None) is not None:
                raise ValueError(f"diff: run {name} has more steps than anchors")

    return method, paced_collection(run())  # both replays: the collector paced as `replay` paces it


def diff_runs(a: RunSource, b: RunSource) -> RunDiff:
    """Every aligned step compared, and both runs' totals."""
    diff = diff_until(a, b, lambda: False)
    assert diff is not None  # never stopped
    return diff


def diff_until(a: RunSource, b: RunSource, stop: Callable[[], bool]) -> RunDiff | None:
    """`diff_runs`, or None when `stop()` (asked before each aligned step) turned true on the way."""
    method, stream = iter_diff(a, b)
    diff = RunDiff(a.label, b.label, method, a.shape)
    while not stop():
        step = next(stream, None)
        if step is None:
            diff.totals_a, diff.totals_b = a.totals(), b.totals()
            return diff
        diff.steps.append(step)
    return None
