"""The diff of two runs (playground/app/rundiff.py, diffing.py): alignment, wire changes, deltas, breaks."""

from __future__ import annotations

from pathlib import Path

from engine.cost import session_cost
from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.prices import BUILTIN_PRICES
from engine.ticks import step_points
from playground.app.building import BuildOptions
from playground.app.costing import CostRequest
from playground.app.diffing import ReplaySource, diff_text, replay_source, word_snippet
from playground.app.inputs import load_inputs
from playground.app.rundiff import (
    CacheBreak,
    StepAnchor,
    align,
    diff_runs,
    diff_until,
    step_anchors,
    word_diff,
)
from tests.pipeline_helpers import answer, fallback_tokenizer, group, sys, user

SAMPLE = Path(__file__).resolve().parents[2] / "sample_sessions" / "tool_loop_runs.jsonl"
LAYER = {"budget": {"maxTokens": 8000, "reservedForResponse": 100}}


def run_a() -> list[AiMessage]:
    return [
        sys(), user("u1", "find the weather in Paris"), *group("g1"), answer("ans1", "It is sunny"),
        user("u2", "and tomorrow"), *group("g2"), answer("ans2", "Rain"),
    ]  # fmt: skip


def run_b() -> list[AiMessage]:
    """Run A with a longer first answer and one more tool call in the second turn."""
    return [
        sys(), user("u1", "find the weather in Paris"), *group("g1"), answer("ans1", "It is sunny and warm"),
        user("u2", "and tomorrow"), *group("g2"), *group("g3"), answer("ans2", "Rain"),
    ]  # fmt: skip


def source(
    label: str, messages: list[AiMessage], layer: dict | None = None, shape: str = "openai"
) -> ReplaySource:
    options = BuildOptions(tokenizer=fallback_tokenizer(), now=0)
    policy = define_context_policy(layer or LAYER)
    request = CostRequest(tuple(messages), policy, options, 80, (), shape)
    return ReplaySource(label, request, f"test-{label}")


def test_anchors_name_the_turn_and_the_tool_results_a_step_reads() -> None:
    messages = run_b()
    anchors = step_anchors(messages, step_points(messages))
    weather, tomorrow = "find the weather in Paris", "and tomorrow"
    assert anchors == [
        StepAnchor(1, weather, ()),
        StepAnchor(1, weather, ("call_g1",)),
        StepAnchor(2, tomorrow, ()),
        StepAnchor(2, tomorrow, ("call_g2",)),
        StepAnchor(2, tomorrow, ("call_g3",)),
    ]


def test_same_anchors_align_by_step_index_others_by_turns_and_tool_calls() -> None:
    a = step_anchors(run_a(), step_points(run_a()))
    b = step_anchors(run_b(), step_points(run_b()))
    assert align(a, a) == ("step", [(0, 0), (1, 1), (2, 2), (3, 3)])
    assert align(a, b) == ("turns", [(0, 0), (1, 1), (2, 2), (3, 3), (None, 4)])
    # a step of one turn with other tool calls pairs with the other run's step of that turn, in order
    renamed = [StepAnchor(x.turn, x.user_text, tuple(i + "x" for i in x.tool_call_ids)) for x in b]
    assert align(a, renamed) == ("turns", [(0, 0), (1, 1), (2, 2), (3, 3), (None, 4)])
    # two real runs: other tool-call ids everywhere, one more call in turn 1, a turn 3 only A has
    one, two, three = (StepAnchor(n, f"turn {n}", ()) for n in (1, 2, 3))
    runs_a = [one, StepAnchor(1, "turn 1", ("x1",)), two, StepAnchor(2, "turn 2", ("x2",)), three]
    runs_b = [one, StepAnchor(1, "turn 1", ("y1",)), StepAnchor(1, "turn 1", ("y2",)), two,
              StepAnchor(2, "turn 2", ("y3",))]  # fmt: skip
    assert align(runs_a, runs_b) == ("turns", [(0, 0), (1, 1), (None, 2), (2, 3), (3, 4), (4, None)])


