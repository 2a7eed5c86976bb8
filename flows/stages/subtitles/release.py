"""Stage ``release``: publish the cohort as a versioned release (warehouse/release.py).

A failing consistency gate publishes nothing: the stage reports ``blocked`` with the gate
report's path and leaves no reusable marker, so the next build checks again.
"""

from __future__ import annotations

from typing import Any

import duckdb

from flows.kernel_context import RunContext, Stage
from flows.kernel_exec import stage_stats_rows
from flows.stages.subtitles.common import chosen_countries, chosen_languages
from warehouse.release import ReleaseBlocked, publish


class ReleaseStage(Stage):
    name = "release"
    version = "4"  # 3: the task_references table; 4: the selection tables
    reads = ("films", "film_gates", "funnel", "selections", "tracks", "entries", "ratings",
             "language_safety", "flags", "sanitization_log", "coverage", "curation", "task_fields",
             "withdrawals", "selected_attributes", "selection_per_k", "film_genres", "genre_reviews", "task_gaps",
             "token_counts")  # token_counts: the cohort stage's o200k counts, reused by the statistics
    writes = ("film_ids", "splits")
    retries = 1

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        counts = stats.get("counts") or {}
        return counts.get("films"), counts.get("films"), {"blocked": 1} if stats.get("blocked") else {}

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        from warehouse.release import latest_version

        return {"latest": latest_version(ctx.settings.releases_dir)}

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        inputs = ctx.env.release_inputs()
        try:
            return publish(
                con,
                ctx.settings.releases_dir,
                config_hash=ctx.settings.config_hash(),
                inputs=inputs,
                countries=chosen_countries(con, ctx),
                languages=chosen_languages(con, ctx),
                release_settings=ctx.settings.release,
                reports_dir=ctx.settings.reports_dir,
                thresholds=ctx.settings.thresholds,
                stage_stats=stage_stats_rows(con, ctx.run_id, ctx.flow),
                figure_cache=ctx.settings.home / "cache" / "figures",
                gate_cache=ctx.settings.home / "cache" / "release-gate",
                entity_cache=ctx.settings.home / "cache" / "release-entities",
            )
        except ReleaseBlocked as exc:
            return {"blocked": True, "incomplete": True, "gate_report": str(exc.report),
                    "gate": exc.summary, "version": None, "path": None, "new": False, "counts": {}}
