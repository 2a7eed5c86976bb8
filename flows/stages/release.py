"""Stage ``release``: publish the cohort as a versioned release (warehouse/release.py)."""

from __future__ import annotations

from typing import Any

import duckdb

from cinesub.stage import Stage, StageContext
from warehouse.release import publish


class ReleaseStage(Stage):
    name = "release"
    version = "1"
    reads = ("films", "film_gates", "funnel", "selections", "tracks", "entries", "ratings",
             "language_safety", "flags", "sanitization_log", "coverage", "curation", "task_fields")
    writes = ()

    def external_inputs(self, ctx: StageContext) -> dict[str, Any]:
        from warehouse.release import latest_version

        return {"latest": latest_version(ctx.settings.releases_dir)}

    def run(self, ctx: StageContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        inputs = {"sample_world": ctx.extra.get("sample_digest"), "sources": ctx.extra.get("sources_digest")}
        return publish(
            con,
            ctx.settings.releases_dir,
            config_hash=ctx.settings.config_hash(),
            inputs=inputs,
            countries=tuple(ctx.settings.countries),
        )
