"""Working memory's P2 keeping a run of plain text candidates in one go decides exactly as keeping them one
at a time does: over random sessions (thoughts, summaries, empty texts, an id a tool group also holds) and
budgets, for single builds and for every step of a replay (whose runs grow in place along its line)."""

from __future__ import annotations

from unittest.mock import patch

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.build import build_context
from engine.host_tokenizers import MockTokenizer
from engine.messages import AiMessage
from engine.policy import define_context_policy
from engine.providers import working_memory
from engine.providers.state import (
    KEEP_CORE,
    KEEP_WM,
    WORKING_MEMORY,
    Origin,
    Span,
    State,
    States,
    kept_of,
    own,
)
from engine.providers.text_runs import PLAIN, PlainRuns, plain_runs
from engine.replay import iter_session_steps
from engine.stage_cache import forget_earlier_builds

WORDS = st.text(alphabet="ab cd", min_size=0, max_size=40)
TOKENIZER = MockTokenizer(5, 10, 4)


@st.composite
def sessions(draw: st.DrawFn) -> list[AiMessage]:
    out = [AiMessage("sys", "system", "system_prompt", "Be careful.")]
    if draw(st.booleans()):
        meta = {"messageType": "summary", "summarySeq": 1, "replacedMessageIds": []}
        out.append(AiMessage("s1", "system", "history_summary", "earlier: " + draw(WORDS), 0, meta))
    for turn in range(draw(st.integers(1, 5))):
        if turn and draw(st.integers(0, 3)) == 0:  # a later summary: the replay's id scope changes there
            meta = {"messageType": "summary", "summarySeq": turn + 1, "replacedMessageIds": []}
            out.append(
                AiMessage(f"s{turn + 1}", "system", "history_summary", "then: " + draw(WORDS), turn, meta)
            )
        out.append(AiMessage(f"u{turn}", "user", "user_input", draw(WORDS), turn))
        for k in range(draw(st.integers(0, 6))):
            kind = draw(st.sampled_from(("answer", "answer", "thought", "group", "user")))
            if kind == "group":
                call = {
                    "id": f"c{turn}_{k}",
                    "type": "function",
                    "function": {"name": "grep", "arguments": "{}"},
                }
                out.append(
                    AiMessage(f"a{turn}_{k}", "assistant", "tool_calls", "", turn, {"tool_calls": [call]})
                )
                meta = {"tool_call_id": call["id"], "tool_name": "grep"}
                out.append(
                    AiMessage(
                        f"t{turn}_{k}", "tool", "tool_output", "x" * draw(st.integers(0, 300)), turn, meta
                    )
                )
            elif kind == "thought":
                out.append(AiMessage(f"r{turn}_{k}", "assistant", "thought", draw(WORDS), turn))
            elif kind == "user":
                out.append(AiMessage(f"n{turn}_{k}", "user", "user_input", draw(WORDS), turn))
            else:
                # now and then an answer has the id of a tool call message (a kept group holds that id)
                same = draw(st.integers(0, 7)) == 0 and any(m.type == "tool_calls" for m in out)
                answer_id = (
                    next(m.id for m in reversed(out) if m.type == "tool_calls") if same else f"f{turn}_{k}"
                )
                out.append(AiMessage(answer_id, "assistant", "final_answer", draw(WORDS), turn))
    return out


LAYERS = st.fixed_dictionaries(
    {
        "budget": st.fixed_dictionaries(
            {
                "maxTokens": st.integers(200, 3000),
                "reservedForResponse": st.just(100),
                "workingMemoryBudgetPercentage": st.sampled_from([0.3, 0.7, 1.0]),
            }
        ),
        "reasoningRetention": st.fixed_dictionaries({"keepLatestThoughts": st.integers(0, 3)}),
        "summarization": st.fixed_dictionaries({"triggerThreshold": st.sampled_from([0.5, 1.0])}),
        # tool groups sent as text (created messages, whose ids take the step's scope) are P2 candidates
        "providerReplay": st.sampled_from(
            [{}, {"requiresReasoningDetailsForToolReplay": True, "missingSidecarBehavior": "degrade_to_text"}]
        ),
    }
)


