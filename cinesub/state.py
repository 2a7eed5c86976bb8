"""The working state database (DuckDB) under CINESUB_HOME."""

from __future__ import annotations

import contextlib
import functools
import os
import re
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


#: state DBs whose schema this process made current: (path, schema) → the file's identity
#: (device, inode, size, mtime) as this process last left it
_READY: dict[tuple[str, str], tuple[int, ...]] = {}


def _file_id(path: Path) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _ready_key(path: Path, schema: str) -> tuple[str, str]:
    return str(Path(path).resolve()), schema


def init_state(path: Path, schema: str = "state_schema.sql") -> None:
    with connect(path, schema=schema):
        pass


def ensure_schema(con: duckdb.DuckDBPyConnection, path: Path, schema: str = "state_schema.sql") -> None:
    """Create ``sql/<schema>``'s tables and migrate an old state DB, on ``con`` (open on
    ``path``) — once per process and file: the DDL and the migration checks cost ~0.1 s a
    connection, and a build opens its state DB dozens of times. The file is trusted while it is
    the one this process left (same device, inode, size and mtime: :func:`connect` notes them
    when it closes) and has the schema's tables; anything else — another process wrote it, it
    was replaced or deleted — is initialised again."""
    key = _ready_key(path, schema)
    if _READY.get(key) == _file_id(path) and _has_tables(con, schema):
        return
    con.execute(sql_text(schema))
    if schema == "state_schema.sql":
        migrate_entry_positions(con)
        migrate_entries_key(con)
    ident = _file_id(path)
    if ident is not None:
        _READY[key] = ident


@functools.lru_cache(maxsize=None)
def _schema_tables(schema: str) -> frozenset[str]:
    return frozenset(m.lower() for m in re.findall(r"CREATE\s+TABLE\s+IF\s+NOT\s+EXISTS\s+\"?(\w+)",
                                                   sql_text(schema), re.I))


def _has_tables(con: duckdb.DuckDBPyConnection, schema: str) -> bool:
    want = _schema_tables(schema)
    have = {r[0].lower() for r in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database() "
        "AND schema_name = current_schema()").fetchall()}
    return bool(want) and want <= have


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
def _setting(con: duckdb.DuckDBPyConnection, name: str, value: str | None) -> Iterator[None]:
    """DuckDB setting ``name`` of ``con``'s database set to ``value`` (an SQL literal) inside the
    block (None: left as it is), the previous value restored after it: the default again if it
    was the default (its shown value may be rounded), else that value."""
    if value is None:
        yield
        return
    before = con.execute(f"SELECT current_setting('{name}')").fetchall()[0][0]
    con.execute(f"SET {name} = {value}")
    try:
        yield
    finally:
        con.execute(f"RESET {name}")
        if con.execute(f"SELECT current_setting('{name}')").fetchall()[0][0] != before:
            con.execute(f"SET {name} = '{before}'")


def memory_limit(con: duckdb.DuckDBPyConnection, limit: str | None = BULK_MEMORY_LIMIT
                 ) -> contextlib.AbstractContextManager[None]:
    """DuckDB's ``memory_limit`` of ``con``'s database set to ``limit`` inside the block (None:
    left as it is), the previous value restored after it."""
    return _setting(con, "memory_limit", None if limit is None else f"'{limit}'")


def checkpoint(con: duckdb.DuckDBPyConnection) -> None:
    """Write the committed rows into the DB file (outside a transaction): DuckDB keeps committed
    rows in memory, with the write-ahead log, until a checkpoint, so without one a stage's memory
    grows with the rows it wrote (issue 17), and a later query over them holds them again (issue
    18: the release Parquet of 8.1M entries written on one DuckDB thread and left in the log took
    the coordinator from 1.25 to 2.28 GiB). A checkpoint DuckDB cannot take now (another
    transaction open on the file) changes nothing but memory: the rows are safe in the log."""
    with contextlib.suppress(duckdb.Error):
        con.execute("CHECKPOINT")


def coordinator_threads(workers: int, cpus: int | None = None) -> int:
    """DuckDB threads for the coordinator while ``workers`` local worker processes compute: the
    cores they leave (at least 1). On 2 cores with 2 workers DuckDB's default of one thread per
    core makes the entries inserts and their checkpoints cost more CPU than one thread, for no
    gain in wall time (issue 18; the measurement is in docs/checks-benchmark.md)."""
    cores = (os.cpu_count() or 1) if cpus is None else cpus
    return max(1, cores - max(0, int(workers)))


def thread_limit(con: duckdb.DuckDBPyConnection, threads: int | None) -> contextlib.AbstractContextManager[None]:
    """DuckDB's ``threads`` of ``con``'s database set to ``threads`` inside the block (None: left
    as it is), the previous value restored after it (as :func:`memory_limit`)."""
    return _setting(con, "threads", None if threads is None else str(max(1, int(threads))))


def optimistic_writes(con: duckdb.DuckDBPyConnection, enabled: bool | None
                      ) -> contextlib.AbstractContextManager[None]:
    """DuckDB's ``enable_optimistic_write`` of ``con``'s database set to ``enabled`` inside the
    block (None: left as it is), the previous value restored after it (as :func:`memory_limit`).

    Off for the process stage's batch writes (issue 18): with it on, DuckDB writes each batch's
    full row groups to the file while inserting and every batch leaves a partial row group, which
    the checkpoints then merge and compress again (the entries written twice: at paper scale,
    8.1M entries in 48 batches, ~16 CPU s for the writes and the final checkpoint and a 429 MiB
    file, against ~11 CPU s and 227 MiB with it off); off, a batch is compressed once, by the
    checkpoint DuckDB takes at its commit. The stored rows are the same."""
    return _setting(con, "enable_optimistic_write", None if enabled is None else ("true" if enabled else "false"))


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
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(str(path), read_only=read_only)
    try:
        if not read_only:
            ensure_schema(con, path, schema)
        yield con
    finally:
        con.close()
        key = _ready_key(path, schema)
        if not read_only and key in _READY:  # the file as this process leaves it: still current
            ident = _file_id(path)
            if ident is None:
                _READY.pop(key, None)
            else:
                _READY[key] = ident
