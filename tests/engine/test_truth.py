"""The rebuild against the record: offsets learnt per segment, errors, the calibration fit and file, and
the cost of a recorded session priced per call (its model, its tier, the cache per model, expiry)."""

from __future__ import annotations

import math

import pytest

from engine.cost import CostTracker, iter_step_costs
from engine.host_tokenizers import MockTokenizer
from engine.messages import AiMessage
from engine.prices import Price, PriceTable
from engine.recorded import recorded_cost, recorded_run
from engine.safe_input import InputError
from engine.ticks import step_points
from engine.truth import AS_RECORDED, Calibration, ModelFit, fit_calibration, iter_truth, load_calibration
from engine.usage import RecordedUsage

TEN = MockTokenizer(tokens_per_message=10)  # every message counts 10: sums by hand
HOUR = 3_600_000
PRICES = PriceTable(
    "test",
    {
        "m": Price("m", 1, 0.1, 1.25, 5, "", 2),
        "m2": Price("m2", 2, 0.2, 2.5, 10, "", 4),
    },
    use_catalogue=False,
)


def used(model: str, prompt: int, read: int, write: int, out: int, one_hour: int = 0) -> dict:
    usage = RecordedUsage("anthropic", prompt, out, read, write, one_hour, None, model, f"msg-{prompt}")
    return {"usage": usage.to_json()}


def call(mid: str, cid: str, t: int, meta: dict) -> AiMessage:
    calls = [{"id": cid, "type": "function", "function": {"name": "ls", "arguments": "{}"}}]
    return AiMessage(mid, "assistant", "tool_calls", "", t, {"tool_calls": calls, **meta})


def session() -> list[AiMessage]:
    """Four recorded calls in two user turns: two of model m (the cache warm between them), then m2, then
    m2 again in the same turn more than an hour later (its 1-hour cache expired)."""
    return [
        AiMessage("u1", "user", "user_input", "list", 0),
        call("a1", "c1", 1000, used("m", 1010, 0, 1000, 20)),
        AiMessage("t1", "tool", "tool_output", "a.py", 2000, {"tool_call_id": "c1", "tool_name": "ls"}),
        AiMessage("a2", "assistant", "final_answer", "one file", 3000, used("m", 1030, 1010, 20, 30)),
        AiMessage("u2", "user", "user_input", "again", 4000),
        AiMessage("a3", "assistant", "final_answer", "still one", 5000, used("m2", 1060, 0, 1060, 40, 1060)),
        AiMessage("a4", "assistant", "final_answer", "yes", 5000 + HOUR + 1, used("m2", 2000, 0, 2000, 50)),
    ]


def test_offsets_are_learnt_per_segment_and_errors_measured_after() -> None:
    messages = session()
    truths = list(iter_truth(messages, recorded_run(messages), tokenizer=TEN))
    assert [(t.step, t.model, t.as_recorded_local, t.offset, t.learnt_here) for t in truths] == [
        (1, "m", 10, 1000, True),  # u1: 1010 recorded − 10 local
        (2, "m", 30, 1000, False),
        (3, "m2", 50, 1010, True),  # another model (and another user turn): a segment of its own
        (4, "m2", 60, 1010, False),
    ]
    assert [t.as_recorded_prompt for t in truths] == [1010, 1030, 1060, 1070]
    assert [t.error for t in truths] == [None, 0.0, None, pytest.approx((1070 - 2000) / 2000)]
    assert truths[3].to_json()["asRecorded"] == {
        "localTokens": 60,
        "promptTokens": 1070,
        "coefficient": 1.0,
        "offset": 1010,
        "offsetSource": "first call",
        "carriedReasoningTokens": 0,
        "errorPct": -46.5,
    }


