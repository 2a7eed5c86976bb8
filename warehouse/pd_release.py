"""Versioned releases of the public-domain Hollywood collection (SPEC B1, B2, C):
``CINESUB_HOME/hollywood/releases/<semver>/``.

A release holds one Parquet file per table of :data:`TABLES` (queries in
sql/pd_release_tables.sql), ``cinesub.duckdb`` — a self-contained DuckDB database holding the same
tables (no paths inside, so plain ``duckdb.connect(path, read_only=True)`` answers from any working
directory wherever the release lies; storage v1.0.0, readable by every DuckDB 1.x;
:func:`warehouse.release.write_database`) — and ``manifest.json`` (every file with sha256, size and
rows; code version; config hash; input snapshot ids; ``as_of``; the primary extractor). It is
written into a temporary directory and renamed into place atomically, readable by others (0755 /
0644); a temporary a killed build left is removed by the next publication. ``LATEST`` and the
``latest`` symlink name the newest version.

Version rule (the one of warehouse/release.py, Croissant's): identical tables (byte-identical
Parquet) → no new version; only rows or tables added → minor; any row removed or changed, a
table or column removed → major; otherwise (same rows, different bytes) → patch.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any, Mapping

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from cinesub import __version__, tmpfiles
from cinesub.state import sql_text
from warehouse.release import (
    DATABASE_NOTE,
    _bump,
    _write_parquet,
    _write_pointer,
    file_sha256,
    latest_version,
    write_database,
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


def _identical(prev_dir: Path, tmp: Path, names: list[str]) -> bool:
    prev_names = {p.stem for p in prev_dir.glob("*.parquet")}
    if prev_names != set(names):
        return False
    return all(file_sha256(prev_dir / f"{n}.parquet") == file_sha256(tmp / f"{n}.parquet") for n in names)


def table_change(old: Path | None, new: pa.Table) -> dict[str, Any]:
    """Rows added / removed (multiset, on the common columns) and columns added / removed of one
    table against its previous Parquet file (``old`` None: the table is new)."""
    if old is None or not old.is_file():
        return {"table_added": True, "rows_added": new.num_rows, "rows_removed": 0,
                "columns_added": list(new.column_names), "columns_removed": []}
    con = duckdb.connect()
    try:
        con.register("new_t", new)
        con.execute(f"CREATE VIEW old_t AS SELECT * FROM read_parquet('{old.as_posix()}')")
        old_cols = [r[0] for r in con.execute("DESCRIBE old_t").fetchall()]
        new_cols = list(new.column_names)
        common = [c for c in new_cols if c in old_cols]
        cols = ", ".join(f'"{c}"' for c in common) or "1"
        removed = con.execute(f"SELECT count(*) FROM (SELECT {cols} FROM old_t EXCEPT ALL SELECT {cols} FROM new_t)").fetchone()[0]
        added = con.execute(f"SELECT count(*) FROM (SELECT {cols} FROM new_t EXCEPT ALL SELECT {cols} FROM old_t)").fetchone()[0]
    finally:
        con.close()
    return {"table_added": False, "rows_added": int(added), "rows_removed": int(removed),
            "columns_added": [c for c in new_cols if c not in old_cols],
            "columns_removed": [c for c in old_cols if c not in new_cols]}


def change_kind(prev_dir: Path, tables: Mapping[str, pa.Table]) -> tuple[str, dict[str, Any]]:
    """(patch | minor | major, per-table changes) of ``tables`` against the release ``prev_dir``."""
    changes = {n: table_change(prev_dir / f"{n}.parquet", t) for n, t in tables.items()}
    dropped = sorted(p.stem for p in prev_dir.glob("*.parquet") if p.stem not in tables)
    for n in dropped:
        changes[n] = {"table_removed": True}
    if dropped or any(c.get("rows_removed") or c.get("columns_removed") for c in changes.values()):
        return "major", changes
    if any(c.get("rows_added") or c.get("columns_added") or c.get("table_added") for c in changes.values()):
        return "minor", changes
    return "patch", changes


def publish(state_con: duckdb.DuckDBPyConnection, releases_dir: Path, *, config_hash: str,
            inputs: Mapping[str, Any], as_of: str, primary_extractor: str,
            summary: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Write a new release if any table changed; return {version, path, new, kind, counts}."""
    releases_dir.mkdir(parents=True, exist_ok=True)
    tables = build_tables(state_con)
    counts = {n: t.num_rows for n, t in tables.items()}
    prev = latest_version(releases_dir)
    prev_dir = releases_dir / prev if prev else None
    tmpfiles.sweep(releases_dir)  # what a killed build left (.tmp-release-*, .tmp-latest-*)
    tmp = tmpfiles.mkdtemp("release", releases_dir)
    try:
        files: dict[str, dict[str, Any]] = {}
        for name, table in tables.items():
            path = tmp / f"{name}.parquet"
            _write_parquet(table, path)
            files[path.name] = {"rows": table.num_rows}
        kind, changes = "major", {}
        if prev_dir is not None and prev_dir.is_dir():
            if _identical(prev_dir, tmp, list(tables)):
                shutil.rmtree(tmp)
                return {"version": prev, "path": str(prev_dir), "new": False, "kind": None, "counts": counts}
            kind, changes = change_kind(prev_dir, tables)
        version = _bump(prev, kind)
        write_database(tmp / DB_NAME, {n: tmp / f"{n}.parquet" for n in tables})
        files[DB_NAME] = {"rows": None, "note": DATABASE_NOTE}
        for fname, meta in files.items():
            p = tmp / fname
            meta.update({"sha256": file_sha256(p), "size": p.stat().st_size})
        manifest = {
            "name": NAME,
            "version": version,
            "previous": prev,
            "change": kind if prev else "initial",
            "changes": {n: c for n, c in changes.items()
                        if c.get("rows_added") or c.get("rows_removed") or c.get("columns_added")
                        or c.get("columns_removed") or c.get("table_added") or c.get("table_removed")},
            "code_version": __version__,
            "config_hash": config_hash,
            "inputs": dict(inputs),
            "as_of": as_of,
            "primary_extractor": primary_extractor,
            "tables": list(tables),
            "summary": dict(summary or {}),
            "files": files,
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n",
                                           encoding="utf-8")
        tmpfiles.make_public(tmp)  # readable by others as published (mkdtemp made it 0700)
        final = releases_dir / version
        os.replace(tmp, final)
        _write_pointer(releases_dir, version)
        return {"version": version, "path": str(final), "new": True, "kind": manifest["change"], "counts": counts}
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def read_manifest(release_dir: Path) -> dict[str, Any]:
    return json.loads((Path(release_dir) / "manifest.json").read_text(encoding="utf-8"))


def read_table(release_dir: Path, name: str) -> pa.Table:
    return pq.read_table(Path(release_dir) / f"{name}.parquet")
