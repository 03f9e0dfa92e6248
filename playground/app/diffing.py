"""Two runs to diff, and a diff as text: the application layer of `linn-playground diff`, the TUI's diff
screen and the notebook's diff widget. No UI import.

A `ReplaySource` is one side: a session under a policy, replayed with its cost (`playground.app.costing`,
the same replay the cost pane runs). A stored run will be another `playground.app.rundiff.RunSource`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path

from engine.cache_breaks import MECHANISMS
from engine.cost import CostTracker, SessionCost
from engine.lanes import memory_lane
from engine.policy import ContextPolicy
from engine.prices import Price, PriceTable
from engine.safe_input import InputError
from engine.session_lines import available_tools
from engine.ticks import step_points
from playground.app.building import BuildOptions
from playground.app.costing import CostRequest, cost_rows, cost_stream, money, price_choice, price_table
from playground.app.inputs import PlaygroundInputs, load_inputs
from playground.app.recorded import record_of
from playground.app.rundiff import (
    ALIGNMENTS,
    MessageChange,
    RunDiff,
    SentStep,
    StepAnchor,
    StepDiff,
    StepSide,
    step_anchors,
)
from playground.app.views import tokens_long

SIGNS = {"added": "+", "removed": "−", "changed": "~"}
SNIPPET = 160  # characters of a word diff shown on one line
CONTEXT_WORDS = 3  # unchanged words kept on each side of a change in a snippet


@dataclass(slots=True)
class ReplaySource:
    """A session under a policy, replayed once with its cost; its builds keep their stage outputs in
    their own memory lane, so the two sides of a diff do not push out each other's."""

    label: str
    request: CostRequest
    lane: str
    _tracker: CostTracker | None = field(default=None, repr=False)

    def anchors(self) -> list[StepAnchor]:
        name = self.request.policy.checkpoint.trigger_tool_name
        messages = self.request.messages
        return step_anchors(messages, step_points(messages, checkpoint_tool_name=name))

    @property
    def shape(self) -> str:
        return self.request.shape

    def steps(self) -> Iterator[SentStep]:
        self._tracker, replay = cost_stream(self.request)
        while True:
            with memory_lane(self.lane):
                step = next(replay, None)
            if step is None:
                return
            yield SentStep.of(*step)

    def totals(self) -> SessionCost:
        if self._tracker is None:
            raise RuntimeError(f"{self.label}: totals are known once its steps were read")
        return self._tracker.totals()


def replay_source(
    label: str, lane: str, inputs: PlaygroundInputs, shape: str, price: Price | None, prices: PriceTable
) -> ReplaySource:
    """The side of a diff that replays loaded inputs (a recorded session is priced call by call)."""
    run = record_of(inputs)
    request = CostRequest(
        tuple(inputs.session.messages), inputs.policy, BuildOptions(**inputs.build_options), inputs.max_steps,
        available_tools(inputs.header), shape, price, run if run.own_calls else None,
        prices, inputs.calibration, inputs.given_offset,
    )  # fmt: skip
    return ReplaySource(label, request, lane)


@dataclass(frozen=True, slots=True)
class RunFiles:
    """What `diff` opens: run A, run B (None: A again, under another policy) and how to read them."""

    a: str | Path
    b: str | Path | None = None
    policy: str | Path | None = None  # for both runs (None: each session header's)
    policy_a: str | Path | None = None
    policy_b: str | Path | None = None
    fences: str | Path | None = None
    defaults: str = "seed"
    copy: str = "zh"
    conversation: int | None = None
    shape: str = "openai"
    model: str | None = None  # the price row when a header names no priced modelId
    prices: str | Path | None = None


