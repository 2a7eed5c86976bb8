"""The film entity of SPEC A11: one JSON object per film, streamed (entries read per track).

Field names are exactly those of SPEC A11 (schema: warehouse/film_entity.schema.json). Task
references are the curated text (SPEC A10), and task fields dropped cohort-wide are null.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa

from cinesub.settings import LANGUAGE_NAMES


def film_entities(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table],
                  countries: tuple[str, ...]) -> Iterator[dict[str, Any]]:
    """Yield one SPEC A11 film object at a time (entries read per track, :func:`_track_entries`)."""
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
    entries_of = _track_entries(tables["entries"])
    order = {c: i for i, c in enumerate(countries)}
    # SPEC A10: cleaned task references, and only the task fields complete across the cohort
    curated = {(i, f): c for i, f, c in con.execute("SELECT imdb_id, field, clean FROM curation").fetchall()}
    kept = {f: k for f, k in con.execute("SELECT field, kept FROM task_fields").fetchall()}
    # genres in the core genre space (film_genres; the raw genres stay beside them in the state DB
    # and in task_references.raw_genres), and curator-supplied values where the sources had none
    core = {i: g for i, g in con.execute(
        """SELECT imdb_id, list_sort(list_distinct(flatten(list(core_genres)))) FROM film_genres
           GROUP BY imdb_id""").fetchall()}
    filled = {(i, f): json.loads(v) for i, f, v in con.execute(
        "SELECT imdb_id, field, CAST(value AS VARCHAR) FROM task_gaps WHERE status = 'filled'").fetchall()}

    def task(field: str, value: Any, imdb_id: str | None = None) -> Any:
        if not kept.get(field, True):
            return None
        if imdb_id is not None and (imdb_id, field) in filled:
            return filled[(imdb_id, field)]
        return value
    for film in films:
        imdb = json.loads(film["imdb_json"])
        kim = json.loads(film["kim_json"])
        csm = json.loads(film["csm_json"]) if film["csm_json"] else {}
        cast = imdb.get("cast") or []
        subtitles = []
        for t in sorted(tracks.get(film["imdb_id"], []), key=lambda t: t["language"]):
            rows = entries_of(t["track_id"])
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
            "plot": task("plot", curated.get((film["imdb_id"], "plot"), imdb.get("plot")), film["imdb_id"]),
            "synopsis": task("synopsis", curated.get((film["imdb_id"], "synopsis"), imdb.get("synopsis")),
                             film["imdb_id"]),
            "storyline": task("storyline", curated.get((film["imdb_id"], "storyline"), csm.get("storyline")),
                              film["imdb_id"]),
            "keyMessage": task("keyMessage", kim.get("key_message"), film["imdb_id"]),
            "genres": task("genres", core[film["imdb_id"]] if film["imdb_id"] in core else imdb.get("genres") or [],
                           film["imdb_id"]),
            "topics": imdb.get("topics") or [],
            "ageSuitabilityRating": task("ageSuitabilityRating", csm.get("age_suitability"), film["imdb_id"]),
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


def _track_entries(entries: pa.Table) -> Callable[[str], list[tuple[int, str, str]]]:
    """``track_id -> [(index, timeframe, content)]`` in release order (start_ms, then index; ties
    in the table's order, as warehouse/tokens.py formats the counted text), reading one track's
    rows at a time. The release's entries table holds each track's rows together (sorted by film,
    language, start_ms, position): a track is a zero-copy slice, sorted alone; a table where a
    track's rows are not contiguous is filtered per track instead (same rows, same order)."""
    cols = entries.select(["track_id", "index", "timeframe", "content", "start_ms"])
    runs = pl.Series("track_id", cols.column("track_id").combine_chunks()).rle().struct.unnest()
    ids = runs["value"].to_list()
    spans: dict[str, tuple[int, int]] | None = {}
    offset = 0
    for tid, n in zip(ids, runs["len"].to_list()):
        if tid in spans:
            spans = None
            break
        spans[tid] = (offset, n)
        offset += n
    frame = None if spans is not None else pl.from_arrow(cols)

    def rows(track_id: str) -> list[tuple[int, str, str]]:
        if spans is not None:
            start, n = spans.get(track_id, (0, 0))
            part = pl.from_arrow(cols.slice(start, n))
        else:
            part = frame.filter(pl.col("track_id") == track_id)
        assert isinstance(part, pl.DataFrame)
        part = part.sort(["start_ms", "index"], maintain_order=True)
        return list(zip(part["index"].to_list(), part["timeframe"].to_list(), part["content"].to_list()))
    return rows
