"""What a policy costs over the whole session, for the front ends and the CLI. No UI import.

`CostRequest` is a frozen snapshot of what a session's cost needs (a worker never reads the workspace);
`run_cost` replays the session with `engine.cost`; `cost_summary` and `cost_rows` are the numbers as text
for a panel, `price_choice` resolves the price row (header `modelId`, else the user's choice).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from engine.cache_breaks import MECHANISMS
from engine.cost import CostTracker, SessionCost, StepCost, iter_step_costs
from engine.lanes import memory_lane
from engine.messages import AiMessage
from engine.policy import ContextPolicy
from engine.prices import BUILTIN_PRICES, Price, PriceTable, load_price_table, resolve_price
from engine.recorded import RecordedCost, RecordedRun
from engine.replay import StepBuild
from engine.truth import Calibration
from playground.app.building import BuildOptions
from playground.app.recorded import RecordSetup, truth_stream
from playground.app.views import tokens_delta, tokens_long


@dataclass(frozen=True, slots=True)
class CostRequest:
    messages: tuple[AiMessage, ...]
    policy: ContextPolicy
    options: BuildOptions
    max_steps: int
    available_tools: tuple[str, ...]
    shape: str = "openai"
    price: Price | None = None
    # a recorded session: its calls, priced each by its model from `prices`, its prompts predicted as the
    # provider counts them (`engine.truth`), with a calibration and the tool tokens the transcript lacks
    record: RecordedRun | None = None
    prices: PriceTable | None = None
    calibration: Calibration | None = None
    given_offset: int | None = None


COST_LANE = "cost"  # its builds keep their stage outputs apart from the main build's (`engine.lanes`)


def cost_stream(request: CostRequest) -> tuple[CostTracker, Iterator[tuple[StepBuild, StepCost]]]:
    """The replay of the request, each step with its cost (a generator: one step held at a time), and the
    tracker whose `totals()` hold once the stream is exhausted. Read it in a memory lane of its own."""
    options = request.options.kwargs()
    recorded = request.record is not None and bool(request.record.own_calls)
    tracker = CostTracker(
        request.messages, policy=request.policy, tokenizer=options["tokenizer"], model_id=options["model_id"],
        shape=request.shape, price=request.price, prices=request.prices if recorded else None,
    )  # fmt: skip
    checkpoint_tool = request.policy.checkpoint.trigger_tool_name
    steps_of = {"max_steps": request.max_steps, "available_tools": request.available_tools,
                "checkpoint_tool_name": checkpoint_tool}  # fmt: skip
    truths = None
    if recorded:
        setup = RecordSetup(request.calibration, request.given_offset)
        truths = truth_stream(request.messages, request.record, setup, {**steps_of, **options})
    samples = request.calibration.samples() if request.calibration is not None else ()
    replay = iter_step_costs(
        request.messages, request.policy, tracker=tracker, truths=truths, samples=samples,
        **steps_of, **options,
    )  # fmt: skip
    return tracker, replay


def run_cost(
    request: CostRequest, stop: Callable[[], bool] = lambda: False
) -> tuple[list[StepCost], SessionCost] | None:
    """Every step's cost figures and the totals; None when `stop()` turned true on the way (a newer
    request). `stop()` is asked before each step. A step keeps its figures only, not what it holds per
    message (its wire units, its user requests' decisions and ids; `cost_stream` gives them): kept for
    every step, those grow with the square of the session's length (gigabytes on 64,000 messages)."""
    tracker, replay = cost_stream(request)
    steps = []
    while not stop():  # asked before each step: a newer request (or the user, in the TUI) comes first
        with memory_lane(COST_LANE):
            step = next(replay, None)
        if step is None:
            return steps, tracker.totals()
        steps.append(figures_only(step[1]))
    return None


def cost_job(
    request: CostRequest, messages: Sequence[AiMessage]
) -> list[tuple[list[StepCost], SessionCost] | None]:
    """`run_cost` as a child process's job (`playground.app.forked`), for a request sent without its
    messages (the child has them): one item, the whole figures (never None: nothing stops it there)."""
    return [run_cost(replace(request, messages=tuple(messages)))]


def figures_only(step: StepCost) -> StepCost:
    return replace(step, units=(), user_requests_newly_dropped=())


def price_table(path: str | Path | None = None) -> PriceTable:
    """The built-in table, with a price file's rows over it; raises `InputError` for a bad file."""
    return BUILTIN_PRICES if path is None else load_price_table(path)


def price_choice(table: PriceTable, header_model: str | None, chosen: str | None) -> tuple[Price | None, str]:
    return resolve_price(table, header_model, chosen)


def money(value: float | None) -> str:
    if value is None:
        return "—"
    return f"${value:,.4f}" if abs(value) < 1 else f"${value:,.2f}"


def breaks_text(totals: SessionCost) -> str:
    if not totals.cache_breaks:
        return "none"
    parts = sorted(totals.cache_breaks.items(), key=lambda item: (-item[1], item[0]))
    return ", ".join(f"{MECHANISMS.get(name, name)} {count}" for name, count in parts)


def cost_summary(totals: SessionCost) -> list[tuple[str, str]]:
    """(label, value) lines of a session's totals, for a panel beside the budget."""
    gaps = totals.steps_between_summaries
    return [
        ("steps", str(totals.steps)),
        ("tokens sent", tokens_long(totals.tokens_sent)),
        ("cached", f"{tokens_long(totals.cached_tokens)} ({totals.cached_share:.0%})"),
        ("cache breaks", f"{totals.breaks}: {breaks_text(totals)}"),
        ("summaries", f"{totals.summaries_made}" + (f", every {min(gaps)}+ steps" if gaps else "")),
        ("summarizer", f"{totals.summarizer_calls} calls, {tokens_long(totals.summarizer_prompt_tokens)} in"),
        ("over budget", f"{totals.over_budget_steps} steps"),
        ("requests lost", str(totals.user_requests_dropped)),
        ("cost", f"{money(totals.cost_usd)} (no cache {money(totals.cost_no_cache_usd)})"),
    ]


def cost_compact(totals: SessionCost) -> list[str]:
    """The totals in five short lines, for a narrow column."""
    calls = f"summarizer {totals.summarizer_calls} calls" if totals.summarizer_calls else "no summarizer call"
    return [
        f"sent {tokens_long(totals.tokens_sent)} · cached {totals.cached_share:.0%}",
        f"breaks {totals.breaks}" + (f": {breaks_text(totals)}" if totals.breaks else ""),
        f"summaries {totals.summaries_made} · {calls}",
        f"over budget {totals.over_budget_steps} · requests lost {totals.user_requests_dropped}",
        f"{money(totals.cost_usd)} (no cache {money(totals.cost_no_cache_usd)})",
    ]


def record_lines(totals: SessionCost, billed: RecordedCost) -> list[str]:
    """What the provider counted and billed beside this policy's prediction, for a recorded session."""
    others = ""
    if billed.other_calls_usd:
        others = f", {money(billed.other_calls_usd)} of it other branches and sub-agents"
    unpriced = f" · {sum(billed.unpriced.values())} calls unpriced" if billed.unpriced else ""
    error = totals.as_recorded_error
    lines = [f"billed {money(billed.cost_usd)}: {billed.calls} recorded calls{others}{unpriced}"]
    if error.get("calls"):
        lines.append(
            f"rebuild vs record: median {error['medianErrorPct']:.1f}% · p90 {error['p90ErrorPct']:.1f}% "
            f"({error['calls']} calls)"
        )
    if totals.recorded_cost_usd is not None and totals.cost_at_recorded_usd is not None:
        recorded = money(totals.recorded_cost_usd)
        lines.append(f"this policy {money(totals.cost_at_recorded_usd)} vs {recorded} at the recorded calls")
    return lines


# the rows an A vs B comparison shows: label, SessionCost attribute, is money
COMPARED = (
    ("tokens sent", "tokens_sent", False),
    ("cached tokens", "cached_tokens", False),
    ("cache breaks", "breaks", False),
    ("summaries", "summaries_made", False),
    ("summarizer calls", "summarizer_calls", False),
    ("over budget", "over_budget_steps", False),
    ("requests lost", "user_requests_dropped", False),
    ("cost", "cost_usd", True),
)


def cost_rows(a: SessionCost, b: SessionCost) -> list[tuple[str, str, str, str]]:
    """(label, A, B, B − A) for each compared total, plus the cached share."""
    rows = []
    for label, name, is_money in COMPARED:
        x, y = getattr(a, name), getattr(b, name)
        if is_money:
            delta = None if x is None or y is None else y - x
            sign = "" if delta is None else ("+" if delta > 0 else "−" if delta < 0 else "±")
            rows.append((label, money(x), money(y), "—" if delta is None else f"{sign}{money(abs(delta))}"))
        else:
            rows.append((label, tokens_long(x), tokens_long(y), tokens_delta(y - x)))
    share = b.cached_share - a.cached_share
    shares = f"{a.cached_share:.0%}", f"{b.cached_share:.0%}"
    rows.insert(2, ("cached share", *shares, f"{share * 100:+.0f} pt"))
    return rows