def test_a_recorded_compaction_starts_a_new_segment() -> None:
    messages = session()
    summary = AiMessage("s1", "system", "history_summary", "they listed files", 5500)
    messages.insert(6, summary)  # between a3 and a4, in the same user turn
    truths = list(iter_truth(messages, recorded_run(messages), tokenizer=TEN))
    assert [(t.segment, t.learnt_here) for t in truths][2:] == [(("m2", 2), True), (("m2", 3), True)]
    coarse = list(iter_truth(messages, recorded_run(messages), tokenizer=TEN, per_turn=False))
    assert [(t.segment, t.learnt_here) for t in coarse] == [
        (("m", 0), True), (("m", 0), False), (("m2", 0), True), (("m2", 1), True),
    ]  # fmt: skip


def test_a_user_turn_starts_a_segment_unless_asked_not_to() -> None:
    messages = session()
    messages.insert(5, AiMessage("u2b", "user", "user_input", "and then?", 4500))  # before a3
    messages.insert(7, AiMessage("u3", "user", "user_input", "later", 6000))  # between a3 and a4
    truths = list(iter_truth(messages, recorded_run(messages), tokenizer=TEN))
    assert [t.learnt_here for t in truths] == [True, False, True, True]
    coarse = list(iter_truth(messages, recorded_run(messages), tokenizer=TEN, per_turn=False))
    assert [t.learnt_here for t in coarse] == [True, False, True, False]


def test_given_offset_and_calibration_predict_before_any_call() -> None:
    messages = session()
    run = recorded_run(messages)
    given = list(iter_truth(messages, run, given_offset=500, tokenizer=TEN))
    assert [(t.offset, t.offset_source, t.error) for t in given][:2] == [
        (500, "given", pytest.approx((510 - 1010) / 1010)),
        (500, "given", pytest.approx((530 - 1030) / 1030)),
    ]
    calibration = Calibration({"m": ModelFit(1.5, 990)})
    fitted = list(iter_truth(messages, run, calibration=calibration, tokenizer=TEN))
    assert [(t.fit.coefficient, t.offset) for t in fitted][:2] == [(1.5, 995), (1.5, 995)]  # 1010 − ceil(15)
    assert fitted[1].as_recorded_prompt == 45 + 995


def test_fit_takes_the_coefficient_from_growth_and_the_offset_from_first_calls() -> None:
    messages = session()
    truths = list(iter_truth(messages, recorded_run(messages), tokenizer=TEN))
    calibration = fit_calibration({"s": truths})
    m = calibration.models["m"]
    assert (m.coefficient, m.offset, m.calls, m.local_tokens, m.actual_tokens) == (1.0, 1000, 2, 40, 2040)
    m2 = calibration.models["m2"]  # grew 20 local for 940 recorded: clamped to 4
    assert (m2.coefficient, m2.offset) == (4.0, 1060 - 200)
    assert [
        (s.route.model_id, s.count, s.local_estimate_tokens, s.actual_input_tokens)
        for s in calibration.samples()
    ] == [
        ("m", 2, 40, 2040),
        ("m2", 2, 110, 3060),
    ]


def test_a_calibration_file_reads_back_and_bad_ones_say_where(tmp_path) -> None:
    path = tmp_path / "cal.yaml"
    calibration = Calibration({"claude-opus-4-6": ModelFit(1.17, 26000, 3, 100, 200)}, fitted_on=("a",))
    path.write_text(calibration.to_yaml())
    again = load_calibration(path)
    assert again.models == calibration.models and again.fitted_on == ("a",)
    assert again.fit_for("claude-opus-4-6-20260101").offset == 26000 and again.fit_for("gpt-5") is None
    assert again.fit_for("claude-opus-4-60") is None  # a prefix counts only up to a separator
    assert again.fit_for("claude-opus-4-6@20260101").offset == 26000
    assert again.fit_for("claude-opus-4-6-v1:0").offset == 26000  # Bedrock's version suffix
    assert again.fit_for("claude-opus-4-6-fast") is None  # another model, not a snapshot of this one
    family = Calibration({"claude-*": ModelFit(1.2, 30000)})
    assert family.fit_for("claude-haiku-4-5").coefficient == 1.2 and family.fit_for("gemini-2.5-pro") is None
    for text, message in [
        ("kind: other\n", "not a calibration file (expected `kind: linn-calibration`)"),
        (
            "kind: linn-calibration\nmodels: {m: {coefficient: -1}}\n",
            "2: models.m.coefficient: a coefficient",
        ),
        ("kind: linn-calibration\nmodels: {m: {coefficient: 1, offset: 1.5}}\n", "models.m.offset: a whole"),
        ("kind: linn-calibration\nmodels: !!python/object:os.system {}\n", "unsafe or unknown YAML tag"),
    ]:
        path.write_text(text)
        with pytest.raises(InputError) as raised:
            load_calibration(path)
        assert message in str(raised.value)


