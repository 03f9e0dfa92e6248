"""The cost of a replay: cached prefix, where it broke and why, summarizer calls, totals and prices."""

from __future__ import annotations

from pathlib import Path

import pytest

from engine.cache_breaks import wire_units
from engine.cost import CostTracker, iter_step_costs, session_cost
from engine.host_tokenizers import MockTokenizer
from engine.prices import BUILTIN_PRICES, DEFAULT_PRICE_MODEL, PriceTable, load_price_table
from engine.replay import iter_session_steps
from engine.safe_input import InputError
from engine.wire import anthropic_turns, to_anthropic
from playground.app.inputs import load_inputs
from tests.pipeline_helpers import answer, call, calls, output, sys, user

SAMPLES = Path(__file__).resolve().parents[2] / "sample_sessions"
TEN = MockTokenizer(tokens_per_message=10)  # every message counts 10 tokens: sums done by hand
SONNET = BUILTIN_PRICES.find("claude-sonnet-4-5")


def _three_steps():
    """sys, u1, then two tool calls and the answer: three LLM calls (steps), one run."""
    return [
        sys(),
        user("u1"),
        calls("a1", call("c1")),
        output("t1", "c1", "result 1"),
        calls("a2", call("c2")),
        output("t2", "c2", "result 2"),
        answer("ans"),
    ]


def _sample(name: str):
    """A sample's messages, its header's policy, and the replay options `replay` uses (fences, ticks)."""
    inputs = load_inputs(SAMPLES / f"{name}.jsonl")
    options = {
        **inputs.build_options,
        "max_steps": inputs.max_steps,
        "available_tools": inputs.header.get("availableTools") or (),
    }
    return inputs.session.messages, inputs.policy, options


def test_a_three_step_replay_by_hand():
    steps, totals = session_cost(_three_steps(), None, tokenizer=TEN, price=SONNET)
    # step 1 sends [sys, u1]; step 2 adds a1, t1; step 3 adds a2, t2: each message 10 tokens
    assert [s.tokens_sent for s in steps] == [20, 40, 60]
    assert [s.cached_tokens for s in steps] == [0, 20, 40]
    assert [s.new_tokens for s in steps] == [20, 20, 20]
    assert [s.cached_messages for s in steps] == [0, 2, 4]
    assert [s.break_at for s in steps] == [None, None, None]
    assert [s.output_tokens for s in steps] == [10, 10, 10]  # a1, a2, ans: the recorded answers
    assert (totals.steps, totals.tokens_sent, totals.cached_tokens, totals.breaks) == (3, 120, 60, 0)
    assert totals.cached_share == 0.5
    # Sonnet 4.5: 60 cached × $0.30 + 60 written × $3.75 + 30 output × $15, per million
    assert totals.cost_usd == pytest.approx((60 * 0.30 + 60 * 3.75 + 30 * 15) / 1e6)
    assert totals.cost_no_cache_usd == pytest.approx((120 * 3.00 + 30 * 15) / 1e6)
    assert steps[1].to_json()["cachedTokens"] == 20


def test_tool_history_compression_breaks_the_prefix_where_it_rewrites_a_call():
    # two pairs in run 1, then a second request: per-pair keeps the latest pair and compresses a1/t1
    messages = [*_three_steps()[:-1], answer("ans1"), user("u2"), answer("ans2")]
    policy = {"toolHistory": {"strategy": "per-pair", "keepLatestToolPairs": 1}}
    steps, totals = session_cost(messages, policy, tokenizer=TEN)
    assert [s.tokens_sent for s in steps] == [20, 40, 60, 70]  # step 4: a1+t1 are one sentence now
    assert [s.break_at for s in steps] == [None, None, None, 2]
    assert steps[3].mechanism == "tool_history"
    assert [s.cached_tokens for s in steps] == [0, 20, 40, 20]
    assert totals.cache_breaks == {"tool_history": 1}
    assert totals.cost_usd is None  # no price given


def test_the_anthropic_shape_counts_merged_turns():
    messages = _three_steps()
    steps, totals = session_cost(messages, None, tokenizer=TEN, shape="anthropic")
    # system apart (10), then user u1 (10), assistant a1 (10), user t1 (10), ...: same sums here
    assert [s.cached_tokens for s in steps] == [0, 20, 40]
    assert [s.cached_messages for s in steps] == [0, 2, 4]
    assert totals.shape == "anthropic"


