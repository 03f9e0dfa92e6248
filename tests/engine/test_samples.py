"""The teaching sessions in sample_sessions/: each loads, builds cleanly and shows the lesson it claims."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from engine.build import build_context
from engine.fences import as_registry, load_fences
from engine.invariants import check_invariants
from engine.policy import read_policy_layer
from engine.replay import replay_session
from engine.result import BuildResult
from engine.session import Session, load_session
from engine.ticks import TickState
from engine.tokens import DefaultTokenizer

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
NAMES = (
    "short_chat",
    "long_chat_overflow",
    "tool_loop_runs",
    "checkpoint_midtask",
    "summarization_trigger",
    "fences_showcase",
    "max_steps_streak",
    "chinese_session",
    "damaged_history",
)


def load(name: str) -> Session:
    return load_session(SAMPLES / f"{name}.jsonl")


def merged(base: dict[str, Any], override: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(base)
    for group, fields in override.items():
        out.setdefault(group, {}).update(fields)
    return out


def build(name: str, override: dict[str, Any] | None = None, **options: Any) -> BuildResult:
    """Build a sample with its header's suggested policy (optionally changed) and fences."""
    session = load(name)
    policy = merged(session.header.context_policy or {}, override or {})
    return build_context(session.messages, policy, fences=session.header.fences, now=0, **options)


def ids(decisions, *, kept: bool) -> list[str]:
    return [d.message_id for d in decisions if d.kept is kept]


def compressed(messages) -> list[str]:
    return [m.id for m in messages if m.meta("isCompressedToolHistory")]


def by_id(result: BuildResult) -> dict[str, Any]:
    return {d.message_id: d for d in result.decisions}


def m(first: int, last: int) -> list[str]:
    return [f"m{n:03d}" for n in range(first, last + 1)]


# -- every sample ---------------------------------------------------------------------------------


@pytest.mark.parametrize("name", NAMES)
def test_sample_loads_with_a_teaching_header(name):
    session = load(name)
    header = session.header
    assert session.errors == []
    assert header.version == 1 and header.title and header.model_id
    assert len(header.lesson.split("\n")) == 2
    assert header.context_policy["contextTrace"] == {"enabled": True}
    assert session.messages[0].type == "system_prompt"


@pytest.mark.parametrize("name", NAMES)
def test_sample_builds_without_invariant_errors(name):
    result = build(name)
    assert result.error is None
    assert check_invariants(result).errors == ()
    assert result.tokens.final_tokens <= result.tokens.total_budget


# -- 1. short_chat --------------------------------------------------------------------------------


def test_short_chat_keeps_every_message_unchanged():
    session = load("short_chat")
    result = build("short_chat")
    assert ids(result.decisions, kept=False) == []
    assert [m.id for m in result.messages] == [m.id for m in session.messages]
    assert [m.content for m in result.messages] == [m.content for m in session.messages]
    assert result.strategies_applied == ("tool_interaction_pairing", "text_conversation")


# -- 2. long_chat_overflow ------------------------------------------------------------------------


def test_long_chat_working_memory_fills_p1_p2_p3():
    result = build("long_chat_overflow")
    decisions = by_id(result)
    # P2 skips the 479-token method answer (m013) but still keeps older, smaller messages; the long
    # pasted outline (m002) does not fit either.
    assert ids(result.decisions, kept=False) == ["m002", "m007", "m008", "m013"]
    assert decisions["m013"].reason == "dropped_by_budget_or_priority"
    assert all(decisions[i].kept for i in ("m003", "m005", "m011", "m012"))
    # P1: the current turn's groups and the two newest older groups, forced.
    for group_id in ("m023", "m025", "m033", "m035"):
        assert decisions[group_id].strategy == "tool_interaction_pairing"
    # P3: one compressed line of an older run fits the room P2 left, the other does not.
    assert compressed(result.preprocessed) == ["compressed:m007", "compressed:m017"]
    assert compressed(result.messages) == ["compressed:m017"]
    assert "compressed_tool_history" in result.strategies_applied
    assert result.tokens.final_tokens <= result.tokens.wm_budget == 1610


# -- 3. tool_loop_runs ----------------------------------------------------------------------------


