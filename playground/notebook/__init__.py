"""The playground as ipywidgets: `from playground.notebook import Playground`.

ipywidgets is an optional extra. The HTML renderers (`playground.web.views`) need nothing more than
the engine; the widgets are imported on first use, and without ipywidgets that import fails with the
install line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from playground.notebook.app import Playground

__all__ = ["INSTALL_HINT", "Playground", "diff", "sweep"]

INSTALL_HINT = "pip install 'linn-playground[notebook]'"


def __getattr__(name: str) -> Any:
    if name == "sweep":  # needs pandas, not ipywidgets
        from playground.notebook.sweeps import sweep

        return sweep
    if name not in ("Playground", "diff"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        import ipywidgets  # noqa: F401
    except ImportError as err:
        raise ImportError(
            f"the notebook playground needs ipywidgets; install it with: {INSTALL_HINT}"
        ) from err
    if name == "diff":
        from playground.notebook.diffs import diff

        return diff
    from playground.notebook.app import Playground

    return Playground
