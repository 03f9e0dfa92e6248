"""Runs as Parquet parts, written by a sweep's workers (processes or Dask), read as they are by DuckDB,
Dask or Spark, and brought into a local store by `runs import DIR`.

    DIR/<table>/sweep=<sweep id>/session=<session hash, 16 hex>/<run id>.parquet
        table: runs (one row), steps, decisions, events: one file per run
    DIR/sessions/sweep=<sweep id>/session=<…>/session.parquet      the session's JSONL, once

Columns are the store's (`playground.app.store.schema.TABLES`), the same in every part. Each file is written
to a hidden temporary name and renamed, so a reader never sees half a file and a killed worker leaves no
part; a run written again (a resumed sweep) replaces its own files with the same content.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from playground.app.store.capture import CapturedRun
from playground.app.store.schema import TABLES, arrow_schema, columns

RUN_TABLES = ("runs", "steps", "decisions", "events")


def partition(sweep: str, session_hash: str) -> str:
    return f"sweep={sweep}/session={session_hash[:16]}"


def _write(path: Path, table: str, rows: list[dict[str, Any]]) -> None:
    import pyarrow as pa
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        pq.write_table(pa.Table.from_pylist(rows, schema=arrow_schema(table)), temporary)
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def write_run_parts(directory: str | Path, run: CapturedRun, sweep: str) -> None:
    """The run's parts under `directory` (its session's part too, unless a worker wrote it already)."""
    root = Path(directory)
    part = partition(sweep, run.session["session_hash"])
    session_file = root / "sessions" / part / "session.parquet"
    if not session_file.exists():
        _write(session_file, "sessions", [run.session])
    for table in RUN_TABLES:  # the runs row last: a run whose row is there has all its parts
        if table != "runs":
            _write(root / table / part / f"{run.run_id}.parquet", table, run.rows(table))
    _write(root / "runs" / part / f"{run.run_id}.parquet", "runs", run.rows("runs"))


def _source(root: Path, table: str) -> str:
    glob = (root / table / "**" / "*.parquet").as_posix().replace("'", "''")
    return f"read_parquet('{glob}', hive_partitioning = true, union_by_name = true)"


def import_parquet(store: Any, directory: str | Path) -> tuple[int, int]:
    """Bring the runs under `directory` into `store` (one transaction); (runs added, runs already there).
    A run whose `runs` part is missing (a worker killed before its last file) is left out."""
    from playground.app.store.db import StoreError, rollback

    root = Path(directory)
    if not root.is_dir():
        raise StoreError(f"{root}: not a folder of Parquet runs")
    if not any((root / "runs").glob("**/*.parquet")):
        raise StoreError(f"{root}: no runs/**/*.parquet parts here (see README, Stored runs)")
    connection = store.connection
    names = {table: ", ".join(columns(table)) for table in TABLES}
    with store._guard(f"import from {root} failed, nothing was imported"):
        connection.begin()
        try:
            # a run written by two sweeps is taken from the first (its parts are the same content)
            connection.execute(
                f"CREATE OR REPLACE TEMP TABLE _new AS SELECT run_id, min(sweep) AS sweep "
                f"FROM {_source(root, 'runs')} GROUP BY run_id"
            )
            total = connection.execute("SELECT count(*) FROM _new").fetchall()[0][0]
            connection.execute("DELETE FROM _new WHERE run_id IN (SELECT run_id FROM runs)")
            added = connection.execute("SELECT count(*) FROM _new").fetchall()[0][0]
            sessions = _source(root, "sessions")
            numbered = f"SELECT *, row_number() OVER (PARTITION BY session_hash) AS n FROM {sessions}"
            connection.execute(
                f"INSERT INTO sessions ({names['sessions']}) SELECT {names['sessions']} FROM ({numbered}) "
                "WHERE n = 1 AND session_hash NOT IN (SELECT session_hash FROM sessions)"
            )
            for table in RUN_TABLES:
                if any((root / table).glob("**/*.parquet")):
                    chosen = "SELECT 1 FROM _new WHERE _new.run_id = part.run_id AND _new.sweep = part.sweep"
                    connection.execute(
                        f"INSERT INTO {table} ({names[table]}) SELECT {names[table]} "
                        f"FROM {_source(root, table)} AS part WHERE EXISTS ({chosen})"
                    )
            connection.execute("DROP TABLE _new")
            connection.commit()
        except BaseException:
            rollback(connection)
            raise
    return added, total - added