def test_calibration_sums_past_one_calls_bound_load_and_typos_are_named(tmp_path) -> None:
    path = tmp_path / "cal.yaml"
    fit = ModelFit(1.0428, 41000, 237, 16_935_114, 17_660_909)
    path.write_text(Calibration({"claude-*": fit}).to_yaml())
    assert load_calibration(path).models["claude-*"] == fit
    typo = "kind: linn-calibration\nversion: 1\nmodels:\n  m:\n    coefficient: 1.1\n    ofset: 40\n"
    path.write_text(typo)
    with pytest.raises(InputError) as raised:
        load_calibration(path)
    assert str(raised.value).endswith("cal.yaml:6: models.m.ofset: unknown key; did you mean `offset`?")


def test_a_recorded_session_is_priced_per_call_as_recorded() -> None:
    messages = session()
    run = recorded_run(messages)
    cost = recorded_cost(run, PRICES)
    # a1: 10 uncached + 1000 written + 20 out; a2: 1010 read, 20 written, 30 out; a3: 1060 written for an
    # hour, 40 out (m2); a4: 2000 written, 50 out (m2)
    assert cost.cost_usd == pytest.approx((10 + 1250 + 100 + 101 + 25 + 150 + 4240 + 400 + 5000 + 500) / 1e6)
    assert cost.by_model == pytest.approx({"m": 1636e-6, "m2": 10140e-6})


def test_the_replay_prices_each_step_by_its_model_tier_and_cache() -> None:
    messages = session()
    run = recorded_run(messages)
    tracker = CostTracker(messages, policy=AS_RECORDED, tokenizer=TEN, prices=PRICES)
    truths = iter_truth(messages, run, tokenizer=TEN)
    steps = [
        cost
        for _, cost in iter_step_costs(messages, AS_RECORDED, tracker=tracker, truths=truths, tokenizer=TEN)
    ]
    assert [(s.price_model, s.predicted_prompt_tokens, s.output_tokens, s.mechanism) for s in steps] == [
        ("m", 1010, 20, None),
        ("m", 1030, 30, None),  # u1 read from the cache, with what the transcript lacks
        ("m2", 1060, 40, "model"),  # m2 has no cache of its own yet
        ("m2", 1070, 50, "expired"),  # more than an hour after m2's last call
    ]
    assert [s.cost_usd for s in steps] == pytest.approx(
        [
            (1010 * 1.25 + 20 * 5) / 1e6,
            (1010 * 0.1 + 20 * 1.25 + 30 * 5) / 1e6,
            (1060 * 4 + 400) / 1e6,
            (1070 * 2.5 + 500) / 1e6,
        ]
    )
    totals = tracker.totals()
    assert (totals.price_models, totals.predicted_prompt_tokens, totals.cache_breaks) == (
        {"m": 2, "m2": 2},
        4170,
        {"model": 1, "expired": 1},
    )