def _one_by_one():
    return patch.object(working_memory, "plain_runs", lambda *args: None)


def _decided(result) -> list[tuple]:
    return [(d.message_id, d.kept, d.phase, d.strategy, d.tokens) for d in result.decisions]


def _build(messages, policy):
    forget_earlier_builds()
    result = build_context(messages, policy, tokenizer=TOKENIZER, now=0)
    return (
        result.error,
        [m.to_dict() for m in result.messages],
        _decided(result),
        result.strategies_applied,
        result.summarization_check,  # its content count: a span's from its runs, else one by one
    )


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), LAYERS)
def test_a_build_keeps_what_one_at_a_time_keeps(messages, layer):
    policy = define_context_policy(layer)
    in_runs = _build(messages, policy)
    with _one_by_one():
        assert _build(messages, policy) == in_runs


def _replayed(messages, policy):
    forget_earlier_builds()
    steps = iter_session_steps(messages, policy, tokenizer=TOKENIZER, now=0)
    return [
        (r.tokens.final_tokens, _decided(r), r.strategies_applied, r.summarization_check)
        for r in (s.result for s in steps)
    ]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), LAYERS)
def test_every_replay_step_keeps_what_one_at_a_time_keeps(messages, layer):
    policy = define_context_policy(layer)
    in_runs = _replayed(messages, policy)
    with _one_by_one():
        assert _replayed(messages, policy) == in_runs


def _runs(counts: list[int], special: tuple[int, ...] = ()) -> PlainRuns:
    sums = [0]
    for count in counts:
        sums.append(sums[-1] + count)
    ids = [f"m{k}" for k in range(len(counts))]
    where = {id_: [k] for k, id_ in enumerate(ids)}
    return PlainRuns(len(counts), sums, ids, [], [], list(special), len(special), where)


def test_a_run_stops_where_the_next_older_one_does_not_fit():
    runs = _runs([4, 3, 2, 5])
    assert runs.run_at(3, [], 10, set()) == 1  # 5 + 2 + 3 = 10; the 4 below would pass it
    assert runs.run_at(3, [], 9, set()) == 2  # 5 + 2; the 3 below would make 10
    assert runs.run_at(3, [], 4, set()) == 4  # not even the newest fits


def test_a_run_that_fills_the_room_exactly_keeps_no_zero_count_candidate_below():
    runs = _runs([0, 0, 3, 2])
    assert runs.run_at(3, [], 5, set()) == 2  # full after the 3: the two zeros below are not kept
    assert runs.run_at(3, [], 6, set()) == 0  # room left: the zeros are kept too


def test_a_run_ends_at_a_candidate_that_is_not_plain_or_is_held():
    runs = _runs([1, 1, 1, 1, 1], special=(1,))
    assert runs.run_at(4, [], 100, set()) == 2  # candidate 1 (a thought) is taken one at a time
    assert runs.run_at(4, [3], 100, set()) == 4  # candidate 3 core already keeps
    assert runs.run_at(3, [3], 100, set()) is None
    assert runs.run_at(1, [], 100, set()) is None


def test_a_run_holding_an_id_of_a_kept_group_is_left_to_one_at_a_time():
    runs = _runs([1, 1, 1])
    assert runs.run_at(2, [], 100, {"m1"}) == 3
    assert runs.run_at(2, [], 1, {"m1"}) == 2  # only candidate 2 fits: m1 is not in the run