def raw_history_calls(result: BuildResult) -> list[str]:
    order = [msg.id for msg in result.preprocessed]
    current = order.index("m135")  # the last user_input
    return [msg.id for msg in result.preprocessed[:current] if msg.type == "tool_calls"]


def test_tool_loop_is_the_largest_sample():
    session = load("tool_loop_runs")
    assert 150 <= len(session.messages) <= 250
    assert [x.id for x in session.messages if x.type == "user_input"] == [
        "m002", "m039", "m069", "m092", "m111", "m133", "m135",
    ]  # fmt: skip


def test_tool_loop_per_run_compresses_all_but_the_last_run_with_tools():
    result = build("tool_loop_runs")
    assert result.strategies_applied[0] == "tool_history_compression"
    assert len(compressed(result.preprocessed)) == 46
    # Run 6 (m133) used no tools, so run 5 (m111..m132) is the one that stays raw.
    assert raw_history_calls(result) == [f"m{n}" for n in range(112, 131, 2)]
    kept = compressed(result.messages)
    assert len(kept) == 13 and kept[-1] == "compressed:m108"
    assert "compressed:m003" not in kept  # the oldest lines do not fit the working-memory budget


def test_tool_loop_strategies_compared():
    none = build("tool_loop_runs", {"toolHistory": {"strategy": "none"}})
    assert compressed(none.preprocessed) == [] and "tool_history_compression" not in none.strategies_applied
    assert len(raw_history_calls(none)) == 56

    per_pair = build("tool_loop_runs", {"toolHistory": {"strategy": "per-pair"}})
    assert len(compressed(per_pair.preprocessed)) == 54
    assert raw_history_calls(per_pair) == ["m128", "m130"]

    dropped = build("tool_loop_runs", {"toolHistory": {"retentionMode": "drop"}})
    assert "tool_history_drop" in dropped.strategies_applied
    assert compressed(dropped.preprocessed) == [] and len(raw_history_calls(dropped)) == 10
    assert by_id(dropped)["m003"].reason == "dropped_by_tool_history_drop"


def test_tool_loop_group_cap_compresses_even_under_none():
    result = build("tool_loop_runs", {"toolHistory": {"strategy": "none", "maxInteractionGroups": 12}})
    assert len(raw_history_calls(result)) == 12
    assert len(compressed(result.preprocessed)) == 44
    assert any(e.kind == "overflow" and "maxInteractionGroups 12" in e.title for e in result.events)


# -- 4. checkpoint_midtask ------------------------------------------------------------------------


def test_checkpoint_prunes_everything_before_it():
    result = build("checkpoint_midtask")
    assert "checkpoint_trim_before" in result.strategies_applied
    purged = [d.message_id for d in result.decisions if d.reason == "dropped_by_CHECKPOINT_PURGED"]
    assert purged == m(2, 10) + m(12, 26)
    # Kept: the system prompt, the request (core), the last keepPairsBefore=2 groups, the checkpoint, after.
    assert [x.id for x in result.messages] == ["m001", "m011", *m(27, 36)]
    checkpoint = result.messages[6]
    assert checkpoint.id == "m031" and checkpoint.tool_calls[0]["function"]["name"] == "context_checkpoint"


def test_checkpoint_keep_pairs_before_zero_keeps_only_the_checkpoint_group():
    result = build("checkpoint_midtask", {"checkpoint": {"keepPairsBefore": 0}})
    assert [x.id for x in result.messages] == ["m001", "m011", *m(31, 36)]


# -- 5. summarization_trigger ---------------------------------------------------------------------


def test_summarization_fires_and_replaces_the_oldest_turns():
    result = build("summarization_trigger")
    assert "ai_history_summarization" in result.strategies_applied
    assert result.summarization_check == {
        "used": 1469,
        "available": 1031,
        "threshold": 1250.0,
        "precheckPassed": True,
        "contentTokens": 1339,
        "fired": True,
    }
    summary = result.messages[1]
    assert summary.type == "history_summary" and summary.content.startswith("[历史对话摘要 - 压缩了19条消息]")
    assert [x.id for x in result.messages] == ["m001", summary.id, *m(21, 26)]
    (event,) = result.summary_events
    assert event["replaced_message_ids"] == m(2, 20)


