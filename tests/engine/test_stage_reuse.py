"""A preprocessor output reused across builds equals the one a fresh build makes, after any policy edit.

For every policy field (each group, each kind of field: int, float, bool, enum, str, list, json, optional),
a session is built with a base policy (filling the stage cache), then with one field edited; the edited
build must equal the same build made with every cache emptied, field by field (the trace's provider
timings aside).
"""

from __future__ import annotations

from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, reject, settings
from hypothesis import strategies as st

import engine.preprocess.purification as purification_stage
import engine.preprocess.tool_history as tool_history_stage
from engine.build import build_context
from engine.errors import ConfigurationError
from engine.fences import LIFETIMES, LLM_ROLES, PLACEMENTS, as_registry, load_fences
from engine.lanes import LaneLists, memory_lane
from engine.lineage import shared_at_least
from engine.messages import AiMessage
from engine.policy import (
    ControlSpec,
    PolicyValidationError,
    check_runtime,
    define_context_policy,
    policy_controls,
    set_value,
)
from engine.providers import working_memory
from engine.replay import build_step, iter_session_steps
from engine.result import BuildResult
from engine.session import load_session
from engine.stage_cache import STAGE_CACHE, forget_earlier_builds
from engine.ticks import TickState
from engine.tokens import DefaultTokenizer

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
SESSIONS = (
    "tool_loop_runs",
    "checkpoint_midtask",
    "fences_showcase",
    "summarization_trigger",
    "damaged_history",
)
LOADED = {name: load_session(SAMPLES / f"{name}.jsonl") for name in SESSIONS}
FENCES = {"fences_showcase": load_fences(SAMPLES / "fences_showcase.fences.yaml")}
TOKENIZER = DefaultTokenizer()
BASE = define_context_policy(
    {"budget": {"maxTokens": 6000, "reservedForResponse": 500}, "contextTrace": {"enabled": True}}
)
TICK = TickState(step_count=12, max_steps=20)


def values(spec: ControlSpec) -> st.SearchStrategy[Any]:
    """Values for one field: in its suggested range, its choices, or a few of its kinds' typical ones."""
    kind = spec.kind.removeprefix("optional-")
    low = spec.ui_min if spec.ui_min is not None else spec.minimum
    high = spec.ui_max if spec.ui_max is not None else spec.maximum
    if kind == "int":
        plain = st.integers(int(low if low is not None else 0), int(high if high is not None else 100_000))
    elif kind == "float":
        plain = st.floats(low if low is not None else 0.0, high if high is not None else 1.0)
    elif kind == "bool":
        plain = st.booleans()
    elif kind == "enum":
        plain = st.sampled_from(spec.choices)
    elif kind == "list":
        pool = spec.choices or spec.suggestions or ("memory-context", "plan")
        plain = st.lists(st.sampled_from(pool), unique=True, max_size=4)
    elif kind == "json":
        plain = st.sampled_from([[], spec.default or []])
    else:  # str: the field's default, another name, or the checkpoint tool's
        plain = st.sampled_from([spec.default or "x", "other_tool", "context_checkpoint", "read_file"])
    return st.one_of(st.none(), plain) if spec.optional else plain


def build(name: str, policy: Any) -> BuildResult:
    return build_context(
        LOADED[name], policy, fences=FENCES.get(name), tick=TICK, tokenizer=TOKENIZER, now=1_700_000_000_000
    )


def comparable(result: BuildResult) -> dict[str, Any]:
    skipped = ("trace", "decide", "count_dropped", "written_of")  # closures: compared through what they give
    out = {f.name: getattr(result, f.name) for f in fields(result) if f.name not in skipped}
    out["dropped"] = result.count_dropped() if result.count_dropped else None
    written = result.sent_as_written("user_input")
    out["written"] = (
        written.count,
        written.ranks,
        [*map(written.id_of, range(written.count))],
    )
    out["cards"], out["decisions"] = tuple(result.cards), tuple(result.decisions)
    if result.trace is not None:
        events = [{k: v for k, v in e.items() if k != "durationMs"} for e in result.trace["events"]]
        out["trace"] = {**result.trace, "events": events}
    return out


