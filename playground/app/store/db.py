"""The audit store: an embedded DuckDB file of recorded runs (the tables: `playground.app.store.schema`).

A run is written in one transaction, so a process killed while recording leaves every run before it whole
and nothing of the one it was writing. A run already stored (same content hash) is not written again.
Opening names the one thing that is wrong, in one line: a file that is not a DuckDB database, a store
another process holds, a store written by a newer linn-playground.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb

from playground.app.store.capture import CapturedRun
from playground.app.store.schema import MIGRATIONS, SCHEMA_VERSION, TABLES, columns

STORE_ENV = "LINN_PLAYGROUND_STORE"
# no extension is ever fetched: a store needs none, and nothing runs with a network
_CONFIG = {"autoinstall_known_extensions": False, "autoload_known_extensions": False}
_LISTED = ("run_id", "recorded_at", "source", "title", "policy_hash", "steps", "tokens_sent",
           "cached_tokens", "cache_breaks", "summaries_made", "user_requests_dropped", "cost_usd", "sweep",
           "sweep_policy")  # fmt: skip
_ELSEWHERE = "choose another --store"
# DuckDB's words for a file it cannot read as a database: another kind of file, cut short, damaged
_DAMAGED = ("not a valid duckdb database", "could not read enough bytes", "corrupt", "checksum")


class StoreError(Exception):
    """A store that cannot be used, or a request it cannot answer: one line for the user."""


def default_store_path() -> Path:
    """`$LINN_PLAYGROUND_STORE`, else `$XDG_DATA_HOME/linn-playground/runs.duckdb`, else
    `~/.local/share/linn-playground/runs.duckdb`."""
    if os.environ.get(STORE_ENV):
        return Path(os.environ[STORE_ENV]).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share"
    return Path(data) / "linn-playground" / "runs.duckdb"


def _not_a_store(path: Path) -> StoreError:
    what = "not a readable DuckDB store (corrupt, truncated or another kind of file)"
    return StoreError(f"{path}: {what}; move it aside or {_ELSEWHERE}")


def _explain(path: Path, error: BaseException) -> StoreError:
    """DuckDB's error on opening, as one line naming the file and what to do."""
    text = " ".join(str(error).split())
    if "Could not set lock" in text:
        pid = re.search(r"\(PID (\d+)\)", text)
        held = f" (PID {pid.group(1)})" if pid else ""
        return StoreError(f"{path}: the store is in use by another process{held}; close it or {_ELSEWHERE}")
    if any(sign in text.lower() for sign in _DAMAGED):
        return _not_a_store(path)
    return StoreError(f"{path}: cannot use the store: {text[:200]}")


@dataclass(frozen=True, slots=True)
class StoredRun:
    """One stored run: what a replay or a diff needs to run it again, and its per-step figures."""

    run: dict[str, Any]  # the `runs` row
    session_jsonl: str  # the session as replayed (header and messages), `engine.session` JSONL
    steps: list[dict[str, Any]]
    decisions: list[dict[str, Any]]
    events: list[dict[str, Any]]

    @property
    def run_id(self) -> str:
        return self.run["run_id"]

    @property
    def policy_yaml(self) -> str:
        return self.run["policy_yaml"]

    @property
    def fences_yaml(self) -> str | None:
        return self.run["fences_yaml"]

    @property
    def settings(self) -> dict[str, Any]:
        return json.loads(self.run["settings"])

    @property
    def totals(self) -> dict[str, Any]:
        return json.loads(self.run["totals"])

    def session(self) -> Any:
        """The session as an `engine.session.Session` (parsed from the stored text)."""
        from engine.session import parse_session_text

        return parse_session_text(self.session_jsonl, f"run {self.run_id[:12]}")

    def policy(self) -> Any:
        """The run's whole policy as a `ContextPolicy`."""
        from engine.policy import effective_policy, parse_policy_layer

        layer = parse_policy_layer(self.policy_yaml, "yaml", f"run {self.run_id[:12]}")
        return effective_policy(layer, None, defaults=self.run["defaults"])

    def inputs(self) -> Any:
        """The run's inputs as the loaders make them from files (`PlaygroundInputs`: session, policy, fences,
        defaults, copy): replayed with the run's settings, they are this run again (a diff's side)."""
        from dataclasses import replace

        import yaml

        from engine.fences import parse_fences
        from playground.app.inputs import PlaygroundInputs

        name = f"run {self.run_id[:12]}"
        session = replace(self.session(), path=Path(self.run["source"]))
        fences = parse_fences(yaml.safe_load(self.fences_yaml), name) if self.fences_yaml else None
        copy = self.settings.get("copy") or "zh"
        return PlaygroundInputs(session, self.policy(), fences, defaults=self.run["defaults"], copy=copy)


