"""The working state database (DuckDB) under CINESUB_HOME."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import duckdb

SQL_DIR = Path(__file__).resolve().parent.parent / "sql"


def sql_text(name: str) -> str:
    """The text of ``sql/<name>``: set logic lives in .sql files, not in Python strings."""
    return (SQL_DIR / name).read_text(encoding="utf-8")


def render_sql(name: str, **params: object) -> str:
    """``sql/<name>`` with ``{{param}}`` placeholders replaced by SQL literals."""
    text = sql_text(name)
    for key, value in params.items():
        if isinstance(value, bool) or value is None:
            literal = {True: "TRUE", False: "FALSE", None: "NULL"}[value]
        elif isinstance(value, (int, float)):
            literal = repr(value)
        else:
            literal = "'" + str(value).replace("'", "''") + "'"
        text = text.replace("{{" + key + "}}", literal)
    if "{{" in text:
        raise ValueError(f"unfilled parameter in sql/{name}")
    return text


def init_state(path: Path, schema: str = "state_schema.sql") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with duckdb.connect(str(path)) as con:
        con.execute(sql_text(schema))
        if schema == "state_schema.sql":
            migrate_entry_positions(con)


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = ? ORDER BY ordinal_position", [table]).fetchall()]


def migrate_entry_positions(con: duckdb.DuckDBPyConnection) -> bool:
    """Rebuild ``entries`` of a state DB written before ``entries.position`` (keyed by
    ``(track_id, "index")``, which a track with a repeated SRT index cannot be stored under) with
    the current DDL, keyed by ``(track_id, position)``, and fill ``sanitization_log.position``.

    Old rows had unique indices per track, so their position is their rank by index. DuckDB
    cannot alter a primary key: the table is renamed, created anew from ``sql/state_schema.sql``,
    copied and dropped, all in one transaction. Idempotent: True when it migrated, False when
    there was nothing to do."""
    if "position" in _columns(con, "entries"):
        return False
    old_cols = [c for c in _columns(con, "entries") if c != "position"]
    cols = ", ".join(f'"{c}"' for c in old_cols)
    con.execute("BEGIN")
    try:
        con.execute("ALTER TABLE entries RENAME TO entries_before_position")
        con.execute(sql_text("state_schema.sql"))  # creates entries with the current DDL
        con.execute(
            f"""INSERT INTO entries (position, {cols})
                SELECT row_number() OVER (PARTITION BY track_id ORDER BY "index") - 1, {cols}
                FROM entries_before_position""")
        con.execute(
            """UPDATE sanitization_log l SET position = e.position
               FROM entries e
               WHERE l.position IS NULL AND e.track_id = l.track_id AND e."index" = l."index" """)
        con.execute("DROP TABLE entries_before_position")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise
    return True


@contextlib.contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[duckdb.DuckDBPyConnection]:
    """BEGIN … COMMIT, or ROLLBACK on any exception (re-raised)."""
    con.execute("BEGIN")
    try:
        yield con
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def replace_rows(con: duckdb.DuckDBPyConnection, tables: dict[str, list[list[Any]] | None]) -> None:
    """Replace the whole content of each table by its rows (positional, all columns), in the
    caller's transaction."""
    for table, rows in tables.items():
        con.execute(f'DELETE FROM "{table}"')
        if rows:
            width = len(rows[0])
            con.executemany(f'INSERT INTO "{table}" VALUES ({", ".join("?" * width)})', rows)


@contextlib.contextmanager
def connect(path: Path, read_only: bool = False,
            schema: str = "state_schema.sql") -> Iterator[duckdb.DuckDBPyConnection]:
    """A connection to a state DB (its schema, ``sql/<schema>``, created on first use): the
    subtitle flow's by default, the Hollywood flow's with ``schema="pd_schema.sql"``."""
    if not read_only:
        init_state(path, schema)
    con = duckdb.connect(str(path), read_only=read_only)
    try:
        yield con
    finally:
        con.close()
