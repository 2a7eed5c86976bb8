"""The ``build-cinesub`` Prefect flow: the subtitle corpus.

    inventory → survey → (acquire ⇄ process)* → cohort → curate → annotate → release → report

The flow is declared here (:data:`FLOW`) and run by the kernel (flows/kernel.py), which generates
one Prefect task per stage, keeps the run bookkeeping and reuses finished work: stages whose
fingerprint is unchanged are skipped, downloads already in the raw store are not repeated,
tracks already processed (same bytes, same processing version) are not reprocessed. Acquire and
process alternate in rounds: a round downloads the next candidate for every film-language whose
chain has no clean track yet, and processes it (the recovery chain of SPEC A2), until none needs
more or the chain is exhausted; a spent download quota pauses the build (the next one resumes).
Sample vs live is decided once, by the environment (flows/env/).
"""

from __future__ import annotations

import json
import os
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

from prefect import flow

from cinesub.settings import load_settings
from cinesub.state import connect
from flows.env import environment
from flows.kernel import FlowSpec, Loop, run_flow
from flows.kernel_context import RunContext
from flows.summary_text import format_summary
from flows.stages.subtitles.acquire import AcquireStage
from flows.stages.subtitles.annotate import AnnotateStage
from flows.stages.subtitles.cohort import CohortStage
from flows.stages.subtitles.curate import CurateStage
from flows.stages.subtitles.inventory import InventoryStage
from flows.stages.subtitles.process import ProcessStage
from flows.stages.subtitles.release import ReleaseStage
from flows.stages.subtitles.survey import SurveyStage

#: the flow's stages, in order
STEPS = (
    InventoryStage,
    SurveyStage,  # availability survey + exact coverage search choose the languages and countries
    Loop((AcquireStage, ProcessStage), max_rounds=lambda s: s.thresholds.max_candidates,
         until=lambda r: r["process"].get("needing_more", 0) == 0,
         pause=lambda r: r["acquire"].get("quota_exhausted")),
    CohortStage,
    CurateStage,
    AnnotateStage,
    ReleaseStage,
)


def _sum(stages: dict[str, Any], stage: str, key: str) -> int:
    return sum(r[stage].get(key, 0) for r in stages.get("rounds", []))


def report(ctx: RunContext, summary: dict[str, Any]) -> dict[str, Any]:
    """Write the flagged-track report (warehouse/report.py) and publish the Prefect artifacts
    ``build-summary`` (markdown) and ``flagged-tracks`` (table)."""
    from validators.candidate import PROCESSING_VERSION
    from warehouse.report import MARKDOWN_ARTIFACT_KEY, TABLE_ARTIFACT_KEY, write_report

    settings, run_id = ctx.settings, ctx.run_id
    from warehouse.release import read_selection

    with connect(settings.state_db, read_only=False) as con:
        languages = list(read_selection(con, "languages", tuple(settings.languages)))
    rep = write_report(settings.state_db, settings.reports_dir, run_id, summary, settings.thresholds,
                       languages, PROCESSING_VERSION)
    info: dict[str, Any] = {k: rep[k] for k in ("path", "flags", "flagged_tracks", "rejected_tracks")}
    try:
        from prefect.artifacts import create_markdown_artifact, create_table_artifact

        create_markdown_artifact(markdown=rep["markdown"], key=MARKDOWN_ARTIFACT_KEY,
                                 description=f"cinesub build {run_id}: summary and report link")
        create_table_artifact(table=rep["table"], key=TABLE_ARTIFACT_KEY,
                              description=f"flags on processed tracks, build {run_id} ({rep['path']})")
        info["artifacts"] = [MARKDOWN_ARTIFACT_KEY, TABLE_ARTIFACT_KEY]
    except Exception as exc:  # the report file is written; a Prefect API failure must not fail the build
        info["artifacts"] = []
        info["artifacts_error"] = f"{type(exc).__name__}: {exc}"[:300]
        try:
            from prefect import get_run_logger

            get_run_logger().warning("Prefect artifacts not created: %s", info["artifacts_error"])
        except Exception:
            pass
    return info


def paused_summary(ctx: RunContext, stages: dict[str, Any], quota: dict[str, str]) -> dict[str, Any]:
    """A spent download quota stops the build cleanly: what was downloaded and processed is
    kept, nothing is published, and the next build resumes after the reset."""
    return {
        "run_id": ctx.run_id,
        "home": str(ctx.settings.home),
        "status": "paused",
        "reason": "quota_exhausted",
        "quota_reset": quota,
        "work": {"downloaded": _sum(stages, "acquire", "downloaded"),
                 "tracks_processed": _sum(stages, "process", "processed"),
                 "rounds": len(stages["rounds"])},
    }


def blocked_summary(ctx: RunContext, rel: dict[str, Any]) -> dict[str, Any]:
    """The consistency gate failed: nothing was published; the gate report says why."""
    return {"run_id": ctx.run_id, "home": str(ctx.settings.home), "status": "blocked",
            "reason": "consistency_gate", "gate_report": rel.get("gate_report"), "gate": rel.get("gate") or {}}


