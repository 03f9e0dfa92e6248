"""The tour stays clean when JupyterLab saves it (playground/notebook/tour_hook.py), through Jupyter
server's own contents manager; other notebooks are saved as they are."""

from __future__ import annotations

import importlib
import json
import shutil
from pathlib import Path

import nbformat
import pytest
from jupyter_server.services.contents.filemanager import FileContentsManager

from playground.notebook import tour_hook

ROOT = Path(__file__).resolve().parents[2]


def a_run(notebook: nbformat.NotebookNode) -> nbformat.NotebookNode:
    """The tour as JupyterLab saves it after a run: outputs, counts, kernel and widget metadata."""
    notebook.metadata["language_info"] = {"name": "python", "version": "3.11.7", "pygments_lexer": "ipython3"}
    notebook.metadata["widgets"] = {"application/vnd.jupyter.widget-state+json": {"state": {}}}
    code = next(cell for cell in notebook.cells if cell.cell_type == "code")
    code.outputs = [nbformat.v4.new_output("stream", text="hello\n")]
    code.execution_count = 3
    code.metadata["scrolled"] = True
    return notebook


@pytest.fixture
def contents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FileContentsManager:
    shutil.copy(tour_hook.TOUR, tmp_path / "tour.ipynb")  # the hook recognises the tour by its path
    monkeypatch.setattr(tour_hook, "TOUR", (tmp_path / "tour.ipynb").resolve())
    manager = FileContentsManager(root_dir=str(tmp_path))
    manager.register_pre_save_hook(tour_hook.keep_tour_clean)
    return manager


def test_the_repository_tour_is_the_one_the_hook_keeps() -> None:
    assert tour_hook.TOUR == (ROOT / "sample_sessions" / "tour.ipynb").resolve() and tour_hook.TOUR.is_file()


def test_saving_the_tour_after_a_run_writes_its_stored_form(contents: FileContentsManager) -> None:
    stored = (Path(contents.root_dir) / "tour.ipynb").read_bytes()
    notebook = a_run(nbformat.reads(stored.decode(), as_version=4))
    contents.save({"type": "notebook", "content": notebook}, "tour.ipynb")
    saved = nbformat.read(Path(contents.root_dir) / "tour.ipynb", as_version=4)
    assert saved == nbformat.reads(stored.decode(), as_version=4)  # byte layout aside: the same notebook
    assert saved.metadata == tour_hook.STORED_METADATA


def test_an_edited_cell_of_the_tour_is_kept(contents: FileContentsManager) -> None:
    notebook = a_run(nbformat.read(Path(contents.root_dir) / "tour.ipynb", as_version=4))
    notebook.cells[0].source = "# my notes\n" + notebook.cells[0].source
    contents.save({"type": "notebook", "content": notebook}, "/tour.ipynb")
    saved = nbformat.read(Path(contents.root_dir) / "tour.ipynb", as_version=4)
    assert saved.cells[0].source.startswith("# my notes\n")
    assert all(cell.get("outputs", []) == [] for cell in saved.cells)


def test_another_notebook_is_saved_as_it_is(contents: FileContentsManager) -> None:
    notebook = a_run(nbformat.read(Path(contents.root_dir) / "tour.ipynb", as_version=4))
    contents.save({"type": "notebook", "content": notebook}, "my-copy.ipynb")
    saved = nbformat.read(Path(contents.root_dir) / "my-copy.ipynb", as_version=4)
    assert saved.metadata["language_info"]["version"] == "3.11.7"
    assert [cell.outputs for cell in saved.cells if cell.cell_type == "code"][0][0]["text"] == "hello\n"


def test_the_installed_server_config_enables_the_extension() -> None:
    config = json.loads((ROOT / "jupyter-config" / "linn-playground.json").read_text(encoding="utf-8"))
    (name,) = config["ServerApp"]["jpserver_extensions"]
    module = importlib.import_module(name)
    assert module is tour_hook and module._jupyter_server_extension_points() == [{"module": name}]
