"""Stage ``pd-publish``: the Hollywood state tables as a versioned release
(warehouse/pd_release.py). Unchanged tables publish nothing: the stage reports the latest
version with ``new: false``."""

from __future__ import annotations

from typing import Any

import duckdb

from flows.kernel_context import RunContext
from flows.kernel_exec import stage_stats_rows
from flows.stages.hollywood.common import PDStage, hollywood_config_hash, pd_releases_dir

#: every state table a release is built from (the fingerprint covers their contents)
RELEASE_SOURCES = ("pd_pages", "pd_page_filter", "pd_tuples", "pd_extract_errors", "pd_crosscheck", "pd_weekly",
                   "pd_yearly", "pd_top100", "pd_excluded", "pd_unknown_cities", "pd_aliases", "pd_catalog_films",
                   "pd_evaluation", "pd_registrations", "pd_renewals", "pd_unparsed", "pd_cce_crosscheck",
                   "pd_matches", "pd_status", "pd_film_links", "pd_film_ia", "pd_collection",
                   "pd_collection_candidates", "pd_collection_audit", "pd_source_works")


class PublishStage(PDStage):
    uses_as_of = True
    name = "pd-publish"
    version = "1"
    reads = RELEASE_SOURCES
    writes = ()

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        from warehouse.release import latest_version

        return {"latest": latest_version(pd_releases_dir(ctx.settings)), "inputs": ctx.release_inputs,
                "primary": ctx.primary_extractor}

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from warehouse.pd_release import publish

        return publish(con, pd_releases_dir(ctx.settings), config_hash=hollywood_config_hash(ctx.settings),
                       inputs=ctx.release_inputs, as_of=ctx.settings.hollywood.as_of.isoformat(),
                       as_of_frozen="as_of" in ctx.settings.hollywood.model_fields_set,
                       primary_extractor=ctx.primary_extractor,
                       stage_stats=stage_stats_rows(con, ctx.run_id, ctx.flow))
