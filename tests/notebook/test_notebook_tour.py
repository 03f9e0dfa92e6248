"""The teaching notebook runs top to bottom in a real kernel (nbclient + ipykernel), offline."""

from __future__ import annotations

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

TOUR = Path(__file__).resolve().parents[2] / "sample_sessions" / "tour.ipynb"
WIDGET = "application/vnd.jupyter.widget-view+json"


def text_of(cell) -> str:
    return "".join(out.get("text", "") for out in cell.outputs if out.output_type == "stream")


@pytest.fixture(scope="module")
def executed():
    notebook = nbformat.read(TOUR, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(TOUR.parent)}}
    )
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
    return notebook


def test_the_tour_is_stored_without_outputs():
    notebook = nbformat.read(TOUR, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs == [] and cell.execution_count is None for cell in code)


def test_every_code_cell_runs_and_every_playground_shows(executed):
    code = [cell for cell in executed.cells if cell.cell_type == "code"]
    assert all(cell.execution_count is not None for cell in code)
    assert not [out for cell in code for out in cell.outputs if out.output_type == "error"]
    shown = [cell for cell in code if any(WIDGET in out.get("data", {}) for out in cell.outputs)]
    assert len(shown) == 8  # one Playground per sample section


def test_the_tour_prints_each_lesson(executed):
    text = "\n".join(text_of(cell) for cell in executed.cells if cell.cell_type == "code")
    assert "budget.maxTokens = 1400" in text
    assert "markers per step:" in text and "C" in text.split("markers per step:")[1].splitlines()[0]
    assert "triggerThreshold 0.5: stage 1 passed" in text and "summary on the wire: True" in text
    assert "triggerThreshold 0.9: stage 1 passed, content count None" in text
    assert "memory-context maxBudgetFraction 0.2:" in text
    assert "<system-reminder>" in text
    assert "duplicate id" in text
    assert "retentionMode: drop" in text  # the exported policy
    # the summary sends fewer tokens and costs more: it rewrites the start of the prompt
    assert "triggerThreshold 0.5: sent 9240, cached 80%, breaks {'summary': 1}, cost $0.0319" in text
    assert "triggerThreshold 0.9: sent 10187, cached 86%, breaks {}, cost $0.0253" in text
    assert "Pareto front: [" in text
