"""The playground's state and its worker functions, without Textual (workspace.py, building.py)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from engine.fences import FenceDescriptor, FenceError, load_fences
from engine.policy import PolicyFileError, load_policy, set_value
from engine.replay import count_summaries, replay_session
from playground.app.building import checked, run_build, series_steps
from playground.app.costing import CostRequest, cost_stream, figures_only, run_cost
from playground.app.inputs import SAMPLES_DIR, load_inputs
from playground.app.workspace import Workspace
from playground.cli.main import main
from playground.web.exports import suggested_path
from tests.tui_session import write_session, write_summarized_twice


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(load_inputs(write_session(tmp_path)))


def test_opens_at_the_last_step(ws: Workspace) -> None:
    assert ws.title == "sales analysis (test)" and ws.max_steps == 12
    assert len(ws.points) == 7 and ws.step == 7
    request = ws.build_request()
    assert request.generation == 1 and len(request.messages) == 16 and request.tick.step_count == 8
    ws.set_step(3)
    request = ws.build_request(policy_changed=False)
    assert len(request.messages) == 7 and request.tick.step_count == 6 and not request.policy_changed
    assert ws.set_step(99) and ws.step == 7 and not ws.set_step(7)


def test_a_session_without_llm_calls_builds_whole(tmp_path: Path) -> None:
    path = tmp_path / "chat.jsonl"
    lines = [
        {"kind": "linn-session", "version": 1},
        {"id": "s", "role": "system", "type": "system_prompt", "content": "You help."},
    ]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    ws = Workspace(load_inputs(path))
    assert ws.points == [] and ws.step is None and not ws.set_step(1)
    request = ws.build_request()
    assert request.tick is None and [m.id for m in request.messages] == ["s"]


def test_edits_changes_resets_and_problems(ws: Workspace) -> None:
    assert ws.changed() == {
        ("budget", "maxTokens"),
        ("budget", "reservedForResponse"),
        ("systemReminder", "thresholds", "toolCallStreak"),
        ("contextTrace", "enabled"),
    }
    assert ws.edit(("budget", "maxTokens"), 3000) and not ws.edit(("budget", "maxTokens"), 3000)
    assert not ws.edit(("budget", "maxTokens"), -1)  # refused: the policy keeps 3000
    assert ws.policy.budget.max_tokens == 3000
    assert ws.refused == {("budget", "maxTokens"): "budget.maxTokens: -1 must be greater than 0"}
    ws.edit(("budget", "reservedForResponse"), 5000)
    assert ws.problems() == {
        ("budget", "reservedForResponse"): "reservedForResponse must be > 0 and < maxTokens"
    }
    assert ws.errors() == {
        ("budget", "maxTokens"): "budget.maxTokens: -1 must be greater than 0",
        ("budget", "reservedForResponse"): "reservedForResponse must be > 0 and < maxTokens",
    }
    assert ws.edit(("budget", "maxTokens"), 6000) and ws.refused == {}  # a valid value clears the refusal
    ws.reset_field(("budget", "reservedForResponse"))
    assert ws.policy.budget.reserved_for_response == 2400 and ws.problems() == {}
    ws.reset_group("systemReminder")
    assert ws.policy.system_reminder.thresholds.tool_call_streak == 10
    ws.reset_all()
    assert ws.changed() == set()


def test_switching_defaults_keeps_the_changed_fields(ws: Workspace) -> None:
    ws.switch_defaults("linnkit-0.21")
    assert ws.defaults == "linnkit-0.21" and not ws.honour_fence_descriptors
    assert ws.policy.budget.max_tokens == 4000 and ws.policy.tool_history.retention_mode == "drop"
    assert ws.changed() == {
        ("budget", "maxTokens"),
        ("budget", "reservedForResponse"),
        ("systemReminder", "thresholds", "toolCallStreak"),
        ("contextTrace", "enabled"),
    }
    ws.switch_defaults("seed")
    assert ws.policy.tool_history.retention_mode == "compress"


def test_fence_edits_re_place_only_the_edited_kind(ws: Workspace) -> None:
    recorded = [m.id for m in ws.messages]
    ws.replace_fence("memory-context", FenceDescriptor("memory", "user", "after-current-user", "turn-only"))
    assert ws.fences.kinds() == ["project-notes", "memory"]
    moved = [m.id for m in ws.messages]
    assert moved.index("f_mem") == moved.index("u2") + 1
    assert ws.messages[moved.index("f_mem")].fence_kind == "memory"
    assert [i for i in moved if i != "f_mem"] == [i for i in recorded if i != "f_mem"]
    ws.replace_fence("memory", FenceDescriptor("memory-context", "user", "before-current-user", "turn-only"))
    assert [m.id for m in ws.messages] == recorded and ws.messages == ws.inputs.session.messages


def test_add_duplicate_remove_fences_and_their_errors(ws: Workspace) -> None:
    with pytest.raises(FenceError, match='Fence kind "memory-context" is already registered.'):
        ws.add_fence(FenceDescriptor("memory-context", "user", "before-current-user", "turn-only"))
    copy = ws.duplicate_fence("memory-context")
    again = ws.duplicate_fence("memory-context")
    assert (copy.kind, again.kind) == ("memory-context-copy", "memory-context-copy-2")
    assert copy.placement == "before-current-user"
    ws.remove_fence("memory-context")
    assert ws.fences.kinds() == ["project-notes", "memory-context-copy", "memory-context-copy-2"]
    with pytest.raises(FenceError, match='Fence kind "nope" is not registered.'):
        ws.duplicate_fence("nope")
    result = run_build(ws.build_request()).result
    assert any("memory-context" in w for w in result.warnings)


def test_exports_load_back_equal(ws: Workspace, tmp_path: Path) -> None:
    ws.edit(("toolHistory", "retentionMode"), "drop")
    for kind in ("policy-changed", "policy-full", "agent-spec"):
        path = ws.export(kind, suggested_path(ws, kind))
        assert load_policy(path) == ws.policy
    assert suggested_path(ws, "agent-spec") == tmp_path / "sales.policy.json"
    assert json.loads(ws.export_text("agent-spec"))["profileId"] == ws.policy.profile_id
    fences = ws.export("fences", suggested_path(ws, "fences"))
    assert fences == tmp_path / "sales.fences.yaml" and load_fences(fences).list() == ws.fences.list()
    with pytest.raises(PolicyFileError, match="refusing to overwrite a protected file"):
        ws.export("policy-full", ws.inputs.session.path)


def test_no_export_writes_over_the_policy_or_fences_file_the_session_was_opened_with(tmp_path: Path) -> None:
    # the TUI's export screen (and `serve`'s) wrote the policy over the opened fences file and back
    policy, fences = tmp_path / "opened.policy.yaml", tmp_path / "opened.fences.yaml"
    policy.write_text((SAMPLES_DIR / "tight_budget.policy.yaml").read_text(encoding="utf-8"))
    fences.write_text((SAMPLES_DIR / "fences_showcase.fences.yaml").read_text(encoding="utf-8"))
    before = policy.read_bytes(), fences.read_bytes()
    ws = Workspace(load_inputs(SAMPLES_DIR / "fences_showcase.jsonl", policy, fences))
    for kind, path in (("policy-full", fences), ("fences", policy), ("session", policy)):
        with pytest.raises(PolicyFileError, match="refusing to overwrite a protected file"):
            ws.export(kind, path)
    loaded = tmp_path / "loaded.policy.yaml"
    loaded.write_text("budget: {maxTokens: 30000}\n")
    ws.load_policy_file(loaded)
    with pytest.raises(PolicyFileError, match="refusing to overwrite a protected file"):
        ws.export("fences", loaded)
    assert (policy.read_bytes(), fences.read_bytes()) == before


def test_a_bundled_sample_exports_to_the_working_directory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    sample = sorted(SAMPLES_DIR.glob("*.jsonl"))[0]
    monkeypatch.chdir(tmp_path)
    ws = Workspace(load_inputs(sample))
    assert suggested_path(ws, "policy-changed") == tmp_path / f"{sample.stem}.policy.yaml"


def test_load_policy_file(ws: Workspace, tmp_path: Path) -> None:
    (tmp_path / "p.yaml").write_text("summarization:\n  triggerThreshold: 0.5\n")
    ws.load_policy_file(tmp_path / "p.yaml")
    assert ws.changed() == {("summarization", "triggerThreshold")}


def test_run_build_reports_the_engine_refusal(ws: Workspace) -> None:
    ws.policy = set_value(ws.policy, ("budget", "reservedForResponse"), 0)
    outcome = run_build(ws.build_request())
    assert outcome.result is None
    assert (
        outcome.error
        == "Invalid AgentContextManager configuration: reservedForResponse must be > 0 and < maxTokens"
    )


def test_series_steps_match_the_replay_and_stop_when_asked(ws: Workspace) -> None:
    request = ws.timeline_request()
    points = [point for point, _ in series_steps(request)]
    steps = replay_session(ws.messages, ws.policy, fences=ws.fences, max_steps=12, available_tools=())
    assert points == [
        (s.number, s.result.tokens.final_tokens, s.result.tokens.total_budget, s.result.tokens.trigger_tokens,
         s.markers, tuple(s.result.tokens.by_category.items()))
        for s in steps
    ]
    calls = iter(range(100))
    assert len(list(series_steps(request, stop=lambda: next(calls) >= 2))) == 2


def test_a_step_after_a_summary_is_built_with_it_once_the_series_has_replayed_the_steps_before(
    tmp_path: Path,
) -> None:
    path = write_summarized_twice(tmp_path)
    ws = Workspace(load_inputs(path))
    assert ws.step == 25
    first = ws.build_request()
    assert not first.summaries_complete  # nothing replayed yet: step 13's summary is still unknown
    series = list(series_steps(ws.timeline_request()))
    assert [sample.step for sample, _ in series if "S" in sample.markers] == [13, 21]
    summaries = [persisted for _, persisted in series if persisted]
    assert [after for after, _ in summaries] == [ws.points[12].message_count, ws.points[20].message_count]
    assert ws.record_series([sample for sample, _ in series], summaries) == "rebuild"
    request = ws.build_request(policy_changed=False)
    assert request.summaries_complete
    result = run_build(request).result
    summary_id = summaries[0][1].id
    summary_id = summaries[1][1].id
    assert result.kept_ids[1] == summary_id and "ai_history_summarization" not in result.strategies_applied
    steps = replay_session(ws.messages, ws.policy, max_steps=ws.max_steps)
    assert result.wire == steps[24].result.wire
    assert ws.record_series([sample for sample, _ in series], summaries) == ""  # complete: nothing to do


def test_a_step_request_says_how_many_summaries_its_messages_hold_recorded_and_persisted(
    tmp_path: Path,
) -> None:
    path = write_summarized_twice(tmp_path)
    lines = path.read_text(encoding="utf-8").splitlines()
    recorded = {"id": "r1", "role": "system", "type": "history_summary", "content": "so far", "timestamp": 1}
    path.write_text("\n".join([*lines[:6], json.dumps(recorded), *lines[6:]]), encoding="utf-8")
    ws = Workspace(load_inputs(path))
    series = list(series_steps(ws.timeline_request()))
    ws.record_series([sample for sample, _ in series], [persisted for _, persisted in series if persisted])
    counts = []
    for step in range(1, len(ws.points) + 1):
        ws.step = step
        request = ws.build_request(policy_changed=False)
        assert request.summaries == count_summaries(request.messages)
        counts.append(request.summaries)
    assert counts[0] == 0 and counts[-1] == 3 and sorted(counts) == counts  # the recorded one, then two made


def test_every_build_gets_the_header_model_id_and_the_copy_set() -> None:
    ws = Workspace(load_inputs(SAMPLES_DIR / "fences_showcase.jsonl", copy="en"), now=0)
    options = ws.options
    assert (options.model_id, options.copy, options.now) == ("claude-sonnet-4-5", "en", 0)
    assert ws.build_request().options == options and ws.timeline_request().options == options
    assert ws.max_steps == 80 and ws.header.title.startswith("Fences: four placements")
    kwargs = options.kwargs()
    assert kwargs["fences"] is not options.fences and kwargs["fences"].kinds() == ws.fences.kinds()


def test_the_cli_and_the_workspace_build_with_the_header_model_id(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = (SAMPLES_DIR / "short_chat.jsonl").read_text(encoding="utf-8").splitlines()
    header = {**json.loads(lines[0]), "modelId": "gpt-4o"}
    path = tmp_path / "gpt4o.jsonl"
    path.write_text("\n".join([json.dumps(header), *lines[1:]]), encoding="utf-8")
    ws = Workspace(load_inputs(path))
    ws.step = None  # the whole session, as `build` without --step
    result = run_build(ws.build_request()).result
    assert ws.options.model_id == "gpt-4o"
    main(["build", str(path), "--json"])
    tokens = json.loads(capsys.readouterr().out)["tokens"]
    assert tokens["finalTokens"] == result.tokens.final_tokens
    assert load_inputs(path).build_options["model_id"] == "gpt-4o"  # what the CLI passes


def test_changed_is_made_again_for_every_new_policy_and_defaults_profile(ws: Workspace) -> None:
    assert ("budget", "maxTokens") in ws.changed()
    ws.reset_field(("budget", "maxTokens"))
    assert ("budget", "maxTokens") not in ws.changed()
    ws.edit(("budget", "maxTokens"), 9000)
    assert ("budget", "maxTokens") in ws.changed()
    ws.reset_all()
    assert ws.changed() == set()
    ws.edit(("budget", "maxTokens"), 9000)
    ws.switch_defaults("linnkit-0.21")  # the changes are kept, against the other profile
    assert ws.defaults == "linnkit-0.21" and ws.changed() == {("budget", "maxTokens")}


def test_the_steps_are_found_again_when_the_checkpoint_tool_changes(ws: Workspace) -> None:
    before = [p.node_step for p in ws.points]
    ws.edit(("budget", "maxTokens"), 9000)  # no field the steps depend on
    assert [p.node_step for p in ws.points] == before
    ws.edit(("checkpoint", "triggerToolName"), "run_sql")  # every run_sql call starts the count again
    assert before == [2, 4, 6, 2, 4, 6, 8]  # a call node and a tool node per tool call
    assert [p.node_step for p in ws.points] == [2, 4, 1, 2, 1, 3, 1]
    ws.reset_field(("checkpoint", "triggerToolName"))
    assert [p.node_step for p in ws.points] == before


def test_a_build_outcome_carries_the_provider_problems_and_the_dropped_count(ws: Workspace) -> None:
    outcome = run_build(ws.build_request())
    assert outcome.result is not None and outcome.problems == tuple(
        str(p) for p in outcome.result.provider_problems
    )
    assert not outcome.result.cards.made  # made as a view reads them: a list on screen reads a few
    assert not outcome.result.decisions.made  # made when a view asks; the wire title only counts them
    assert outcome.dropped == sum(1 for d in outcome.result.decisions if not d.kept)


def test_a_build_not_counted_is_counted_by_its_check(ws: Workspace) -> None:
    outcome = run_build(ws.build_request(), check=False, count=False)
    assert outcome.dropped is None and not outcome.checked
    late = checked(outcome)
    assert late.dropped == run_build(ws.build_request()).dropped == outcome.result.dropped_count()


def test_a_build_left_unchecked_is_checked_after_as_a_checked_build_is(tmp_path: Path) -> None:
    policy = tmp_path / "keep_calls.yaml"  # unanswered calls kept: providers would refuse the wire
    policy.write_text("budget: {maxTokens: 6000}\nmustKeep: {alwaysKeepTypes: [tool_calls]}\n")
    ws = Workspace(load_inputs(SAMPLES_DIR / "tool_loop_runs.jsonl", policy))
    whole = run_build(ws.build_request())
    unchecked = run_build(ws.build_request(), check=False)
    assert whole.checked and len(whole.problems) == 16 and whole.anthropic is not None
    first = "OpenAI would reject this request: call call_Bcp93xq4dAO8UVAvsriC3bYW has no result"
    assert whole.problems[0] == first
    assert not unchecked.checked and unchecked.problems == () and unchecked.anthropic is None
    late = checked(unchecked)
    assert late.checked and late.result is unchecked.result
    assert late.problems == whole.problems and late.anthropic == whole.anthropic


def test_a_cost_replay_asks_stop_before_each_step_and_ends_at_the_first_yes(ws: Workspace) -> None:
    request = CostRequest(tuple(ws.messages), ws.policy, ws.options, ws.max_steps, ws.available_tools)
    asked: list[int] = []

    def stop_at(n: int) -> Callable[[], bool]:
        def stop() -> bool:
            asked.append(len(asked))
            return len(asked) > n

        return stop

    done = run_cost(request, stop_at(99))
    assert done is not None and len(done[0]) == len(ws.points) == 7 and len(asked) == 8
    assert done[1].steps == 7
    asked.clear()
    assert run_cost(request, stop_at(0)) is None and asked == [0]  # not one step made
    asked.clear()
    assert run_cost(request, stop_at(3)) is None and len(asked) == 4


def test_a_reminder_only_edit_keeps_the_persisted_summaries_and_the_step_build_complete(
    tmp_path: Path,
) -> None:
    path = write_summarized_twice(tmp_path)
    ws = Workspace(load_inputs(path))
    ws.build_request()
    series = list(series_steps(ws.timeline_request()))
    summaries = [persisted for _, persisted in series if persisted]
    ws.record_series([sample for sample, _ in series], summaries)
    assert ws.edit(("systemReminder", "disabledRuleIds"), ["todo_list_reminder"])
    request = ws.build_request()  # a reminder-only edit: every summary still holds
    assert request.summaries_complete and ws.summaries == summaries
    steps = replay_session(ws.messages, ws.policy, max_steps=ws.max_steps)
    assert run_build(request).result.wire == steps[24].result.wire
    ws.record_series([sample for sample, _ in series[:3]], summaries[:0])  # a restart: nothing new known
    assert ws.summaries == summaries and ws.build_request(policy_changed=False).summaries_complete
    assert ws.edit(("budget", "maxTokens"), 90_000)
    request = ws.build_request()  # a budget edit can change every summary: replayed again
    assert not request.summaries_complete and ws.summaries == []


def test_a_cost_replay_keeps_each_steps_figures_and_none_of_its_per_message_parts(tmp_path: Path) -> None:
    """Kept for every step, the wire units and the ids of the user requests lost grow with the square of
    the session's length; the figures, and the totals that count dropped requests, are those of the stream."""
    ws = Workspace(load_inputs(write_summarized_twice(tmp_path)))
    tight = set_value(ws.policy, ("budget", "maxTokens"), 3000)
    request = CostRequest(tuple(ws.messages), tight, ws.options, ws.max_steps, ws.available_tools)
    done = run_cost(request)
    assert done is not None
    kept, totals = done
    tracker, stream = cost_stream(request)
    whole = [cost for _, cost in stream]
    assert kept == [figures_only(cost) for cost in whole]
    assert any(cost.units for cost in whole) and any(cost.user_requests_newly_dropped for cost in whole)
    assert not any(c.units or c.user_requests_newly_dropped for c in kept)
    assert [c.user_requests_dropped for c in kept] == [c.user_requests_dropped for c in whole]
    assert totals == tracker.totals() and totals.user_requests_dropped > 0
