"""A recorded session in the notebook: billed cost and the rebuild's error beside the policy, the chart of
recorded, as-recorded and predicted prompts, the as-recorded button, a calibration file."""

from __future__ import annotations

from pathlib import Path

from playground.app.recorded import AS_RECORDED_POLICY
from playground.notebook import Playground
from tests.tui.test_tui_recorded import priced_session


def test_the_cost_panel_sets_the_record_beside_the_policy(tmp_path: Path) -> None:
    pg = Playground(priced_session(tmp_path), debounce=0)
    record = pg.cost.record.value
    assert "<b>Recorded</b>" in record and "4 recorded calls" in record and "(2 calls)" in record
    chart = pg.cost.record_chart.value
    assert chart.count("<polyline") == 3  # recorded, as recorded, this policy
    assert "step 4: recorded 2000, as recorded" in chart
    assert pg.as_recorded_button is not None  # shown: the session has a record
    pg.as_recorded_button.click()
    assert pg.policy == AS_RECORDED_POLICY and pg.cost.totals.recorded_steps == 4
    pg.close()


def test_a_calibration_file_scales_the_rebuild(tmp_path: Path) -> None:
    calibration = tmp_path / "cal.yaml"
    calibration.write_text(
        "kind: linn-calibration\nmodels:\n  claude-opus-4-6: {coefficient: 2, offset: 0}\n"
    )
    pg = Playground(priced_session(tmp_path), debounce=0, calibration=calibration)
    (tmp_path / "again").mkdir()
    plain = Playground(priced_session(tmp_path / "again"), debounce=0)
    scaled = [s.as_recorded_prompt_tokens for s in pg.cost.steps]
    unscaled = [s.as_recorded_prompt_tokens for s in plain.cost.steps]
    assert scaled[0] == unscaled[0] == 1010  # the first call sets the offset either way
    assert scaled[1] > unscaled[1]  # opus grew by twice its local tokens
    assert scaled[2:] == unscaled[2:]  # haiku has no fit in the file
    pg.close()
    plain.close()


def test_no_record_no_panel(tmp_path: Path) -> None:
    from playground.app.inputs import SAMPLES_DIR

    pg = Playground(SAMPLES_DIR / "short_chat.jsonl", debounce=0)
    assert pg.cost.record is None and pg.cost.record_chart is None and pg.as_recorded_button is None
    pg.close()