def build_summary(ctx: RunContext, stages: dict[str, Any]) -> dict[str, Any]:
    settings, run_id = ctx.settings, ctx.run_id
    rel = stages["release"]
    with connect(settings.state_db, read_only=False) as con:
        flags_by_layer = dict(
            con.execute("SELECT layer, count(*) FROM flags GROUP BY 1 ORDER BY 1").fetchall()
        )
        selected_flags = dict(
            con.execute(
                """SELECT f.layer, count(*) FROM flags f
                   JOIN selections s ON s.track_id = f.track_id
                   JOIN film_gates g ON g.imdb_id = s.imdb_id AND g.dropped_at IS NULL
                   GROUP BY 1 ORDER BY 1"""
            ).fetchall()
        )
        funnel = [
            {"gate_no": g, "gate": n, "kept": k, "dropped": d, "reasons": json.loads(r) if r else {}}
            for g, n, k, d, r in con.execute("SELECT * FROM funnel ORDER BY gate_no").fetchall()
        ]
        stored_tracks, stored_blobs = con.execute(
            "SELECT (SELECT count(*) FROM tracks), (SELECT count(*) FROM blobs)").fetchone()
        selection: dict[str, Any] = {}
        for dim, attr, mode in con.execute(
                "SELECT dimension, attribute, mode FROM selected_attributes ORDER BY dimension, position").fetchall():
            selection.setdefault(dim, {"mode": mode, "chosen": []})["chosen"].append(attr)
    downloaded = _sum(stages, "acquire", "downloaded")
    reused_blobs = _sum(stages, "acquire", "reused_blobs")
    processed = _sum(stages, "process", "processed")
    reused_stages = [name for name, st in stages.items() if isinstance(st, dict) and st.get("reused")]
    return {
        "run_id": run_id,
        "home": str(settings.home),
        "status": "completed",
        # a reused release stage published nothing: its stats are those of the run that did
        "release": {"version": rel.get("version"), "path": rel.get("path"),
                    "new": bool(rel.get("new")) and not rel.get("reused"),
                    "change": None if rel.get("reused") else rel.get("kind")},
        "films": rel.get("counts", {}).get("films"),
        "tracks": rel.get("counts", {}).get("tracks"),
        "entries": rel.get("counts", {}).get("entries"),
        "flags_by_layer": flags_by_layer,
        "flags_on_selected_tracks": selected_flags,
        "selection": selection,  # the languages and rating countries the survey stage chose
        "funnel": funnel,
        "work": {
            "downloaded": downloaded,
            "reused_raw_bytes": reused_blobs,
            "tracks_processed": processed,
            # provider entries that are no candidate (bad sidecar, FIFO, ...): attempts.search_rejected
            "refused_at_search": _sum(stages, "acquire", "search_rejected"),
            "rounds": len(stages["rounds"]),
            "tracks_in_state": stored_tracks,
            "raw_files_in_store": stored_blobs,
            "reused_stages": reused_stages,
            "sample_world_reused": ctx.env.world_reused,
        },
    }


FLOW = FlowSpec(
    name="build-cinesub",
    steps=STEPS,
    state_db=lambda s: s.state_db,
    schema="state_schema.sql",
    run_columns=lambda ctx: {"config_hash": ctx.settings.config_hash()},
    summary=lambda ctx, stages: build_summary(ctx, stages),
    format_summary=lambda s: format_summary(s),
    report=("flagged-track-report", report),
    paused=paused_summary,
    blocked=blocked_summary,
)


@flow(name="build-cinesub")
def build_cinesub(
    sample: bool = True,
    config: str | None = None,
    home: str | None = None,
    sample_seed: int = 7,
    n_films: int = 40,
    force: bool = False,
    faults: str | None = None,
    runner: str | None = None,
    dask_address: str | None = None,
    refresh_search: bool = False,
) -> dict[str, Any]:
    """Build the subtitle corpus and publish a release; returns the build summary.

    ``faults`` (sample builds only): fault modes of the provider fixture servers, ``all`` or a
    comma-separated list (fixtures/faults.py). ``runner`` (``local``/``dask``) and
    ``dask_address`` override ``execution.runner`` / ``execution.dask_address``.
    ``refresh_search`` asks the providers again where the search cache is still fresh.
    """
    settings = load_settings(config, Path(home) if home else None)
    env = environment(settings, sample, seed=sample_seed, n_films=n_films, faults=faults)
    summary = run_flow(FLOW, settings, env, force=force, runner=runner, dask_address=dask_address,
                       configure=lambda ctx: setattr(ctx, "refresh_search", refresh_search))
    from flows.kernel_fastpath import record

    record(settings, env, summary)  # what the next build's "nothing changed" test compares
    return summary


#: set in the environment (seconds), it keeps Prefect's flow-run heartbeats in a sample build
HEARTBEAT_SETTING = "PREFECT_FLOWS_HEARTBEAT_FREQUENCY"


def cli_run_settings(sample: bool) -> AbstractContextManager[Any]:
    """The Prefect settings a ``cinesub build`` runs the flow under: a sample build sends no
    flow-run heartbeats unless :data:`HEARTBEAT_SETTING` is set. The heartbeat thread is joined
    when the flow ends, after its current one-second sleep (0–1 s of every build's wall time);
    a sample build lasts seconds, and a killed one is recorded by the kernel (its ``runs`` row
    becomes ``interrupted``). Live builds and deployment runs keep Prefect's heartbeats
    (docs/rebuilds.md, "Fixed costs of a build")."""
    if not sample or os.environ.get(HEARTBEAT_SETTING):
        return nullcontext()
    from prefect.settings import PREFECT_FLOWS_HEARTBEAT_FREQUENCY, temporary_settings

    return temporary_settings(updates={PREFECT_FLOWS_HEARTBEAT_FREQUENCY: None})