def clear_caches() -> None:
    forget_earlier_builds()


@pytest.mark.parametrize("spec", policy_controls(), ids=lambda s: ".".join(s.path))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_reused_stage_output_equals_a_fresh_one_after_any_policy_edit(spec: ControlSpec, data):
    name = data.draw(st.sampled_from(SESSIONS), label="session")
    value = data.draw(values(spec), label="value")
    try:
        edited = set_value(BASE, spec.path, value)
        check_runtime(edited)
    except (PolicyValidationError, ConfigurationError):
        reject()
    build(name, BASE)  # fills the cache with the base policy's stage outputs
    warm = build(name, edited)
    clear_caches()
    fresh = build(name, edited)
    assert comparable(warm) == comparable(fresh)


def test_an_edit_no_preprocessor_reads_reuses_every_stage_output():
    clear_caches()
    build("fences_showcase", BASE)
    before = STAGE_CACHE.hits
    edited = set_value(BASE, ("workingMemory", "minToolInteractionsToKeep"), 3)
    build("fences_showcase", edited)
    assert STAGE_CACHE.hits - before == 5  # tool history, replay guard, purification, both fence stages


def test_working_memory_derives_its_floors_once_per_preprocessed_list():
    clear_caches()
    build("fences_showcase", BASE)
    [(tokens, _, floors)] = working_memory._FLOORS.items()
    build("fences_showcase", set_value(BASE, ("budget", "workingMemoryBudgetPercentage"), 0.4))
    [(held_tokens, _, held_floors)] = working_memory._FLOORS.items()
    assert held_tokens is tokens and held_floors is floors  # the very same objects, not made again
    build("tool_loop_runs", BASE)
    assert len(working_memory._FLOORS.items()) == 2


def test_a_tool_history_edit_reruns_tool_history_and_every_stage_after_it():
    clear_caches()
    build("tool_loop_runs", BASE)
    hits, misses = STAGE_CACHE.hits, STAGE_CACHE.misses
    edited = set_value(BASE, ("toolHistory", "keepLatestToolPairs"), 1)
    result = build("tool_loop_runs", edited)
    assert (STAGE_CACHE.hits - hits, STAGE_CACHE.misses - misses) == (0, 3)
    assert "tool_history_compression" in result.strategies_applied


@pytest.mark.parametrize("name", ["tool_loop_runs", "summarization_trigger", "checkpoint_midtask"])
def test_a_replay_reusing_earlier_steps_equals_one_built_from_empty_caches(name):
    policy = define_context_policy({"budget": {"maxTokens": 3000, "reservedForResponse": 200}})
    options = {"tokenizer": TOKENIZER, "now": 1_700_000_000_000}
    clear_caches()
    messages = LOADED[name].messages
    reused = [comparable(step.result) for step in iter_session_steps(messages, policy, **options)]
    fresh = []
    for step in iter_session_steps(messages, policy, **options):  # each step builds on next()
        fresh.append(comparable(step.result))
        clear_caches()
    assert len(reused) > 5
    assert reused == fresh


