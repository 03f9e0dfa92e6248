"""Record what a front end shows: a replay of the open session under its current policy, fences and
defaults, kept in the audit store (`playground.store`). The TUI's "Record this replay" and the notebook's
`pg.record()` call it; it makes the same run `replay --record` makes for the same files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from playground.inputs import PlaygroundInputs
from playground.sweep import capture_run


def workspace_inputs(workspace: Any) -> PlaygroundInputs:
    """The workspace's inputs with its edited fences, defaults profile and copy (made on the UI thread)."""
    fences = workspace.fences.copy() if workspace.fences is not None else None
    return replace(workspace.inputs, fences=fences, defaults=workspace.defaults, copy=workspace.copy)


def record_replay(
    inputs: PlaygroundInputs, policy: Any, store: str | Path | None = None, shape: str = "openai"
) -> tuple[str, Path, bool]:
    """Replay and record; (run id, the store's path, whether it was new). Raises `StoreError` (one line)."""
    from playground.store import open_store

    run = capture_run(inputs, policy, shape=shape)
    with open_store(store) as opened:
        new = not opened.has(run.run_id)
        return opened.record(run), opened.path, new