def test_anthropic_turns_are_what_to_anthropic_makes():
    wire = [
        {"role": "system", "content": "s"},
        {"role": "user", "content": "u"},
        {"role": "assistant", "content": None, "tool_calls": [call("c1"), call("c2")]},
        {"role": "tool", "tool_call_id": "c1", "content": "r1"},
        {"role": "tool", "tool_call_id": "c2", "content": "r2"},
        {"role": "system", "content": "summary"},
        {"role": "user", "content": "next"},
    ]
    turns = anthropic_turns(wire)
    assert turns == [("user", [1]), ("assistant", [2]), ("user", [3, 4, 6])]
    assert [m["role"] for m in to_anthropic(wire)["messages"]] == [role for role, _ in turns]


def test_summarization_sample_break_summary_and_summarizer_tokens():
    messages, policy, options = _sample("summarization_trigger")
    steps, totals = session_cost(messages, policy, price=SONNET, **options)
    assert totals.steps == 13
    made = [s for s in steps if s.summary_made]
    assert [s.step for s in made] == [13]
    step = made[0]
    # the summary replaces the oldest messages: the prefix keeps only the system prompt
    assert (step.break_at, step.mechanism, step.cached_tokens) == (1, "summary", 35)
    assert (step.summarizer_calls, step.summarizer_prompt_tokens, step.summarizer_summary_tokens) == (
        1,
        1048,
        162,
    )
    assert totals.summarizer_calls == 1 and totals.cache_breaks == {"summary": 1}
    assert totals.tokens_sent == 9240 and totals.cached_tokens == 7385
    assert totals.user_requests_dropped == 10  # folded into the summary
    # in the Anthropic shape the summary joins `system`: nothing at all is cached at that step
    steps_a, _ = session_cost(messages, policy, shape="anthropic", **options)
    assert (steps_a[12].break_at, steps_a[12].cached_tokens) == (0, 0)


def test_a_step_lists_only_the_user_requests_newly_dropped_and_counts_them_all():
    """`replay --json` stays linear in the length: a step's record counts the requests it dropped and lists
    only those no earlier step had dropped; together they are the totals' distinct requests."""
    messages, policy, options = _sample("summarization_trigger")
    steps, totals = session_cost(messages, policy, price=SONNET, **options)
    summary_step = steps[12]
    assert summary_step.user_requests_dropped == 10
    build = list(iter_session_steps(messages, policy, **options))[12].result
    folded = [d.message_id for d in build.decisions_of_type("user_input") if "summar" in d.reason]
    assert list(summary_step.user_requests_newly_dropped) == folded
    newly = [i for step in steps for i in step.user_requests_newly_dropped]
    assert len(newly) == len(set(newly)) == totals.user_requests_dropped == 10
    assert newly == list(summary_step.user_requests_newly_dropped)
    record = summary_step.to_json()
    assert record["userRequestsDropped"] == 10
    assert record["userRequestsNewlyDropped"] == newly
    assert all(step.to_json()["userRequestsNewlyDropped"] == [] for step in steps[:12])


def test_reminders_checkpoints_and_working_memory_are_named():
    messages, policy, options = _sample("max_steps_streak")
    _, totals = session_cost(messages, policy, **options)
    assert totals.cache_breaks == {"reminder": 4}
    messages, policy, options = _sample("checkpoint_midtask")
    steps, totals = session_cost(messages, policy, **options)
    assert [(s.step, s.break_at, s.mechanism) for s in steps if s.mechanism] == [
        (15, 1, "checkpoint"),
        (16, 7, "reminder"),
    ]
    messages, policy, options = _sample("chinese_session")
    _, totals = session_cost(messages, policy, **options)
    assert totals.cache_breaks == {"working_memory": 3}
    messages, policy, options = _sample("fences_showcase")
    _, totals = session_cost(messages, policy, **options)
    assert totals.cache_breaks == {"fence": 1}


def test_tokens_sent_are_the_builds_used_tokens():
    messages, policy, options = _sample("tool_loop_runs")
    for step, cost in iter_step_costs(messages, policy, **options):
        assert cost.tokens_sent == step.result.tokens.used


