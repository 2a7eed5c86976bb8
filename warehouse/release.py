"""Versioned, immutable releases: ``CINESUB_HOME/releases/<semver>/``.

A release holds Parquet tables, a self-contained DuckDB database with the same tables (DuckDB
storage v1.0.0, readable by every DuckDB 1.x; opens from any directory), the film-entity JSON
(SPEC A11, one object per line, streamed) with its JSON Schema, statistics (SPEC A11 Tables
8–14: Parquet, JSON and an HTML page with plots), ``croissant.json`` (Croissant 1.0 + RAI), a
Hugging Face dataset card (``README.md``) and ``manifest.json`` (every file with sha256, size and
row count; code version; config hash; input snapshot ids; splits; withdrawn films). It passes the
consistency gate first, is written to a temporary directory and renamed into place atomically
(directories 0755, files 0644: readable by others as published; a temporary a killed build left is
removed by the next publication, cinesub/tmpfiles.py); ``releases/latest`` names the newest version.
The build's per-stage statistics go to ``stats/stages.parquet``. The writing itself is the one
release writer of both corpora, warehouse/publish.py; this module says what the subtitle corpus
puts into it.

Version rule (Croissant's): patch = same data repackaged, minor = data added only, major = data
changed or removed. Unchanged data → no new release (the build says which one it reused).
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from cinesub import __version__, tmpfiles
from cinesub.errors import CinesubError, ExitCode
from cinesub.records import utcnow
from cinesub.settings import LANGUAGES, ReleaseSettings
from cinesub.state import memory_limit, sql_text
from warehouse.publish import (  # noqa: F401  (re-exported: the names callers import from here)
    DATABASE_NOTE,
    DUCKDB_STORAGE_VERSION,
    ReleaseWriter,
    file_sha256,
    latest_version,
    list_releases,
    spool_arrow,
    write_database,
)

#: Tables of the release, each produced by a query in sql/release_tables.sql.
TABLES = ("films", "ratings", "tracks", "entries", "language_safety", "funnel", "coverage", "flags",
          "sanitization_log", "task_references", "selection", "selection_per_k", "raw_genres")


def read_selection(con: duckdb.DuckDBPyConnection, dimension: str, default: tuple[str, ...]) -> tuple[str, ...]:
    """The chosen set of ``dimension`` (``languages`` | ``countries``) in release order, as the
    build's survey stage recorded it (``selected_attributes``); ``default`` (the fixed setting)
    when no survey has run in this state DB."""
    rows = con.execute("SELECT attribute FROM selected_attributes WHERE dimension = ? ORDER BY position",
                       [dimension]).fetchall()
    return tuple(r[0] for r in rows) if rows else tuple(default)


#: Tables of unbounded size (a row per subtitle entry): with a spool directory, streamed from
#: DuckDB into an Arrow IPC file and memory-mapped (warehouse/publish.py ``spool_arrow``), never
#: built in the process's memory (issue 18: 8.1M entries at paper scale).
SPOOLED_TABLES = ("entries",)
#: rows per Arrow batch read from DuckDB while spooling
SPOOL_BATCH_ROWS = 128 * 1024


def build_tables(con: duckdb.DuckDBPyConnection, spool: Path | None = None) -> dict[str, pa.Table]:
    """Every release table as Arrow; with ``spool`` (a directory) the :data:`SPOOLED_TABLES` are
    memory-mapped Arrow IPC files written there by streaming (same rows, same schema)."""
    con.execute(sql_text("release_tables.sql"))
    out = {}
    for name in TABLES:
        rel = con.sql(f"SELECT * FROM release_{name}")
        if spool is not None and name in SPOOLED_TABLES:
            out[name] = spool_arrow(rel.to_arrow_reader(SPOOL_BATCH_ROWS), spool / f"{name}.arrow")
        else:
            out[name] = rel.to_arrow_table()
    return out


def audit_state(con: duckdb.DuckDBPyConnection) -> None:
    """What no index enforces in the state DB, checked before anything is published: every
    (track_id, position) of ``entries`` stored once (sql/state_schema.sql). Raises
    :class:`~cinesub.errors.CinesubError` (reason ``entries_key_duplicate``, exit code 4)."""
    from cinesub.state import entry_key_duplicates

    n, examples = entry_key_duplicates(con)
    if n:
        raise CinesubError(f"state DB: {n} entries (track_id, position) pair(s) stored more than once, e.g. "
                           f"{examples}; nothing was published", "entries_key_duplicate",
                           exit_code=ExitCode.BLOCKED)


DESCRIPTION = (
    "cinesub: a multilingual subtitle benchmark corpus. Films resolved by IMDb id across review sites, "
    "one subtitle track per film in each of six languages (en, ar, id, fa, ro, vi), decoded, strictly parsed, "
    "verified in layers and sanitized; national ratings in ten label spaces; subtitle-grounded "
    "language-safety evidence; task references (plot, synopsis, storyline, key message, genres, age suitability)."
)


class ReleaseBlocked(CinesubError):
    """The consistency gate failed: nothing was published; ``report`` names the gate report
    (reason ``release_blocked``, exit code 4 on the command line)."""

    reason = "release_blocked"
    exit_code = ExitCode.BLOCKED

    def __init__(self, report: Path, summary: dict[str, Any]):
        super().__init__(f"release blocked by the consistency gate: {summary.get('n_failures', '?')} failures; "
                         f"report {report}")
        self.report = report
        self.summary = summary


def _previous_ids(prev_dir: Path | None) -> dict[str, int] | None:
    if prev_dir is None or not (prev_dir / "films.parquet").is_file():
        return None
    t = pq.ParquetFile(prev_dir / "films.parquet").read(columns=["imdb_id", "id"])  # (no pyarrow.dataset import)
    return dict(zip(t.column("imdb_id").to_pylist(), t.column("id").to_pylist()))


def _split_manifest(films: pa.Table, splits: pl.DataFrame, rs: ReleaseSettings) -> dict[str, Any]:
    """The manifest's ``splits``: strata, public share, seed and counts per stratum (public /
    held back) of the public sample (warehouse/public_sample.py)."""
    from warehouse.public_sample import manifest_section, strata_cells, stratum_min_size
    from warehouse.registry import strata_attributes

    strata = tuple(rs.split_strata)
    cells = strata_cells(strata_attributes(films), strata, rs.public_share, rs.public_min_stratum)
    return manifest_section(splits, strata=strata, share=rs.public_share, seed=rs.split_seed,
                            min_size=stratum_min_size(rs.public_share, rs.public_min_stratum), cells=cells)


def _genre_mapping(con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
    """The manifest's ``genre_mapping``: the versioned raw → core genre mapping the release's
    genres went through (validators/genres.py), and what it left unmapped (docs/genres.md)."""
    from validators.genres import default_map

    info = default_map().info()
    versions = [r[0] for r in con.execute("SELECT DISTINCT mapping_version FROM film_genres ORDER BY 1").fetchall()]
    info["versions_in_state"] = versions
    info["unmapped_raw_genres"] = con.execute("SELECT count(*) FROM genre_reviews").fetchone()[0]
    return info


def _withdrawn_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    return [r[0] for r in con.execute("SELECT imdb_id FROM withdrawals ORDER BY imdb_id").fetchall()]


def publish(
    state_con: duckdb.DuckDBPyConnection,
    releases_dir: Path,
    *,
    config_hash: str,
    inputs: dict[str, Any],
    countries: tuple[str, ...],
    languages: tuple[str, ...] = LANGUAGES,
    release_settings: ReleaseSettings | None = None,
    kept_task_fields: set[str] | None = None,
    reports_dir: Path | None = None,
    thresholds: Any = None,
    stage_stats: list[dict] | None = None,
    figure_cache: Path | None = None,
    gate_cache: Path | None = None,
    entity_cache: Path | None = None,
) -> dict[str, Any]:
    """Write a new release if the data changed; return {version, path, new, kind, counts}.

    Order: seed the registries from what was published → give new films ids → build the tables
    → assign frozen splits → stop here if the data equals the latest release → decide the
    version from the diff → write everything into a temporary directory (entities streamed
    through the consistency gate) → gate verdict (a failure raises :class:`ReleaseBlocked` and
    writes the gate report; nothing is published) → statistics, the build's per-stage statistics
    (``stage_stats`` → ``stats/stages.parquet``, never part of the "data changed" decision),
    Croissant, card, manifest → atomic rename and the ``latest`` pointer (warehouse/publish.py).
    The statistics reuse the state's ``token_counts``; ``figure_cache``: the statistics page's
    figure cache (warehouse/stats_page.py, docs/rebuilds.md); ``gate_cache``: the gate's cached
    entity verdicts (warehouse/gate_cache.py); ``entity_cache``: the films' cached entity lines
    (warehouse/entity_cache.py).
    """
    from validators.release_gate import ReleaseGate, load_schema
    from warehouse.croissant import write_croissant
    from warehouse.diff import change_kind_from_tables
    from warehouse.entities import film_entity_lines
    from warehouse.gate_cache import EntityGateCache
    from warehouse.gate_report import write_gate_report
    from warehouse.hf_card import render_card
    from warehouse.plots import preload as preload_plots
    from warehouse.registry import assign_and_record_splits, assign_ids, seed_from_published
    from warehouse.stats import ENTITY_STAT_FIELDS, compute_stats, write_stats
    from warehouse.stats_page import render_stats_page

    rs = release_settings or ReleaseSettings()
    writer = ReleaseWriter(releases_dir)
    prev, prev_dir = writer.prev, writer.prev_dir
    seed_from_published(state_con, releases_dir, prev)
    assign_ids(state_con)
    audit_state(state_con)
    spool = tmpfiles.mkdtemp("spool", releases_dir)
    try:
        with memory_limit(state_con):  # the entries' sort spills rather than grows (cinesub/state.py)
            tables = build_tables(state_con, spool)
    finally:  # the mapped tables stay readable: the mapping keeps the unlinked file's pages
        shutil.rmtree(spool, ignore_errors=True)
    splits = assign_and_record_splits(state_con, tables["films"], strata=tuple(rs.split_strata),
                                      share=rs.public_share, seed=rs.split_seed,
                                      min_stratum_size=rs.public_min_stratum)
    split_manifest = _split_manifest(tables["films"], splits, rs)
    films = pl.from_arrow(tables["films"]).join(splits, on="imdb_id", how="left").sort("id")
    tables["films"] = films.to_arrow()
    public = dict(tables)
    # films carries raw JSON columns used to build entities; the Parquet table keeps flat fields.
    public["films"] = tables["films"].drop_columns(["imdb_json", "kim_json", "csm_json"])
    counts = {n: t.num_rows for n, t in public.items()}
    if kept_task_fields is None:
        kept_task_fields = {f for f, k in state_con.execute("SELECT field, kept FROM task_fields").fetchall() if k}
    withheld_task_fields = {f for f, k in state_con.execute("SELECT field, kept FROM task_fields").fetchall()
                            if not k} - set(kept_task_fields)

    with writer:
        tmp = writer.dir
        writer.write_tables(public)
        if writer.unchanged(public, same_table_set=False):
            return {"version": prev, "path": str(prev_dir), "new": False, "kind": None, "counts": counts}
        preload_plots()  # matplotlib imported in a thread beside the work below (figures are drawn at the end)
        kind = change_kind_from_tables(prev_dir, public) if prev_dir is not None else "major"
        version = writer.next_version(kind)
        # the data tables go into the database while the entities, gate and statistics are made
        writer.start_database("cinesub.duckdb", {n: f"{n}.parquet" for n in public})

        schema = load_schema()
        gate = ReleaseGate(languages=tuple(languages), countries=tuple(countries),
                           kept_task_fields=set(kept_task_fields), previous_ids=_previous_ids(prev_dir),
                           schema=schema, withheld_task_fields=withheld_task_fields)
        checker = EntityGateCache(gate, gate_cache)
        gate.begin_tables(public)  # the table checks run beside the entities' (DuckDB, no GIL)
        n_entities = 0
        for_stats = []  # the entity fields the statistics read (warehouse/stats.py entity_tables)
        track_texts: dict[str, str] = {}  # the tracks' counted texts, by sha256 (warehouse/tokens.py)
        jsonl = hashlib.sha256()  # the file's sha256 as written (the manifest's; not read back)
        with open(writer.add("films.jsonl"), "wb") as fh:
            for raw, head, texts, entity, digest in film_entity_lines(state_con, tables, countries, entity_cache):
                checker.check(entity, raw, digest)
                fh.write(raw)
                fh.write(b"\n")
                jsonl.update(raw)
                jsonl.update(b"\n")
                for_stats.append({k: head[k] for k in ENTITY_STAT_FIELDS if k in head})
                track_texts.update(texts)
                n_entities += 1
            size = fh.tell()
        gate.end_tables()
        if not gate.passed():
            out = (reports_dir or releases_dir.parent / "reports") / "release-gate" / version
            out.mkdir(parents=True, exist_ok=True)
            report = write_gate_report(gate.summary(), gate.failures(), out)
            raise ReleaseBlocked(report, gate.summary())
        writer.files["films.jsonl"].update(rows=n_entities, sha256=jsonl.hexdigest(), size=size)
        writer.add("films.schema.json").write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")

        known_tokens = dict(state_con.execute(  # the cohort stage's counts (sql/state_schema.sql token_counts)
            "SELECT text_sha256, n_tokens FROM token_counts WHERE encoding = ?", [rs.tokenizer]).fetchall())
        stats = compute_stats(public, for_stats, languages=tuple(languages), tokenizer=rs.tokenizer,
                              thresholds=thresholds, known_tokens=known_tokens, track_texts=track_texts)
        for rel_name, p in sorted(write_stats(stats, tmp).items()):
            writer.add(rel_name, rows=pq.read_metadata(p).num_rows if p.suffix == ".parquet" else None)
        page = render_stats_page(stats, tmp / "statistics.html", title="cinesub", version=version,
                                 cache_dir=figure_cache)
        writer.add(page.name)
        writer.write_database("cinesub.duckdb", {**{n: f"{n}.parquet" for n in public},
                                                 **{f"stats_{n}": f"stats/{n}.parquet" for n in sorted(stats)}})
        writer.write_stage_stats(stage_stats)
        files = writer.checksum()
        manifest = {
            "name": "cinesub",
            "version": version,
            "previous": prev,
            "change": kind if prev else "initial",
            "code_version": __version__,
            "config_hash": config_hash,
            "inputs": inputs,
            "withdrawn": _withdrawn_ids(state_con),
            "genre_mapping": _genre_mapping(state_con),
            "splits": split_manifest,
            "gate": {"passed": True, "n_entities": n_entities, "tables": gate.summary().get("tables")},
            "files": files,
        }
        cro = write_croissant(tmp, manifest, table_schemas={n: t.schema for n, t in public.items()},
                              description=DESCRIPTION, license=rs.license, url=rs.dataset_url, version=version,
                              date_published=utcnow().date().isoformat(), rai={})
        writer.add(cro.name)
        writer.checksum()
        writer.add("README.md").write_text(
            render_card(manifest, tables=["films", *sorted(n for n in public if n != "films")],
                        stats=stats, license=rs.license, version=version, pretty_name="cinesub",
                        table_schemas={n: t.schema for n, t in public.items()},
                        split_counts={k: manifest["splits"][k] for k in ("public", "heldback")},
                        url=rs.dataset_url, languages=list(languages)), encoding="utf-8")
        final = writer.publish(manifest)
        return {"version": version, "path": str(final), "new": True, "kind": manifest["change"], "counts": counts}
