"""What two releases must share to be the same release: every file's sha256 from its manifest,
except the DuckDB file, whose block layout varies from one write to the next (with or without a
cache), so its tables' rows are compared instead."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb


def duckdb_rows(db: Path) -> dict[str, list[tuple]]:
    """Every table of the DuckDB file ``db``, by name: its rows."""
    with duckdb.connect(str(db), read_only=True) as con:
        return {t: con.execute(f'SELECT * FROM "{t}"').fetchall() for (t,) in
                con.execute("SELECT table_name FROM duckdb_tables() ORDER BY 1").fetchall()}


def release_files(release: Path, *, skip: tuple[str, ...] = ()) -> dict[str, object]:
    """The release's files by name: sha256 from ``manifest.json`` (those in ``skip`` left out for
    the caller to compare its own way), and ``cinesub.duckdb`` as :func:`duckdb_rows`."""
    files = json.loads((release / "manifest.json").read_text())["files"]
    out: dict[str, object] = {n: m["sha256"] for n, m in files.items() if n not in ("cinesub.duckdb", *skip)}
    out["cinesub.duckdb"] = duckdb_rows(release / "cinesub.duckdb")
    return out
