"""Record what a front end shows, and open a recorded run again.

`record_replay`: a replay of the open session under its current policy, fences and defaults, kept in the
audit store (`playground.app.store`). The TUI's "Record this replay" and the notebook's `pg.record()` call it;
it makes the same run `replay --record` makes for the same files. `StoredRuns`: `run:ID` read back as the
inputs that replay to it (the playground and `diff` open one so)."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from engine.safe_input import InputError
from playground.app.inputs import PlaygroundInputs, with_policy_file
from playground.app.sweep import capture_run

RUN_PREFIX = "run:"  # a session read from the audit store (`runs`), by its id or a prefix of it
STORE_HINT = "pip install 'linn-playground[store]'"


def workspace_inputs(workspace: Any) -> PlaygroundInputs:
    """The workspace's inputs with its edited fences, defaults profile and copy (made on the UI thread)."""
    fences = workspace.fences.copy() if workspace.fences is not None else None
    return replace(workspace.inputs, fences=fences, defaults=workspace.defaults, copy=workspace.copy)


def record_replay(
    inputs: PlaygroundInputs, policy: Any, store: str | Path | None = None, shape: str = "openai"
) -> tuple[str, Path, bool]:
    """Replay and record; (run id, the store's path, whether it was new). Raises `StoreError` (one line)."""
    from playground.app.store import open_store

    run = capture_run(inputs, policy, shape=shape)
    with open_store(store) as opened:
        new = not opened.has(run.run_id)
        return opened.record(run), opened.path, new


class StoredRuns:
    """`run:ID` references read from the store (opened read-only, once, only when one is named); close it."""

    def __init__(self, path: str | Path | None) -> None:
        self.path = path
        self.store: Any = None  # a playground.app.store.RunStore once opened

    def inputs(self, ref: str, policy: str | Path | None = None) -> PlaygroundInputs | None:
        """The run's inputs (under a policy file when given), or None when `ref` names no stored run.
        Raises `InputError` (one line) when it cannot be read."""
        if not ref.startswith(RUN_PREFIX):
            return None
        try:
            from playground.app.store import StoreError, open_store
        except ImportError:  # duckdb: the store extra
            raise InputError(ref, f"a stored run needs the store extra ({STORE_HINT})") from None
        try:
            if self.store is None:
                self.store = open_store(self.path, read_only=True)
            inputs = self.store.get(ref[len(RUN_PREFIX) :]).inputs()
        except StoreError as error:
            raise InputError(ref, str(error)) from None
        return with_policy_file(inputs, policy) if policy else inputs

    def close(self) -> None:
        if self.store is not None:
            self.store.close()
            self.store = None


def stored_inputs(
    ref: str, policy: str | Path | None = None, store: str | Path | None = None
) -> PlaygroundInputs | None:
    """`StoredRuns(store).inputs(ref, policy)`, the store closed after: one stored run to open."""
    runs = StoredRuns(store)
    try:
        return runs.inputs(ref, policy)
    finally:
        runs.close()