def test_linnkit_calibration_takes_the_calls_before_the_step_as_samples() -> None:
    messages = session()
    run = recorded_run(messages)
    layer = {
        **AS_RECORDED,
        "tokenEstimation": {"calibration": {"enabled": True, "minSamples": 1}},
        "contextTrace": {"enabled": True},
    }
    tracker = CostTracker(messages, policy=layer, tokenizer=TEN, prices=PRICES)
    replay = iter_step_costs(
        messages, layer, tracker=tracker, truths=iter_truth(messages, run, tokenizer=TEN), tokenizer=TEN
    )
    built = [(step.result.tokens.final_tokens, step.result.trace["tokenCalibration"]) for step, _ in replay]
    assert built[0][0] == 10 and not built[0][1]["applied"]  # no call before the first
    assert built[1][0] == 3 * 40  # 1010 / 10: clamped to 4, each of u1, a1, t1
    assert (built[1][1]["coefficient"], built[1][1]["route"], built[1][1]["sampleLedgerEntryIds"]) == (
        4.0,
        {"modelId": "m"},
        ["a1"],
    )
    assert not built[2][1]["applied"]  # m2: no sample on its route yet


def test_steps_split_at_each_recorded_call() -> None:
    messages = [
        AiMessage("u", "user", "user_input", "hi", 0),
        AiMessage("a", "assistant", "final_answer", "one", 1, used("m", 10, 0, 0, 1)),
        AiMessage("b", "assistant", "final_answer", "two", 2, used("m", 20, 0, 0, 1)),
    ]
    assert [p.message_count for p in step_points(messages)] == [1, 2]
    assert recorded_run(messages).at_step(2).message_id == "b"
    plain = [m.with_(metadata=None) for m in messages]
    assert [p.message_count for p in step_points(plain)] == [1]  # without a record: one block, one call


def test_a_recorded_call_reads_the_cache_as_its_record_did() -> None:
    """a2's record read nothing although a1 had just cached the prompt (the provider evicted it): a2 is
    priced cold, whatever the policy kept; a3's record read all of a2's prompt, so a3 reads its whole
    unchanged prefix."""
    messages = [
        AiMessage("u1", "user", "user_input", "list", 0),
        call("a1", "c1", 1000, used("m", 1010, 0, 1000, 20)),
        AiMessage("t1", "tool", "tool_output", "a.py", 2000, {"tool_call_id": "c1", "tool_name": "ls"}),
        call("a2", "c2", 3000, used("m", 1030, 0, 1030, 20)),
        AiMessage("t2", "tool", "tool_output", "b.py", 4000, {"tool_call_id": "c2", "tool_name": "ls"}),
        AiMessage("a3", "assistant", "final_answer", "two", 5000, used("m", 1050, 1030, 20, 30)),
    ]
    run = recorded_run(messages)
    tracker = CostTracker(messages, policy=AS_RECORDED, tokenizer=TEN, prices=PRICES)
    truths = iter_truth(messages, run, tokenizer=TEN)
    steps = [
        c for _, c in iter_step_costs(messages, AS_RECORDED, tracker=tracker, truths=truths, tokenizer=TEN)
    ]
    assert [s.predicted_prompt_tokens for s in steps] == [1010, 1030, 1050]
    assert steps[1].cost_usd == pytest.approx((1030 * 1.25 + 20 * 5) / 1e6)  # served 0 of 1010
    warm = 1000 + 30  # the offset and what step 2 sent (u1, a1, t1)
    assert steps[2].cost_usd == pytest.approx((warm * 0.1 + (1050 - warm) * 1.25 + 30 * 5) / 1e6)
    totals = tracker.totals()
    assert totals.cost_at_recorded_usd == pytest.approx(sum(s.cost_usd for s in steps))
    assert totals.recorded_cost_usd == pytest.approx(sum(s.recorded_cost_usd for s in steps))


