"""The BuildResult records (engine/result.py): decisions, wire cards, the token account, trace options."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.build import build_context
from engine.fences import load_fences
from engine.host_tokenizers import MockTokenizer, TableTokenizer
from engine.invariants import check_invariants
from engine.policy import effective_policy
from engine.replay import iter_session_steps
from engine.session import load_session
from engine.summarizer import FixedSummarizer
from tests.pipeline_helpers import (
    answer,
    build,
    call,
    calls,
    decision_events,
    fence,
    flatten,
    group,
    output,
    policy,
    registry,
    sys,
    user,
)

TABLE = TableTokenizer({"sys": 100, "u1": 10, "a_g1": 60, "t_g1": 40, "a1": 20, "u2": 30})
SMALL = flatten(sys(), user("u1"), group("g1"), answer("a1"), user("u2"))
MEMORY = {
    "kind": "memory-context",
    "llmRole": "user",
    "placement": "before-current-user",
    "lifetime": "turn-only",
}


def rich_session():
    """Compression, fence lifetime, assembly and summarisation in one build (MockTokenizer(10))."""
    return flatten(
        sys(),
        user("u1"),
        group("g1"),
        answer("a1"),
        fence("f_old", "memory-context", "old", "before-current-user"),
        user("u2"),
        group("g2"),
        answer("a2"),
        user("u3"),
        answer("a3"),
        fence("f_mem", "memory-context", "tea", "before-current-user"),
        user("u4", "What should I drink? " * 20),
    )


def rich_build():
    layer = policy(summarization={"triggerThreshold": 0.1})
    return build(
        rich_session(),
        layer,
        fences=registry(MEMORY),
        tokenizer=MockTokenizer(10),
        summarizer=FixedSummarizer("gist"),
    )


def test_one_decision_per_session_message_then_the_created_ones():
    result = rich_build()
    session = rich_session()
    summary_id = result.messages[1].id
    assert result.kept_ids == ("sys", summary_id, "a3", "u4")
    assert [d.index for d in result.decisions] == [*range(len(session)), -1]
    assert [d.message_id for d in result.decisions] == [*(m.id for m in session), summary_id]
    by_id = {d.message_id: (d.kept, d.reason, d.replaced_by, d.wire_index) for d in result.decisions}
    summarised = (True, "replaced_by_ai_history_summarization", summary_id, 1)
    assert by_id == {
        "sys": (True, "kept_by_CORE_CONTEXT", None, 0),
        # candidates u1, compressed g1, a1, u2, a2, u3, a3, u4: the first 6 span indices 1..8 of the
        # preprocessed list, g2 included; g1 was compressed first, its compressed message then summarised
        "u1": summarised,
        "a_g1": summarised,
        "t_g1": summarised,
        "a1": summarised,
        "f_old": (False, "dropped_by_fence_lifetime", None, None),
        "u2": summarised,
        "a_g2": summarised,
        "t_g2": summarised,
        "a2": summarised,
        "u3": summarised,
        "a3": (True, "kept_by_WORKING_MEMORY", None, 2),
        "f_mem": (True, "replaced_by_current_turn_message_assembly", "u4", 3),
        "u4": (True, "kept_by_CORE_CONTEXT", None, 3),
        summary_id: (True, "kept_by_SUMMARIZATION", None, 1),
    }
    assert result.decision_for("f_mem").tokens == 0  # its tokens are counted in u4's
    # replaced ids, plus the sources of the compressed message (metadata) and of the WM group g2 (state)
    assert result.messages[1].meta("replacedMessageIds") == [
        "u1",
        "compressed:a_g1",
        "a_g1",
        "t_g1",
        "a1",
        "u2",
        "a_g2",
        "t_g2",
        "a2",
        "u3",
    ]
    assert result.decision_for("u4").tokens == 10


def test_wire_cards():
    result = rich_build()
    assert [c.index for c in result.cards] == list(range(len(result.wire)))
    assert [c.message for c in result.cards] == list(result.wire)
    assert [(c.message_id, c.source_ids, c.marks) for c in result.cards] == [
        ("sys", ("sys",), ()),
        (
            result.messages[1].id,
            ("u1", "a_g1", "t_g1", "a1", "u2", "a_g2", "t_g2", "a2", "u3"),  # what the summary replaced
            ("summary",),
        ),
        ("a3", ("a3",), ()),
        ("u4", ("f_mem", "u4"), ("assembled:memory-context",)),
    ]
    assert [c.tokens for c in result.cards] == [10] * 4


def test_token_account_of_the_worked_example_defaults():
    result = build(SMALL, policy(), tokenizer=TABLE)
    account = result.tokens
    assert (account.max_tokens, account.reserved_for_response, account.total_budget) == (1100, 100, 1000)
    assert (account.wm_budget, account.trigger_tokens, account.summary_budget) == (700, 700.0, 120)
    assert account.final_tokens == 260
    assert account.by_category == {"core": 100, "working_memory": 30, "tool_history": 100, "user": 30}
    assert sum(account.by_category.values()) == account.final_tokens
    assert (account.free, account.over_budget, account.backend) == (740, False, "host:table")


@pytest.mark.parametrize(
    ("defaults", "numbers"),
    [
        ("seed", (120000, 117600, 82320, 82320.0, 14112)),
        ("linnkit-0.21", (232000, 229600, 160720, 160720.0, 27552)),
    ],
)
def test_token_account_of_the_default_policies(defaults, numbers):
    result = build(SMALL, effective_policy(None, defaults=defaults), tokenizer=TABLE)
    account = result.tokens
    assert (
        account.max_tokens,
        account.total_budget,
        account.wm_budget,
        account.trigger_tokens,
        account.summary_budget,
    ) == numbers
    assert result.trace is None  # contextTrace is off by default


def test_by_category_names_fences_summaries_and_tool_history():
    result = rich_build()
    assert result.tokens.by_category == {"core": 10, "summary": 10, "working_memory": 10, "user": 10}
    fenced = build(
        [sys(), fence("f1", "memory-context", "m", "after-current-user"), user("u1")],
        policy(mustKeep={"alwaysKeepFenceKinds": ["memory-context"]}),
        tokenizer=MockTokenizer(10),
    )
    assert fenced.tokens.by_category == {"core": 10, "fence:memory-context": 10, "user": 10}
    assert sum(fenced.tokens.by_category.values()) == fenced.tokens.final_tokens


def test_trace_fields_and_token_components():
    result = build(SMALL, policy(), tokenizer=TABLE)
    trace = result.trace
    assert (trace["totalBudget"], trace["originalCount"], trace["finalCount"], trace["finalTokens"]) == (
        1000,
        6,
        6,
        260,
    )
    assert (trace["truncated"], trace["overflowed"], trace["maxTraceEvents"]) == (False, False, 200)
    assert trace["effectivePolicy"] == result.effective_policy
    assert check_invariants(result, expected_policy=result.effective_policy).ok
    assert [(c["componentId"], c["kind"], c["label"], c["tokens"]) for c in trace["tokenComponents"]] == [
        ("0:sys", "system", "system_prompt", 100),
        ("1:u1", "user", "user_input", 10),
        ("2:a_g1", "tool", "tool_calls", 60),
        ("3:t_g1", "tool", "search", 40),
        ("4:a1", "assistant", "final_answer", 20),
        ("5:u2", "user", "user_input", 30),
    ]


def test_trace_without_message_ids():
    result = build(SMALL, policy(contextTrace={"includeMessageIds": False}), tokenizer=TABLE)
    assert all("messageId" not in e and "replacementSourceIds" not in e for e in result.trace["events"])
    assert [e["originalIndex"] for e in decision_events(result)] == list(range(6))


def test_trace_without_token_breakdown():
    result = build(SMALL, policy(contextTrace={"includeTokenBreakdown": False}), tokenizer=TABLE)
    fields = ("tokens", "beforeTokens", "afterTokens", "tokenDelta", "tokensUsed")
    assert all(e.get(f, 0) == 0 for e in result.trace["events"] for f in fields)
    assert [e["remainingBudget"] for e in result.trace["events"] if e["kind"] == "provider"] == [
        870,
        740,
        740,
        740,
    ]
    assert "tokenComponents" not in result.trace
    assert result.trace["finalTokens"] == 260


def test_trace_event_cap():
    result = build(SMALL, policy(contextTrace={"maxTraceEvents": 3}), tokenizer=TABLE)
    assert result.trace["overflowed"] is True
    assert [e["providerName"] for e in result.trace["events"]] == [
        "CoreContextProvider",
        "WorkingMemoryProvider",
        "CheckpointProvider",
    ]


def test_trace_disabled():
    result = build(SMALL, policy(contextTrace={"enabled": False}), tokenizer=TABLE)
    assert result.trace is None
    assert result.decisions[0].reason == "kept_by_CORE_CONTEXT"  # decisions do not need the trace


def test_strategies_applied_are_deduplicated_in_order():
    result = rich_build()
    assert result.strategies_applied == (
        "tool_history_compression",
        "current_turn_message_assembly",
        "fence_lifetime",
        "tool_interaction_pairing",
        "text_conversation",
        "compressed_tool_history",
        "ai_history_summarization",
    )


def test_token_component_of_an_output_truncated_at_execution():
    preview = output(
        "t1", "c1", "first lines", observationTruncation={"originalChars": 1000, "previewChars": 100}
    )
    messages = [sys(), user("u1"), calls("a1", call("c1")), preview]
    result = build(messages, policy(), tokenizer=MockTokenizer(10))
    component = result.trace["tokenComponents"][3]
    assert (component["kind"], component["label"], component["tokens"]) == ("tool", "search", 10)
    assert component["truncatedAtExecution"] is True
    assert (component["originalTokensEstimate"], component["droppedTokensEstimate"]) == (100, 90)
    assert "truncatedAtExecution" not in result.trace["tokenComponents"][2]


SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"


@pytest.mark.parametrize(
    "name", ["fences_showcase", "summarization_trigger", "tool_loop_runs", "damaged_history"]
)
def test_a_decision_made_alone_equals_the_one_made_among_all(name):
    session = load_session(SAMPLES / f"{name}.jsonl")
    fences = SAMPLES / f"{name}.fences.yaml"
    options = {"fences": load_fences(fences)} if fences.exists() else {}
    tight = {"budget": {"maxTokens": 2500, "reservedForResponse": 200}}

    def fresh():  # a result whose decisions were not made yet
        return build_context(session.messages, tight, tokenizer=MockTokenizer(10), now=1, **options)

    everything = fresh().decisions.items()
    for message in session.messages:
        assert fresh().decision_for(message.id) == next(d for d in everything if d.message_id == message.id)
    users = tuple(d for d in everything if d.index >= 0 and d.type == "user_input")
    assert users and fresh().decisions_of_type("user_input") == users
    assert {d.reason for d in everything} - {"kept"}  # the budget made the session's decisions vary


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.jsonl")))
@pytest.mark.parametrize("max_tokens", [1500, 3000, 200_000])
def test_the_dropped_count_made_without_decisions_is_theirs(name: str, max_tokens: int) -> None:
    session = load_session(SAMPLES / name)
    policy = (session.header.data.get("contextPolicy") if session.header else None) or {}
    layer = {**policy, "budget": {"maxTokens": max_tokens, "reservedForResponse": 200}}
    result = build_context(session.messages, layer, tokenizer=MockTokenizer(10), now=1)
    if result.error is not None:
        return
    counted = result.count_dropped()  # before the decisions are made
    assert counted == result.dropped_count() == sum(1 for d in result.decisions if not d.kept)


@pytest.mark.parametrize(
    "name", ["long_chat_overflow.jsonl", "summarization_trigger.jsonl", "tool_loop_runs.jsonl"]
)
def test_the_dropped_count_of_each_replay_step_is_its_decisions(name: str) -> None:
    """Replay steps carry summaries earlier steps persisted and scope the ids they create (`run.renamed`):
    the count still agrees with the decisions at every step."""
    session = load_session(SAMPLES / name)
    policy = (session.header.data.get("contextPolicy") if session.header else None) or {}
    layer = {**policy, "budget": {"maxTokens": 400, "reservedForResponse": 100}}
    scoped = summarised = 0
    options = {"tokenizer": MockTokenizer(10), "now": 1, "summarizer": FixedSummarizer("gist")}
    for step in iter_session_steps(session.messages, layer, **options):
        result = step.result
        if result.error is not None:
            continue
        assert result.count_dropped() == sum(1 for d in result.decisions if not d.kept), step.number
        scoped += any(":e" in d.message_id for d in result.decisions if d.index < 0)
        summarised += any(d.reason.startswith("replaced_by_") for d in result.decisions)
    assert scoped and summarised  # both kinds of step were met


@pytest.mark.parametrize("name", sorted(p.name for p in SAMPLES.glob("*.jsonl")))
def test_the_dropped_count_of_rebuilds_after_a_budget_edit_is_their_decisions(name: str) -> None:
    """Rebuilds of the same stage outputs share one tally of the removals (`engine.dropped_count`) and read
    their own states: each rebuild's count agrees with its decisions."""
    session = load_session(SAMPLES / name)
    options = {"tokenizer": MockTokenizer(10), "now": 1, "summarizer": FixedSummarizer("gist")}
    counts = []
    for budget in (150, 300, 600, 1200, 120_000):
        layer = {"budget": {"maxTokens": budget, "reservedForResponse": 100}}
        result = build_context(session.messages, layer, **options)
        if result.error is not None:
            continue
        counts.append(result.count_dropped())
        assert counts[-1] == sum(1 for d in result.decisions if not d.kept), budget
    assert len(set(counts)) > 1  # the budgets drop different numbers of messages