def open_runs(
    files: RunFiles, stored: Callable[[str, str | Path | None], PlaygroundInputs | None] = lambda *_: None
) -> tuple[list[PlaygroundInputs], tuple[ReplaySource, ReplaySource]]:
    """Both runs loaded, and their sources. `stored(ref, policy)` gives a stored run's inputs (`run:ID`,
    under the policy file when given), None for a file. Raises `InputError` for one session with no second
    policy, and the loaders' errors (`LOAD_ERRORS`: each names file, line and field)."""
    policy_a, policy_b = files.policy_a or files.policy, files.policy_b or files.policy
    if files.b is None and policy_a == policy_b:
        raise InputError("diff", "give a second session B, or --policy-a and --policy-b that differ")
    path_b = files.b or files.a
    sides = ((files.a, policy_a), (path_b, policy_b))
    loaded = [_side(files, str(ref), policy, stored) for ref, policy in sides]
    table = price_table(files.prices)
    sources = []
    for lane, inputs, (path, policy) in zip(("diff-a", "diff-b"), loaded, sides, strict=True):
        price, _ = price_choice(table, inputs.build_options["model_id"], files.model)
        label = f"{path} (policy {policy})" if policy else f"{path} (header policy)"
        sources.append(replay_source(label, lane, inputs, files.shape, price, table))
    return loaded, (sources[0], sources[1])


def _side(
    files: RunFiles,
    ref: str,
    policy: str | Path | None,
    stored: Callable[[str, str | Path | None], PlaygroundInputs | None],
) -> PlaygroundInputs:
    """One side's inputs: a stored run (under another policy when one is given), else files."""
    inputs = stored(ref, policy)
    if inputs is None:
        return load_inputs(ref, policy, files.fences, files.defaults, files.copy, files.conversation)
    return inputs


def policy_sources(
    request: CostRequest, policy_a: ContextPolicy, label_a: str, label_b: str
) -> tuple[ReplaySource, ReplaySource]:
    """One session under two policies: A under `policy_a`, B under the request's own."""
    return ReplaySource(label_a, replace(request, policy=policy_a), "diff-a"), ReplaySource(
        label_b, request, "diff-b"
    )


# -- as text ------------------------------------------------------------------------------------------


def word_snippet(words: tuple[tuple[str, str], ...], limit: int = SNIPPET) -> str:
    """A changed text on one line: `…kept [-old-]{+new+} kept…`, long unchanged runs cut to a few words."""
    if all(op == "=" for op, _ in words):
        return "(same text)"
    parts: list[str] = []
    for n, (op, text) in enumerate(words):
        flat = " ".join(text.split())
        if op == "-":
            parts.append(f"[-{flat}-]")
        elif op == "+":
            parts.append(f"{{+{flat}+}}")
        else:
            kept = flat.split(" ")
            head = kept[:CONTEXT_WORDS] if n > 0 else []
            tail = kept[-CONTEXT_WORDS:] if n < len(words) - 1 else []
            if len(kept) > len(head) + len(tail):
                parts.append(" ".join([*head, "…", *tail]).strip())
            else:
                parts.append(flat)
    line = " ".join(p for p in parts if p)
    return line if len(line) <= limit else line[: limit - 1] + "…"


def change_line(change: MessageChange) -> str:
    """One wire message that differs, in a line: sign, index, id, role, tokens, the word diff."""
    if change.change == "added":
        return f"+ [{change.index_b}] {change.id_b} ({change.role}) {change.tokens_b} tok"
    if change.change == "removed":
        return f"− [{change.index_a}] {change.id_a} ({change.role}) {change.tokens_a} tok"
    ids = change.id_a if change.id_a == change.id_b else f"{change.id_a} → {change.id_b}"
    where = change.index_a if change.index_a == change.index_b else f"{change.index_a}→{change.index_b}"
    head = f"~ [{where}] {ids} ({change.role}) {change.tokens_a} → {change.tokens_b} tok"
    return f"{head}: {word_snippet(change.words)}"