def test_an_unrecorded_step_misses_as_often_as_the_record_shows() -> None:
    """a2 missed a warm cache (one miss in one warm call); the last step has no recorded call, so it
    expects a miss 1 time in 11 (ten calls without one assumed first), and it is left out of the cost at
    the recorded calls."""
    messages = [
        AiMessage("u1", "user", "user_input", "list", 0),
        call("a1", "c1", 1000, used("m", 1010, 0, 1000, 20)),
        AiMessage("t1", "tool", "tool_output", "a.py", 2000, {"tool_call_id": "c1", "tool_name": "ls"}),
        call("a2", "c2", 3000, used("m", 1030, 0, 1030, 20)),
        AiMessage("t2", "tool", "tool_output", "b.py", 4000, {"tool_call_id": "c2", "tool_name": "ls"}),
    ]
    run = recorded_run(messages)
    tracker = CostTracker(messages, policy=AS_RECORDED, tokenizer=TEN, prices=PRICES)
    truths = iter_truth(messages, run, tokenizer=TEN)
    steps = [
        c for _, c in iter_step_costs(messages, AS_RECORDED, tracker=tracker, truths=truths, tokenizer=TEN)
    ]
    assert [s.recorded_prompt_tokens for s in steps] == [1010, 1030, None]
    cached = round(10 / 11 * (30 + 1000))  # warm: what step 2 sent (u1, a1, t1) and the offset; cold: 0
    sent = 1000 + 50
    assert steps[2].cost_usd == pytest.approx(
        (cached * 0.1 + (sent - cached) * 1.25 + steps[2].output_tokens * 5) / 1e6
    )
    assert tracker.totals().cost_at_recorded_usd == pytest.approx(steps[0].cost_usd + steps[1].cost_usd)


def test_encrypted_reasoning_counts_in_the_turn_s_later_calls() -> None:
    """The Responses API takes a call's encrypted reasoning back with the turn's next calls and drops it
    when a user turn begins: the prediction adds what earlier calls of the turn reasoned (a2's 100 at a3),
    and the fit counts only what the text shows."""

    def reasoned(prompt: int, reasoning: int, carried: bool = True) -> dict:
        usage = RecordedUsage("openai", prompt, reasoning + 10, 0, 0, 0, reasoning, "g", None, {}, carried)
        return {"usage": usage.to_json()}

    messages = [
        AiMessage("u1", "user", "user_input", "go", 0),
        call("a1", "c1", 1000, reasoned(1010, 50, carried=False)),  # reasoning not sent back
        AiMessage("t1", "tool", "tool_output", "x", 2000, {"tool_call_id": "c1", "tool_name": "ls"}),
        call("a2", "c2", 3000, reasoned(1030, 100)),
        AiMessage("t2", "tool", "tool_output", "y", 4000, {"tool_call_id": "c2", "tool_name": "ls"}),
        AiMessage("a3", "assistant", "final_answer", "z", 5000, reasoned(1150, 0)),
        AiMessage("u2", "user", "user_input", "more", 6000),
        AiMessage("a4", "assistant", "final_answer", "w", 7000, reasoned(1500, 0)),
    ]
    truths = list(iter_truth(messages, recorded_run(messages), tokenizer=TEN))
    assert [(t.carried_reasoning, t.as_recorded_prompt) for t in truths] == [
        (0, 1010),
        (0, 1030),
        (100, 1150),
        (0, 1500),
    ]
    assert [t.error for t in truths] == [None, 0.0, 0.0, None]
    assert truths[2].to_json()["asRecorded"]["carriedReasoningTokens"] == 100
    fit = fit_calibration({"s": truths}).models["g"]
    assert fit.coefficient == pytest.approx(1.0)  # growth 20 a step, once a3's 100 is set aside


