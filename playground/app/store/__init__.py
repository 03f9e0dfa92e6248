"""The audit store: recorded runs in an embedded DuckDB file, and as Parquet parts from a sweep's workers.

    from playground.app.store import open_store
    with open_store("runs.duckdb") as store:          # None: default_store_path()
        run_id = store.record(captured)               # a CapturedRun (store.capture.RunCapture)
        stored = store.get(run_id[:8])                # StoredRun: session JSONL, policy YAML, fences, steps
        stored.session(), stored.policy()             # ready to replay again or diff

Needs the `store` extra (duckdb, pyarrow).
"""

from playground.app.store.capture import CapturedRun, RunCapture, content_hash, engine_version
from playground.app.store.db import (
    STORE_ENV,
    RunStore,
    StoredRun,
    StoreError,
    default_store_path,
    open_store,
)
from playground.app.store.schema import SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "STORE_ENV",
    "CapturedRun",
    "RunCapture",
    "RunStore",
    "StoreError",
    "StoredRun",
    "content_hash",
    "default_store_path",
    "engine_version",
    "open_store",
]
