"""The step series resumes after the steps an edit cannot change (playground/app/series_memory.py), and
what it then makes is what a series from step 1 makes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from playground.app.building import TimelineRequest, series_steps
from playground.app.inputs import SAMPLES_DIR, load_inputs
from playground.app.workspace import Workspace
from tests.tui_session import write_summarized_twice

NOW = 1_790_000_000_000  # a fixed clock: a summary is stamped with the time it is made
PLACEMENTS = ("after-system", "before-current-user", "after-current-user", "after-last-tool-result")


def replayed(ws: Workspace) -> list:
    """The series of the workspace's inputs, all of it, recorded as a front end records it."""
    request = ws.timeline_request()
    steps = list(series_steps(request))
    samples = [*request.known, *(sample for sample, _ in steps)]
    summaries = [*request.known_summaries, *(persisted for _, persisted in steps if persisted)]
    ws.record_series(samples, summaries)
    return [samples, summaries]


def fresh(ws: Workspace) -> list:
    """The same inputs in a workspace that has seen nothing: a series from step 1."""
    other = Workspace(ws.inputs, now=NOW)
    other.policy = ws.policy
    if ws.fences is not None:
        other._use_fences(ws.fences, dict(ws._origins))  # the fences re-placed as `ws` placed them
    return replayed(other)


@pytest.mark.parametrize("resume_after", [1, 12, 13, 20, 24])
def test_a_series_resumed_after_k_steps_makes_what_a_series_from_step_1_makes(
    tmp_path: Path, resume_after: int
) -> None:
    ws = Workspace(load_inputs(write_summarized_twice(tmp_path)), now=NOW)
    whole = ws.timeline_request()
    steps = list(series_steps(whole))
    assert [sample.step for sample, persisted in steps if persisted] == [13, 21]
    summaries = tuple(p for _, p in steps[:resume_after] if p)
    resumed = replace(whole, known=tuple(s for s, _ in steps[:resume_after]), known_summaries=summaries)
    assert list(series_steps(resumed)) == steps[resume_after:]  # samples and the summaries (their ids too)


def test_going_back_to_a_setting_tried_before_finds_its_series_where_it_stopped(tmp_path: Path) -> None:
    ws = Workspace(load_inputs(write_summarized_twice(tmp_path)), now=NOW)
    ws.build_request()
    first = replayed(ws)
    assert ws.edit(("budget", "maxTokens"), 90_000)
    assert not ws.build_request().summaries_complete and ws.timeline_request().known == ()
    replayed(ws)
    assert ws.edit(("budget", "maxTokens"), ws.inputs.policy.budget.max_tokens)  # back again
    assert ws.build_request().summaries_complete  # the step build has every summary at once
    request: TimelineRequest = ws.timeline_request()
    assert [list(request.known), list(request.known_summaries)] == first
    assert list(series_steps(request)) == []  # nothing left to replay


def test_a_fence_edit_resumes_after_the_steps_that_hold_no_fence_of_its_kind() -> None:
    ws = Workspace(load_inputs(SAMPLES_DIR / "fences_showcase.jsonl"), now=NOW)
    ws.build_request()
    before = replayed(ws)
    hint = ws.fences.get("tool-hint")  # its only fence is the session's last message, in step 8 alone
    ws.replace_fence("tool-hint", replace(hint, must_keep=not hint.must_keep, max_budget_fraction=0.05))
    ws.build_request()
    request = ws.timeline_request()
    assert [s.step for s in request.known] == [1, 2, 3, 4, 5, 6, 7]
    assert list(request.known) == before[0][:7]
    assert [sample.step for sample, _ in series_steps(request)] == [8]
    assert replayed(ws) == fresh(ws)
    files = ws.fences.get("attached-file")  # in the first user turn: every step holds one
    ws.replace_fence("attached-file", replace(files, llm_role="system"))
    ws.build_request()
    assert ws.timeline_request().known == ()


def test_a_reminder_only_edit_keeps_the_summaries_but_makes_every_sample_again(tmp_path: Path) -> None:
    ws = Workspace(load_inputs(write_summarized_twice(tmp_path)), now=NOW)
    ws.build_request()
    replayed(ws)
    assert ws.edit(("systemReminder", "disabledRuleIds"), ["todo_list_reminder"])
    assert ws.build_request().summaries_complete  # the summaries hold
    assert ws.timeline_request().known == ()  # the reminders of every step may differ


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from(["workspace-rules", "memory-context", "local-time", "attached-file", "tool-hint"]),
    placement=st.sampled_from(PLACEMENTS),
    lifetime=st.sampled_from(["turn-only", "persisted"]),
    must_keep=st.booleans(),
    fraction=st.sampled_from([0.02, 0.1, 1.0]),
)
def test_after_any_fence_edit_the_resumed_series_is_the_series_from_step_1(
    kind: str, placement: str, lifetime: str, must_keep: bool, fraction: float
) -> None:
    ws = Workspace(load_inputs(SAMPLES_DIR / "fences_showcase.jsonl"), now=NOW)
    ws.build_request()
    replayed(ws)
    edited = replace(
        ws.fences.get(kind), placement=placement, lifetime=lifetime, must_keep=must_keep,
        max_budget_fraction=fraction,
    )  # fmt: skip
    ws.replace_fence(kind, edited)
    ws.build_request()
    assert replayed(ws) == fresh(ws)


def test_a_series_recorded_as_it_grows_keeps_what_it_holds_and_adds_only_new_steps(tmp_path: Path) -> None:
    """A front end records the series at every step (the notebook) or every few (the TUI): each record adds
    what is new to the list already held, and a series that is not the held one's continuation replaces it."""
    ws = Workspace(load_inputs(write_summarized_twice(tmp_path)), now=NOW)
    request = ws.timeline_request()
    samples, summaries = [], []
    for sample, persisted in series_steps(request):
        samples.append(sample)
        summaries.extend([persisted] if persisted else [])
        ws.record_series(samples, summaries)
        held = ws.timeline_request()
        assert held.known == tuple(samples) and held.known_summaries == tuple(summaries)
    assert len(samples) == 25 and len(summaries) == 2
    first = ws._series.current.samples
    ws.record_series(samples, summaries)  # again: nothing new
    assert ws._series.current.samples is first and first == samples
    other = [s._replace(final_tokens=s.final_tokens + 1) for s in samples]  # not its continuation
    ws.record_series(other, summaries)
    assert ws._series.current.samples == other