def test_reasoning_an_earlier_call_sent_back_is_read_from_the_cache() -> None:
    """a2 sent a1's encrypted reasoning back (100); a3 sends it again with a2's (50): the 100 a2 already
    sent sits in the cached prefix a3 reads, the 50 is new."""

    def reasoned(prompt: int, read: int, reasoning: int) -> dict:
        usage = RecordedUsage("openai", prompt, reasoning + 10, read, 0, 0, reasoning, "m", None, {}, True)
        return {"usage": usage.to_json()}

    messages = [
        AiMessage("u1", "user", "user_input", "go", 0),
        call("a1", "c1", 1000, reasoned(1010, 0, 100)),
        AiMessage("t1", "tool", "tool_output", "x", 2000, {"tool_call_id": "c1", "tool_name": "ls"}),
        call("a2", "c2", 3000, reasoned(1130, 1010, 50)),
        AiMessage("t2", "tool", "tool_output", "y", 4000, {"tool_call_id": "c2", "tool_name": "ls"}),
        AiMessage("a3", "assistant", "final_answer", "z", 5000, reasoned(1200, 1130, 0)),
    ]
    tracker = CostTracker(messages, policy=AS_RECORDED, tokenizer=TEN, prices=PRICES)
    truths = iter_truth(messages, recorded_run(messages), tokenizer=TEN)
    steps = [
        c for _, c in iter_step_costs(messages, AS_RECORDED, tracker=tracker, truths=truths, tokenizer=TEN)
    ]
    assert [s.predicted_prompt_tokens for s in steps] == [1010, 1130, 1200]
    warm = 30 + 1000 + 100  # what step 2 sent (u1, a1, t1), the offset, and a1's reasoning a2 sent back
    assert steps[2].cost_usd == pytest.approx((warm * 0.1 + (1200 - warm) * 1.25 + 10 * 5) / 1e6)


def test_the_coefficient_learns_from_the_session_s_earlier_calls() -> None:
    """Each call adds 20,000 local tokens and the provider counted 40,000 more each time: from the third
    call on, the coefficient moves from the calibration's 1 toward 2, weighed against 20,000 tokens of
    prior; the call being predicted never teaches its own prediction."""
    big = MockTokenizer(tokens_per_message=10_000)
    messages = [AiMessage("u1", "user", "user_input", "go", 0)]
    for n, prompt in enumerate((11_000, 51_000, 91_000, 131_000), start=1):
        messages.append(call(f"a{n}", f"c{n}", 1000 * n, used("m", prompt, 0, 0, 10)))
        output = {"tool_call_id": f"c{n}"}
        messages.append(AiMessage(f"t{n}", "tool", "tool_output", "ok", 1000 * n + 1, output))
    messages.pop()  # the last call's output never came
    run = recorded_run(messages)
    learnt = list(iter_truth(messages, run, tokenizer=big))
    assert [round(t.fit.coefficient, 4) for t in learnt] == [1.0, 1.0, 1.5, 1.6667]
    c = (20_000 + 80_000) / 60_000
    assert learnt[3].as_recorded_prompt == math.ceil(70_000 * c) + 11_000 - math.ceil(10_000 * c)
    fixed = list(iter_truth(messages, run, tokenizer=big, learn=False))
    assert [t.as_recorded_prompt for t in fixed] == [11_000, 31_000, 51_000, 71_000]
    assert abs(learnt[3].error) < abs(fixed[3].error)


def test_the_fit_takes_the_median_of_each_session_s_growth_ratio() -> None:
    """A long session whose text the provider counts at twice the local figure (say, big file reads) does
    not set the coefficient of every other session: each session's ratio counts once."""
    big = MockTokenizer(tokens_per_message=10_000)

    def session(ratio: float, calls: int) -> list[AiMessage]:
        messages = [AiMessage("u1", "user", "user_input", "go", 0)]
        for n in range(1, calls + 1):
            prompt = 11_000 + round(ratio * 20_000 * (n - 1))
            messages.append(call(f"a{n}", f"c{n}", 1000 * n, used("m", prompt, 0, 0, 10)))
            answer = {"tool_call_id": f"c{n}"}
            messages.append(AiMessage(f"t{n}", "tool", "tool_output", "ok", 1000 * n + 1, answer))
        return messages[:-1]

    truths = {
        name: list(iter_truth(s, recorded_run(s), tokenizer=big, learn=False))
        for name, s in (("files", session(2.0, 6)), ("chat", session(1.0, 2)), ("code", session(1.1, 2)))
    }
    assert fit_calibration(truths).models["m"].coefficient == pytest.approx(1.1)
    assert fit_calibration({"files": truths["files"]}).models["m"].coefficient == pytest.approx(2.0)
