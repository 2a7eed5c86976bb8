"""Stage ``annotate``: language-safety gold (SPEC A9) from the selected English track of every
cohort film, over the sanitized text (removed entries are not evidence), original indices kept."""

from __future__ import annotations

import json
from typing import Any

import duckdb
import polars as pl

from cinesub.stage import Stage, StageContext

CATEGORIES = ("strongProfanity", "crudeBodilyLanguage", "mildObscenity", "religiousProfanityAndExclamation")


class AnnotateStage(Stage):
    name = "annotate"
    version = "1"
    reads = ("film_gates", "selections", "entries")
    writes = ("language_safety",)

    def run(self, ctx: StageContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from validators.safety import safety_to_json, scan

        films = con.execute(
            """SELECT s.imdb_id, s.track_id FROM selections s
               JOIN film_gates g ON g.imdb_id = s.imdb_id AND g.dropped_at IS NULL
               WHERE s.language = 'en' ORDER BY 1"""
        ).fetchall()
        rows = []
        totals = {c: 0 for c in CATEGORIES}
        for imdb, track_id in films:
            entries = pl.from_arrow(con.sql(
                """SELECT "index", clean_content AS content FROM entries
                   WHERE track_id = ? AND clean_content IS NOT NULL ORDER BY "index" """,
                params=[track_id],
            ).to_arrow_table())
            result = safety_to_json(scan(entries.select(pl.col("index"), pl.col("content"))))
            for cat in CATEGORIES:
                c = result[cat]
                totals[cat] += c["occurrenceCount"]
                rows.append([imdb, track_id, cat, c["occurrenceCount"], c["evidenceLineCount"],
                             json.dumps(c["evidenceSubtitleIndices"])])
        con.execute("BEGIN")
        con.execute("DELETE FROM language_safety")
        if rows:
            con.executemany("INSERT INTO language_safety VALUES (?, ?, ?, ?, ?, ?)", rows)
        con.execute("COMMIT")
        return {"films": len(films), "occurrences": totals}
