"""Variety box office aggregation (SPEC B1): extracted tuples → weekly totals → yearly ranking.

The set logic lives in ``sql/boxoffice_weekly.sql`` and ``sql/boxoffice_yearly.sql`` (their
headers state every rule and reason code); this module only registers the three inputs on the
caller's DuckDB connection, runs the two files and returns the results as Arrow tables. It
touches nothing but that connection: the inputs are registered as ``bo_tuples``,
``bo_citymap`` and ``bo_aliases`` (through ``_bo_*_input`` relations and casting views), and the
results are TEMP views (``bo_classified``, ``bo_counted``, ``bo_excluded``,
``bo_unknown_cities``, ``bo_weekly``, ``bo_yearly``, ``bo_top100``) left in place so a flow can
copy them into the state DB or a release.

:func:`define_views` is the same without reading anything back, with inputs that may also be SQL
(a table or a query of the caller's database): a stage then copies the views into its tables with
``INSERT … SELECT`` (:func:`output_query`), so no tuple passes through Python (issue 17: memory
flat in the number of items).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

import duckdb
import pyarrow as pa

from cinesub.state import render_sql, sql_text

#: the yearly cut that defines popularity (SPEC B1: the top 100 per year)
TOP_N = 100

#: exclusion reason codes of ``excluded`` (sql/boxoffice_weekly.sql), in the order they are tested
REASONS = ("not_last_week", "showcase_hollywood", "null_gross", "nonpositive_gross",
           "unknown_city", "non_us_city")

#: input columns → DuckDB type; tuples may omit the optional ones (they become NULL)
TUPLE_COLUMNS = {
    "issue_date": "DATE", "item_id": "VARCHAR", "page": "INTEGER", "extractor": "VARCHAR",
    "model": "VARCHAR", "theater": "VARCHAR", "city": "VARCHAR", "movie": "VARCHAR",
    "week": "VARCHAR", "gross": "BIGINT", "confidence": "DOUBLE",
}
TUPLE_OPTIONAL = frozenset({"item_id", "page", "extractor", "model", "confidence"})
CITYMAP_COLUMNS = {"original": "VARCHAR", "normalized": "VARCHAR", "state": "VARCHAR",
                   "country": "VARCHAR"}
CITYMAP_OPTIONAL = frozenset({"state"})
ALIAS_COLUMNS = {"year": "INTEGER", "alias": "VARCHAR", "imdb": "VARCHAR", "decision": "VARCHAR"}
ALIAS_OPTIONAL: frozenset[str] = frozenset()

#: result name → (view, ORDER BY) — every result comes back in a fixed order
OUTPUTS = {
    "weekly": ("bo_weekly", "issue_date, key"),
    "yearly": ("bo_yearly", "year, rank"),
    "top100": ("bo_top100", "year, rank"),
    "excluded": ("bo_excluded",
                 "issue_date, item_id, page, reason, theater, city, movie, week, gross"),
    "unknown_cities": ("bo_unknown_cities", "n_tuples DESC, city"),
}


class Sql(str):
    """An input given as SQL over the caller's connection: a table or view name, or a
    ``SELECT`` (read in place by DuckDB, never loaded into Python)."""


def _as_arrow(obj: Any, name: str) -> pa.Table:
    if isinstance(obj, pa.Table):
        return obj
    if hasattr(obj, "to_arrow"):  # polars.DataFrame
        return obj.to_arrow()
    if isinstance(obj, list):
        return pa.Table.from_pylist(obj)
    raise TypeError(f"{name}: expected a pyarrow.Table, polars.DataFrame, list of dicts or Sql, "
                    f"got {type(obj).__name__}")


def _register(con: duckdb.DuckDBPyConnection, name: str, obj: Any,
              columns: dict[str, str], optional: frozenset[str]) -> None:
    """Register ``obj`` (Arrow-like, or :class:`Sql`) as ``_<name>_input``, viewed as ``<name>``
    with the documented types."""
    source = f"_{name}_input"
    if isinstance(obj, Sql):
        relation = obj if re.fullmatch(r"[A-Za-z_][\w.]*", obj.strip()) else f"({obj})"
        con.execute(f"CREATE OR REPLACE TEMP VIEW {source} AS SELECT * FROM {relation}")
        present = {r[0] for r in con.execute(f"DESCRIBE {source}").fetchall()}
    else:
        table = _as_arrow(obj, name)
        present = set(table.column_names)
    missing = [c for c in columns if c not in present and c not in optional]
    if missing:
        raise ValueError(f"{name}: missing column(s) {', '.join(missing)}")
    if not isinstance(obj, Sql):
        con.register(source, table)
    select = ", ".join(
        (f'CAST("{col}" AS {typ}) AS {col}' if col in present else f"CAST(NULL AS {typ}) AS {col}")
        for col, typ in columns.items())
    con.execute(f"CREATE OR REPLACE TEMP VIEW {name} AS SELECT {select} FROM {source}")


def _check_top_n(top_n: Any) -> None:
    if not isinstance(top_n, int) or isinstance(top_n, bool) or top_n < 1:
        raise ValueError(f"top_n must be a positive int, got {top_n!r}")


def define_views(con: duckdb.DuckDBPyConnection, tuples: Any, citymap: Any,
                 aliases: Any | None = None, *, top_n: int = TOP_N, materialize: bool = False) -> None:
    """Register the inputs and create the result views (:data:`OUTPUTS`) on ``con``, reading
    nothing back. Each input is as in :func:`aggregate`, or :class:`Sql` over ``con``'s database
    (e.g. ``Sql("SELECT … FROM pd_tuples WHERE extractor = 'ocr-rules'")``): the views then read
    it in place whenever they are queried. ``materialize``: the tuples are classified once, into
    a TEMP table the result views read (for a caller that reads several results of a bounded
    input: every result otherwise classifies the tuples again)."""
    _check_top_n(top_n)
    if aliases is None:
        aliases = pa.table({c: pa.array([], pa.string()) for c in ALIAS_COLUMNS})
    _register(con, "bo_tuples", tuples, TUPLE_COLUMNS, TUPLE_OPTIONAL)
    _register(con, "bo_citymap", citymap, CITYMAP_COLUMNS, CITYMAP_OPTIONAL)
    _register(con, "bo_aliases", aliases, ALIAS_COLUMNS, ALIAS_OPTIONAL)
    con.execute(sql_text("boxoffice_weekly.sql"))
    if materialize:
        con.execute("CREATE OR REPLACE TEMP TABLE _bo_classified_rows AS SELECT * FROM bo_classified")
        con.execute("CREATE OR REPLACE TEMP VIEW bo_classified AS SELECT * FROM _bo_classified_rows")
    con.execute(render_sql("boxoffice_yearly.sql", top_n=top_n))


def output_query(name: str) -> str:
    """The ``SELECT`` of one result of :data:`OUTPUTS` in its fixed order (after :func:`define_views`)."""
    view, order = OUTPUTS[name]
    return f"SELECT * FROM {view} ORDER BY {order}"


def aggregate(con: duckdb.DuckDBPyConnection, tuples: Any, citymap: Any,
              aliases: Any | None = None, *, top_n: int = TOP_N) -> dict[str, pa.Table]:
    """Weekly totals, yearly ranking, top ``top_n`` per year and the exclusion audit.

    ``tuples``, ``citymap`` and ``aliases`` are Arrow tables (or polars frames, or lists of dicts,
    or :class:`Sql`) with the columns documented in sql/boxoffice_weekly.sql; ``aliases`` may be
    None (no alias decided: every movie keeps its lower-cased title). Returns ``weekly`` (key,
    issue_date, gross, key_kind, n_tuples), ``yearly`` and ``top100`` (year, rank, key, key_kind,
    box_office, n_weeks, n_tuples), ``excluded`` (every tuple that adds nothing, with ``reason`` ∈
    :data:`REASONS`) and ``unknown_cities`` (raw cities missing from the map, with counts).
    """
    define_views(con, tuples, citymap, aliases, top_n=top_n)
    return {name: con.sql(output_query(name)).to_arrow_table() for name in OUTPUTS}


def reason_counts(pairs: Any) -> dict[str, int]:
    """``(reason, n)`` pairs → tuples excluded per reason code (every code present, zero when unused)."""
    counts = dict.fromkeys(REASONS, 0)
    for reason, n in pairs:
        counts[reason] = counts.get(reason, 0) + n
    return counts


def exclusion_counts(excluded: pa.Table) -> dict[str, int]:
    """Tuples excluded per reason code (every code present, zero when unused)."""
    return reason_counts(Counter(excluded.column("reason").to_pylist()).items())