def test_summaries_every_few_steps_show_in_the_gaps():
    messages, policy, options = _sample("summarization_trigger")
    repeated = [messages[0]]
    for k in range(3):
        repeated += [m.__class__.from_dict({**m.to_dict(), "id": f"{m.id}~{k}"}) for m in messages[1:]]
    _, totals = session_cost(repeated, policy, **options)
    assert totals.summaries_made == 4
    assert totals.steps_between_summaries == (8, 8, 8)
    assert totals.cache_breaks == {"summary": 4}
    assert totals.to_json()["medianStepsBetweenSummaries"] == 8


def test_a_failed_step_sends_nothing_and_the_next_reads_the_last_sent_prefix():
    from engine.summarizer import FailingSummarizer

    messages, policy, options = _sample("summarization_trigger")
    steps, totals = session_cost(messages, policy, summarizer=FailingSummarizer(), **options)
    last = steps[-1]
    assert last.failed and last.tokens_sent == 0 and last.mechanism == "failed"
    assert last.summarizer_calls == 0  # the fatal failure leaves no event
    assert totals.failed_steps == 1


def test_cost_needs_detailed_builds():
    with pytest.raises(ValueError, match="detailed build"):
        session_cost(_three_steps(), None, tokenizer=TEN, detail=False)
    with pytest.raises(ValueError, match="wire shape 'gemini'"):
        CostTracker(_three_steps(), shape="gemini")


def test_wire_units_put_the_reminder_on_the_last_message():
    messages, policy, options = _sample("max_steps_streak")
    for step, _ in iter_step_costs(messages, policy, **options):
        if step.result.reminder.tokens:
            units = wire_units(step.result)
            assert units[-1].tokens == step.result.cards[-1].tokens + step.result.reminder.tokens
            break
    else:
        pytest.fail("no reminder fired")


def test_wire_units_read_as_whole_units_in_either_shape_and_recounted():
    """Units kept as three lists (`WireUnits`) read as the units they stand for: each wire message with its
    tokens (OpenAI), or Anthropic's system and merged turns with the sums of what they carry."""
    messages, policy, options = _sample("max_steps_streak")
    step = next(s for s, _ in iter_step_costs(messages, policy, **options) if s.result.reminder.tokens)
    result = step.result
    tokens = [card.tokens for card in result.cards]
    tokens[-1] += result.reminder.tokens
    openai = wire_units(result)
    assert [(u.payload, u.tokens, u.indexes) for u in openai] == [
        (m, t, (i,)) for i, (m, t) in enumerate(zip(result.wire, tokens, strict=True))
    ]
    assert openai[-1] == openai[len(openai) - 1] and openai[1:3] == (openai[1], openai[2])
    with pytest.raises(IndexError):
        openai[len(openai)]
    anthropic = wire_units(result, "anthropic")
    shaped = to_anthropic(result.wire)
    assert [u.payload for u in anthropic] == [("system", shaped["system"]), *shaped["messages"]]
    turns = [tuple(ix) for _, ix in anthropic_turns(result.wire)]
    assert [u.indexes for u in anthropic][1:] == turns and len(turns) < len(openai)
    assert sum(u.tokens for u in anthropic) == sum(tokens)
    counts = list(range(100, 100 + len(result.wire)))
    assert [u.tokens for u in openai.counted(counts)] == counts
    recounted = [sum(counts[i] for i in u.indexes) for u in anthropic]
    assert [u.tokens for u in anthropic.counted(counts)] == recounted


# -- prices -----------------------------------------------------------------------------------------


def test_the_catalogue_finds_the_models_transcripts_name():
    """genai-prices, read offline: dated ids, models a hand-kept table lacked, 1-hour writes, tiers."""
    assert BUILTIN_PRICES.date.startswith("genai-prices ")
    assert BUILTIN_PRICES.find("claude-sonnet-4-5-20250929").model == "claude-sonnet-4-5"
    opus = BUILTIN_PRICES.find("claude-opus-4-6")
    assert (opus.input, opus.cached_input, opus.cache_write, opus.cache_write_1h, opus.output) == (
        5.0, 0.5, 6.25, 10.0, 25.0,
    )  # fmt: skip
    haiku = BUILTIN_PRICES.find("claude-haiku-4-5-20251001", "anthropic")
    assert (haiku.model, haiku.input, haiku.cache_write_1h) == ("claude-haiku-4-5", 1.0, 2.0)
    assert BUILTIN_PRICES.find("gpt-5.4-mini").model == "gpt-5.4-mini"
    assert BUILTIN_PRICES.find("mystery-model") is None and BUILTIN_PRICES.find(None) is None
    assert BUILTIN_PRICES.find(DEFAULT_PRICE_MODEL) is not None
    assert all(BUILTIN_PRICES.find(name) is not None for name in BUILTIN_PRICES.names())
    assert BUILTIN_PRICES.find("claude-opus-4-6").source.startswith("genai-prices ")