@settings(max_examples=300, deadline=None)
@given(st.data())
def test_the_kept_states_of_spans_and_owned_positions_are_those_every_state_read_gives(data):
    """`kept_of` reads a build's owned positions and takes its spans as slices; a twin owned since (a later
    provider changed it) and owned positions between a span's are read as they are now."""
    size = data.draw(st.integers(1, 40))
    states = States([State(AiMessage(f"m{i}", "user", "user_input", "x"), i, (i,), i, shared=True)
                     for i in range(size)], list(range(size)), starting=True)  # fmt: skip
    free = sorted(data.draw(st.sets(st.integers(0, size - 1))))
    cuts = sorted(data.draw(st.sets(st.integers(0, len(free)), max_size=4)))
    twins = []  # a twin for every free position: each span is a window of these lists, as P2's runs are
    for p in free:
        twin = State(states[p].message, p, (p,), p, KEEP_WM, WORKING_MEMORY, PLAIN)
        twin.kept = twin.shared = True
        twins.append(twin)
    ids = list(map(id, twins))
    for lo, hi in zip([0, *cuts], [*cuts, len(free)], strict=True):
        if lo < hi:
            for k in range(lo, hi):
                states[free[k]] = twins[k]
            states.spans.append(Span(free, twins, sum(free[lo:hi]), lambda counter: None, ids, lo, hi))
    for p in data.draw(st.lists(st.integers(0, size - 1), max_size=8)):  # core, P1, P3 and later changes
        state = own(states, p)
        if data.draw(st.booleans()):
            state.keep(KEEP_CORE, "CORE_CONTEXT", "must_keep")
        else:
            state.drop("CHECKPOINT", "pruned")
    kept = kept_of(states)
    every = [s for s in states if s.kept]
    assert kept.states == every
    assert [id(s) for s in kept.states] == [id(s) for s in every]
    assert kept.ids is None or kept.ids == [id(s) for s in every]
    assert kept.tokens == sum(s.tokens for s in every)
    if kept.unspanned is not None:
        spanned = {id(t) for span in states.spans for t in span.twins[span.start : span.stop]}
        assert [id(s) for s in kept.unspanned] == [id(s) for s in every if id(s) not in spanned]


def test_a_plain_text_of_a_type_the_final_order_puts_first_is_kept_one_by_one_and_sent_in_its_place():
    """A user's message typed `history_summary` is a P2 text candidate, never a span's twin: the final
    order counts the types it puts first among the states outside spans only."""
    messages = [AiMessage("sys", "system", "system_prompt", "Be careful.")]
    for i in range(80):
        messages.append(AiMessage(f"u{i}", "user", "user_input", f"question {i}", i))
        messages.append(AiMessage(f"f{i}", "assistant", "final_answer", f"answer {i}", i))
    messages.insert(40, AiMessage("odd", "user", "history_summary", "a user's text typed as a summary", 20))
    policy = define_context_policy({})
    in_runs = _build(messages, policy)
    with _one_by_one():
        assert _build(messages, policy) == in_runs
    order = [m["id"] for m in in_runs[1]]
    assert order[:2] == ["sys", "odd"]  # the final order puts a summary right after the system prompt
    assert len(order) == len(messages)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), LAYERS)
def test_a_twin_placed_without_a_look_holds_the_very_message_of_the_state_it_replaces(messages, layer):
    """A set's runs are trusted when made from its starting list, or taken over from runs trusted for the
    earlier list whose states it took over; across a replay's summaries (new id scopes) and rebuilds. Placed
    as a slice, the other states stay as they were. (The linnkit record `replay_scope_change_degraded`
    is the case of an earlier list whose created messages had another id scope.)"""
    place = PlainRuns.place

    def checked(runs, states, indices, first, at):
        expected = list(states)  # the twins put in one by one
        for position, twin in zip(indices[first : at + 1], runs.twins[first : at + 1], strict=True):
            expected[position] = twin
        if runs.trusted and states.origin is not None and states.origin.states is runs.made_for:
            now = [states[p].message for p in indices[first : at + 1]]
            assert all(m is t.message for m, t in zip(now, runs.twins[first : at + 1], strict=True))
        placed = place(runs, states, indices, first, at)
        if placed is not None:  # a run placed as a slice leaves every other state as it was
            assert [id(s) for s in states] == [id(s) for s in expected]
        return placed

    with patch.object(PlainRuns, "place", checked):
        _replayed(messages, define_context_policy(layer))
        build_context(messages, define_context_policy(layer), tokenizer=TOKENIZER, now=0)  # a rebuild


def test_a_replays_runs_are_placed_without_a_look_from_its_second_step_on():
    messages = [AiMessage("sys", "system", "system_prompt", "Be careful.")]
    for i in range(30):
        messages.append(AiMessage(f"u{i}", "user", "user_input", f"question {i}", i))
        messages.append(AiMessage(f"f{i}", "assistant", "final_answer", f"answer {i}", i))
    trusted = []
    place = PlainRuns.place

    def counted(runs, states, indices, first, at):
        trusted.append(runs.trusted and states.origin.states is runs.made_for)
        return place(runs, states, indices, first, at)

    with patch.object(PlainRuns, "place", counted):
        _replayed(messages, define_context_policy({}))
    # 30 steps: the first holds one text, the last user input core keeps; each later one places a run
    assert len(trusted) == 29 and all(trusted)


