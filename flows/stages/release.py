"""Stage ``release``: publish the cohort as a versioned release (warehouse/release.py).

A failing consistency gate publishes nothing: the stage reports ``blocked`` with the gate
report's path and leaves no reusable marker, so the next build checks again.
"""

from __future__ import annotations

from typing import Any

import duckdb

from cinesub.stage import Stage, StageContext
from warehouse.release import ReleaseBlocked, publish


class ReleaseStage(Stage):
    name = "release"
    version = "3"  # 3: the task_references table
    reads = ("films", "film_gates", "funnel", "selections", "tracks", "entries", "ratings",
             "language_safety", "flags", "sanitization_log", "coverage", "curation", "task_fields",
             "withdrawals")
    writes = ("film_ids", "splits")

    def external_inputs(self, ctx: StageContext) -> dict[str, Any]:
        from warehouse.release import latest_version

        return {"latest": latest_version(ctx.settings.releases_dir)}

    def run(self, ctx: StageContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        inputs = {"sample_world": ctx.extra.get("sample_digest"), "sources": ctx.extra.get("sources_digest")}
        try:
            return publish(
                con,
                ctx.settings.releases_dir,
                config_hash=ctx.settings.config_hash(),
                inputs=inputs,
                countries=tuple(ctx.settings.countries),
                languages=tuple(ctx.settings.languages),
                release_settings=ctx.settings.release,
                reports_dir=ctx.settings.reports_dir,
                thresholds=ctx.settings.thresholds,
            )
        except ReleaseBlocked as exc:
            return {"blocked": True, "incomplete": True, "gate_report": str(exc.report),
                    "gate": exc.summary, "version": None, "path": None, "new": False, "counts": {}}