@pytest.mark.parametrize(
    ("threshold", "content_tokens"),
    [(0.55, 1339), (0.65, 1339), (0.66, None), (0.7, None)],
)
def test_summarization_two_stage_trigger(threshold, content_tokens):
    """Stage 1 (kept 1469 ≥ 0.9 × threshold) holds up to 0.65; stage 2 (content 1339 ≥ threshold) fails."""
    result = build("summarization_trigger", {"summarization": {"triggerThreshold": threshold}})
    assert result.summarization_check["contentTokens"] == content_tokens
    assert result.summarization_check["fired"] is False
    assert "ai_history_summarization" not in result.strategies_applied


# -- 6. fences_showcase ---------------------------------------------------------------------------


def test_fences_all_placements_and_lifetimes():
    result = build("fences_showcase")
    decisions = by_id(result)
    assert decisions["m002"].reason == "replaced_by_current_turn_message_assembly"  # into the system prompt
    assert decisions["m012"].replaced_by == decisions["m014"].replaced_by == "m013"  # into the request
    assert [decisions[i].reason for i in ("m004", "m006")] == ["dropped_by_fence_lifetime"] * 2
    assert decisions["m003"].kept and decisions["m003"].phase == "CORE_CONTEXT"  # persisted, must-keep
    wire = result.wire
    assert wire[0]["content"].endswith(
        '<workspace-rules source="AGENTS.md">Run `python -m pytest -q` and `ruff check .` after every '
        "change. Never edit files under staging/. Commit messages in the imperative mood.</workspace-rules>"
    )
    request = next(w for w in wire if "<user_request>" in (w.get("content") or ""))
    assert request["content"].startswith(
        '<local-time tz="Europe/Berlin">2024-05-14 09:05 CEST</local-time>\n\n<user_request>\nMake poll_all'
    )
    assert '<attached-file name="FC-112.md" tracker="linear">' in request["content"]
    assert wire[-1] == {
        "role": "user",
        "content": "<hint>Tests pass. AGENTS.md also asks for `ruff check .` before you report back.</hint>",
    }


def test_fences_must_keep_fence_is_cut_to_its_budget_share():
    result = build("fences_showcase")
    (event,) = [e for e in result.events if e.kind == "fence_truncation"]
    assert event.message_ids == ("m003",)
    assert event.data["strategy"] == "fence-budget:memory-context"
    assert event.data["cap"] == 350  # floor(7000 × 0.05)
    assert (event.data["before"], event.data["after"]) == (672, 220)
    memory = next(x for x in result.messages if x.id == "m003")
    assert memory.content.endswith("...") and len(memory.content) == 697


def test_fences_yaml_matches_the_header():
    from_yaml = load_fences(SAMPLES / "fences_showcase.fences.yaml")
    assert from_yaml.list() == as_registry(load("fences_showcase").header.fences).list()


# -- 7. max_steps_streak --------------------------------------------------------------------------


def test_max_steps_reminders_step_by_step():
    session = load("max_steps_streak")
    header = session.header
    assert header.max_steps == 40 and "context_checkpoint" in header.extra["availableTools"]
    steps = replay_session(
        session.messages,
        header.context_policy,
        max_steps=header.max_steps,
        available_tools=header.extra["availableTools"],
        now=0,
    )
    audit = [s for s in steps if s.point.run_index == 2]
    assert [s.tick.step_count for s in audit] == list(range(2, 39, 2))
    fired = {
        s.tick.step_count: s.result.reminder.hit_rule_ids for s in audit if s.result.reminder.hit_rule_ids
    }
    assert fired == {
        22: ("tool_call_streak_every_ten",),
        30: ("periodic_taskstate_reflection",),
        34: ("last_steps_hint",),
        36: ("last_steps_hint", "context_budget_warning"),
        38: ("last_steps_hint", "context_budget_warning"),
    }