class RunStore:
    """An open store. `record` a captured run, `get` one back, list `runs`, or answer SQL (`query`)."""

    def __init__(self, path: Path, connection: duckdb.DuckDBPyConnection, read_only: bool) -> None:
        self.path = path
        self.connection = connection
        self.read_only = read_only

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *_: Any) -> None:
        self.close()

    def close(self) -> None:
        self.connection.close()

    @contextmanager
    def _guard(self, doing: str) -> Iterator[None]:
        try:
            yield
        except duckdb.Error as error:
            raise StoreError(f"{self.path}: {doing}: {' '.join(str(error).split())[:200]}") from None

    # -- writing ------------------------------------------------------------------------------------

    def has(self, run_id: str) -> bool:
        with self._guard("reading runs"):
            return bool(self.connection.execute("SELECT 1 FROM runs WHERE run_id = ?", [run_id]).fetchall())

    def record(self, run: CapturedRun) -> str:
        """Store the run (one transaction) unless a run of the same content hash is there; its id."""
        with self._guard("recording failed, nothing of this run was kept"):
            if self.has(run.run_id):
                return run.run_id
            connection = self.connection
            connection.begin()
            try:
                known = connection.execute(
                    "SELECT 1 FROM sessions WHERE session_hash = ?", [run.session["session_hash"]]
                ).fetchall()  # fetch to the end: DuckDB refuses other work while a result is open
                for table in ("runs", "steps", "decisions", "events") if known else TABLES:
                    self._insert(table, run.rows(table))
                connection.commit()
            except BaseException:
                rollback(connection)
                raise
        return run.run_id

    def _insert(self, table: str, rows: Sequence[dict[str, Any]]) -> None:
        """All rows in one statement, a list per column unnested (no row-by-row binding, no pyarrow)."""
        if not rows:
            return
        spec = TABLES[table]
        values = [[row.get(name) for row in rows] for name, _ in spec]
        selects = ", ".join(f"unnest(${n}::{kind}[])" for n, (_, kind) in enumerate(spec, start=1))
        self.connection.execute(f"INSERT INTO {table} ({', '.join(columns(table))}) SELECT {selects}", values)

    # -- reading ------------------------------------------------------------------------------------

    def resolve(self, prefix: str) -> str:
        """The full id of the run whose id starts with `prefix` (at least 4 characters)."""
        if len(prefix) < 4 or not re.fullmatch(r"[0-9a-f]+", prefix):
            raise StoreError(f"run id {prefix!r}: give at least 4 hex characters of the id `runs` lists")
        with self._guard("reading runs"):
            found = self.connection.execute(
                "SELECT run_id FROM runs WHERE starts_with(run_id, ?) ORDER BY run_id LIMIT 2", [prefix]
            ).fetchall()
        if not found:
            raise StoreError(f"{self.path}: no run {prefix}")
        if len(found) > 1:
            some = ", ".join(row[0][:12] for row in found)
            raise StoreError(f"{self.path}: run id {prefix} is ambiguous ({some}, ...); give more of it")
        return found[0][0]

    def _dicts(self, sql: str, parameters: Sequence[Any] = ()) -> list[dict[str, Any]]:
        cursor = self.connection.execute(sql, list(parameters))
        names = [d[0] for d in cursor.description]
        return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]

    def get(self, run_id: str) -> StoredRun:
        """The stored run (`run_id` or a unique prefix of it)."""
        run_id = self.resolve(run_id)
        with self._guard("reading the run"):
            run = self._dicts("SELECT * FROM runs WHERE run_id = ?", [run_id])[0]
            session = self.connection.execute(
                "SELECT jsonl FROM sessions WHERE session_hash = ?", [run["session_hash"]]
            ).fetchall()
            steps = self._dicts("SELECT * FROM steps WHERE run_id = ? ORDER BY step", [run_id])
            decisions = self._dicts(
                "SELECT * FROM decisions WHERE run_id = ? ORDER BY step, final, message_id", [run_id]
            )
            events = self._dicts("SELECT * FROM events WHERE run_id = ? ORDER BY step, seq", [run_id])
        return StoredRun(run, session[0][0] if session else "", steps, decisions, events)

    def runs(
        self, *, session: str | None = None, policy_hash: str | None = None, since: datetime | None = None
    ) -> list[dict[str, Any]]:
        """The runs, newest first: `session` a part of the source path or a session-hash prefix,
        `policy_hash` a prefix, `since` a UTC time."""
        where, parameters = [], []
        if session:
            where.append("(contains(source, ?) OR starts_with(session_hash, ?))")
            parameters += [session, session]
        if policy_hash:
            where.append("starts_with(policy_hash, ?)")
            parameters.append(policy_hash)
        if since is not None:
            where.append("recorded_at >= ?")
            parameters.append(since)
        clause = f" WHERE {' AND '.join(where)}" if where else ""
        sql = f"SELECT {', '.join(_LISTED)} FROM runs{clause} ORDER BY recorded_at DESC, run_id"
        with self._guard("reading runs"):
            return self._dicts(sql, parameters)

    def query(self, sql: str) -> tuple[list[str], list[tuple[Any, ...]]]:
        """Any SQL over the store: column names and rows (a read-only store refuses writes)."""
        if not sql.strip():
            raise StoreError("query failed: the query is empty")
        try:
            cursor = self.connection.execute(sql)
            if cursor is None or cursor.description is None:  # a comment alone runs nothing
                return [], []
            return [d[0] for d in cursor.description], cursor.fetchall()
        except duckdb.InterruptException:
            raise KeyboardInterrupt from None
        except duckdb.Error as error:
            raise StoreError(f"query failed: {' '.join(str(error).split())[:300]}") from None
        except RuntimeError as error:  # Ctrl-C while DuckDB fetches: its Python layer says this
            if str(error) != "Query interrupted":
                raise
            raise KeyboardInterrupt from None