def break_text(side: StepSide | None) -> str:
    if side is None:
        return "no such step"
    if side.brk is None:
        return "no break"
    brk = side.brk
    name = MECHANISMS.get(brk.mechanism, brk.mechanism)
    return f"{name} at message {brk.at}, rewrites {tokens_long(brk.rewrite_tokens)} tok"


def prefix_text(step: StepDiff) -> str:
    split = step.prefix
    if split is None:
        return "same wire"
    return f"prefix differs at message {split.message} (token {tokens_long(split.token_offset)})"


def step_title(step: StepDiff) -> str:
    """`step 12 ↔ 12` (a step only one run has: `step 12 ↔ —`)."""
    a = str(step.a.step) if step.a else "—"
    b = str(step.b.step) if step.b else "—"
    return f"step {a} ↔ {b}"


def step_lines(step: StepDiff) -> list[str]:
    """What differs at one aligned step, a heading line then indented details."""
    a, b = step.a, step.b
    tokens = f"tokens {tokens_long(a.tokens) if a else '—'} → {tokens_long(b.tokens) if b else '—'}"
    cost_a, cost_b = money(a.cost_usd) if a else "—", money(b.cost_usd) if b else "—"
    delta = step.cost_delta
    cost = f"cost {cost_a} → {cost_b}" + ("" if delta is None else f" ({signed_money(delta)})")
    lines = [f"{step_title(step)}  {tokens} ({signed_tokens(step.tokens_delta)})  {cost}"]
    if a is None or b is None:
        lines.append(f"  only in {'B' if a is None else 'A'}")
        return lines
    if step.prefix is not None:
        lines.append(f"  {prefix_text(step)}")
    if a.brk is not None or b.brk is not None:
        change = f"  [{step.break_change}]" if step.break_change else ""
        lines.append(f"  cache break: A {break_text(a)} · B {break_text(b)}{change}")
    lines += [f"  {change_line(change)}" for change in step.messages]
    return lines


def signed_tokens(value: int) -> str:
    """`+1 204`, `−612`, `±0`: a delta in full."""
    return ("+" if value > 0 else "−" if value < 0 else "±") + tokens_long(abs(value))


def signed_money(value: float) -> str:
    sign = "+" if value > 0 else "−" if value < 0 else "±"
    return f"{sign}{money(abs(value))}"


def totals_line(diff: RunDiff) -> str:
    """The totals in one line: cost, cache breaks and tokens sent, A → B."""
    a, b = diff.totals_a, diff.totals_b
    if a is None or b is None:
        return ""
    cost = f"cost {money(a.cost_usd)} → {money(b.cost_usd)}"
    if a.cost_usd is not None and b.cost_usd is not None:
        cost += f" ({signed_money(b.cost_usd - a.cost_usd)})"
    sent = f"sent {tokens_long(a.tokens_sent)} → {tokens_long(b.tokens_sent)}"
    return f"{cost} · cache breaks {a.breaks} → {b.breaks} · {sent}"


def diff_text(diff: RunDiff, *, every_step: bool = False) -> list[str]:
    """The whole diff as lines: what was compared, the alignment, the changed steps, the totals."""
    changed = diff.changed_steps
    lines = [
        f"A: {diff.label_a}",
        f"B: {diff.label_b}",
        f"aligned {ALIGNMENTS[diff.alignment]}: {len(diff.steps)} steps, {len(changed)} differ"
        f" (wire shape {diff.shape})",
    ]
    shown = range(len(diff.steps)) if every_step else changed
    for n in shown:
        lines += step_lines(diff.steps[n])
    if diff.totals_a is not None and diff.totals_b is not None:
        rows = cost_rows(diff.totals_a, diff.totals_b)
        width = max(len(label) for label, *_ in rows)
        lines.append(f"{'totals':<{width}}  {'A':>12} {'B':>12} {'B − A':>12}")
        lines += [f"{label:<{width}}  {x:>12} {y:>12} {d:>12}" for label, x, y, d in rows]
    return lines