def test_a_step_rebuilt_after_an_edit_meets_the_same_scoped_messages_and_equals_a_fresh_build():
    messages = LOADED["tool_loop_runs"].messages
    options = {"tokenizer": TOKENIZER, "now": 1_700_000_000_000}
    policy = define_context_policy({"budget": {"maxTokens": 3000}, "toolHistory": {"keepLatestToolPairs": 1}})
    edited = set_value(policy, ("budget", "maxTokens"), 2500)
    clear_caches()
    first = build_step(messages, policy, TICK, **options)
    warm = build_step(messages, edited, TICK, **options)
    created = [m for m in warm.preprocessed if m.id.startswith("compressed:")]
    assert created and all(":e0:" in m.id for m in created)  # scoped by the summaries the history holds
    assert all(a is b for a, b in zip(first.preprocessed, warm.preprocessed, strict=True))
    # the step before, with as many summaries, shares its created messages; one summary more shares none
    before = build_step(messages[:-1], edited, TICK, **options)
    assert {id(m) for m in before.preprocessed if m.id.startswith("compressed:")} <= set(map(id, created))
    later = build_step(messages, edited, TICK, summaries=1, **options)
    later_created = [m for m in later.preprocessed if m.id.startswith("compressed:")]
    assert [m.id.replace(":e1:", ":e0:") for m in later_created] == [m.id for m in created]
    assert not {id(m) for m in later_created} & set(map(id, created))
    clear_caches()
    assert comparable(warm) == comparable(build_step(messages, edited, TICK, **options))


@pytest.mark.parametrize("name", ["tool_loop_runs", "summarization_trigger", "damaged_history"])
def test_a_step_back_reads_the_first_entries_of_the_longer_list_and_equals_a_fresh_build(name):
    messages = list(LOADED[name].messages)
    options = {"tokenizer": TOKENIZER, "now": 1_700_000_000_000}
    clear_caches()
    build_step(messages, BASE, TICK, **options)
    longer = STAGE_CACHE.entries(messages)
    back = STAGE_CACHE.entries(messages[:-3])
    assert len(back) == len(messages) - 3 and all(a is b for a, b in zip(back, longer, strict=False))
    for cut in (3, 1, 7):  # the timeline one step back, forward again, further back
        warm = comparable(build_step(messages[:-cut], BASE, TICK, **options))
        clear_caches()
        assert warm == comparable(build_step(messages[:-cut], BASE, TICK, **options))
        build_step(messages, BASE, TICK, **options)


@pytest.mark.parametrize("field", ["lifetime", "placement", "llm_role", "must_keep"])
def test_a_reused_stage_output_equals_a_fresh_one_after_a_fence_descriptor_edit(field):
    registry = as_registry(FENCES["fences_showcase"])
    choices: dict[str, Any] = {"lifetime": LIFETIMES, "placement": PLACEMENTS, "llm_role": LLM_ROLES}
    choices["must_keep"] = (True, False)
    messages = LOADED["fences_showcase"].messages
    for descriptor in registry.list():
        for value in choices[field]:
            edited = registry.copy()
            edited.replace(descriptor.kind, replace(descriptor, **{field: value}))
            options = {"tick": TICK, "tokenizer": TOKENIZER, "now": 1_700_000_000_000}
            build_context(messages, BASE, fences=registry, **options)
            warm = build_context(messages, BASE, fences=edited, **options)
            clear_caches()
            fresh = build_context(messages, BASE, fences=edited, **options)
            assert comparable(warm) == comparable(fresh), (descriptor.kind, field, value)


# -- a replay's steps: each stage carries its last run into the next, longer list ------------------------

CALL_IDS = ("c1", "c2", "c3", "c4")  # few, so calls re-declare ids and outputs arrive late or unasked


