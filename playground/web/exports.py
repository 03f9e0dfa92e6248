"""What a front end can export: the workspace's own files (policy, fences, session, wire) and the HTML
report page, one list for the TUI's export screen and command palette and the notebook."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from engine.policy import write_atomic
from playground.app.workspace import EXPORTS as WORKSPACE_EXPORTS
from playground.app.workspace import Workspace
from playground.web.report import report_page

REPORT = "html-report"
REPORT_CHOICE = ("HTML report of the shown step: wire, budget, step chart, policy", ".report.html")


def _choices() -> dict[str, tuple[str, str]]:
    choices: dict[str, tuple[str, str]] = {}
    for kind, choice in WORKSPACE_EXPORTS.items():
        choices[kind] = choice
        if kind == "fences":  # the report follows the files a policy is tuned into
            choices[REPORT] = REPORT_CHOICE
    return choices


# kind -> (label, file suffix)
EXPORTS: dict[str, tuple[str, str]] = _choices()


def export_text(workspace: Workspace, kind: str) -> str:
    return report_page(workspace.report_view()) if kind == REPORT else workspace.export_text(kind)


def suggested_path(workspace: Workspace, kind: str) -> Path:
    return workspace.suggested_path(EXPORTS[kind][1])


def export(
    workspace: Workspace, kind: str, path: str | Path, inputs: Sequence[Path] = ()
) -> Path:
    """Write atomically, never over the open session (nor, for a report, over any of `inputs`, the files
    it was opened with); raises `PolicyFileError` or `OSError`."""
    if kind == REPORT:
        guarded = [*workspace.protected_paths(), *inputs]
        return write_atomic(path, export_text(workspace, kind), protected=guarded)
    return workspace.export(kind, path)
