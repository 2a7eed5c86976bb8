"""Stage ``curate``: task-reference curation of the cohort (SPEC A10). Plot, synopsis and
storyline are cleaned of material external to the film by versioned rules
(validators/curation.py), optionally followed by a Gemini-assisted pass (settings
``curation.gemini_enabled``; its failures leave the rule-based text standing, with a reason
code). Raw text is kept beside the clean text. The completeness rule decides which task fields
the release keeps: a field is kept only when every cohort film has it after cleaning."""

from __future__ import annotations

import json
from typing import Any

import duckdb

from cinesub.bulk import insert_rows
from cinesub.settings import resolve_secret
from flows.kernel_context import RunContext, Stage

CURATED = ("plot", "synopsis", "storyline")


class CurateStage(Stage):
    name = "curate"
    version = "2"  # 2: genres in the core genre space, curated fills (task_gaps)
    reads = ("films", "film_gates", "curated_values")
    writes = ("curation", "task_fields", "film_genres", "genre_reviews", "task_gaps")

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        return stats.get("films"), stats.get("films"), {}

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        from validators.curation import rules_version
        from validators.genres import default_map

        return {"rules": rules_version(), "genre_map": default_map().sha256}

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from extractors.gemini_curation import GeminiCurator, assisted_clean
        from validators.curation import completeness

        cfg = ctx.settings.curation
        curator = None
        if cfg.gemini_enabled:
            key = resolve_secret(cfg.gemini_api_key, cfg.gemini_api_key_block)
            if not key:
                from cinesub.errors import ConfigError

                raise ConfigError("curation.gemini_enabled needs a Gemini API key (env or Prefect Secret block)",
                                  "credentials_missing")
            curator = GeminiCurator(key, model=cfg.gemini_model, base_url=ctx.env.service_endpoints().gemini,
                                    thinking_level=cfg.gemini_thinking_level)
        films = con.execute(
            """SELECT f.imdb_id, CAST(f.imdb AS VARCHAR), CAST(f.kim AS VARCHAR), CAST(f.csm AS VARCHAR)
               FROM films f JOIN film_gates g ON g.kim_id = f.kim_id AND g.dropped_at IS NULL
               ORDER BY f.imdb_id"""
        ).fetchall()
        from flows.stages.subtitles.task_values import film_genre_rows, fill_gaps, gap_reason, store_task_values

        rows, records, gemini_errors, genre_rows, reasons = [], [], 0, [], {}
        for imdb_id, imdb_json, kim_json, csm_json in films:
            imdb, kim, csm = json.loads(imdb_json), json.loads(kim_json), json.loads(csm_json or "{}")
            raw = {"plot": imdb.get("plot"), "synopsis": imdb.get("synopsis"), "storyline": csm.get("storyline")}
            core, g_rows = film_genre_rows(imdb_id, imdb, csm)
            genre_rows += g_rows
            record: dict[str, Any] = {"id": imdb_id, "keyMessage": kim.get("key_message"),
                                      "genres": core,
                                      "ageSuitabilityRating": csm.get("age_suitability")}
            reasons.update(gap_reason(imdb_id, raw, g_rows))
            for field in CURATED:
                result, err = assisted_clean(field, raw[field], curator)
                gemini_errors += err is not None
                record[field] = result.clean
                rec = result.to_record(imdb_id)
                rows.append([imdb_id, field, rec["raw"], rec["rawSha256"], rec["clean"], rec["status"],
                             json.dumps(rec["removed"], ensure_ascii=False), rec["method"], rec["rulesVersion"], err])
            records.append(record)
        records, gaps = fill_gaps(con, records, list(cfg.task_fields), reasons)
        report = completeness(records, list(cfg.task_fields))
        con.execute("BEGIN")
        con.execute("DELETE FROM curation")
        con.execute("DELETE FROM task_fields")
        insert_rows(con, "curation", rows)
        for field, r in report.items():
            con.execute("INSERT INTO task_fields VALUES (?, ?, ?, ?, ?)",
                        [field, r["kept"], r["present"], r["total"], json.dumps(r["missing"])])
        store_task_values(con, gaps, genre_rows)
        con.execute("COMMIT")
        cleaned = sum(1 for r in rows if r[5] == "cleaned")
        return {"films": len(films), "fields_cleaned": cleaned, "gemini_errors": gemini_errors,
                "values_filled": sum(g["status"] == "filled" for g in gaps),
                "values_missing": sum(g["status"] == "missing" for g in gaps),
                "genres_unmapped": sum(r[5] == "unmapped" for r in genre_rows),
                "kept_fields": [f for f, r in report.items() if r["kept"]],
                "dropped_fields": [f for f, r in report.items() if not r["kept"]]}