# -- opening ----------------------------------------------------------------------------------------


def rollback(connection: duckdb.DuckDBPyConnection) -> None:
    """Roll back after a failure, keeping the failure's own error: a commit that failed (a full disk)
    has ended its transaction already, and rolling back then raises one that would hide it."""
    try:
        connection.rollback()
    except duckdb.Error:
        pass


def _connect(path: Path, read_only: bool, config: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection:
    if path.exists() and not path.is_file():
        raise StoreError(f"{path}: not a regular file; a store is one DuckDB file")
    if path.is_file() and not _duckdb_file(path):
        # DuckDB opens a .jsonl or .csv as an empty database in memory: a run recorded there is gone at exit
        raise _not_a_store(path)
    try:
        return duckdb.connect(str(path), read_only=read_only, config={**_CONFIG, **(config or {})})
    except duckdb.Error as error:
        raise _explain(path, error) from None


def _duckdb_file(path: Path) -> bool:
    """`path` is empty (a new store) or starts as a DuckDB database does (its magic bytes at offset 8)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(16)
    except OSError:
        return True  # let DuckDB say why it cannot open it
    return not head or head[8:12] == b"DUCK"


def _version(path: Path, connection: duckdb.DuckDBPyConnection) -> int:
    """The store's schema version; 0 for an empty database. Refuses a database of other tables."""
    try:
        tables = {row[0] for row in connection.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        if not tables:
            return 0
        if "meta" not in tables:
            raise StoreError(f"{path}: a DuckDB database, but not a linn-playground store (no meta table)")
        rows = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
    except duckdb.Error as error:
        raise _explain(path, error) from None
    if not rows or not str(rows[0][0]).isdigit():
        raise StoreError(f"{path}: meta.schema_version is missing or not a number")
    return int(rows[0][0])


def migrate(connection: duckdb.DuckDBPyConnection, start: int, upto: int = SCHEMA_VERSION) -> None:
    """Apply migrations start+1..upto, each in its own transaction with its version."""
    for version in range(start + 1, upto + 1):
        connection.begin()
        try:
            if version == 1:
                connection.execute("CREATE TABLE meta (key VARCHAR PRIMARY KEY, value VARCHAR)")
            for statement in MIGRATIONS[version - 1]():
                connection.execute(statement)
            connection.execute("INSERT OR REPLACE INTO meta VALUES ('schema_version', ?)", [str(version)])
            connection.commit()
        except BaseException:
            rollback(connection)
            raise


def open_store(
    path: str | Path | None = None, *, read_only: bool = False, config: dict[str, Any] | None = None
) -> RunStore:
    """Open (and create, or migrate from an older schema) the store at `path` (default:
    `default_store_path()`). Raises `StoreError` with one line saying what is wrong."""
    path = Path(path).expanduser() if path is not None else default_store_path()
    if read_only and not path.exists():
        raise StoreError(f"{path}: no store here yet (record a run: replay SESSION --record)")
    if not read_only:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as error:
            raise StoreError(f"{path}: cannot make its folder: {error.strerror or error}") from None
    connection = _connect(path, read_only, config)
    try:
        version = _version(path, connection)
        if version > SCHEMA_VERSION:
            raise StoreError(
                f"{path}: written by a newer linn-playground (schema {version}; this one reads up to "
                f"{SCHEMA_VERSION}); upgrade, or {_ELSEWHERE}"
            )
        if version < SCHEMA_VERSION:
            if read_only:  # migrate once with a writable connection, then read
                connection.close()
                open_store(path).close()
                return open_store(path, read_only=True, config=config)
            _with_guard(path, lambda: migrate(connection, version))
    except BaseException:
        connection.close()
        raise
    return RunStore(path, connection, read_only)


def _with_guard(path: Path, action: Any) -> Any:
    try:
        return action()
    except duckdb.Error as error:
        raise _explain(path, error) from None
