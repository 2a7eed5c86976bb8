"""The ``build-hollywood`` Prefect flow: the public-domain Hollywood collection (SPEC B1, B2).

    variety-discover → variety-filter → variety-extract → variety-aliases → variety-aggregate
    → variety-evaluate → cce-discover → cce-parse → copyright-status → collection → pd-publish
    → report

Every stage is a :class:`flows.stages.pd_common.PDStage` run through
:func:`flows.stages.pd_common.execute_pd` against the flow's own state DB,
``CINESUB_HOME/hollywood/state.duckdb`` (DuckDB admits one writer; the subtitle flow keeps
``CINESUB_HOME/state.duckdb``). Downloads go to the shared raw store ``CINESUB_HOME/raw``. A stage
whose inputs (tables it reads, Hollywood settings, outside inputs) are unchanged is reused, so a
second sample build reuses every stage and publishes nothing new.

Sample mode generates the Variety and CCE worlds under
``CINESUB_HOME/sample-world/pd-seed<N>/{variety,cce}`` (deterministic; reused when present and
written by the same generator versions) and serves them for the duration of the flow on
loopback: ``fixtures.ia_server.IAFixture`` (the Internet Archive endpoints the ``internetarchive``
package speaks) and ``fixtures.gemini_pages_server.GeminiPagesFixture`` (the Gemini REST API
``google-genai`` speaks, answering the Variety and CCE page images from gold with planted errors)
— so the real clients run. Tasks get endpoints, never credentials (Prefect records task
parameters).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import uuid
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from cinesub import __version__, tmpfiles
from cinesub.records import utcnow
from cinesub.settings import Settings, load_settings
from cinesub.stage import StageContext, table_digest
from cinesub.errors import ConfigError
from cinesub.lock import home_lock
from flows.lifecycle import begin_build, log_removed
from flows.stages.pd_common import (
    PDStage,
    execute_pd,
    file_digest,
    hollywood_config_hash,
    pd_connect,
    pd_state_db,
)

WORLD_MARKER = "world.json"
STAGE_ORDER = ("variety-discover", "variety-filter", "variety-extract", "variety-aliases", "variety-aggregate",
               "variety-evaluate", "cce-discover", "cce-parse", "copyright-status", "collection", "pd-publish")


# --------------------------------------------------------------------------------------------
# sample world and services
# --------------------------------------------------------------------------------------------
def ensure_pd_worlds(settings: Settings, seed: int) -> tuple[dict[str, Path], bool]:
    """Generate the Variety and CCE sample worlds once (deterministic); return (dirs, reused).
    A world written by another generator version is written again."""
    from cinesub.sample import cce, variety
    from cinesub.sample.cce import generate_cce_world
    from cinesub.sample.variety import generate_variety_world

    target = settings.home / "sample-world" / f"pd-seed{seed}"
    dirs = {"variety": target / "variety", "cce": target / "cce"}
    versions = {"cinesub.sample.variety": variety.GENERATOR_VERSION, "cinesub.sample.cce": cce.GENERATOR_VERSION}
    marker = target / WORLD_MARKER
    if marker.exists():
        try:
            same = json.loads(marker.read_text()).get("versions") == versions
        except ValueError:
            same = False
        if same:
            return dirs, True  # else an older generator wrote it: regenerate
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmpfiles.mkdtemp("pd-world", target.parent)
    try:
        generate_variety_world(tmp / "variety", seed)
        generate_cce_world(tmp / "cce", seed)
        (tmp / WORLD_MARKER).write_text(json.dumps({"seed": seed, "generators": sorted(versions),
                                                    "versions": versions}) + "\n")
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return dirs, False


@contextlib.contextmanager
def pd_sample_services(worlds: dict[str, Path]) -> Iterator[dict[str, Any]]:
    """The IA and Gemini fixture servers on loopback for a sample build; yields endpoints (no keys)."""
    from fixtures.gemini_pages_server import GeminiPagesFixture
    from fixtures.ia_server import IAFixture

    with IAFixture(worlds["variety"], worlds["cce"]) as ia, \
            GeminiPagesFixture(worlds["variety"], worlds["cce"]) as gem:
        yield {"kind": "fixtures", "ia_host": ia.host, "gemini_url": gem.base_url}


def gemini_plan(settings: Settings, sample: bool) -> tuple[dict[str, Any], str, str | None]:
    """(gemini info for the tasks, primary extractor, why the primary fell back or None)."""
    hs = settings.hollywood
    if hs.primary_extractor not in ("gemini", "ocr-rules"):
        raise ValueError(f"hollywood.primary_extractor must be 'gemini' or 'ocr-rules', not {hs.primary_extractor!r}")
    available, why = False, None
    if not hs.gemini_enabled:
        why = "gemini_disabled"
    elif sample:
        available = True
    else:
        from extractors.variety.gemini_pages import resolve_api_key

        available = resolve_api_key(settings) is not None  # the key itself stays here
        why = None if available else "no_gemini_api_key"
    primary = hs.primary_extractor
    if primary == "gemini" and not available:
        primary = "ocr-rules"
    else:
        why = None if primary == hs.primary_extractor else why
    return {"available": available, "model": hs.gemini_model if available else None}, primary, why


# --------------------------------------------------------------------------------------------
# tasks
# --------------------------------------------------------------------------------------------
def _ctx(spec: dict[str, Any]) -> StageContext:
    settings = load_settings(spec.get("config"), Path(spec["home"]))
    if spec.get("as_of"):
        settings.hollywood.as_of = date.fromisoformat(spec["as_of"])
    return StageContext(settings=settings, run_id=spec["run_id"], extra=spec.get("extra", {}))


def _run(stage: PDStage, spec: dict[str, Any]) -> dict[str, Any]:
    stats = execute_pd(stage, _ctx(spec), force=spec.get("force", False))
    try:
        get_run_logger().info("%s: %s", stage.name, json.dumps(stats, default=str)[:2000])
    except Exception:  # outside a run context
        pass
    return stats


@task(name="variety-discover", retries=1, retry_delay_seconds=1, cache_policy=NO_CACHE)
def variety_discover_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.pd_variety import VarietyDiscoverStage

    return _run(VarietyDiscoverStage(), spec)


@task(name="variety-filter", cache_policy=NO_CACHE)
def variety_filter_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.pd_variety import VarietyFilterStage

    return _run(VarietyFilterStage(), spec)


@task(name="variety-extract", cache_policy=NO_CACHE)
def variety_extract_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.pd_variety import VarietyExtractStage

    return _run(VarietyExtractStage(), spec)


@task(name="variety-aliases", cache_policy=NO_CACHE)
def variety_aliases_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.pd_boxoffice import VarietyAliasesStage

    return _run(VarietyAliasesStage(), spec)


@task(name="variety-aggregate", cache_policy=NO_CACHE)
def variety_aggregate_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.pd_boxoffice import VarietyAggregateStage

    return _run(VarietyAggregateStage(), spec)


@task(name="variety-evaluate", cache_policy=NO_CACHE)
def variety_evaluate_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.pd_boxoffice import VarietyEvaluateStage

    return _run(VarietyEvaluateStage(), spec)


@task(name="cce-discover", retries=1, retry_delay_seconds=1, cache_policy=NO_CACHE)
def cce_discover_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.pd_cce import CCEDiscoverStage

    return _run(CCEDiscoverStage(), spec)


@task(name="cce-parse", cache_policy=NO_CACHE)
def cce_parse_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.pd_cce import CCEParseStage

    return _run(CCEParseStage(), spec)


@task(name="copyright-status", cache_policy=NO_CACHE)
def copyright_status_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.pd_cce import CopyrightStatusStage

    return _run(CopyrightStatusStage(), spec)


@task(name="collection", retries=1, retry_delay_seconds=1, cache_policy=NO_CACHE)
def collection_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.pd_collection import CollectionStage

    return _run(CollectionStage(), spec)


@task(name="pd-publish", cache_policy=NO_CACHE)
def publish_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.pd_publish import PublishStage

    return _run(PublishStage(), spec)


@task(name="hollywood-report", cache_policy=NO_CACHE)
def report_task(spec: dict[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
    from warehouse.pd_report import write_report

    ctx = _ctx(spec)
    path = write_report(pd_state_db(ctx.settings), ctx.settings.reports_dir / "hollywood.html", summary)
    return {"path": str(path)}


# --------------------------------------------------------------------------------------------
# flow
# --------------------------------------------------------------------------------------------
@flow(name="build-hollywood")
def build_hollywood(sample: bool = True, config: str | None = None, home: str | None = None,
                    as_of: str | None = None, force: bool = False) -> dict[str, Any]:
    """Build the public-domain Hollywood collection and publish a release; returns the summary.

    ``as_of`` (YYYY-MM-DD) overrides ``hollywood.as_of`` (default 2026-01-01) for this build.
    """
    settings = load_settings(config, Path(home) if home else None)
    if as_of:
        settings.hollywood.as_of = date.fromisoformat(as_of)
    settings.home.mkdir(parents=True, exist_ok=True)
    # one build per home, also for flow runs a Prefect worker starts (re-entrant: the CLI holds it already)
    with home_lock(settings.home):
        log_removed(begin_build(settings.home))  # watchdog for our processes; a killed build's leftovers
        if sample:
            worlds, reused = ensure_pd_worlds(settings, settings.hollywood.sample_seed)
            with pd_sample_services(worlds) as endpoints:
                return _build(settings, config, as_of, force, endpoints, worlds, reused)
        if settings.hollywood.catalog_path is None or not Path(settings.hollywood.catalog_path).is_file():
            raise ConfigError("a live Hollywood build needs hollywood.catalog_path: a TSV imdb, title, year[, votes] "
                              "derived from IMDb title.basics (CINESUB_HOLLYWOOD__CATALOG_PATH)", "catalog_missing")
        return _build(settings, config, as_of, force, {"kind": "live"}, None, None)


def _build(settings: Settings, config: str | None, as_of: str | None, force: bool, endpoints: dict[str, Any],
           worlds: dict[str, Path] | None, world_reused: bool | None) -> dict[str, Any]:
    from flows.build import dir_digest

    sample = worlds is not None
    run_id = utcnow().strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
    gemini, primary, fallback = gemini_plan(settings, sample)
    extra: dict[str, Any] = {"endpoints": endpoints, "gemini": gemini, "primary_extractor": primary}
    if sample:
        extra["worlds"] = {k: str(v) for k, v in worlds.items()}
        extra["sample_digest"] = dir_digest(worlds["variety"].parent)
    spec: dict[str, Any] = {"config": config, "home": str(settings.home), "run_id": run_id, "force": force,
                            "as_of": settings.hollywood.as_of.isoformat(), "extra": extra}
    db = pd_state_db(settings)
    with pd_connect(db) as con:
        con.execute("UPDATE runs SET status = 'interrupted' WHERE status = 'running'")
        con.execute("INSERT INTO runs VALUES (?, ?, NULL, 'running', ?, ?, ?, ?, NULL)",
                    [run_id, utcnow(), sample, hollywood_config_hash(settings), __version__,
                     settings.hollywood.as_of])
    stages: dict[str, Any] = {}
    try:
        stages["variety-discover"] = variety_discover_task(spec)
        stages["variety-filter"] = variety_filter_task(spec)
        stages["variety-extract"] = variety_extract_task(spec)
        stages["variety-aliases"] = variety_aliases_task(spec)
        stages["variety-aggregate"] = variety_aggregate_task(spec)
        stages["variety-evaluate"] = variety_evaluate_task(spec)
        stages["cce-discover"] = cce_discover_task(spec)
        stages["cce-parse"] = cce_parse_task(spec)
        stages["copyright-status"] = copyright_status_task(spec)
        stages["collection"] = collection_task(spec)
        spec["extra"]["inputs"] = build_inputs(settings, spec)
        stages["pd-publish"] = publish_task(spec)
        summary = build_summary(settings, run_id, stages, primary, fallback, world_reused)
        summary["report"] = report_task(spec, summary)
    except BaseException:
        with pd_connect(db) as con:
            con.execute("UPDATE runs SET status = 'failed', finished_at = ? WHERE run_id = ?", [utcnow(), run_id])
        raise
    with pd_connect(db) as con:
        con.execute("UPDATE runs SET status = 'completed', finished_at = ?, summary = ? WHERE run_id = ?",
                    [utcnow(), json.dumps(summary, default=str), run_id])
    try:
        get_run_logger().info("hollywood build summary:\n%s", format_summary(summary))
    except Exception:
        pass
    return summary


def build_inputs(settings: Settings, spec: dict[str, Any]) -> dict[str, Any]:
    """Input snapshot ids of the release: the sample world's digest, or (live) digests of what
    discovery found and of the input files."""
    extra = spec["extra"]
    if extra.get("sample_digest"):
        return {"sample_world": extra["sample_digest"], "seed": settings.hollywood.sample_seed}
    with pd_connect(pd_state_db(settings)) as con:
        return {"variety_items": table_digest(con, "pd_variety_items"), "variety_pages": table_digest(con, "pd_pages"),
                "cce_items": table_digest(con, "pd_cce_items"), "cce_pages": table_digest(con, "pd_cce_pages"),
                "catalog": file_digest(settings.hollywood.catalog_path),
                "cprs_export": file_digest(settings.hollywood.cprs_export_path),
                "source_works": file_digest(settings.hollywood.source_works_path),
                "citymap": file_digest(settings.hollywood.citymap_path)}


def evaluation_summary(con: Any) -> dict[str, Any]:
    """``{extractor: {metric: {mean, ci_low, ci_high, n_issues}}}`` of the three headline metrics."""
    out: dict[str, Any] = {}
    for ext, model, metric, value, lo, hi, n in con.execute(
            """SELECT extractor, model, metric, value, ci_low, ci_high, n_issues FROM pd_evaluation
               WHERE scope = 'mean' AND metric IN ('spearman', 'movie_f1', 'tuple_f1') ORDER BY 1, 3""").fetchall():
        out.setdefault(ext, {"model": model})[metric] = {"mean": value, "ci_low": lo, "ci_high": hi, "n_issues": n}
    return out


def build_summary(settings: Settings, run_id: str, stages: dict[str, Any], primary: str, fallback: str | None,
                  world_reused: bool | None) -> dict[str, Any]:
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
        "sample_world_reused": world_reused,
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
