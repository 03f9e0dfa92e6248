"""Properties over generated input (Hypothesis, bounded to a few seconds each):

- any bytes or any JSON as a session file → a Session whose problems are one line each, never an exception;
- any text as a policy file → a layer or a PolicyFileError, one line per problem;
- random valid sessions × random valid policies → no exception outside `result.error`; the invariants and
  the provider check are computed, and calls without results are reported by both; the same input twice
  gives the same result.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.build import build_context
from engine.host_tokenizers import MockTokenizer
from engine.invariants import check_invariants
from engine.policy import PolicyFileError, define_context_policy, parse_policy_file
from engine.session import parse_session_text
from tests.engine.test_build_properties import policies, sessions

FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=20,
)
message_like = st.fixed_dictionaries(
    {},
    optional={
        "id": st.text(max_size=6) | st.integers(),
        "role": st.sampled_from(["user", "assistant", "tool", "system", "robot"]) | json_values,
        "type": st.sampled_from(["user_input", "tool_calls", "tool_output", "final_answer"]) | json_values,
        "content": st.text(max_size=20) | json_values,
        "timestamp": json_values,
        "metadata": json_values
        | st.fixed_dictionaries(
            {},
            optional={
                "tool_calls": json_values | st.lists(json_values, max_size=3),
                "tool_call_id": json_values,
                "fenceAttrs": json_values,
            },
        ),
    },
)


def _one_line_each(session) -> None:
    for problem in session.problems:
        assert "\n" not in str(problem) and "\r" not in str(problem), str(problem)


@FAST
@given(st.binary(max_size=600))
def test_any_bytes_as_a_session_file_load_cleanly(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("bytes") / "s.jsonl"
    path.write_bytes(data)
    from engine.session import load_session

    session = load_session(path)
    _one_line_each(session)
    assert all(problem.file == str(path) for problem in session.problems)


@FAST
@given(st.lists(message_like | json_values, min_size=1, max_size=6))
def test_any_json_lines_load_cleanly_and_build(lines):
    session = parse_session_text("\n".join(json.dumps(line) for line in lines), "s.jsonl")
    _one_line_each(session)
    result = build_context(session.messages, define_context_policy(None), tokenizer=MockTokenizer(5, 10, 4))
    check_invariants(result)
    assert isinstance(result.provider_problems, list)


@FAST
@given(st.text(max_size=200))
def test_any_text_as_a_policy_file_is_a_layer_or_one_line_per_problem(text):
    try:
        loaded = parse_policy_file(text, "yaml", "p.yaml")
    except PolicyFileError as error:
        assert all(line.startswith("p.yaml") for line in str(error).splitlines())
        return
    for warning in loaded.warnings:
        assert "\n" not in str(warning)


keep_types = st.lists(
    st.sampled_from(["tool_calls", "tool_output", "user_input", "final_answer"]), max_size=2, unique=True
)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sessions(), policies, keep_types, st.sampled_from(["zh", "en"]))
def test_random_builds_report_every_rejected_wire_and_repeat_exactly(messages, layer, always_keep, copy):
    policy = define_context_policy({**layer, "mustKeep": {"alwaysKeepTypes": always_keep}})
    build = lambda: build_context(messages, policy, tokenizer=MockTokenizer(5, 10, 4), now=0, copy=copy)  # noqa: E731
    first, second = build(), build()
    assert first.wire == second.wire and first.decisions == second.decisions
    if first.error is not None:
        assert first.error.code in ("TOOL_HISTORY_OVERFLOW", "SUMMARIZATION_FAILED")
        return
    problems = [p.message for p in first.provider_problems]
    unanswered = [m for m in problems if m.endswith("has no result")]
    failures = {f.id for f in check_invariants(first).errors}
    if unanswered:  # only must-keep can send a call without its result, and C10 says so too
        assert "tool_calls" in always_keep
        assert "C10_TOOL_PAIR_DECISIONS_STAY_TOGETHER" in failures
    if "tool_calls" not in always_keep and "tool_output" not in always_keep:  # pairs travel whole
        assert not [m for m in problems if "call" in m or "tool_" in m]
