"""Keep the stored tour clean when JupyterLab saves it: a Jupyter server extension with a pre-save hook.

Running `sample_sessions/tour.ipynb` in JupyterLab and saving it (or its autosave, every two minutes)
would write the run's outputs, widget state and the kernel's `language_info.version` into a file under
version control: a dirty tree after every run. The hook strips them from that one file as it is saved
(the cells' sources are kept: an edit to the tour is a real change). Other notebooks are not touched.

Enabled by `jupyter-config/linn-playground.json`, which the install puts in the environment's
`etc/jupyter/jupyter_server_config.d/`; it registers beside any hook of the user's own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

TOUR = Path(__file__).resolve().parents[2] / "sample_sessions" / "tour.ipynb"
STORED_METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"name": "python"},
}


def stored_form(notebook: dict[str, Any]) -> None:
    """The tour as it is kept in git: no outputs, no execution counts, no machine or kernel metadata."""
    notebook["metadata"] = {key: dict(value) for key, value in STORED_METADATA.items()}
    for cell in notebook.get("cells", []):
        cell["metadata"] = {}
        if cell.get("cell_type") == "code":
            cell["outputs"] = []
            cell["execution_count"] = None


def keep_tour_clean(model: dict[str, Any], path: str, contents_manager: Any, **kwargs: Any) -> None:
    """A Jupyter `pre_save_hook`: the tour is saved in its stored form, anything else as it is."""
    if model.get("type") != "notebook" or not isinstance(model.get("content"), dict):
        return
    root = Path(getattr(contents_manager, "root_dir", ".")).expanduser()
    if (root / path.lstrip("/")).resolve() == TOUR:
        stored_form(model["content"])


def _jupyter_server_extension_points() -> list[dict[str, str]]:
    return [{"module": __name__}]


def _load_jupyter_server_extension(server_app: Any) -> None:
    server_app.contents_manager.register_pre_save_hook(keep_tour_clean)
