"""Bulk row writes into DuckDB through Arrow.

``executemany`` runs one statement per row (≈0.1–1 ms each, more with a primary key or a full
scan per row), which made the row writes of the small stages a large part of a sample build.
:func:`insert_rows` hands DuckDB the rows as one Arrow table and inserts them with one
``INSERT … SELECT``: the same rows and the same constraints (a duplicate key still raises, ``OR
REPLACE`` still replaces), in the caller's transaction. :func:`delete_keys` is its counterpart:
one ``DELETE … WHERE EXISTS`` for a set of keys instead of a statement per key.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from typing import Any

import duckdb
import pyarrow as pa

#: DuckDB column types → the Arrow type their Python values are converted with
_ARROW_TYPES: dict[str, pa.DataType] = {
    "VARCHAR": pa.string(), "JSON": pa.string(), "BIGINT": pa.int64(), "INTEGER": pa.int32(),
    "SMALLINT": pa.int16(), "TINYINT": pa.int8(), "UBIGINT": pa.uint64(), "UINTEGER": pa.uint32(),
    "HUGEINT": pa.float64(), "DOUBLE": pa.float64(), "FLOAT": pa.float32(), "BOOLEAN": pa.bool_(),
    "DATE": pa.date32(), "TIMESTAMP": pa.timestamp("us"), "TIMESTAMP WITH TIME ZONE": pa.timestamp("us", tz="UTC"),
    "BLOB": pa.binary(),
}
_names = (f"_bulk_{n}" for n in itertools.count())


def _column(values: list[Any], duck_type: str) -> pa.Array:
    """``values`` as an Arrow array of the column's type where they convert to it, else as Arrow
    infers them, else as text; DuckDB casts what it receives to the column's type on insert (so
    a value that fits neither raises there, as ``executemany`` would)."""
    target = _ARROW_TYPES.get(duck_type.upper())
    for kind in ((target, None) if target is not None else (None,)):
        try:
            return pa.array(values, type=kind)
        except (pa.ArrowInvalid, pa.ArrowTypeError, TypeError, ValueError, OverflowError):
            continue
    return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def table_columns(con: Any, table: str) -> list[tuple[str, str]]:
    """``(name, DuckDB type)`` of each column of ``table``, in order."""
    return [(r[0], r[1]) for r in con.execute(f'DESCRIBE "{table}"').fetchall()]


def primary_key(con: Any, table: str) -> list[str]:
    """The primary-key (else first unique) columns of ``table``; [] when it has none."""
    rows = con.execute(
        "SELECT constraint_type, constraint_column_names FROM duckdb_constraints() WHERE table_name = ? "
        "AND constraint_type IN ('PRIMARY KEY', 'UNIQUE') ORDER BY constraint_type = 'UNIQUE'", [table]).fetchall()
    return list(rows[0][1]) if rows else []


def insert_rows(con: Any, table: str, rows: Sequence[Sequence[Any]], *, replace: bool = False,
                columns: Sequence[str] | None = None) -> int:
    """Insert positional ``rows`` (each a value per column of ``columns``, default: all columns of
    ``table`` in order) with one statement; ``replace``: ``INSERT OR REPLACE``. Returns the number
    of rows. Runs in the caller's transaction."""
    if not rows:
        return 0
    described = table_columns(con, table)
    types = dict(described)
    names = list(columns) if columns is not None else [n for n, _ in described]
    width = len(names)
    for row in rows:
        if len(row) != width:
            raise ValueError(f"insert into {table}: a row has {len(row)} values for {width} columns")
    if replace:  # as executemany would: of rows with the same key, the last one stands
        key = [names.index(c) for c in primary_key(con, table) if c in names]
        if key:
            last = {tuple(row[i] for i in key): n for n, row in enumerate(rows)}
            if len(last) < len(rows):
                rows = [rows[n] for n in sorted(last.values())]
    data = pa.table({name: _column([row[i] for row in rows], types.get(name, ""))
                     for i, name in enumerate(names)})
    return insert_arrow(con, table, data, replace=replace)


def insert_arrow(con: Any, table: str, data: pa.Table, *, replace: bool = False) -> int:
    """Insert an Arrow table into ``table`` by column name with one statement."""
    if data.num_rows == 0:
        return 0
    view = next(_names)
    con.register(view, data)
    try:
        cols = ", ".join(f'"{c}"' for c in data.column_names)
        verb = "INSERT OR REPLACE" if replace else "INSERT"
        con.execute(f'{verb} INTO "{table}" ({cols}) SELECT {cols} FROM {view}')
    finally:
        con.unregister(view)
    return data.num_rows


def delete_keys(con: Any, table: str, key_columns: Sequence[str], keys: Sequence[Sequence[Any]],
                where: str = "", params: Sequence[Any] = ()) -> None:
    """``DELETE FROM table`` every row whose ``key_columns`` equal one of ``keys`` (and that
    matches ``where``, with ``params``), with one statement."""
    if not keys:
        return
    view = next(_names)
    con.register(view, pa.table({c: pa.array([k[i] for k in keys]) for i, c in enumerate(key_columns)}))
    try:
        match = " AND ".join(f'k."{c}" = t."{c}"' for c in key_columns)
        extra = f" AND ({where})" if where else ""
        con.execute(f'DELETE FROM "{table}" t WHERE EXISTS (SELECT 1 FROM {view} k WHERE {match}){extra}',
                    list(params))
    finally:
        con.unregister(view)
