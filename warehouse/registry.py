"""Registries that outlive a release: stable film ids, frozen splits, withdrawals (SPEC A11, C).

They live in the state DB (tables ``film_ids``, ``splits``, ``withdrawals``) and are re-seeded
from what was published — the latest release's ``films.parquet`` and the append-only
``releases/withdrawals.jsonl`` — so a lost or rebuilt state DB can neither renumber a film, move
it to another split, nor bring back a withdrawn one.

- ids: sequential in order of first release (new films of one release in imdb-id order), never
  reused; a withdrawn film's id stays taken.
- splits: assigned once by :func:`warehouse.public_sample.select_public` (stratified, seeded); a film
  keeps its split forever, withdrawn films included.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

WITHDRAWALS_LOG = "withdrawals.jsonl"


def seed_from_published(con: duckdb.DuckDBPyConnection, releases_dir: Path, latest: str | None) -> dict[str, int]:
    """Copy ids/splits of the latest release and the withdrawal log into the state registries
    (rows already there win; nothing is overwritten). Returns how many rows each gained."""
    gained = {"film_ids": 0, "splits": 0, "withdrawals": 0}
    if latest is not None:
        films = releases_dir / latest / "films.parquet"
        if films.is_file():
            cols = set(pq.read_schema(films).names)
            before = con.execute("SELECT count(*) FROM film_ids").fetchall()[0][0]
            con.execute(
                f"""INSERT INTO film_ids SELECT imdb_id, id, '{latest}' FROM read_parquet(?)
                    WHERE imdb_id NOT IN (SELECT imdb_id FROM film_ids)
                      AND id NOT IN (SELECT id FROM film_ids)""", [str(films)])
            gained["film_ids"] = con.execute("SELECT count(*) FROM film_ids").fetchall()[0][0] - before
            if {"split", "stratum"} <= cols:
                before = con.execute("SELECT count(*) FROM splits").fetchall()[0][0]
                con.execute(
                    """INSERT INTO splits SELECT imdb_id, stratum, split, assigned_seed FROM read_parquet(?)
                       WHERE imdb_id NOT IN (SELECT imdb_id FROM splits)""", [str(films)])
                gained["splits"] = con.execute("SELECT count(*) FROM splits").fetchall()[0][0] - before
    for rec in read_withdrawal_log(releases_dir):
        n = con.execute("SELECT count(*) FROM withdrawals WHERE imdb_id = ?", [rec["imdb_id"]]).fetchall()[0][0]
        if not n:
            con.execute("INSERT INTO withdrawals VALUES (?, ?, ?, ?, ?)",
                        [rec["imdb_id"], rec["reason"], rec.get("requested_by"),
                         datetime.fromisoformat(rec["requested_at"]), rec.get("release_version")])
            gained["withdrawals"] += 1
    return gained


def assign_ids(con: duckdb.DuckDBPyConnection) -> int:
    """Give every cohort film without an id the next ids, in imdb-id order. Returns how many."""
    rows = con.execute(
        """SELECT f.imdb_id FROM films f
           JOIN film_gates g ON g.kim_id = f.kim_id AND g.dropped_at IS NULL
           WHERE f.imdb_id IS NOT NULL
             AND f.imdb_id NOT IN (SELECT imdb_id FROM film_ids)
             AND f.imdb_id NOT IN (SELECT imdb_id FROM withdrawals)
           ORDER BY f.imdb_id""").fetchall()
    start = con.execute("SELECT coalesce(max(id), 0) FROM film_ids").fetchall()[0][0]
    for k, (imdb_id,) in enumerate(rows, start=1):
        con.execute("INSERT INTO film_ids VALUES (?, ?, NULL)", [imdb_id, start + k])
    return len(rows)


def strata_attributes(films: pa.Table) -> pl.DataFrame:
    """The attributes a stratum can be built from, one row per film of the release table."""
    df = pl.from_arrow(films)
    return df.select(
        "imdb_id",
        (((pl.col("year") // 10) * 10).cast(pl.Utf8) + "s").alias("decade"),
        pl.col("age_suitability"),
        pl.col("primary_genre"),
        pl.col("country"),
        pl.col("year"),
        pl.col("title"),
    )


def assign_and_record_splits(con: duckdb.DuckDBPyConnection, films: pa.Table, *, strata: tuple[str, ...],
                             share: float, seed: int, min_stratum_size: int | None = None) -> pl.DataFrame:
    """Assign splits to films that have none (frozen otherwise) and store them; return the
    registry rows of the given films (imdb_id, stratum, split, assigned_seed), ``stratum`` being
    the film's public-sample stratum now (warehouse/public_sample.py)."""
    from warehouse.public_sample import select_public

    previous = pl.from_arrow(con.sql("SELECT imdb_id, stratum, split, assigned_seed FROM splits").to_arrow_table())
    out = select_public(strata_attributes(films), previous if previous.height else None,
                        strata=tuple(strata), share=share, seed=seed, min_stratum_size=min_stratum_size)
    new = out.filter(pl.col("new"))
    for r in new.iter_rows(named=True):
        con.execute("INSERT INTO splits VALUES (?, ?, ?, ?)",
                    [r["imdb_id"], r["stratum"], r["split"], int(r["assigned_seed"])])
    return out.select("imdb_id", "stratum", "split", "assigned_seed")


def read_withdrawal_log(releases_dir: Path) -> list[dict[str, Any]]:
    path = releases_dir / WITHDRAWALS_LOG
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def append_withdrawal_log(releases_dir: Path, record: dict[str, Any]) -> None:
    """Append one JSON line (flushed and fsynced: the log is the durable record)."""
    releases_dir.mkdir(parents=True, exist_ok=True)
    with open(releases_dir / WITHDRAWALS_LOG, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(record, ensure_ascii=False, sort_keys=True) + "\n")
        fh.flush()
        os.fsync(fh.fileno())
