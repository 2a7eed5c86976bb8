"""Versioned releases of the public-domain Hollywood collection (SPEC B1, B2, C):
``CINESUB_HOME/hollywood/releases/<semver>/``.

A release holds one Parquet file per table of :data:`TABLES` (queries in
sql/pd_release_tables.sql), ``cinesub.duckdb`` — a self-contained DuckDB database holding the same
tables (no paths inside, so plain ``duckdb.connect(path, read_only=True)`` answers from any working
directory wherever the release lies; storage v1.0.0, readable by every DuckDB 1.x;
:func:`warehouse.publish.write_database`), ``stats/stages.parquet`` (the build's per-stage
statistics) — and ``manifest.json`` (every file with sha256, size and
rows; code version; config hash; input snapshot ids; ``as_of`` and ``as_of_frozen``; the primary extractor). It is
written into a temporary directory and renamed into place atomically, readable by others (0755 /
0644); a temporary a killed build left is removed by the next publication. ``LATEST`` and the
``latest`` symlink name the newest version. The writing is the one release writer of both
corpora, warehouse/publish.py.

Version rule (the one of warehouse/release.py, Croissant's): identical tables (byte-identical
Parquet; ``stats/`` never counts) → no new version; only rows or tables added → minor; any row removed or changed, a
table or column removed → major; otherwise (same rows, different bytes) → patch.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from cinesub import __version__
from cinesub.state import sql_text
from warehouse.publish import (  # noqa: F401  (re-exported: the names callers import from here)
    ReleaseWriter,
    change_kind,
    read_manifest,
    table_change,
)

NAME = "cinesub-hollywood"
#: Parquet tables of a release, each the view ``rel_<name>`` of sql/pd_release_tables.sql
TABLES: tuple[str, ...] = (
    "pages", "tuples", "extract_errors", "crosscheck", "weekly", "yearly", "top100", "excluded",
    "unknown_cities", "aliases", "evaluation", "registrations", "renewals", "unparsed", "cce_crosscheck",
    "matches", "status", "source_works", "film_links", "film_ia", "collection", "collection_candidates",
    "collection_audit",
)
DB_NAME = "cinesub.duckdb"  # the name warehouse.load.open_release opens


def build_tables(con: duckdb.DuckDBPyConnection) -> dict[str, pa.Table]:
    """The release tables from the Hollywood state DB, fully ordered."""
    con.execute(sql_text("pd_release_tables.sql"))
    return {name: con.sql(f"SELECT * FROM rel_{name}").to_arrow_table() for name in TABLES}


def _changed(c: Mapping[str, Any]) -> bool:
    return bool(c.get("rows_added") or c.get("rows_removed") or c.get("columns_added")
                or c.get("columns_removed") or c.get("table_added") or c.get("table_removed"))


def publish(state_con: duckdb.DuckDBPyConnection, releases_dir: Path, *, config_hash: str,
            inputs: Mapping[str, Any], as_of: str, primary_extractor: str,
            summary: Mapping[str, Any] | None = None, as_of_frozen: bool | None = None,
            stage_stats: list[dict] | None = None) -> dict[str, Any]:
    """Write a new release if any table changed; return {version, path, new, kind, counts}.
    ``stage_stats`` (the build's per-stage statistics) go to ``stats/stages.parquet``, listed in
    the manifest and never part of the decision whether the tables changed. ``as_of_frozen``:
    whether the status date was set (``hollywood.as_of``) or is the run date."""
    tables = build_tables(state_con)
    counts = {n: t.num_rows for n, t in tables.items()}
    with ReleaseWriter(releases_dir) as writer:
        prev, prev_dir = writer.prev, writer.prev_dir
        writer.write_tables(tables)
        kind, changes = "major", {}
        if prev_dir is not None:
            if writer.unchanged(tables, same_table_set=True):
                return {"version": prev, "path": str(prev_dir), "new": False, "kind": None, "counts": counts}
            kind, changes = change_kind(prev_dir, tables)
        version = writer.next_version(kind)
        writer.write_database(DB_NAME, {n: f"{n}.parquet" for n in tables})
        writer.write_stage_stats(stage_stats)
        manifest = {
            "name": NAME,
            "version": version,
            "previous": prev,
            "change": kind if prev else "initial",
            "changes": {n: c for n, c in changes.items() if _changed(c)},
            "code_version": __version__,
            "config_hash": config_hash,
            "inputs": dict(inputs),
            "as_of": as_of,
            # True: hollywood.as_of (or --as-of) froze the status date; False: the run date
            "as_of_frozen": as_of_frozen,
            "primary_extractor": primary_extractor,
            "tables": list(tables),
            "summary": dict(summary or {}),
            "files": writer.checksum(),
        }
        final = writer.publish(manifest)
        return {"version": version, "path": str(final), "new": True, "kind": manifest["change"], "counts": counts}


def read_table(release_dir: Path, name: str) -> pa.Table:
    return pq.read_table(Path(release_dir) / f"{name}.parquet")
