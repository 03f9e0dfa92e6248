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
    stored = TOUR.read_bytes()
    notebook = nbformat.read(TOUR, as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": str(TOUR.parent)}}
    )
    client.execute()  # raises CellExecutionError, naming the cell, if any cell fails
    assert TOUR.read_bytes() == stored  # a run leaves the stored tour as it was
    return notebook


def test_the_tour_is_stored_without_outputs():
    notebook = nbformat.read(TOUR, as_version=4)
    nbformat.validate(notebook)
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code and all(cell.outputs == [] and cell.execution_count is None for cell in code)


def test_the_tour_carries_no_machine_specific_metadata():
    notebook = nbformat.read(TOUR, as_version=4)
    assert notebook.metadata == {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }  # no interpreter version, no widget state, no kernel id
    assert all(cell.metadata == {} for cell in notebook.cells)


def test_every_code_cell_runs_and_every_playground_shows(executed):
    code = [cell for cell in executed.cells if cell.cell_type == "code"]
    assert all(cell.execution_count is not None for cell in code)
    assert not [out for cell in code for out in cell.outputs if out.output_type == "error"]
    shown = [cell for cell in code if any(WIDGET in out.get("data", {}) for out in cell.outputs)]
    assert len(shown) == 8  # one Playground per sample section
    for cell in shown:  # each with its static view for a front end without the kernel
        data = next(out["data"] for out in cell.outputs if WIDGET in out.get("data", {}))
        assert "lp-wire-summary" in data["text/html"] and "lp-budget" in data["text/html"]
    charts = [out for cell in code for out in cell.outputs if "image/svg+xml" in out.get("data", {})]
    assert len(charts) == 1  # plot_steps()


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
    assert "final_tokens  working_memory  tool_history markers" in text  # steps_frame()
    assert "WORKING_MEMORY" in text or "kept_by_WORKING_MEMORY" in text  # decisions_frame()
    assert " added compressed:e0:m076 final_answer" in text  # compare(): B compresses what A dropped
    assert "tokens A → B: 4791 → 6978" in text
    # the summary sends fewer tokens and costs more: it rewrites the start of the prompt
    assert "triggerThreshold 0.5: sent 9240, cached 80%, breaks {'summary': 1}, cost $0.0319" in text
    assert "triggerThreshold 0.9: sent 10187, cached 86%, breaks {}, cost $0.0253" in text
    assert "Pareto front: [" in text
