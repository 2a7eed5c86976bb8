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

Version rule (Croissant's): patch = same data repackaged, minor = data added only, major = data
changed or removed. Unchanged data → no new release (the build says which one it reused).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from cinesub import __version__
from cinesub import tmpfiles
from cinesub.records import utcnow
from cinesub.settings import LANGUAGES, ReleaseSettings
from cinesub.state import sql_text

#: DuckDB storage format of a release's database: the one every DuckDB 1.x (and later) reads
DUCKDB_STORAGE_VERSION = "v1.0.0"

#: Tables of the release, each produced by a query in sql/release_tables.sql.
TABLES = ("films", "ratings", "tracks", "entries", "language_safety", "funnel", "coverage", "flags",
          "sanitization_log", "task_references")


def file_sha256(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def _write_parquet(table: pa.Table, path: Path) -> None:
    # Deterministic bytes for identical data: fixed compression, no timestamps in metadata.
    pq.write_table(table, path, compression="zstd", write_statistics=True, use_dictionary=True)


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


def _bump(prev: str | None, kind: str) -> str:
    if prev is None:
        return "1.0.0"
    major, minor, patch = (int(x) for x in prev.split("."))
    if kind == "major":
        return f"{major + 1}.0.0"
    if kind == "minor":
        return f"{major}.{minor + 1}.0"
    return f"{major}.{minor}.{patch + 1}"


DATABASE_NOTE = ("every table stored in the file (self-contained: opens from any directory with "
                 f"duckdb.connect(path, read_only=True)); DuckDB storage {DUCKDB_STORAGE_VERSION}")


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


def build_tables(con: duckdb.DuckDBPyConnection) -> dict[str, pa.Table]:
    con.execute(sql_text("release_tables.sql"))
    return {name: con.sql(f"SELECT * FROM release_{name}").to_arrow_table() for name in TABLES}


DESCRIPTION = (
    "cinesub: a multilingual subtitle benchmark corpus. Films resolved by IMDb id across review sites, "
    "one subtitle track per film in each of six languages (en, ar, id, fa, ro, vi), decoded, strictly parsed, "
    "verified in layers and sanitized; national ratings in ten label spaces; subtitle-grounded "
    "language-safety evidence; task references (plot, synopsis, storyline, key message, genres, age suitability)."
)


class ReleaseBlocked(Exception):
    """The consistency gate failed: nothing was published; ``report`` names the gate report."""

    def __init__(self, report: Path, summary: dict[str, Any]):
        super().__init__(f"release blocked by the consistency gate: {summary.get('n_failures', '?')} failures; "
                         f"report {report}")
        self.report = report
        self.summary = summary


def _data_files_identical(prev_dir: Path, tmp: Path, names) -> bool:
    return all(
        (prev_dir / f"{n}.parquet").exists()
        and file_sha256(prev_dir / f"{n}.parquet") == file_sha256(tmp / f"{n}.parquet")
        for n in names
    )


def _previous_ids(prev_dir: Path | None) -> dict[str, int] | None:
    if prev_dir is None or not (prev_dir / "films.parquet").is_file():
        return None
    t = pq.read_table(prev_dir / "films.parquet", columns=["imdb_id", "id"])
    return dict(zip(t.column("imdb_id").to_pylist(), t.column("id").to_pylist()))


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
) -> dict[str, Any]:
    """Write a new release if the data changed; return {version, path, new, kind, counts}.

    Order: seed the registries from what was published → give new films ids → build the tables
    → assign frozen splits → stop here if the data equals the latest release → decide the
    version from the diff → write everything into a temporary directory (entities streamed
    through the consistency gate) → gate verdict (a failure raises :class:`ReleaseBlocked` and
    writes the gate report; nothing is published) → statistics, Croissant, card, manifest →
    atomic rename and the ``latest`` pointer.
    """
    from validators.release_gate import ReleaseGate, load_schema, write_gate_report
    from warehouse.croissant import write_croissant
    from warehouse.diff import change_kind_from_tables
    from warehouse.entities import film_entities
    from warehouse.hf_card import render_card
    from warehouse.registry import assign_and_record_splits, assign_ids, seed_from_published
    from warehouse.stats import compute_stats, write_stats
    from warehouse.stats_page import render_stats_page

    rs = release_settings or ReleaseSettings()
    releases_dir.mkdir(parents=True, exist_ok=True)
    prev = latest_version(releases_dir)
    prev_dir = releases_dir / prev if prev else None
    seed_from_published(state_con, releases_dir, prev)
    assign_ids(state_con)
    tables = build_tables(state_con)
    splits = assign_and_record_splits(state_con, tables["films"], strata=tuple(rs.split_strata),
                                      fraction=rs.split_fraction, seed=rs.split_seed)
    films = pl.from_arrow(tables["films"]).join(splits, on="imdb_id", how="left").sort("id")
    tables["films"] = films.to_arrow()
    public = dict(tables)
    # films carries raw JSON columns used to build entities; the Parquet table keeps flat fields.
    public["films"] = tables["films"].drop_columns(["imdb_json", "kim_json", "csm_json"])
    if kept_task_fields is None:
        kept_task_fields = {f for f, k in state_con.execute("SELECT field, kept FROM task_fields").fetchall() if k}
    withheld_task_fields = {f for f, k in state_con.execute("SELECT field, kept FROM task_fields").fetchall()
                            if not k} - set(kept_task_fields)

    tmpfiles.sweep(releases_dir)  # what a killed build left (.tmp-release-*, .tmp-latest-*)
    tmp = tmpfiles.mkdtemp("release", releases_dir)
    try:
        files: dict[str, dict[str, Any]] = {}
        for name, table in public.items():
            path = tmp / f"{name}.parquet"
            _write_parquet(table, path)
            files[path.name] = {"rows": table.num_rows}
        kind = "major"
        if prev_dir is not None:
            if _data_files_identical(prev_dir, tmp, public):
                shutil.rmtree(tmp)
                return {"version": prev, "path": str(prev_dir), "new": False, "kind": None,
                        "counts": {n: t.num_rows for n, t in public.items()}}
            kind = change_kind_from_tables(prev_dir, public)
        version = _bump(prev, kind)

        schema = load_schema()
        gate = ReleaseGate(languages=tuple(languages), countries=tuple(countries),
                           kept_task_fields=set(kept_task_fields), previous_ids=_previous_ids(prev_dir),
                           schema=schema, withheld_task_fields=withheld_task_fields)
        entities_path = tmp / "films.jsonl"
        n_entities = 0
        with open(entities_path, "w", encoding="utf-8") as fh:
            for entity in film_entities(state_con, tables, countries):
                gate.check_entity(entity)
                fh.write(json.dumps(entity, ensure_ascii=False, sort_keys=False) + "\n")
                n_entities += 1
        gate.check_tables(public)
        if not gate.passed():
            out = (reports_dir or releases_dir.parent / "reports") / "release-gate" / version
            out.mkdir(parents=True, exist_ok=True)
            report = write_gate_report(gate.summary(), gate.failures(), out)
            raise ReleaseBlocked(report, gate.summary())
        files["films.jsonl"] = {"rows": n_entities}
        (tmp / "films.schema.json").write_text(json.dumps(schema, indent=2, ensure_ascii=False) + "\n")
        files["films.schema.json"] = {"rows": None}

        stats = compute_stats(public, entities_path, languages=tuple(languages), tokenizer=rs.tokenizer,
                              thresholds=thresholds)
        for rel_name, p in sorted(write_stats(stats, tmp).items()):
            files[rel_name] = {"rows": pq.read_metadata(p).num_rows if p.suffix == ".parquet" else None}
        page = render_stats_page(stats, tmp / "statistics.html", title="cinesub", version=version)
        files[page.name] = {"rows": None}

        write_database(tmp / "cinesub.duckdb", {**{n: tmp / f"{n}.parquet" for n in public},
                                                **{f"stats_{n}": tmp / "stats" / f"{n}.parquet" for n in sorted(stats)}})
        files["cinesub.duckdb"] = {"rows": None, "note": DATABASE_NOTE}

        for fname in list(files):
            p = tmp / fname
            files[fname].update({"sha256": file_sha256(p), "size": p.stat().st_size})
        manifest = {
            "name": "cinesub",
            "version": version,
            "previous": prev,
            "change": kind if prev else "initial",
            "code_version": __version__,
            "config_hash": config_hash,
            "inputs": inputs,
            "withdrawn": _withdrawn_ids(state_con),
            "splits": {"strata": list(rs.split_strata), "fraction": rs.split_fraction, "seed": rs.split_seed,
                       "public": int(films.filter(pl.col("split") == "public").height),
                       "heldback": int(films.filter(pl.col("split") == "heldback").height)},
            "gate": {"passed": True, "n_entities": n_entities, "tables": gate.summary().get("tables")},
            "files": files,
        }
        cro = write_croissant(tmp, manifest, table_schemas={n: t.schema for n, t in public.items()},
                              description=DESCRIPTION, license=rs.license, url=rs.dataset_url, version=version,
                              date_published=utcnow().date().isoformat(), rai={})
        files[cro.name] = {"rows": None, "sha256": file_sha256(cro), "size": cro.stat().st_size}
        card = tmp / "README.md"
        card.write_text(render_card(manifest, tables=["films", *sorted(n for n in public if n != "films")],
                                    stats=stats, license=rs.license, version=version, pretty_name="cinesub",
                                    table_schemas={n: t.schema for n, t in public.items()},
                                    split_counts={k: manifest["splits"][k] for k in ("public", "heldback")},
                                    url=rs.dataset_url, languages=list(languages)), encoding="utf-8")
        files[card.name] = {"rows": None, "sha256": file_sha256(card), "size": card.stat().st_size}
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        tmpfiles.make_public(tmp)  # readable by others as published (mkdtemp made it 0700)
        final = releases_dir / version
        os.replace(tmp, final)
        _write_pointer(releases_dir, version)
        return {"version": version, "path": str(final), "new": True, "kind": manifest["change"],
                "counts": {n: t.num_rows for n, t in public.items()}}
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_pointer(releases_dir: Path, version: str) -> None:
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