def test_a_long_prompt_pays_its_tier_on_every_token():
    sonnet = BUILTIN_PRICES.find("claude-sonnet-4-5")
    assert sonnet.cost(uncached=200_000) == pytest.approx(0.6)  # 3 $/M up to 200k
    assert sonnet.cost(uncached=200_001) == pytest.approx(200_001 * 6 / 1e6)  # past it: 6 $/M on all of it
    assert sonnet.cost(cached=150_000, written=60_000, output=1000) == pytest.approx(
        (150_000 * 0.6 + 60_000 * 7.5 + 1000 * 22.5) / 1e6
    )
    assert sonnet.cost(written_1h=1_000_000) == pytest.approx(12.0)  # 1-hour writes, at the tier


def test_a_price_file_overrides_and_adds_rows(tmp_path):
    path = tmp_path / "prices.yaml"
    path.write_text(
        "date: 2027-01-01\nmodels:\n"
        "  claude-sonnet-4-5: {input: 1, cachedInput: 0.1, cacheWrite: 2, output: 4}\n"
        "  local-llm: {input: 0.5, cachedInput: 0.5, output: 1}\n"
    )
    table = load_price_table(path)
    assert table.date == "2027-01-01"
    assert table.find("claude-sonnet-4-5").cache_write == 2
    local = table.find("local-llm")
    assert (local.input, local.cache_write) == (0.5, 0.5)  # no write premium unless given
    assert table.find("gpt-4.1") is not None  # the catalogue still answers for the rest
    assert table.find("local-llm").cache_write_1h == 0.5  # as the 5-minute write unless given
    assert (
        isinstance(load_price_table(path, base=None), PriceTable)
        and load_price_table(path, None).find("gpt-4.1") is None
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- 1\n", "prices.yaml: a price file is a mapping with `models:`"),
        ("models:\n  m: {input: -1, cachedInput: 0, output: 1}\n", "prices.yaml:2: models.m.input: a price"),
        (
            "models:\n  m: {input: 1, cachedInput: 0, output: 1, outptu: 2}\n",
            "models.m: unknown key 'outptu'",
        ),
        ("models:\n  m: !!python/object:os.system {}\n", "unsafe or unknown YAML tag"),
    ],
)
def test_a_bad_price_file_says_where(tmp_path, text, message):
    path = tmp_path / "prices.yaml"
    path.write_text(text)
    with pytest.raises(InputError) as raised:
        load_price_table(path)
    assert message in str(raised.value).replace(str(tmp_path) + "/", "")


def test_a_failing_summary_agent_is_called_again_at_every_step():
    """`continue-if-within-budget`: each step retries the agent three times, each time with its prompt."""
    from engine.policy import set_value
    from engine.summarizer import FailingSummarizer

    messages, policy, options = _sample("summarization_trigger")
    policy = set_value(policy, ("summarization", "failureBehavior"), "continue-if-within-budget")
    policy = set_value(policy, ("summarization", "triggerThreshold"), 0.3)
    steps, totals = session_cost(messages, policy, summarizer=FailingSummarizer(), **options)
    calls = [(s.step, s.summarizer_calls, s.summarizer_prompt_tokens) for s in steps if s.summarizer_calls]
    assert calls == [(8, 3, 2109), (9, 3, 2145), (10, 3, 2514)]  # 703, 715, 838 prompt tokens × 3 tries
    assert (totals.summarizer_calls, totals.summaries_made, totals.summarizer_summary_tokens) == (9, 0, 0)


def test_a_one_step_replays_counts_are_numbers_not_flags():
    _, totals = session_cost([sys(), user("u1"), answer("ans")], None, tokenizer=TEN, price=SONNET)
    counts = totals.to_json()
    names = ("steps", "overBudgetSteps", "failedSteps", "unpricedSteps", "recordedSteps")
    picked = {k: counts[k] for k in names}
    assert picked == dict(zip(names, (1, 0, 0, 0, 0), strict=True))
    assert all(type(v) is int for v in picked.values())
