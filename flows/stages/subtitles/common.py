"""Helpers shared by the subtitle stages: the selection views, table writes."""

from __future__ import annotations

import duckdb
import pyarrow as pa

from flows.kernel_context import RunContext
from cinesub.state import render_sql, sql_text
from validators.candidate import PROCESSING_VERSION


def chosen_languages(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> tuple[str, ...]:
    """The languages the build acquires: those the survey stage chose (``selected_attributes``),
    ``Settings.languages`` when no survey ran (a stage run on its own)."""
    from warehouse.release import read_selection

    return read_selection(con, "languages", tuple(ctx.settings.languages))


def chosen_countries(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> tuple[str, ...]:
    """The rating countries the build releases, in release order (as :func:`chosen_languages`)."""
    from warehouse.release import read_selection

    return read_selection(con, "countries", tuple(ctx.settings.countries))


def eligible_views(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> None:
    """Create the temp table ``wanted_languages`` (the chosen languages: reads
    ``selected_attributes``) and the view of sql/eligible_films.sql (reads ``films``)."""
    languages = chosen_languages(con, ctx)
    con.execute("CREATE OR REPLACE TEMP TABLE wanted_languages (language VARCHAR)")
    con.executemany("INSERT INTO wanted_languages VALUES (?)", [[lang] for lang in languages])
    con.execute(sql_text("eligible_films.sql"))


def selection_views(con: duckdb.DuckDBPyConnection, ctx: RunContext) -> None:
    """Create the temp views of sql/eligible_films.sql and sql/selection.sql (the recovery chain:
    reads ``films``, ``candidates``, ``attempts``, ``tracks``, ``decisions``)."""
    eligible_views(con, ctx)
    con.execute(
        render_sql(
            "selection.sql",
            max_candidates=ctx.settings.thresholds.max_candidates,
            processing_version=PROCESSING_VERSION,
        )
    )


def insert_arrow(con: duckdb.DuckDBPyConnection, table: str, data: pa.Table) -> None:
    """Insert an Arrow table by column name."""
    if data.num_rows == 0:
        return
    con.register("_arrow_in", data)
    cols = ", ".join(f'"{c}"' for c in data.column_names)
    con.execute(f'INSERT INTO "{table}" ({cols}) SELECT {cols} FROM _arrow_in')
    con.unregister("_arrow_in")
