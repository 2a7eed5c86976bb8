"""Helpers shared by the stages: the selection views, providers, table writes."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pyarrow as pa

from cinesub.stage import StageContext
from cinesub.state import render_sql, sql_text
from flows.track_processing import PROCESSING_VERSION


def sources_root(ctx: StageContext) -> Path:
    if ctx.sample_dir is not None:
        return ctx.sample_dir
    root = ctx.settings.inputs.sources_dir
    if root is None:
        from cinesub.errors import ConfigError

        raise ConfigError("no source pages: set inputs.sources_dir (CINESUB_INPUTS__SOURCES_DIR) or use --sample",
                          "inputs_missing")
    return Path(root)


def selection_views(con: duckdb.DuckDBPyConnection, ctx: StageContext) -> None:
    """Create the temp views of sql/eligible_films.sql and sql/selection.sql."""
    con.execute("CREATE OR REPLACE TEMP TABLE wanted_languages (language VARCHAR)")
    con.executemany("INSERT INTO wanted_languages VALUES (?)", [[lang] for lang in ctx.settings.languages])
    con.execute(sql_text("eligible_films.sql"))
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
