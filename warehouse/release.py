"""Versioned, immutable releases: ``CINESUB_HOME/releases/<semver>/``.

A release holds Parquet tables, a DuckDB database of views over them, the film-entity JSON
(SPEC A11, one object per line, streamed), and ``manifest.json`` (every file with sha256, size
and row count; code version; config hash; input snapshot ids). It is written to a temporary
directory and renamed into place atomically; ``releases/latest`` names the newest version.

Version rule (Croissant's): patch = same data repackaged, minor = data added only, major = data
changed or removed. Unchanged data → no new release (the build says which one it reused).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from cinesub import __version__
from cinesub.settings import LANGUAGE_NAMES
from cinesub.state import sql_text

#: Tables of the release, each produced by a query in sql/release_tables.sql.
TABLES = ("films", "ratings", "tracks", "entries", "language_safety", "funnel", "coverage", "flags",
          "sanitization_log")


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


def _change_kind(prev_dir: Path, new_tables: dict[str, pa.Table]) -> str:
    """major if any previous film or track row is gone or changed, minor if rows were only
    added, patch if the data is identical."""
    kind = "patch"
    keys = {"films": ["imdb_id"], "tracks": ["imdb_id", "language"], "entries": ["track_id", "index"]}
    con = duckdb.connect()
    try:
        for name, key in keys.items():
            old_path = prev_dir / f"{name}.parquet"
            if not old_path.exists():
                return "major"
            con.register("new_t", new_tables[name])
            old = f"read_parquet('{old_path}')"
            removed_or_changed = con.execute(
                f"SELECT count(*) FROM (SELECT * FROM {old} EXCEPT SELECT * FROM new_t)"
            ).fetchall()[0][0]
            added = con.execute(
                f"SELECT count(*) FROM (SELECT * FROM new_t EXCEPT SELECT * FROM {old})"
            ).fetchall()[0][0]
            con.unregister("new_t")
            if removed_or_changed:
                return "major"
            if added:
                kind = "minor"
    finally:
        con.close()
    return kind


def build_tables(con: duckdb.DuckDBPyConnection) -> dict[str, pa.Table]:
    con.execute(sql_text("release_tables.sql"))
    return {name: con.sql(f"SELECT * FROM release_{name}").to_arrow_table() for name in TABLES}


def film_entities(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table], countries: tuple[str, ...]):
    """Yield one SPEC A11 film object at a time (entries streamed per film)."""
    films = tables["films"].to_pylist()
    ratings: dict[str, list[dict]] = {}
    for r in tables["ratings"].to_pylist():
        ratings.setdefault(r["imdb_id"], []).append(r)
    safety: dict[str, dict] = {}
    for r in tables["language_safety"].to_pylist():
        safety.setdefault(r["imdb_id"], {})[r["category"]] = {
            "occurrenceCount": r["occurrence_count"],
            "evidenceLineCount": r["evidence_line_count"],
            "evidenceSubtitleIndices": json.loads(r["evidence_indices"]),
        }
    tracks: dict[str, list[dict]] = {}
    for t in tables["tracks"].to_pylist():
        tracks.setdefault(t["imdb_id"], []).append(t)
    con.register("rel_entries", tables["entries"])
    order = {c: i for i, c in enumerate(countries)}
    # SPEC A10: cleaned task references, and only the task fields complete across the cohort
    curated = {(i, f): c for i, f, c in con.execute("SELECT imdb_id, field, clean FROM curation").fetchall()}
    kept = {f: k for f, k in con.execute("SELECT field, kept FROM task_fields").fetchall()}

    def task(field: str, value: Any) -> Any:
        return value if kept.get(field, True) else None
    for film in films:
        imdb = json.loads(film["imdb_json"])
        kim = json.loads(film["kim_json"])
        csm = json.loads(film["csm_json"]) if film["csm_json"] else {}
        cast = imdb.get("cast") or []
        subtitles = []
        for t in sorted(tracks.get(film["imdb_id"], []), key=lambda t: t["language"]):
            rows = con.execute(
                """SELECT "index", timeframe, content FROM rel_entries
                   WHERE track_id = ? ORDER BY start_ms, "index" """,
                [t["track_id"]],
            ).fetchall()
            subtitles.append({
                "language": f"{LANGUAGE_NAMES.get(t['language'], t['language'])} ({t['language']})",
                "downloadCount": t["download_count"],
                "entries": [{"index": i, "timeframe": tf, "content": c} for i, tf, c in rows],
            })
        yield {
            "id": film["id"],
            "title": film["title"],
            "releaseYear": film["year"],
            "duration": film["runtime_min"],
            "imdbRating": imdb.get("rating"),
            "countriesOfOrigin": imdb.get("countries") or [],
            "originalLanguages": imdb.get("languages") or [],
            "directors": imdb.get("directors") or [],
            "writers": imdb.get("writers") or [],
            "topCast": [{"actor": c["actor"], "character": (c.get("characters") or [None])[0]} for c in cast[:10]],
            "fullCast": [{"actor": c["actor"], "characters": c.get("characters") or [],
                          "additionalTexts": c.get("additional_texts") or []} for c in cast],
            "plot": task("plot", curated.get((film["imdb_id"], "plot"), imdb.get("plot"))),
            "synopsis": task("synopsis", curated.get((film["imdb_id"], "synopsis"), imdb.get("synopsis"))),
            "storyline": task("storyline", curated.get((film["imdb_id"], "storyline"), csm.get("storyline"))),
            "keyMessage": task("keyMessage", kim.get("key_message")),
            "genres": task("genres", imdb.get("genres") or []),
            "topics": imdb.get("topics") or [],
            "ageSuitabilityRating": task("ageSuitabilityRating", csm.get("age_suitability")),
            "motionPictureRatings": [
                {"country": r["country"], "label": r["label"], "minimumAge": r["minimum_age"], "ordinal": r["ordinal"]}
                for r in sorted(ratings.get(film["imdb_id"], []), key=lambda r: order.get(r["country"], 99))
            ],
            "languageContentReference": kim.get("language_content") or {"rating": None, "summary": None, "source": None},
            "languageContentAssessment": {
                "inputLanguage": "English (en)",
                "categories": safety.get(film["imdb_id"], {}),
            },
            "sources": {
                "imdbLink": f"https://www.imdb.com/title/{film['imdb_id']}/",
                "commonSenseLink": film["csm_url"],
                "kidsInMindLink": film["kim_url"],
            },
            "subtitles": subtitles,
        }
    con.unregister("rel_entries")


def publish(
    state_con: duckdb.DuckDBPyConnection,
    releases_dir: Path,
    *,
    config_hash: str,
    inputs: dict[str, Any],
    countries: tuple[str, ...],
) -> dict[str, Any]:
    """Write a new release if the data changed; return {version, path, new, kind, counts}."""
    releases_dir.mkdir(parents=True, exist_ok=True)
    tables = build_tables(state_con)
    public = {n: t for n, t in tables.items()}
    # films carries raw JSON columns used to build entities; the Parquet table keeps flat fields.
    films_parquet = public["films"].drop_columns(["imdb_json", "kim_json", "csm_json"])
    public["films"] = films_parquet

    prev = latest_version(releases_dir)
    tmp = Path(tempfile.mkdtemp(prefix=".tmp-release-", dir=releases_dir))
    try:
        files: dict[str, dict[str, Any]] = {}
        for name, table in public.items():
            path = tmp / f"{name}.parquet"
            _write_parquet(table, path)
            files[path.name] = {"rows": table.num_rows}
        kind = "major"
        if prev is not None:
            prev_dir = releases_dir / prev
            same = all(
                (prev_dir / f"{n}.parquet").exists()
                and file_sha256(prev_dir / f"{n}.parquet") == file_sha256(tmp / f"{n}.parquet")
                for n in public
            )
            if same:
                shutil.rmtree(tmp)
                return {"version": prev, "path": str(prev_dir), "new": False, "kind": None,
                        "counts": {n: t.num_rows for n, t in public.items()}}
            kind = _change_kind(prev_dir, public)
        version = _bump(prev, kind)

        entities_path = tmp / "films.jsonl"
        n_entities = 0
        with open(entities_path, "w", encoding="utf-8") as fh:
            for entity in film_entities(state_con, tables, countries):
                fh.write(json.dumps(entity, ensure_ascii=False, sort_keys=False) + "\n")
                n_entities += 1
        files["films.jsonl"] = {"rows": n_entities}

        db_path = tmp / "cinesub.duckdb"
        with duckdb.connect(str(db_path)) as dbc:
            # Views keep relative paths so the release can move; binding needs the directory.
            dbc.execute(f"SET file_search_path = '{tmp}'")
            for name in public:
                dbc.execute(f"CREATE VIEW {name} AS SELECT * FROM read_parquet('{name}.parquet')")
        files["cinesub.duckdb"] = {"rows": None, "note": "views over the Parquet files; open with the release directory as working directory or SET file_search_path"}

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
            "files": files,
        }
        (tmp / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        final = releases_dir / version
        os.replace(tmp, final)
        _write_pointer(releases_dir, version)
        return {"version": version, "path": str(final), "new": True, "kind": manifest["change"],
                "counts": {n: t.num_rows for n, t in public.items()}}
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _write_pointer(releases_dir: Path, version: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=releases_dir, prefix=".tmp-latest-")
    with os.fdopen(fd, "w") as fh:
        fh.write(version + "\n")
    os.replace(tmp, releases_dir / "LATEST")
    link = releases_dir / "latest"
    tmp_link = releases_dir / ".latest-link"
    if tmp_link.is_symlink() or tmp_link.exists():
        tmp_link.unlink()
    os.symlink(version, tmp_link)
    os.replace(tmp_link, link)