def test_two_runs_of_a_task_changed_message_word_diff_tokens_and_prefix() -> None:
    diff = diff_runs(source("A", run_a()), source("B", run_b()))
    assert (diff.alignment, len(diff.steps), diff.changed_steps) == ("turns", 5, [2, 3, 4])
    first, third, only_b = diff.steps[0], diff.steps[2], diff.steps[4]
    assert not first.changed and first.messages == () and first.prefix is None
    (change,) = third.messages
    assert (change.change, change.id_a, change.id_b, change.role) == ("changed", "ans1", "ans1", "assistant")
    assert (change.index_a, change.index_b) == (4, 4)
    assert change.words == (("=", "It is sunny"), ("+", " and warm"))
    tokenizer = fallback_tokenizer()
    grown = tokenizer.estimate_message(run_b()[4]) - tokenizer.estimate_message(run_a()[4])
    assert grown > 0 and third.tokens_delta == change.delta == grown
    # the cacheable prefix stops at the changed answer: system, u1, the g1 call and its result before it
    assert third.prefix is not None and third.prefix.message == 4
    tokens_before = sum(tokenizer.estimate_message(m) for m in run_a()[:4])
    assert third.prefix.token_offset == tokens_before
    assert (only_b.a, only_b.b.step, only_b.messages) == (None, 5, ())
    assert only_b.tokens_delta == only_b.b.tokens
    assert diff.totals_a.steps == 4 and diff.totals_b.steps == 5


def test_added_and_removed_messages_are_exact_ids() -> None:
    """B drops old tool groups; the ids say which."""
    drop = {"strategy": "per-pair", "retentionMode": "drop", "keepLatestToolPairs": 0}
    tight = {**LAYER, "toolHistory": drop}
    diff = diff_runs(source("A", run_a()), source("B", run_a(), tight))
    assert diff.alignment == "step"
    removed = {n: [m.id_a for m in step.of("removed")] for n, step in enumerate(diff.steps) if step.changed}
    assert removed == {2: ["a_g1", "t_g1"], 3: ["a_g1", "t_g1"]}
    assert all(not step.of("added") and not step.of("changed") for step in diff.steps)
    assert diff.steps[2].prefix.message == 2  # system, u1, then A's call where B has none
    tokens = fallback_tokenizer()
    assert diff.steps[2].prefix.token_offset == sum(tokens.estimate_message(m) for m in run_a()[:2])
    # in Anthropic's shape the system prompt is a unit of its own and turns merge: the same split here
    anthropic = diff_runs(source("A", run_a(), shape="anthropic"), source("B", run_a(), tight, "anthropic"))
    assert anthropic.shape == "anthropic" and anthropic.steps[2].prefix == diff.steps[2].prefix
    assert anthropic.to_json()["wireShape"] == "anthropic"


def test_word_diff_and_snippet() -> None:
    words = word_diff("keep the old text here", "keep the new text here and more")
    assert words == (("=", "keep the"), ("-", " old"), ("+", " new"), ("=", " text here"), ("+", " and more"))
    assert word_snippet(words) == "keep the [-old-] {+new+} text here {+and more+}"
    long = word_diff(" ".join(f"w{n}" for n in range(40)), " ".join(f"w{n}" for n in range(39)) + " end")
    assert word_snippet(long) == "… w36 w37 w38 [-w39-] {+end+}"  # only the words before the change
    # a large middle (a raw tool output against its one-line compression) is replaced whole
    raw = "head " + " ".join(f"line{n}" for n in range(600)) + " tail"
    short = "head " + " ".join(f"other{n}" for n in range(400)) + " tail"
    assert word_diff(raw, short) == (("=", "head"), ("-", raw[4:-5]), ("+", short[4:-5]), ("=", " tail"))


