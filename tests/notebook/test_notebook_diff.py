"""The notebook's diff widget (playground/notebook/diff.py), driven through its real buttons."""

from __future__ import annotations

import pytest

from engine.safe_input import InputError
from playground.app.inputs import SAMPLES_DIR
from playground.notebook import diff

SAMPLE = SAMPLES_DIR / "tool_loop_runs.jsonl"


def test_one_session_two_policies_next_and_previous_change(tmp_path) -> None:
    drop = tmp_path / "drop.yaml"
    drop.write_text("toolHistory:\n  retentionMode: drop\n", encoding="utf-8")
    view = diff(SAMPLE, policy_b=drop)
    changed = view.diff.changed_steps
    assert view.diff.alignment == "step" and len(view.diff.steps) == 71 and changed[0] == 16
    assert f"aligned by step index: 71 steps, {len(changed)} differ" in view.head.value
    breaks = view.diff.totals_a.breaks, view.diff.totals_b.breaks
    assert breaks[0] - breaks[1] == 40
    assert f"cache breaks</th><td>{breaks[0]}</td><td>{breaks[1]}</td><td>-40</td>" in view.head.value
    assert view.where.value == f"change 1 of {len(changed)}" and view.previous.disabled
    assert "step 17 ↔ 17" in view.step.value and "cache break added" in view.step.value
    assert "− [2] m003 (assistant) 66 tok" in view.step.value
    view.next.click()
    assert view.where.value == f"change 2 of {len(changed)}" and "step 18 ↔ 18" in view.step.value
    assert not view.previous.disabled
    view.previous.click()
    assert view.position == 0 and "step 17 ↔ 17" in view.step.value
    for _ in changed:
        view.next.click()
    assert view.position == len(changed) - 1 and view.next.disabled


def test_two_sessions_and_a_missing_second_run(tmp_path) -> None:
    view = diff(SAMPLE, SAMPLE)
    assert view.diff.changed_steps == [] and view.where.value == "no step differs"
    assert view.next.disabled and view.previous.disabled
    with pytest.raises(InputError, match="^diff: give a second session B"):
        diff(SAMPLE)