@pytest.mark.parametrize(
    ("step", "expected"),
    [
        (38, ("last_steps_hint", "context_budget_warning")),
        (40, ("max_steps_force_final_answer",)),
    ],
)
def test_max_steps_late_tick_on_the_whole_session(step, expected):
    tools = tuple(load("max_steps_streak").header.extra["availableTools"])
    result = build("max_steps_streak", tick=TickState(step_count=step, max_steps=40, available_tools=tools))
    assert result.reminder.hit_rule_ids == expected
    assert result.wire[-1]["role"] == "tool"
    assert result.wire[-1]["content"].endswith("</system-reminder>")


def test_max_steps_streak_threshold_moves_the_streak_reminder():
    tools = tuple(load("max_steps_streak").header.extra["availableTools"])
    tick = TickState(step_count=38, max_steps=40, available_tools=tools)
    result = build("max_steps_streak", {"systemReminder": {"thresholds": {"toolCallStreak": 6}}}, tick=tick)
    assert "tool_call_streak_every_ten" in result.reminder.hit_rule_ids  # streak 18 is a multiple of 6


# -- 8. chinese_session ---------------------------------------------------------------------------


def test_chinese_token_counts_differ_between_cl100k_and_the_ratio():
    cl100k = build("chinese_session")
    ratio = build("chinese_session", tokenizer=DefaultTokenizer(None, 1.7))
    assert cl100k.tokens.backend.endswith("cl100k_base")
    assert ratio.tokens.backend == "chars-per-token:1.7"
    first, by_ratio = by_id(cl100k)["m002"], by_id(ratio)["m002"]
    assert (first.tokens, by_ratio.tokens) == (59, 37)  # 54 characters: cl100k 54, ceil(54 / 1.7) = 32
    chinese = [x.id for x in load("chinese_session").messages if x.type in ("user_input", "final_answer")]
    assert all(by_id(cl100k)[i].tokens > by_id(ratio)[i].tokens for i in chinese)


def test_chinese_cl100k_drops_the_answer_the_ratio_keeps():
    cl100k = build("chinese_session")
    ratio = build("chinese_session", tokenizer=DefaultTokenizer(None, 1.7))
    assert not by_id(cl100k)["m014"].kept and by_id(ratio)["m014"].kept
    assert set(ids(cl100k.decisions, kept=False)) - set(ids(ratio.decisions, kept=False)) == {"m014"}
    assert "ai_history_summarization" not in ratio.strategies_applied
    lower = build("chinese_session", tokenizer=DefaultTokenizer(None, 1.6))
    assert not by_id(lower)["m014"].kept  # 1.6 chars per token: the answer no longer fits


# -- 9. damaged_history ---------------------------------------------------------------------------


def test_damaged_history_is_reported_not_repaired():
    session = load("damaged_history")
    assert [str(p) for p in session.warnings] == [
        f'{SAMPLES / "damaged_history.jsonl"}:14: id: duplicate id "m012" (first on line 13); kept'
    ]
    result = build("damaged_history")
    assert result.warnings == (
        "m012: message id used 2 times",
        "m006: empty user_input message",
        "m007: empty final_answer message",
        "m011: orphan tool output: no earlier call declares call_7fQmK2vXbN8pLr4TzW1sYd6H",
        "m016: tool output without tool_call_id (not sent on the wire)",
        f"m005: orphan tool call {session.messages[4].tool_calls[0]['id']}: no output answers it",
    )
    # Nothing is purified: the providers see the history exactly as stored.
    assert [x.id for x in result.preprocessed] == [x.id for x in session.messages]
    assert ids(result.decisions, kept=False) == ["m005", "m011", "m016"]
    assert [x.id for x in result.messages].count("m012") == 2
    assert {"role": "user", "content": "   "} in result.wire and {
        "role": "assistant",
        "content": "",
    } in result.wire


def test_tight_budget_policy_file_on_the_big_sample():
    layer = read_policy_layer(SAMPLES / "tight_budget.policy.yaml")
    session = load("tool_loop_runs")
    result = build_context(session.messages, layer, now=0)
    assert check_invariants(result).errors == ()
    assert result.tokens.total_budget == 5000 and result.tokens.final_tokens <= 3500
    check = result.summarization_check
    stages = (check["used"], check["threshold"], check["contentTokens"], check["fired"])
    assert stages == (3480, 3000.0, 1769, False)  # stage 1: 3480 ≥ 2700; stage 2: 1769 < 3000
