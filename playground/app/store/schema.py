"""The audit store's tables, one description serving DuckDB's DDL and the Parquet parts' Arrow schema, and
the migrations that bring an older store to this version.

A store holds `meta(key, value)` with `schema_version`; migration N takes a store from version N-1 to N,
each in its own transaction. Tables (see README "Stored runs"):

- `sessions`: one row per distinct session content (its JSONL text), shared by the runs replaying it.
- `runs`: one row per run, keyed by the content hash of session, policy, fences, engine version and the
  replay settings that change figures; immutable once written.
- `steps`: one row per replay step with the figures `replay --json` prints for it.
- `decisions`: a user request's fate at the step it first appears and at each step it changes, and every
  message's fate at the run's last step (`final`).
- `events`: every event of every step (kind, title, the messages it names, its data as JSON text); as
  events restate what built up, a list that extends the same kind's list at the previous step is kept as
  what it added (`ids_from`, `{"from": n, "added": [...]}`).
"""

from __future__ import annotations

from typing import Any

SCHEMA_VERSION = 2

# name → columns (name, DuckDB type); JSON values are kept as VARCHAR text (no DuckDB extension needed)
TABLES: dict[str, tuple[tuple[str, str], ...]] = {
    "sessions": (
        ("session_hash", "VARCHAR"),
        ("messages", "BIGINT"),
        ("jsonl", "VARCHAR"),
    ),
    "runs": (
        ("run_id", "VARCHAR"),
        ("recorded_at", "TIMESTAMP"),
        ("source", "VARCHAR"),
        ("title", "VARCHAR"),
        ("session_hash", "VARCHAR"),
        ("policy_hash", "VARCHAR"),
        ("policy_yaml", "VARCHAR"),
        ("policy_changes", "VARCHAR"),  # JSON: the fields that differ from the defaults profile
        ("fences_yaml", "VARCHAR"),
        ("defaults", "VARCHAR"),
        ("engine_version", "VARCHAR"),
        ("settings", "VARCHAR"),  # JSON: wire shape, price row, copy, as-recorded, conversation, ...
        ("steps", "BIGINT"),
        ("tokens_sent", "BIGINT"),
        ("cached_tokens", "BIGINT"),
        ("cache_breaks", "BIGINT"),
        ("summaries_made", "BIGINT"),
        ("over_budget_steps", "BIGINT"),
        ("failed_steps", "BIGINT"),
        ("user_requests_dropped", "BIGINT"),
        ("cost_usd", "DOUBLE"),
        ("cost_no_cache_usd", "DOUBLE"),
        ("totals", "VARCHAR"),  # JSON: the whole `{"totals": …}` line of `replay --json`
        ("sweep", "VARCHAR"),  # schema 2: the sweep that made the run, and its grid policy id
        ("sweep_policy", "VARCHAR"),
    ),
    "steps": (
        ("run_id", "VARCHAR"),
        ("step", "BIGINT"),
        ("messages", "BIGINT"),
        ("node_step", "BIGINT"),
        ("final_tokens", "BIGINT"),
        ("total_budget", "BIGINT"),
        ("kept", "BIGINT"),
        ("tokens_sent", "BIGINT"),
        ("cached_tokens", "BIGINT"),
        ("new_tokens", "BIGINT"),
        ("cache_break_at", "BIGINT"),
        ("cache_break_by", "VARCHAR"),
        ("output_tokens", "BIGINT"),
        ("summary_made", "VARCHAR"),
        ("summaries_carried", "BIGINT"),
        ("summarizer_calls", "BIGINT"),
        ("summarizer_prompt_tokens", "BIGINT"),
        ("summarizer_summary_tokens", "BIGINT"),
        ("reminders", "VARCHAR[]"),
        ("markers", "VARCHAR"),
        ("over_budget", "BOOLEAN"),
        ("error", "VARCHAR"),
        ("user_requests_dropped", "BIGINT"),  # how many; which: `decisions` (not kept, at or before)
        ("cost_usd", "DOUBLE"),
        ("prompt_tokens", "BIGINT"),  # a recorded session's predicted provider count
        ("recorded_prompt_tokens", "BIGINT"),
    ),
    "decisions": (
        ("run_id", "VARCHAR"),
        ("step", "BIGINT"),
        ("message_id", "VARCHAR"),
        ("role", "VARCHAR"),
        ("type", "VARCHAR"),
        ("action", "VARCHAR"),  # kept, dropped, replaced
        ("reason", "VARCHAR"),
        ("phase", "VARCHAR"),
        ("strategy", "VARCHAR"),
        ("tokens", "BIGINT"),
        ("final", "BOOLEAN"),  # a row of the last step's full list
    ),
    "events": (
        ("run_id", "VARCHAR"),
        ("step", "BIGINT"),
        ("seq", "BIGINT"),
        ("kind", "VARCHAR"),
        ("title", "VARCHAR"),
        ("message_count", "BIGINT"),  # how many messages the event names
        ("ids_from", "BIGINT"),  # > 0: message_ids are those after the previous step's first ids_from
        ("message_ids", "VARCHAR[]"),
        ("data", "VARCHAR"),  # JSON; a list grown from the previous step's: {"from": n, "added": [...]}
    ),
}
ADDED_IN_2 = {"runs": ("sweep", "sweep_policy")}
KEYS = {"sessions": "session_hash", "runs": "run_id"}


def columns(table: str) -> list[str]:
    return [name for name, _ in TABLES[table]]


def _create(table: str, leave_out: tuple[str, ...] = ()) -> str:
    cells = [f"{name} {kind}" for name, kind in TABLES[table] if name not in leave_out]
    if table in KEYS:
        cells.append(f"PRIMARY KEY ({KEYS[table]})")
    return f"CREATE TABLE {table} ({', '.join(cells)})"


def _schema_1() -> list[str]:
    """The first schema: every table, `runs` without the sweep columns."""
    return [_create(table, ADDED_IN_2.get(table, ())) for table in TABLES]


def _schema_2() -> list[str]:
    """Runs made by a sweep say which sweep and grid policy (NULL for the runs recorded before)."""
    return [f"ALTER TABLE runs ADD COLUMN {name} VARCHAR" for name in ADDED_IN_2["runs"]]


# MIGRATIONS[n - 1] takes a store from version n - 1 to n
MIGRATIONS = (_schema_1, _schema_2)


def arrow_schema(table: str) -> Any:
    """The Arrow schema of a table's Parquet parts (pyarrow imported here: only Parquet needs it)."""
    import pyarrow as pa

    kinds = {
        "VARCHAR": pa.string(),
        "BIGINT": pa.int64(),
        "DOUBLE": pa.float64(),
        "BOOLEAN": pa.bool_(),
        "TIMESTAMP": pa.timestamp("us"),
        "VARCHAR[]": pa.list_(pa.string()),
    }
    return pa.schema([(name, kinds[kind]) for name, kind in TABLES[table]])
