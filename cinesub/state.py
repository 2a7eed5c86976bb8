"""The working state database (DuckDB) under CINESUB_HOME."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path

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