def test_an_id_held_twice_is_found_at_each_of_its_candidates():
    ids = ["a", "b", "a", "c", "b", "a"]
    grown = plain_runs(_texts(ids), [1] * 6, list(range(6)), [PLAIN] * 6, None, 0)
    assert grown.where == {"a": [0, 2, 5], "b": [1, 4], "c": [3]}
    assert grown.holds_any({"a"}, 3, 4) is False  # a at 0, 2 and 5: none in 3..4
    assert grown.holds_any({"a"}, 3, 5) is True
    assert grown.holds_any({"c", "z"}, 0, 2) is False
    assert grown.run_at(4, [], 100, {"a"}) == 5  # a kept group holds "a", at 2 in the run 0..4: one by one
    # a set that shares the first three candidates and then goes on otherwise (a replay's fork)
    forked = plain_runs(_texts([*ids[:3], "d", "c"]), [1] * 5, list(range(5)), [PLAIN] * 5, grown, 3)
    # one index for the line, shared: each set reads the candidates its own ids give the id
    assert forked.where is grown.where
    assert grown.where == {"a": [0, 2, 5], "b": [1, 4], "c": [3, 4], "d": [3]}
    assert forked.holds_any({"a"}, 3, 4) is False  # 5 is past the fork's candidates; 2 before them
    assert forked.holds_any({"b"}, 3, 4) is False  # the set before gave b candidate 4; here c holds it
    assert forked.holds_any({"c"}, 4, 4) is True and forked.holds_any({"d"}, 0, 2) is False
    assert grown.holds_any({"c"}, 4, 5) is False and grown.holds_any({"d"}, 0, 5) is False  # as it was
    assert grown.holds_any({"b"}, 4, 4) is True


def _texts(ids: list[str]) -> list[State]:
    messages = [AiMessage(id_, "user", "user_input", "x") for id_ in ids]
    return [State(m, i, (i,), 1, shared=True) for i, m in enumerate(messages)]


def test_runs_taken_over_are_trusted_only_for_the_states_the_new_list_took_over():
    """The trust rule itself: runs made from a starting list are trusted for it; a list that took over the
    earlier one's first states keeps that trust only when every inherited candidate lies among them."""
    messages = [AiMessage(f"m{i}", "user", "user_input", "x") for i in range(6)]
    earlier = [State(m, i, (i,), 1, shared=True) for i, m in enumerate(messages)]
    first = States(list(earlier), [1] * 6, starting=True, origin=Origin(earlier))
    made = plain_runs(first, [1] * 6, list(range(6)), [PLAIN] * 6, None, 0)
    assert made.trusted and made.made_for is earlier
    # the next list took over the first 6 states (all of them) and has one more: trusted
    later = [*earlier, State(AiMessage("m6", "user", "user_input", "x"), 6, (6,), 1, shared=True)]
    grown = States(list(later), [1] * 7, starting=True, origin=Origin(later, earlier, 6))
    assert plain_runs(grown, [1] * 7, list(range(7)), [PLAIN] * 7, made, 6, 6).trusted
    # one that took over only the first 4 (its 5th and 6th states are new objects): not trusted
    other = [*earlier[:4], *(State(m, i, (i,), 1, shared=True) for i, m in enumerate(messages[4:], 4))]
    forked = States(list(other), [1] * 6, starting=True, origin=Origin(other, earlier, 4))
    assert not plain_runs(forked, [1] * 6, list(range(6)), [PLAIN] * 6, made, 6, 6).trusted
    # nor one taken over from another list than the runs were made for
    elsewhere = States(list(later), [1] * 7, starting=True, origin=Origin(later, list(earlier), 6))
    assert not plain_runs(elsewhere, [1] * 7, list(range(7)), [PLAIN] * 7, made, 6, 6).trusted
