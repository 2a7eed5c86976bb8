"""Stage ``annotate``: language-safety gold (SPEC A9) from the selected English track of every
cohort film, over the sanitized text (removed entries are not evidence), original indices kept.

Besides ``language_safety`` it writes two diagnostic state tables (not part of the release):
``safety_discrepancies`` (per film and category, the subtitle count against the Kids-in-Mind
prose count, :func:`validators.safety_reference.discrepancies`, "large" above
``settings.safety.discrepancy_large``) and ``safety_matches`` (every matched span and its rule)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import duckdb
import polars as pl

from cinesub.bulk import insert_rows
from flows.kernel_context import RunContext, Stage

CATEGORIES = ("strongProfanity", "crudeBodilyLanguage", "mildObscenity", "religiousProfanityAndExclamation")
MATCH_SCHEMA = {"imdb_id": pl.Utf8, "track_id": pl.Utf8, "index": pl.Int64, "category": pl.Utf8,
                "span": pl.Utf8, "rule": pl.Utf8, "start_pos": pl.Int64, "end_pos": pl.Int64}


class ScanCache:
    """The safety scan of a track, cached under ``CINESUB_HOME/cache/safety/`` by its track id (the
    sha256 of its raw bytes, language, runtime and processing version: its entries) and the
    sha256 of the scanner (validators/safety.py, validators/_text.py, the lexicon): a rebuild
    scans only new tracks. An unreadable entry is scanned again."""

    def __init__(self, root: Path) -> None:
        from cinesub.digests import files_digest
        from validators import safety

        self.root = root
        here = Path(safety.__file__)
        self.scanner = files_digest([here, here.with_name("_text.py"), Path(safety.LEXICON_PATH)])

    def _path(self, track_id: str) -> Path:
        return self.root / f"{hashlib.sha256(f'{self.scanner}|{track_id}'.encode()).hexdigest()}.json"

    def get(self, track_id: str) -> tuple[dict[str, Any], list[list[Any]]] | None:
        try:
            data = json.loads(self._path(track_id).read_text(encoding="utf-8"))
            return data["result"], data["matches"]
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def put(self, track_id: str, result: dict[str, Any], matches: list[list[Any]]
            ) -> tuple[dict[str, Any], list[list[Any]]]:
        from cinesub.tmpfiles import write_text_atomic

        text = json.dumps({"result": result, "matches": matches}, ensure_ascii=False)
        write_text_atomic(self._path(track_id), text)
        data = json.loads(text)  # a fresh scan and a cached one: the same types
        return data["result"], data["matches"]


class AnnotateStage(Stage):
    name = "annotate"
    version = "2"
    reads = ("film_gates", "selections", "entries", "films")
    writes = ("language_safety", "safety_discrepancies", "safety_matches")

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        return stats.get("films"), stats.get("films"), {}

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from extractors.sources.kim import parse_kim_language_counts
        from validators.safety import safety_to_json, scan
        from validators.safety_reference import discrepancies

        large = ctx.settings.safety.discrepancy_large
        films = con.execute(
            """SELECT s.imdb_id, s.track_id, f.kim->>'$.language_content.summary'
               FROM selections s
               JOIN film_gates g ON g.imdb_id = s.imdb_id AND g.dropped_at IS NULL
               LEFT JOIN films f ON f.kim_id = g.kim_id
               WHERE s.language = 'en' ORDER BY 1"""
        ).fetchall()
        rows = []
        disc_rows = []
        match_rows = []
        n_large = 0
        totals = {c: 0 for c in CATEGORIES}
        cache = ScanCache(ctx.settings.home / "cache" / "safety")
        for imdb, track_id, kim_summary in films:
            hit = cache.get(track_id)
            if hit is None:
                entries = pl.from_arrow(con.sql(
                    """SELECT "index", clean_content AS content FROM entries
                       WHERE track_id = ? AND clean_content IS NOT NULL ORDER BY position """,
                    params=[track_id],
                ).to_arrow_table())
                scanned = scan(entries.select(pl.col("index"), pl.col("content")))
                hit = cache.put(track_id, safety_to_json(scanned),
                                [[m.index, m.category, m.span, m.rule, m.start, m.end] for m in scanned.matches])
            result, matches = hit
            match_rows.extend([imdb, track_id, *m] for m in matches)
            kim_counts = parse_kim_language_counts(kim_summary) if kim_summary else None
            for d in discrepancies(result, kim_counts, large):
                n_large += d["large"]
                disc_rows.append([imdb, track_id, d["category"], d["subtitle_count"], d["kim_count"],
                                  d["difference"], d["large"], json.dumps(d["sample_evidence_indices"])])
            for cat in CATEGORIES:
                c = result[cat]
                totals[cat] += c["occurrenceCount"]
                rows.append([imdb, track_id, cat, c["occurrenceCount"], c["evidenceLineCount"],
                             json.dumps(c["evidenceSubtitleIndices"])])
        con.execute("BEGIN")
        con.execute("DELETE FROM language_safety")
        insert_rows(con, "language_safety", rows)
        con.execute("DELETE FROM safety_discrepancies")
        insert_rows(con, "safety_discrepancies", disc_rows)
        con.execute("DELETE FROM safety_matches")
        if match_rows:
            con.register("_safety_matches_new",
                         pl.DataFrame(match_rows, orient="row", schema=MATCH_SCHEMA).to_arrow())
            con.execute("INSERT INTO safety_matches SELECT * FROM _safety_matches_new")
            con.unregister("_safety_matches_new")
        con.execute("COMMIT")
        return {"films": len(films), "occurrences": totals, "large_discrepancies": n_large}
