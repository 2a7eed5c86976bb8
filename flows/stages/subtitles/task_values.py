"""The curate stage's genre and curated-value tables (docs/genres.md, docs/review.md).

* :func:`film_genre_rows` maps one film's raw genres into the core genre space
  (validators/genres.py): the core labels and one ``film_genres`` row per raw genre.
* :func:`fill_gaps` fills missing task values from the curator's ``curated_values`` (the latest
  per film and field) with validators/task_fills.py.
* :func:`store_task_values` rewrites ``film_genres``, ``genre_reviews`` (the queue of unmapped raw
  genres) and ``task_gaps`` (what was filled, what stays missing and why), inside the caller's
  transaction.
"""

from __future__ import annotations

import json
from typing import Any

import duckdb

from cinesub.bulk import insert_rows
from validators.genres import REASON_NO_CORE, STATUS_UNMAPPED, default_map, normalize_genres
from validators.task_fills import REASON_EMPTIED, REASON_SOURCE_MISSING, apply_fills

#: the raw genre lists each source record carries (KIM pages give none: docs/genres.md)
_GENRE_KEYS = {"imdb": "genres", "csm": "genres"}


def film_genre_rows(imdb_id: str, imdb: dict[str, Any], csm: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """(core genres, film_genres rows) of one film from its IMDb and CSM records."""
    raw = {"imdb": imdb.get(_GENRE_KEYS["imdb"]) or []}
    if csm.get(_GENRE_KEYS["csm"]):
        raw["csm"] = csm[_GENRE_KEYS["csm"]]
    result = normalize_genres(raw)
    rows = [[imdb_id, r.source, r.position, r.raw, list(r.core), r.status, result.version] for r in result.raw]
    return result.core, rows


def gap_reason(imdb_id: str, raw_narrative: dict[str, Any], genre_rows: list[list[Any]]) -> dict[tuple[str, str], str]:
    """Why a field would be missing for this film, where it is not simply absent at the source:
    narrative text that cleaning emptied, raw genres none of which is a core genre."""
    out: dict[tuple[str, str], str] = {}
    for field, text in raw_narrative.items():
        if isinstance(text, str) and text.strip():
            out[(imdb_id, field)] = REASON_EMPTIED
    if genre_rows:
        out[(imdb_id, "genres")] = REASON_NO_CORE
    return out


def curated_fills(con: duckdb.DuckDBPyConnection) -> dict[tuple[str, str], dict[str, Any]]:
    """The curated value in force per (imdb_id, field): the latest ``curated_values`` row."""
    rows = con.execute(
        """SELECT imdb_id, field, fill_id, CAST(value AS VARCHAR) FROM curated_values
           QUALIFY row_number() OVER (PARTITION BY imdb_id, field ORDER BY filled_at DESC, fill_id DESC) = 1"""
    ).fetchall()
    return {(i, f): {"fill_id": fid, "value": json.loads(v)} for i, f, fid, v in rows}


def fill_gaps(con: duckdb.DuckDBPyConnection, records: list[dict[str, Any]], fields: list[str],
              reasons: dict[tuple[str, str], str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    return apply_fills(records, curated_fills(con), fields, reasons)


def store_task_values(con: duckdb.DuckDBPyConnection, gaps: list[dict[str, Any]],
                      genre_rows: list[list[Any]]) -> None:
    con.execute("DELETE FROM film_genres")
    con.execute("DELETE FROM genre_reviews")
    con.execute("DELETE FROM task_gaps")
    insert_rows(con, "film_genres", genre_rows)
    queue: dict[tuple[str, str], list[str]] = {}
    for imdb_id, source, _pos, raw, _core, status, _v in genre_rows:
        if status == STATUS_UNMAPPED:
            queue.setdefault((source, raw), []).append(imdb_id)
    version = default_map().version
    insert_rows(con, "genre_reviews",
                [[s, raw, len(set(ids)), min(ids), version] for (s, raw), ids in sorted(queue.items())])
    insert_rows(con, "task_gaps",
                [[g["imdb_id"], g["field"], g["status"], g["reason"], g["fill_id"],
                  None if g["value"] is None else json.dumps(g["value"], ensure_ascii=False)] for g in gaps])


__all__ = ["REASON_SOURCE_MISSING", "curated_fills", "film_genre_rows", "fill_gaps", "gap_reason",
           "store_task_values"]