def test_sample_session_under_two_policies_breaks_side_by_side(tmp_path: Path) -> None:
    drop = tmp_path / "drop.yaml"
    drop.write_text("toolHistory:\n  retentionMode: drop\n", encoding="utf-8")
    sides = [load_inputs(SAMPLE), load_inputs(SAMPLE, drop)]
    price = BUILTIN_PRICES.find("claude-sonnet-4-5", None)
    sources = [
        replay_source(n, f"t{n}", i, "openai", price, BUILTIN_PRICES)
        for n, i in zip("AB", sides, strict=True)
    ]
    diff = diff_runs(*sources)
    assert diff.alignment == "step" and len(diff.steps) == 71
    # each side's break at each step is the one that side's own cost replay finds
    for side, inputs in (("a", sides[0]), ("b", sides[1])):
        costs, _ = session_cost(
            inputs.session.messages, inputs.policy, price=price, **_replay_options(inputs)
        )
        breaks = [getattr(step, side).brk for step in diff.steps]
        expected = [CacheBreak(c.break_at, c.new_tokens, c.mechanism) if c.mechanism else None for c in costs]
        assert breaks == expected
        assert [getattr(step, side).tokens for step in diff.steps] == [c.tokens_sent for c in costs]
        assert [getattr(step, side).cost_usd for step in diff.steps] == [c.cost_usd for c in costs]
    # dropping tool groups instead of compressing them: the first drop breaks B's cache at step 17 ...
    step17 = diff.steps[16]
    assert (step17.break_change, step17.b.brk.mechanism, step17.b.brk.at, step17.a.brk) == (
        "added", "tool_history", 2, None)  # fmt: skip
    assert [m.id_a for m in step17.of("removed")] == ["m003", "m004", "m005", "m006", "m007", "m008", "m009"]
    assert step17.prefix.message == 2
    # ... and spares A's breaks by compression (the compressed lines change) and working memory after it
    removed = [s for s in diff.steps if s.break_change == "removed"]
    assert {s.a.brk.mechanism for s in removed} == {"tool_history", "working_memory"}
    assert sum(s.break_change == "added" for s in diff.steps) == 1 and len(removed) > 30
    assert diff.totals_a.breaks - diff.totals_b.breaks == 40
    # the cost a removed break changes is at its step: each one makes B cheaper there
    assert all(s.cost_delta is not None and s.cost_delta < 0 for s in removed)


def test_text_shows_alignment_changed_steps_and_totals() -> None:
    diff = diff_runs(source("A", run_a()), source("B", run_b()))
    lines = diff_text(diff)
    assert lines[:3] == [
        "A: A",
        "B: B",
        "aligned by user turns and tool-call ids: 5 steps, 3 differ (wire shape openai)",
    ]
    assert "step 3 ↔ 3" in lines[3] and "  ~ [4] ans1 (assistant)" in "\n".join(lines)
    assert any(line.startswith("step — ↔ 5") for line in lines) and "  only in B" in lines
    assert len(diff_text(diff, every_step=True)) > len(lines)
    totals = next(n for n, line in enumerate(lines) if line.startswith("totals"))
    assert lines[totals].split() == ["totals", "A", "B", "B", "−", "A"]
    sent = diff.totals_b.tokens_sent - diff.totals_a.tokens_sent
    figures = [str(diff.totals_a.tokens_sent), str(diff.totals_b.tokens_sent), f"+{sent}"]
    assert (
        lines[totals + 1].split() == ["tokens", "sent", *figures] and sent == 288 + 4 + 4
    )  # step 5, ans1 ×2


def test_json_shape() -> None:
    payload = diff_runs(source("A", run_a()), source("B", run_b())).to_json()
    assert set(payload) == {"a", "b", "alignment", "wireShape", "steps", "changedSteps", "totals", "diff"}
    assert (payload["alignment"], payload["steps"], payload["changedSteps"]) == ("turns", 5, 3)
    step = payload["diff"][2]
    assert step["changed"] == [{"change": "changed", "idA": "ans1", "idB": "ans1", "role": "assistant",
                                "indexA": 4, "indexB": 4, "tokensA": step["changed"][0]["tokensA"],
                                "tokensB": step["changed"][0]["tokensB"],
                                "words": [["=", "It is sunny"], ["+", " and warm"]]}]  # fmt: skip
    assert step["prefixDiffersAt"]["message"] == 4 and step["cacheBreakChange"] in (None, "added", "changed")
    assert payload["diff"][4]["a"] is None and payload["diff"][4]["stepB"] == 5
    assert [item["differs"] for item in payload["diff"]] == [False, False, True, True, True]


def _replay_options(inputs) -> dict:
    return {**inputs.build_options, "max_steps": inputs.max_steps,
            "available_tools": inputs.header.get("availableTools") or (),
            "checkpoint_tool_name": inputs.policy.checkpoint.trigger_tool_name}  # fmt: skip


def test_identical_runs_differ_nowhere() -> None:
    diff = diff_runs(source("A", run_a()), source("B", run_a()))
    assert (diff.alignment, len(diff.steps), diff.changed_steps) == ("step", 4, [])
    assert diff.totals_a == diff.totals_b


def test_a_diff_stops_when_asked() -> None:
    asked: list[int] = []

    def stop() -> bool:
        asked.append(1)
        return len(asked) > 2

    a, b = source("A", run_a()), source("B", run_b())
    assert diff_until(a, b, stop) is None and len(asked) == 3  # two steps compared, then stopped
    assert diff_until(source("A", run_a()), source("B", run_b()), lambda: False) == diff_runs(
        source("A", run_a()), source("B", run_b())
    )
