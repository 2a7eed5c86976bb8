"""The film entity of SPEC A11: one JSON object per film, streamed (entries queried per film).

Field names are exactly those of SPEC A11 (schema: warehouse/film_entity.schema.json). Task
references are the curated text (SPEC A10), and task fields dropped cohort-wide are null.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import duckdb
import pyarrow as pa

from cinesub.settings import LANGUAGE_NAMES


def film_entities(con: duckdb.DuckDBPyConnection, tables: dict[str, pa.Table],
                  countries: tuple[str, ...]) -> Iterator[dict[str, Any]]:
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
    con.unregister("rel_entries")
