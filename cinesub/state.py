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
            migrate_entries_key(con)


def _columns(con: duckdb.DuckDBPyConnection, table: str) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() "
        "AND table_name = ? ORDER BY ordinal_position", [table]).fetchall()]


def migrate_entry_positions(con: duckdb.DuckDBPyConnection) -> bool:
    """Rebuild ``entries`` of a state DB written before ``entries.position`` (keyed by
    ``(track_id, "index")``, which a track with a repeated SRT index cannot be stored under) with
    the current DDL (identified by ``(track_id, position)``), and fill ``sanitization_log.position``.

    Old rows had unique indices per track, so their position is their rank by index. DuckDB
    cannot alter a primary key: the table is rebuilt (:func:`_rebuild_entries`). Idempotent: True
    when it migrated, False when there was nothing to do."""
    if "position" in _columns(con, "entries"):
        return False
    old_cols = [c for c in _columns(con, "entries") if c != "position"]
    cols = ", ".join(f'"{c}"' for c in old_cols)
    _rebuild_entries(
        con, f"""INSERT INTO entries (position, {cols})
                 SELECT row_number() OVER (PARTITION BY track_id ORDER BY "index") - 1, {cols}
                 FROM entries_before_rebuild""",
        """UPDATE sanitization_log l SET position = e.position
           FROM entries e
           WHERE l.position IS NULL AND e.track_id = l.track_id AND e."index" = l."index" """)
    return True


def migrate_entries_key(con: duckdb.DuckDBPyConnection) -> bool:
    """Rebuild ``entries`` of a state DB written with ``PRIMARY KEY (track_id, position)`` without
    it (sql/state_schema.sql: unique by construction, audited by :func:`entry_key_duplicates`;
    the key's index made every insert dearer). Idempotent: True when it rebuilt."""
    if not con.execute("SELECT count(*) FROM duckdb_constraints() WHERE table_name = 'entries' "
                       "AND schema_name = current_schema() AND constraint_type IN ('PRIMARY KEY', 'UNIQUE')"
                       ).fetchone()[0]:
        return False
    cols = ", ".join(f'"{c}"' for c in _columns(con, "entries"))
    _rebuild_entries(con, f"INSERT INTO entries ({cols}) SELECT {cols} FROM entries_before_rebuild "
                          "ORDER BY track_id, position")
    return True


def _rebuild_entries(con: duckdb.DuckDBPyConnection, *statements: str) -> None:
    """``entries`` created anew from sql/state_schema.sql (DuckDB cannot alter a key): the table is
    renamed ``entries_before_rebuild``, the current DDL run, ``statements`` copy the rows (and fix
    what refers to them), the old table dropped -- all in one transaction."""
    con.execute("BEGIN")
    try:
        con.execute("ALTER TABLE entries RENAME TO entries_before_rebuild")
        con.execute(sql_text("state_schema.sql"))  # creates entries with the current DDL
        for statement in statements:
            con.execute(statement)
        con.execute("DROP TABLE entries_before_rebuild")
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


def entry_key_duplicates(con: duckdb.DuckDBPyConnection, limit: int = 5) -> tuple[int, list[tuple[str, int, int]]]:
    """The audit of ``entries``' key (no index enforces it, sql/state_schema.sql): the number of
    (track_id, position) pairs stored more than once, and up to ``limit`` of them as
    ``(track_id, position, copies)``. ``(0, [])`` for a sound state DB."""
    rows = con.execute(
        """SELECT track_id, position, count(*) AS copies, count(*) OVER () AS pairs FROM entries
           GROUP BY track_id, position HAVING count(*) > 1 ORDER BY track_id, position LIMIT ?""",
        [limit]).fetchall()
    return (rows[0][3] if rows else 0), [(t, int(p), int(n)) for t, p, n, _ in rows]


#: DuckDB's memory for the coordinator's bulk work on the state DB (the process stage's writes,
#: the release's tables): beyond it DuckDB evicts cached blocks and spills sorts to ``<db>.tmp``
#: instead of growing (issue 18: at paper scale the release's sort of 8.1M entries took the
#: coordinator to 2.8 GiB; the budget is < 2 GB for the coordinator and two workers together)
BULK_MEMORY_LIMIT = "512MiB"


@contextlib.contextmanager
def memory_limit(con: duckdb.DuckDBPyConnection, limit: str | None = BULK_MEMORY_LIMIT) -> Iterator[None]:
    """DuckDB's ``memory_limit`` of ``con``'s database set to ``limit`` inside the block (None:
    left as it is), the previous value restored after it."""
    if limit is None:
        yield
        return
    before = con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0]
    con.execute(f"SET memory_limit = '{limit}'")
    try:
        yield
    finally:  # the default again if it was the default (its shown value is rounded), else that value
        con.execute("RESET memory_limit")
        if con.execute("SELECT current_setting('memory_limit')").fetchall()[0][0] != before:
            con.execute(f"SET memory_limit = '{before}'")


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