def _call(call_id: str, name: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": '{"path": "a.py"}'}}


@st.composite
def messy_histories(draw: st.DrawFn) -> list[AiMessage]:
    """Users, answers, tool calls (parallel, re-declared ids, the checkpoint tool), outputs (late, after a
    user input, for no call) and summaries replacing earlier messages, in any order."""
    out = [AiMessage("sys", "system", "system_prompt", "agent", 0)]
    seq = 0
    for n in range(draw(st.integers(1, 40))):
        kind = draw(st.sampled_from(("user", "calls", "calls", "output", "output", "answer", "summary")))
        mid = f"m{n}"
        if kind == "user":
            out.append(AiMessage(mid, "user", "user_input", f"ask {n}", n))
        elif kind == "calls":
            ids = draw(st.lists(st.sampled_from(CALL_IDS), min_size=1, max_size=2))
            name = draw(st.sampled_from(("read_file", "read_file", "context_checkpoint")))
            calls = [_call(i, name) for i in ids]
            out.append(AiMessage(mid, "assistant", "tool_calls", "", n, {"tool_calls": calls}))
        elif kind == "output":
            answered = draw(st.sampled_from(CALL_IDS))
            meta = {"tool_call_id": answered, "tool_name": "read_file"}
            out.append(AiMessage(mid, "tool", "tool_output", f"out {n}", n, meta))
        elif kind == "answer":
            out.append(AiMessage(mid, "assistant", "final_answer", f"done {n}", n))
        elif len(out) > 1:
            seq += draw(st.integers(0, 1))  # equal sequence numbers: the first summary wins
            ids = draw(st.lists(st.sampled_from([m.id for m in out]), max_size=6))
            meta = {"messageType": "summary", "replacedMessageIds": ids, "summarySeq": seq}
            out.append(AiMessage(mid, "system", "history_summary", "summary", n, meta))
    return out


TOOL_HISTORIES = st.fixed_dictionaries(
    {
        "strategy": st.sampled_from(("per-pair", "per-run", "none")),
        "keepLatestToolPairs": st.integers(0, 3),
        "keepLatestRuns": st.integers(0, 2),
        "retentionMode": st.sampled_from(("compress", "drop")),
        "maxInteractionGroups": st.integers(1, 6),
        "overflowStrategy": st.just("keep-latest"),
    }
)


def _fresh(stage, *args):
    """`stage(*args)` with every stage's memory of earlier runs emptied (and put back after)."""
    plans, runs, said = tool_history_stage._PLANS, purification_stage._LAST, purification_stage._SAID
    tool_history_stage._PLANS, purification_stage._LAST = LaneLists(4), LaneLists(1)
    purification_stage._SAID = LaneLists(1)
    try:
        return stage(*args)
    finally:
        tool_history_stage._PLANS, purification_stage._LAST, purification_stage._SAID = plans, runs, said


def _shape(output) -> tuple:
    removals = [(r.origins, r.strategy, r.replaced_by, r.note) for r in output.removals]
    events = [(e.kind, e.title, e.message_ids, e.data) for e in output.events]
    return [(e.message, e.origins, e.created) for e in output.entries], removals, events, output.strategy


@settings(max_examples=150, deadline=None)
@given(history=messy_histories(), tool_history=TOOL_HISTORIES)
def test_each_longer_list_gives_the_output_a_fresh_run_gives(history, tool_history):
    group = define_context_policy({"toolHistory": tool_history}).tool_history
    STAGE_CACHE.clear()
    for end in range(1, len(history) + 1):
        entries = STAGE_CACHE.entries(history[:end])  # a step's list: the same entry objects as the last
        compressed = tool_history_stage.compress_tool_history(entries, group, "context_checkpoint")
        fresh = _fresh(tool_history_stage.compress_tool_history, entries, group, "context_checkpoint")
        assert _shape(compressed) == _shape(fresh), end
        purified = purification_stage.purify_history(compressed.entries)
        assert _shape(purified) == _shape(_fresh(purification_stage.purify_history, compressed.entries)), end


def test_the_compressors_event_at_a_user_input_goes_on_from_the_last_plans_ids():
    """The event's ids at the next user input are the last plan's list and the newly removed group's, in
    its line (`engine.lineage`): not a copy of every removed message's id at each user input."""

    def turn(n: int) -> list[AiMessage]:
        call = {"id": f"c{n}", "type": "function", "function": {"name": "grep", "arguments": "{}"}}
        return [
            AiMessage(f"u{n}", "user", "user_input", f"ask {n}", 3 * n, None),
            AiMessage(f"a{n}", "assistant", "tool_calls", "", 3 * n + 1, {"tool_calls": [call]}),
            AiMessage(f"t{n}", "tool", "tool_output", "found", 3 * n + 2, {"tool_call_id": f"c{n}"}),
        ]

    history = [m for n in range(4) for m in turn(n)]
    group = define_context_policy(
        {"toolHistory": {"strategy": "per-pair", "keepLatestToolPairs": 1, "retentionMode": "compress"}}
    ).tool_history
    forget_earlier_builds()
    ids = []
    for end in (7, 10):  # each list ends with a user input: one group more leaves at each
        entries = STAGE_CACHE.entries(history[:end])
        ids.append(tool_history_stage.compress_tool_history(entries, group, "context_checkpoint").events[0])
    first, second = (event.message_ids for event in ids)
    assert (first, second) == (["a0", "t0"], ["a0", "t0", "a1", "t1"])
    assert shared_at_least(first, second) == 2


def test_builds_in_another_memory_lane_never_push_out_the_main_builds_outputs():
    messages = LOADED["tool_loop_runs"].messages
    edited = set_value(BASE, ("budget", "maxTokens"), 5000)
    clear_caches()
    build("tool_loop_runs", BASE)
    with memory_lane("series"):  # a step series: one build per prefix, more than any lane keeps
        for count in range(2, len(messages)):
            build_context(messages[:count], BASE, tick=TICK, tokenizer=TOKENIZER, now=1_700_000_000_000)
    hits, misses = STAGE_CACHE.hits, STAGE_CACHE.misses
    warm = build("tool_loop_runs", edited)
    assert (STAGE_CACHE.hits - hits, STAGE_CACHE.misses - misses) == (3, 0)
    clear_caches()
    assert comparable(warm) == comparable(build("tool_loop_runs", edited))


def test_lane_lists_keep_each_lanes_newest_and_read_the_own_lane_first():
    kept: LaneLists[str] = LaneLists(2)
    for item in ("m1", "m2", "m3"):
        kept.add(item)
    with memory_lane("series"):
        kept.add("s1")
        assert kept.items() == ["s1", "m3", "m2"] and kept.newest() == "s1"
    assert kept.items() == ["m3", "m2", "s1"] and kept.newest() == "m3"
    kept.add("m2")  # kept already: moved to the front, not kept twice
    assert kept.items() == ["m2", "m3", "s1"]
    kept.clear()
    assert kept.items() == [] and kept.newest() is None


def test_purification_appending_to_another_lanes_lists_leaves_that_lanes_next_run_right():
    """A run appends to the lists of the run before it (no copy of the history's length per step): the
    series lane's run extends the main lane's, so the main lane's next run must not append after it."""
    summary = {"messageType": "summary", "replacedMessageIds": ["m1"], "summarySeq": 1}
    base = [
        AiMessage("sys", "system", "system_prompt", "agent", 0),
        AiMessage("m1", "user", "user_input", "ask", 1),
        AiMessage("m2", "assistant", "final_answer", "done", 2),
        AiMessage("s1", "system", "history_summary", "summary", 3, summary),
    ]
    again = AiMessage("m1", "user", "user_input", "ask again", 5)  # replaced: its id is the summary's
    STAGE_CACHE.clear()
    purification_stage._LAST.clear()
    steps = [
        ("main", base),
        ("series", [*base, AiMessage("m1", "user", "user_input", "other", 4)]),
        ("main", [*base, AiMessage("m4", "user", "user_input", "next", 4)]),
        ("main", [*base, AiMessage("m4", "user", "user_input", "next", 4), again]),
    ]
    removed = []
    for lane, messages in steps:
        with memory_lane(lane):
            entries = STAGE_CACHE.entries(messages)
            purified = purification_stage.purify_history(entries)
        assert _shape(purified) == _shape(_fresh(purification_stage.purify_history, entries)), lane
        removed.append([o for r in purified.removals for o in r.origins])
    assert removed == [[1], [1, 4], [1], [1, 5]]


def test_a_new_summary_folding_the_old_one_in_keeps_a_message_sharing_its_id():
    """The new summary replaces all the old one did, so what left stays out, except a message under the
    new summary's own id: a message never leaves for a summary of its own id."""
    first = {"messageType": "summary", "replacedMessageIds": ["m1"], "summarySeq": 1}
    second = {"messageType": "summary", "replacedMessageIds": ["m1", "s1", "m2"], "summarySeq": 2}
    history = [
        AiMessage("sys", "system", "system_prompt", "agent", 0),
        AiMessage("m1", "user", "user_input", "ask", 1),
        AiMessage("s1", "system", "history_summary", "summary", 2, first),
        AiMessage("m2", "assistant", "final_answer", "done", 3),
        AiMessage("m1", "system", "history_summary", "summary again", 4, second),
    ]
    STAGE_CACHE.clear()
    purification_stage._LAST.clear()
    for end in range(1, len(history) + 1):
        entries = STAGE_CACHE.entries(history[:end])
        purified = purification_stage.purify_history(entries)
        assert _shape(purified) == _shape(_fresh(purification_stage.purify_history, entries)), end
    assert [e.message.content for e in purified.entries] == ["agent", "ask", "summary again"]


def test_a_new_summary_taking_out_a_message_before_those_already_out_lists_them_in_history_order():
    first = {"messageType": "summary", "replacedMessageIds": ["m2"], "summarySeq": 1}
    second = {"messageType": "summary", "replacedMessageIds": ["m1", "m2", "s1", "m3"], "summarySeq": 2}
    history = [
        AiMessage("sys", "system", "system_prompt", "agent", 0),
        AiMessage("m1", "user", "user_input", "ask", 1),
        AiMessage("m2", "assistant", "final_answer", "done", 2),
        AiMessage("s1", "system", "history_summary", "summary", 3, first),
        AiMessage("m3", "user", "user_input", "next", 4),
        AiMessage("s2", "system", "history_summary", "summary again", 5, second),
    ]
    STAGE_CACHE.clear()
    purification_stage._LAST.clear()
    for end in range(1, len(history) + 1):
        entries = STAGE_CACHE.entries(history[:end])
        purified = purification_stage.purify_history(entries)
        assert _shape(purified) == _shape(_fresh(purification_stage.purify_history, entries)), end
    assert purified.events[0].message_ids == ("m1", "m2", "s1", "m3")


@st.composite
def folding_histories(draw: st.DrawFn) -> list[AiMessage]:
    """Messages and summaries as linnkit's runtime makes them: each summary replaces all the one before it
    did, that summary and some messages since (so the next run refolds the last one's lists), now and then
    under an id an earlier message has."""
    out = [AiMessage("sys", "system", "system_prompt", "agent", 0)]
    replaced: list[str] = []
    for n in range(draw(st.integers(2, 30))):
        if draw(st.integers(0, 3)) or len(out) < 3:
            kind = draw(st.sampled_from(("user_input", "final_answer")))
            out.append(AiMessage(f"m{n}", "user" if kind == "user_input" else "assistant", kind, f"{n}", n))
            continue
        candidates = [m.id for m in out[1:] if m.id not in replaced]
        more = st.lists(st.sampled_from(candidates), max_size=5, unique=True) if candidates else st.just([])
        replaced = replaced + draw(more)
        mid = draw(st.sampled_from([f"s{n}", f"s{n}", *(m.id for m in out[1:])]))
        meta = {"messageType": "summary", "replacedMessageIds": replaced, "summarySeq": n}
        out.append(AiMessage(mid, "system", "history_summary", "summary", n, meta))
        replaced = [*replaced, mid]
    return out


@settings(max_examples=150, deadline=None)
@given(history=folding_histories(), data=st.data())
def test_purification_of_folding_summaries_equals_a_fresh_run_in_any_order_of_steps(history, data):
    """Steps forward and back (the timeline), in two memory lanes (the TUI's series beside the user's
    builds): a run that appended to the lists it shares with an earlier run (a refold, a walk) leaves that
    run's part as it was."""
    ends = data.draw(st.lists(st.integers(1, len(history)), min_size=1, max_size=12))
    forget_earlier_builds()
    for end in [*range(1, len(history) + 1), *ends]:
        with memory_lane(data.draw(st.sampled_from(("main", "series")))):
            entries = STAGE_CACHE.entries(history[:end])
            purified = purification_stage.purify_history(entries)
            assert _shape(purified) == _shape(_fresh(purification_stage.purify_history, entries)), end


def test_purification_hands_on_the_last_steps_event_while_as_many_left_for_the_same_summary():
    """A replay's step whose summary and removed messages are the last step's gets the last step's very event
    and removal (no copy of their ids per step); one more removed makes them anew."""
    summary = {"messageType": "summary", "replacedMessageIds": ["m1", "m2"], "summarySeq": 1}
    history = [
        AiMessage("sys", "system", "system_prompt", "agent", 0),
        AiMessage("m1", "user", "user_input", "ask", 1),
        AiMessage("m2", "assistant", "final_answer", "done", 2),
        AiMessage("s1", "system", "history_summary", "summary", 3, summary),
        AiMessage("m3", "user", "user_input", "next", 4),
        AiMessage("m4", "assistant", "final_answer", "done again", 5),
        AiMessage("m2", "user", "user_input", "ask under a replaced id", 6),
        AiMessage("m5", "assistant", "final_answer", "answered", 7),
    ]
    forget_earlier_builds()
    runs = [STAGE_CACHE.entries(history[:end]) for end in range(4, len(history) + 1)]
    outputs = [purification_stage.purify_history(entries) for entries in runs]
    for entries, purified in zip(runs, outputs, strict=True):
        assert _shape(purified) == _shape(_fresh(purification_stage.purify_history, entries))
    assert [o.events[0].message_ids for o in outputs] == [("m1", "m2")] * 3 + [("m1", "m2", "m2")] * 2
    assert outputs[2].events[0] is outputs[0].events[0] and outputs[2].removals[0] is outputs[0].removals[0]
    assert outputs[4].events[0] is outputs[3].events[0] is not outputs[2].events[0]
    assert outputs[4].removals[0].origins == (1, 2, 6)


@pytest.mark.parametrize("name", SESSIONS)
def test_builds_never_change_the_starting_states_they_share(name):
    """Every build starts from the shared states of its messages and copies a state before changing it
    (`engine.providers.state.own`): after replays that keep, truncate, prune and summarise, every shared
    state is still as it started."""
    session = LOADED[name]
    clear_caches()
    changed, options = 0, {"tokenizer": TOKENIZER, "fences": FENCES.get(name)}
    for policy in (BASE, set_value(BASE, ("budget", "maxTokens"), 1500)):
        for step in iter_session_steps(session.messages, policy, **options):
            changed += len(step.result.strategies_applied)
    held = STAGE_CACHE._states.items()
    assert held and changed
    for entries, tokens, origin in held:
        states = origin.states
        assert len(states) == len(entries) == len(tokens)
        for position, (state, entry, count) in enumerate(zip(states, entries, tokens, strict=True)):
            assert state.shared and state.index == position and state.message is entry.message
            assert (state.tokens, state.origins) == (count, entry.origins)
            assert (state.action, state.kept, state.phase, state.strategy) == ("skip", False, None, None)
            assert state.processed is state.truncation is state.replacement_source_ids is None


def test_a_shared_state_refuses_a_change_until_owned():
    from engine.providers.state import State, own

    shared = State(AiMessage("u1", "user", "user_input", "hi", 0), 0, (0,), 3, shared=True)
    states = [shared]
    with pytest.raises(RuntimeError, match="state 0 is shared with other builds"):
        shared.keep("keep_core", "CORE_CONTEXT", "must_keep")
    mine = own(states, 0)
    mine.keep("keep_core", "CORE_CONTEXT", "must_keep")
    assert states == [mine] and mine is not shared and not shared.kept and mine.kept
    assert own(states, 0) is mine
