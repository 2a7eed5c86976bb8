"""The one release writer of both corpora: ``<releases_dir>/<semver>/``.

What a release of the subtitle corpus (warehouse/release.py) and of the Hollywood collection
(warehouse/pd_release.py) share lives here; the corpus modules only say which tables and files
make their release:

* a staging directory (:class:`ReleaseWriter`: a temporary beside the releases, swept when a killed
  build left one, removed when anything fails);
* deterministic Parquet files (:func:`write_parquet`) and the self-contained DuckDB database
  (:func:`write_database`, storage :data:`DUCKDB_STORAGE_VERSION`, readable by every DuckDB 1.x);
* the sha256 and size of every file in the manifest;
* the version rule (Croissant's): byte-identical data tables → no new version; only rows or
  tables added → minor; a row, column or table removed or changed → major; otherwise patch
  (:func:`bump`; the generic per-table rule :func:`change_kind`);
* per-stage statistics of the build, ``stats/stages.parquet`` (:data:`STAGE_STATS_SCHEMA`): listed
  with its checksum, never part of the decision whether the data changed (seconds differ between
  builds);
* the atomic publication: ``manifest.json`` last, folders 0755 / files 0644, one ``os.replace``
  into place, then the ``LATEST`` file and the ``latest`` symlink.

Withdrawals (warehouse/withdraw.py) republish through the subtitle corpus' ``publish``.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from cinesub import tmpfiles

log = logging.getLogger(__name__)

#: DuckDB storage format of a release's database: the one every DuckDB 1.x (and later) reads
DUCKDB_STORAGE_VERSION = "v1.0.0"
DATABASE_NOTE = ("every table stored in the file (self-contained: opens from any directory with "
                 f"duckdb.connect(path, read_only=True)); DuckDB storage {DUCKDB_STORAGE_VERSION}")

#: per-stage statistics of the build that made a release (relative path inside the release)
STAGE_STATS_FILE = "stats/stages.parquet"
STAGE_STATS_SCHEMA = pa.schema([
    ("flow", pa.string()),
    ("stage", pa.string()),
    ("status", pa.string()),
    ("items_in", pa.int64()),
    ("items_out", pa.int64()),
    ("dropped", pa.list_(pa.struct([("reason", pa.string()), ("count", pa.int64())]))),
    ("seconds", pa.float64()),
])
STAGE_STATS_NOTE = ("per-stage statistics of the build (items in/out, dropped by reason, seconds); "
                    "not data: it never decides whether a release is new")


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


#: the options of every release Parquet file (deterministic bytes: no timestamps in metadata)
PARQUET_OPTIONS = {"compression": "zstd", "write_statistics": True, "use_dictionary": True}
#: rows per row group: pyarrow's default for a whole table, which :func:`write_parquet_stream` keeps
ROW_GROUP_ROWS = 1024 * 1024


def write_parquet(table: pa.Table, path: Path) -> None:
    """Deterministic bytes for identical data: fixed compression, no timestamps in metadata."""
    pq.write_table(table, path, **PARQUET_OPTIONS)


def write_parquet_stream(reader: pa.RecordBatchReader, path: Path, *,
                         row_group_rows: int = ROW_GROUP_ROWS) -> tuple[int, pa.Schema]:
    """``reader``'s rows as one Parquet file without holding them all: re-chunked into row groups
    of exactly ``row_group_rows`` (the last one shorter), so the bytes equal
    :func:`write_parquet` of the same rows as one table. At most one row group is held (plus
    the reader's batch). Returns (rows, schema). A table of unbounded size (the release's
    entries) comes this way, from ``con.sql(sql).to_arrow_reader(rows)`` (streamed: no copy of the
    result)."""
    schema = reader.schema
    n = 0
    pending: list[pa.RecordBatch] = []
    held = 0
    with pq.ParquetWriter(path, schema, **PARQUET_OPTIONS) as writer:
        def flush(rows: int) -> None:
            nonlocal pending, held
            table = pa.Table.from_batches(pending, schema)
            writer.write_table(table.slice(0, rows), row_group_size=row_group_rows)
            rest = table.slice(rows)
            pending, held = rest.to_batches(), rest.num_rows

        for batch in reader:
            if not batch.num_rows:
                continue
            pending.append(batch)
            held += batch.num_rows
            n += batch.num_rows
            while held >= row_group_rows:
                flush(row_group_rows)
        if held or not n:
            flush(held)
    return n, schema


def spool_arrow(reader: pa.RecordBatchReader, path: Path) -> pa.Table:
    """``reader``'s rows written batch by batch to the Arrow IPC file ``path``, returned as a table
    memory-mapped from it: a table of unbounded size (the release's entries) is never built in
    the process's own memory (its pages are the file's, which the kernel can drop and read again),
    yet every consumer of an Arrow table (DuckDB scans, Parquet writer, polars) takes it as is.
    The file may be unlinked once mapped (POSIX): the mapping keeps it readable."""
    with pa.OSFile(str(path), "wb") as sink, pa.ipc.new_file(sink, reader.schema) as ipc:
        for batch in reader:
            ipc.write_batch(batch)
    return pa.ipc.open_file(pa.memory_map(str(path), "r")).read_all()


def write_query_parquet(con: duckdb.DuckDBPyConnection, sql: str, path: Path, *,
                        batch_rows: int = 128 * 1024) -> tuple[int, pa.Schema]:
    """The rows of ``sql`` (on ``con``) streamed into ``path`` (:func:`write_parquet_stream`)."""
    return write_parquet_stream(con.sql(sql).to_arrow_reader(batch_rows), path)


def list_releases(releases_dir: Path) -> list[str]:
    if not releases_dir.is_dir():
        return []
    out = [p.name for p in releases_dir.iterdir() if p.is_dir() and not p.name.startswith(".") and p.name != "latest"]
    return sorted(out, key=lambda v: tuple(int(x) for x in v.split(".")))


def latest_version(releases_dir: Path) -> str | None:
    pointer = releases_dir / "LATEST"
    if pointer.exists():
        return pointer.read_text().strip() or None
    versions = list_releases(releases_dir)
    return versions[-1] if versions else None


def bump(prev: str | None, kind: str) -> str:
    if prev is None:
        return "1.0.0"
    major, minor, patch = (int(x) for x in prev.split("."))
    if kind == "major":
        return f"{major + 1}.0.0"
    if kind == "minor":
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


def write_database(db_path: Path, sources: dict[str, Path]) -> None:
    """The release database: one table per Parquet file of ``sources`` (name → path), its rows
    copied into the file in order, so nothing in it refers to a path and it opens from any working
    directory and wherever the release is moved; written in DuckDB's
    :data:`DUCKDB_STORAGE_VERSION` storage format, which every DuckDB 1.x reads."""
    with duckdb.connect(str(db_path), config={"storage_compatibility_version": DUCKDB_STORAGE_VERSION}) as dbc:
        for name, src in sources.items():
            literal = str(src).replace("'", "''")
            dbc.execute(f'CREATE TABLE "{name}" AS SELECT * FROM read_parquet(\'{literal}\')')
        dbc.execute("CHECKPOINT")


def write_pointer(releases_dir: Path, version: str) -> None:
    """``LATEST`` (a file) and ``latest`` (a symlink) name ``version``; both replaced atomically."""
    fd, tmp = tmpfiles.mkstemp("latest", releases_dir)
    with os.fdopen(fd, "w") as fh:
        fh.write(version + "\n")
    os.chmod(tmp, tmpfiles.FILE_MODE)
    os.replace(tmp, releases_dir / "LATEST")
    link = releases_dir / "latest"
    tmp_link = releases_dir / ".latest-link"
    if tmp_link.is_symlink() or tmp_link.exists():
        tmp_link.unlink()
    os.symlink(version, tmp_link)
    os.replace(tmp_link, link)


# --------------------------------------------------------------------------------------------
# per-stage statistics
# --------------------------------------------------------------------------------------------
def stage_stats_table(stage_stats: Iterable[Mapping[str, Any]]) -> pa.Table:
    """The rows of ``stats/stages.parquet``: one per stage run (flow, stage, status, items in/out,
    dropped as (reason, count) pairs sorted by reason, seconds), in the order given."""
    rows = []
    for s in stage_stats:
        dropped = s.get("dropped") or {}
        pairs = dropped.items() if isinstance(dropped, Mapping) else ((d["reason"], d["count"]) for d in dropped)
        rows.append({
            "flow": None if s.get("flow") is None else str(s["flow"]),
            "stage": str(s["stage"]),
            "status": None if s.get("status") is None else str(s["status"]),
            "items_in": None if s.get("items_in") is None else int(s["items_in"]),
            "items_out": None if s.get("items_out") is None else int(s["items_out"]),
            "dropped": [{"reason": str(r), "count": int(c)} for r, c in sorted(pairs, key=lambda p: str(p[0]))],
            "seconds": None if s.get("seconds") is None else float(s["seconds"]),
        })
    return pa.Table.from_pylist(rows, schema=STAGE_STATS_SCHEMA)


# --------------------------------------------------------------------------------------------
# the version rule
# --------------------------------------------------------------------------------------------
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
    """(patch | minor | major, per-table changes) of ``tables`` against the release ``prev_dir``
    (its top-level Parquet files: ``stats/`` never counts)."""
    changes = {n: table_change(prev_dir / f"{n}.parquet", t) for n, t in tables.items()}
    dropped = sorted(p.stem for p in prev_dir.glob("*.parquet") if p.stem not in tables)
    for n in dropped:
        changes[n] = {"table_removed": True}
    if dropped or any(c.get("rows_removed") or c.get("columns_removed") for c in changes.values()):
        return "major", changes
    if any(c.get("rows_added") or c.get("columns_added") or c.get("table_added") for c in changes.values()):
        return "minor", changes
    return "patch", changes


def data_identical(prev_dir: Path, new_dir: Path, names: Iterable[str], *, same_table_set: bool) -> bool:
    """Whether the data tables ``names`` (top-level ``<name>.parquet``) of ``new_dir`` are
    byte-identical to those of the release ``prev_dir``; with ``same_table_set`` the previous
    release must also hold no other top-level table. Statistics (``stats/``) never count."""
    names = list(names)
    if same_table_set and {p.stem for p in prev_dir.glob("*.parquet")} != set(names):
        return False
    return all((prev_dir / f"{n}.parquet").is_file()
               and file_sha256(prev_dir / f"{n}.parquet") == file_sha256(new_dir / f"{n}.parquet")
               for n in names)


# --------------------------------------------------------------------------------------------
# the writer
# --------------------------------------------------------------------------------------------
class ReleaseWriter:
    """One publication into ``releases_dir``, used as a context manager::

        with ReleaseWriter(releases_dir) as w:
            w.write_tables(tables)
            if w.unchanged(tables, same_table_set=...):
                return ...                      # w.prev / w.prev_dir: the release reused
            version = w.next_version(kind)
            ...                                 # more files: w.add(name, rows=...)
            w.write_stage_stats(stage_stats)
            final = w.publish(manifest)         # manifest["files"] is w.files

    Leaving the block with an exception (or before :meth:`publish`) removes the staging directory.
    """

    def __init__(self, releases_dir: Path):
        self.releases_dir = Path(releases_dir)
        self.releases_dir.mkdir(parents=True, exist_ok=True)
        self.prev = latest_version(self.releases_dir)
        prev_dir = self.releases_dir / self.prev if self.prev else None
        self.prev_dir: Path | None = prev_dir if prev_dir is not None and prev_dir.is_dir() else None
        self.files: dict[str, dict[str, Any]] = {}
        self.tmp: Path | None = None
        self.version: str | None = None
        #: the database begun by :meth:`start_database`: (name, future, tables it writes)
        self._db: tuple[str, Any, frozenset[str]] | None = None

    def __enter__(self) -> ReleaseWriter:
        tmpfiles.sweep(self.releases_dir)  # what a killed build left (.tmp-release-*, .tmp-latest-*)
        self.tmp = tmpfiles.mkdtemp("release", self.releases_dir)
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        try:
            self._wait_database()  # its thread writes into the staging directory
        except Exception:
            if exc_type is None:
                raise
            log.warning("release database thread failed too", exc_info=True)  # the first error propagates
        finally:
            if self.tmp is not None:
                shutil.rmtree(self.tmp, ignore_errors=True)
                self.tmp = None

    @property
    def dir(self) -> Path:
        assert self.tmp is not None, "ReleaseWriter used outside its with-block"
        return self.tmp

    def add(self, name: str, *, rows: int | None = None, **meta: Any) -> Path:
        """Record ``name`` (relative to the release) as a file of the release; returns its path."""
        self.files[name] = {"rows": rows, **meta}
        return self.dir / name

    def write_tables(self, tables: Mapping[str, pa.Table]) -> None:
        """One ``<name>.parquet`` per table (deterministic bytes)."""
        for name, table in tables.items():
            write_parquet(table, self.add(f"{name}.parquet", rows=table.num_rows))

    def unchanged(self, names: Iterable[str], *, same_table_set: bool) -> bool:
        """True when the latest release holds the same data tables byte for byte."""
        return self.prev_dir is not None and data_identical(self.prev_dir, self.dir, names,
                                                            same_table_set=same_table_set)

    def next_version(self, kind: str) -> str:
        self.version = bump(self.prev, kind)
        return self.version

    def start_database(self, name: str, sources: Mapping[str, str]) -> None:
        """Begin the database ``name`` with the Parquet files ``sources`` already written (table →
        relative path) in a background thread — DuckDB copies rows without holding the GIL —
        while the rest of the release is made; :meth:`write_database` of ``name`` adds the other
        tables after them (the same tables in the same order as one call would write) and waits."""
        from concurrent.futures import ThreadPoolExecutor

        paths = {t: self.dir / rel for t, rel in sources.items()}
        pool = ThreadPoolExecutor(1, thread_name_prefix="release-database")
        try:
            self._db = (name, pool.submit(write_database, self.dir / name, paths), frozenset(sources))
        finally:
            pool.shutdown(wait=False)

    def _wait_database(self) -> frozenset[str]:
        """Wait for the database begun by :meth:`start_database` (its error raised); the tables
        it wrote (none when none was begun)."""
        if self._db is None:
            return frozenset()
        _, future, written = self._db
        self._db = None
        future.result()
        return written

    def write_database(self, name: str, sources: Mapping[str, str]) -> None:
        """``name``: a DuckDB database of the release's Parquet files (table → relative path)."""
        begun = self._db is not None and self._db[0] == name
        written = self._wait_database() if begun else frozenset()
        write_database(self.dir / name, {t: self.dir / rel for t, rel in sources.items() if t not in written})
        self.add(name, note=DATABASE_NOTE)

    def write_stage_stats(self, stage_stats: Iterable[Mapping[str, Any]] | None) -> Path | None:
        """``stats/stages.parquet`` from the kernel's per-stage statistics (nothing when None)."""
        if stage_stats is None:
            return None
        table = stage_stats_table(stage_stats)
        path = self.dir / STAGE_STATS_FILE
        path.parent.mkdir(parents=True, exist_ok=True)
        write_parquet(table, self.add(STAGE_STATS_FILE, rows=table.num_rows, note=STAGE_STATS_NOTE))
        return path

    def checksum(self) -> dict[str, dict[str, Any]]:
        """sha256 and size of every recorded file that has none yet."""
        for name, meta in self.files.items():
            if "sha256" not in meta:
                p = self.dir / name
                meta.update({"sha256": file_sha256(p), "size": p.stat().st_size})
        return self.files

    def publish(self, manifest: Mapping[str, Any]) -> Path:
        """Checksums, ``manifest.json``, permissions, the atomic rename and the ``latest``
        pointer; returns the release directory."""
        assert self.version is not None, "next_version() first"
        self.checksum()
        (self.dir / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True, default=str) + "\n",
                                                encoding="utf-8")
        tmpfiles.make_public(self.dir)  # readable by others as published (mkdtemp made it 0700)
        final = self.releases_dir / self.version
        os.replace(self.dir, final)
        self.tmp = None
        write_pointer(self.releases_dir, self.version)
        return final


def read_manifest(release_dir: Path) -> dict[str, Any]:
    return json.loads((Path(release_dir) / "manifest.json").read_text(encoding="utf-8"))
