"""The ``build-hollywood`` Prefect flow: the public-domain Hollywood collection (SPEC B1, B2).

    variety-discover → variety-filter → variety-extract → variety-aliases → variety-aggregate
    → variety-evaluate → cce-discover → cce-parse → copyright-status → collection → pd-publish
    → report

The flow is declared here (:data:`FLOW`) and run by the kernel (flows/kernel.py) against the
flow's own state DB, ``CINESUB_HOME/hollywood/state.duckdb`` (DuckDB admits one writer; the
subtitle flow keeps ``CINESUB_HOME/state.duckdb``). Downloads go to the shared raw store
``CINESUB_HOME/raw``. A stage whose inputs (tables it reads, Hollywood settings, outside inputs)
are unchanged is reused, so a second sample build reuses every stage and publishes nothing new.

Sample vs live is decided once, by the environment (flows/env/): a sample build generates the
Variety and CCE worlds under ``CINESUB_HOME/sample-world/pd-seed<N>/{variety,cce}`` and serves them
on loopback (the IA and Gemini fixtures), so the real clients run. Tasks get ids, never
credentials (Prefect records task parameters).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from prefect import flow

from cinesub.settings import load_settings
from flows.env import Environment, environment
from flows.kernel import FlowSpec, run_flow
from flows.kernel_context import GeminiPlan, RunContext, table_digest
from flows.stages.hollywood.boxoffice import VarietyAggregateStage, VarietyAliasesStage, VarietyEvaluateStage
from flows.stages.hollywood.cce import CCEDiscoverStage, CCEParseStage, CopyrightStatusStage
from flows.stages.hollywood.collection import CollectionStage
from flows.stages.hollywood.common import PD_SCHEMA, hollywood_config_hash, pd_connect, pd_state_db
from flows.stages.hollywood.publish import PublishStage
from flows.stages.hollywood.variety import VarietyDiscoverStage, VarietyExtractStage, VarietyFilterStage

#: the flow's stages, in order
STEPS = (VarietyDiscoverStage, VarietyFilterStage, VarietyExtractStage, VarietyAliasesStage, VarietyAggregateStage,
         VarietyEvaluateStage, CCEDiscoverStage, CCEParseStage, CopyrightStatusStage, CollectionStage, PublishStage)
STAGE_ORDER = tuple(cls.name for cls in STEPS)
#: the discovery tables whose digests are a live release's input snapshot ids
DISCOVERY_TABLES = {"variety_items": "pd_variety_items", "variety_pages": "pd_pages",
                    "cce_items": "pd_cce_items", "cce_pages": "pd_cce_pages"}


def gemini_plan(settings: Any, env: Environment) -> GeminiPlan:
    """Whether Gemini reads page images in this build, the primary extractor, and why the
    primary fell back (or None)."""
    hs = settings.hollywood
    if hs.primary_extractor not in ("gemini", "ocr-rules"):
        from cinesub.errors import ConfigError

        raise ConfigError(f"hollywood.primary_extractor must be 'gemini' or 'ocr-rules', not {hs.primary_extractor!r}",
                          "config_invalid")
    available, why = (False, "gemini_disabled") if not hs.gemini_enabled else env.gemini_available()
    primary = hs.primary_extractor
    if primary == "gemini" and not available:
        primary = "ocr-rules"
    else:
        why = None if primary == hs.primary_extractor else why
    return GeminiPlan(available=available, model=hs.gemini_model if available else None,
                      primary_extractor=primary, fallback_reason=why)


def before_stage(ctx: RunContext, stage: str) -> None:
    """Before publishing: the release's input snapshot ids (the sample world's digest, or live
    the digests of what discovery found and of the input files)."""
    if stage != PublishStage.name:
        return
    with pd_connect(pd_state_db(ctx.settings)) as con:
        digests = {k: table_digest(con, t) for k, t in DISCOVERY_TABLES.items()}
    ctx.release_inputs = ctx.env.hollywood_release_inputs(digests)


def report(ctx: RunContext, summary: dict[str, Any]) -> dict[str, Any]:
    from warehouse.pd_report import write_report

    path = write_report(pd_state_db(ctx.settings), ctx.settings.reports_dir / "hollywood.html", summary)
    return {"path": str(path)}


def evaluation_summary(con: Any) -> dict[str, Any]:
    """``{extractor: {metric: {mean, ci_low, ci_high, n_issues}}}`` of the three headline metrics."""
    out: dict[str, Any] = {}
    for ext, model, metric, value, lo, hi, n in con.execute(
            """SELECT extractor, model, metric, value, ci_low, ci_high, n_issues FROM pd_evaluation
               WHERE scope = 'mean' AND metric IN ('spearman', 'movie_f1', 'tuple_f1') ORDER BY 1, 3""").fetchall():
        out.setdefault(ext, {"model": model})[metric] = {"mean": value, "ci_low": lo, "ci_high": hi, "n_issues": n}
    return out


def build_summary(ctx: RunContext, stages: dict[str, Any]) -> dict[str, Any]:
    settings, run_id = ctx.settings, ctx.run_id
    primary, fallback = ctx.gemini.primary_extractor, ctx.gemini.fallback_reason
    rel = stages["pd-publish"]
    with pd_connect(pd_state_db(settings)) as con:
        collection = [dict(zip(("key", "title", "year", "rank", "status", "ia_item"), r)) for r in con.execute(
            "SELECT key, title, year, rank, status, ia_item FROM pd_collection ORDER BY year, rank").fetchall()]
        counts = dict(zip(
            ("pages", "kept_pages", "tuples_primary", "top", "registrations", "renewals", "alias_review",
             "match_review", "unparsed_cce", "cce_gemini_records", "cce_crosscheck_pages", "cce_crosscheck_disagree"),
            con.execute(
                """SELECT (SELECT count(*) FROM pd_pages), (SELECT count(*) FROM pd_page_filter WHERE keep),
                          (SELECT count(*) FROM pd_tuples WHERE extractor = ?), (SELECT count(*) FROM pd_top100),
                          (SELECT count(*) FROM pd_registrations), (SELECT count(*) FROM pd_renewals),
                          (SELECT count(*) FROM pd_aliases WHERE decision = 'review'),
                          (SELECT count(*) FROM pd_matches WHERE decision = 'matched_fuzzy_review'),
                          (SELECT count(*) FROM pd_unparsed),
                          (SELECT count(*) FROM pd_registrations WHERE extractor = 'gemini')
                            + (SELECT count(*) FROM pd_renewals WHERE extractor = 'gemini'),
                          (SELECT count(*) FROM pd_cce_crosscheck),
                          (SELECT count(*) FROM pd_cce_crosscheck WHERE NOT agree)""", [primary]).fetchone()))
        evaluation = evaluation_summary(con)
    reused = [n for n in STAGE_ORDER if stages.get(n, {}).get("reused")]
    return {
        "run_id": run_id,
        "home": str(settings.home),
        "status": "completed",
        "as_of": settings.hollywood.as_of.isoformat(),
        "primary_extractor": primary,
        "primary_fallback_reason": fallback,
        "release": {"version": rel.get("version"), "path": rel.get("path"),
                    "new": bool(rel.get("new")) and not rel.get("reused"),
                    "change": None if rel.get("reused") else rel.get("kind")},
        "collection": {"size": len(collection), "films": collection},
        "evaluation": evaluation,
        "counts": counts,
        "stages": {n: stages[n] for n in STAGE_ORDER if n in stages},
        "reused_stages": reused,
        "all_stages_reused": len(reused) == len(STAGE_ORDER),
        "sample_world_reused": ctx.env.world_reused,
    }


def _fmt_metric(m: dict[str, Any] | None) -> str:
    if not m or m.get("mean") is None:
        return "n/a"
    return f"{m['mean']:.3f} [{m['ci_low']:.3f}-{m['ci_high']:.3f}]"


def format_summary(s: dict[str, Any]) -> str:
    rel = s["release"]
    lines = [
        f"hollywood release {rel['version']} at {rel['path']}"
        + (f" (new, {rel['change']})" if rel["new"] else " (unchanged: data identical, no new version)"),
        f"as of {s['as_of']}; primary extractor {s['primary_extractor']}"
        + (f" (fallback: {s['primary_fallback_reason']})" if s.get("primary_fallback_reason") else ""),
        f"collection: {s['collection']['size']} films"
        + (": " + ", ".join(f"{f['title']} ({f['year']}, #{f['rank']})" for f in s["collection"]["films"])
           if s["collection"]["films"] else ""),
    ]
    for ext, ev in sorted(s["evaluation"].items()):
        lines.append(f"evaluation {ext}: spearman {_fmt_metric(ev.get('spearman'))}  movie F1 "
                     f"{_fmt_metric(ev.get('movie_f1'))}  tuple F1 {_fmt_metric(ev.get('tuple_f1'))}")
    c = s["counts"]
    lines.append(f"pages {c['pages']} (kept {c['kept_pages']}), primary tuples {c['tuples_primary']}, ranked "
                 f"{c['top']}, registrations {c['registrations']}, renewals {c['renewals']}")
    lines.append(f"CCE: {c['cce_gemini_records']} records read by Gemini from pages without a text layer; "
                 f"OCR parser vs Gemini on {c['cce_crosscheck_pages']} text pages: "
                 f"{c['cce_crosscheck_disagree']} disagree")
    lines.append(f"review queues: aliases {c['alias_review']}, copyright matches {c['match_review']}; "
                 f"unparsed CCE entries {c['unparsed_cce']}")
    lines.append("stages reused: " + (", ".join(s["reused_stages"]) or "none"))
    if s.get("report"):
        lines.append(f"report: {s['report']['path']}")
    return "\n".join(lines)


FLOW = FlowSpec(
    name="build-hollywood",
    steps=STEPS,
    state_db=pd_state_db,
    schema=PD_SCHEMA,
    run_columns=lambda ctx: {"config_hash": hollywood_config_hash(ctx.settings), "as_of": ctx.settings.hollywood.as_of},
    summary=lambda ctx, stages: build_summary(ctx, stages),
    format_summary=lambda s: format_summary(s),
    report=("hollywood-report", report),
    before=before_stage,
)


@flow(name="build-hollywood")
def build_hollywood(sample: bool = True, config: str | None = None, home: str | None = None,
                    as_of: str | None = None, force: bool = False, runner: str | None = None,
                    dask_address: str | None = None) -> dict[str, Any]:
    """Build the public-domain Hollywood collection and publish a release; returns the summary.

    ``as_of`` (YYYY-MM-DD) overrides ``hollywood.as_of`` (unset: the run date) for this build.
    ``runner`` (``local``/``dask``) and ``dask_address`` override ``execution.runner`` /
    ``execution.dask_address``.
    """
    settings = load_settings(config, Path(home) if home else None)
    if as_of:
        settings.hollywood.as_of = date.fromisoformat(as_of)
    env = environment(settings, sample)

    def configure(ctx: RunContext) -> None:
        ctx.gemini = gemini_plan(settings, env)

    return run_flow(FLOW, settings, env, force=force, runner=runner, dask_address=dask_address, configure=configure)
