"""The ``build-cinesub`` Prefect flow: inventory → acquire ⇄ process → cohort → annotate → release.

Tasks pass a small context spec (paths, run id), never large objects: every stage reads and
writes the state DB under CINESUB_HOME. Acquire and process alternate in rounds: a round
downloads the next candidate for every film-language whose chain has no clean track yet, and
processes it (the recovery chain of SPEC A2), until none needs more or the chain is exhausted.
Rerunning reuses finished work: stages whose fingerprint is unchanged are skipped
(cinesub/stage.py), downloads already in the raw store are not repeated, tracks already
processed (same bytes, same processing version) are not reprocessed.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import uuid
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE

from cinesub import __version__, tmpfiles
from cinesub.records import utcnow
from cinesub.settings import Settings, load_settings
from cinesub.stage import Stage, StageContext, execute
from cinesub.state import connect
from cinesub.errors import UsageError
from cinesub.lock import home_lock
from flows.lifecycle import begin_build, log_removed

SAMPLE_GENERATOR_VERSION_FILE = "world.json"


def dir_digest(root: Path) -> str:
    """Digest of a directory tree's file names and bytes (the input snapshot id). Never opens
    anything but a regular file (a FIFO would block); names that are not UTF-8, links, special
    files and unreadable files count by name and kind, so changing them changes the digest."""
    h = hashlib.sha256()
    for p in sorted(root.rglob("*")):
        name = os.fsencode(p.relative_to(root))
        try:
            if not stat.S_ISREG(os.stat(p).st_mode):
                if not p.is_dir():
                    h.update(name + b"\0special\0")
                continue
            with open(p, "rb") as f:
                h.update(name + b"\0")
                h.update(hashlib.file_digest(f, "sha256").digest())
        except OSError as exc:  # dangling link, permission denied
            h.update(name + b"\0" + type(exc).__name__.encode() + b"\0")
    return h.hexdigest()


def ensure_sample_world(settings: Settings, seed: int, n_films: int) -> tuple[Path, bool]:
    """Generate the sample world under CINESUB_HOME once (deterministic); return (dir, reused)."""
    from cinesub.sample.generate import generate

    target = settings.home / "sample-world" / f"seed{seed}-n{n_films}"
    marker = target / SAMPLE_GENERATOR_VERSION_FILE
    if marker.exists():
        return target, True
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = tmpfiles.mkdtemp("world", target.parent)
    try:
        generate(tmp, seed=seed, n_films=n_films)
        if target.exists():
            shutil.rmtree(target)
        os.replace(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target, False


def _ctx(spec: dict[str, Any]) -> StageContext:
    settings = load_settings(spec.get("config"), Path(spec["home"]))
    sample_dir = Path(spec["sample_dir"]) if spec.get("sample_dir") else None
    return StageContext(settings=settings, run_id=spec["run_id"], sample_dir=sample_dir, extra=spec.get("extra", {}))


def _run(stage: Stage, spec: dict[str, Any]) -> dict[str, Any]:
    stats = execute(stage, _ctx(spec), force=spec.get("force", False))
    try:
        logger = get_run_logger()
        logger.info("%s: %s", stage.name, json.dumps({k: v for k, v in stats.items() if k != "funnel"}, default=str))
    except Exception:  # outside a run context (direct call in tests)
        pass
    return stats


@task(name="inventory", retries=2, retry_delay_seconds=1, cache_policy=NO_CACHE)
def inventory_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.inventory import InventoryStage

    return _run(InventoryStage(), spec)


@task(name="acquire", retries=2, retry_delay_seconds=1, cache_policy=NO_CACHE)
def acquire_task(spec: dict[str, Any], round_no: int) -> dict[str, Any]:
    from flows.stages.acquire import AcquireStage

    return _run(AcquireStage(round_no, search=(round_no == 1)), spec)


@task(name="process-tracks", cache_policy=NO_CACHE)
def process_task(spec: dict[str, Any], round_no: int) -> dict[str, Any]:
    from flows.stages.process import ProcessStage

    return _run(ProcessStage(round_no), spec)


@task(name="select-cohort", cache_policy=NO_CACHE)
def cohort_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.cohort import CohortStage

    return _run(CohortStage(), spec)


@task(name="curate", cache_policy=NO_CACHE)
def curate_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.curate import CurateStage

    return _run(CurateStage(), spec)


@task(name="annotate", cache_policy=NO_CACHE)
def annotate_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.annotate import AnnotateStage

    return _run(AnnotateStage(), spec)


@task(name="release", retries=1, retry_delay_seconds=1, cache_policy=NO_CACHE)
def release_task(spec: dict[str, Any]) -> dict[str, Any]:
    from flows.stages.release import ReleaseStage

    return _run(ReleaseStage(), spec)


@task(name="flagged-track-report", cache_policy=NO_CACHE)
def report_task(spec: dict[str, Any], summary: dict[str, Any]) -> dict[str, Any]:
    """Write the flagged-track report (warehouse/report.py) and publish the Prefect artifacts
    ``build-summary`` (markdown) and ``flagged-tracks`` (table)."""
    from flows.track_processing import PROCESSING_VERSION
    from warehouse.report import MARKDOWN_ARTIFACT_KEY, TABLE_ARTIFACT_KEY, write_report

    settings = load_settings(spec.get("config"), Path(spec["home"]))
    rep = write_report(settings.state_db, settings.reports_dir, spec["run_id"], summary, settings.thresholds,
                       list(settings.languages), PROCESSING_VERSION)
    info: dict[str, Any] = {k: rep[k] for k in ("path", "flags", "flagged_tracks", "rejected_tracks")}
    try:
        from prefect.artifacts import create_markdown_artifact, create_table_artifact

        create_markdown_artifact(markdown=rep["markdown"], key=MARKDOWN_ARTIFACT_KEY,
                                 description=f"cinesub build {spec['run_id']}: summary and report link")
        create_table_artifact(table=rep["table"], key=TABLE_ARTIFACT_KEY,
                              description=f"flags on processed tracks, build {spec['run_id']} ({rep['path']})")
        info["artifacts"] = [MARKDOWN_ARTIFACT_KEY, TABLE_ARTIFACT_KEY]
    except Exception as exc:  # the report file is written; a Prefect API failure must not fail the build
        info["artifacts"] = []
        info["artifacts_error"] = f"{type(exc).__name__}: {exc}"[:300]
        try:
            get_run_logger().warning("Prefect artifacts not created: %s", info["artifacts_error"])
        except Exception:
            pass
    return info


@flow(name="build-cinesub")
def build_cinesub(
    sample: bool = True,
    config: str | None = None,
    home: str | None = None,
    sample_seed: int = 7,
    n_films: int = 40,
    force: bool = False,
    faults: str | None = None,
) -> dict[str, Any]:
    """Build the subtitle corpus and publish a release; returns the build summary.

    ``faults`` (sample builds only): fault modes of the provider fixture servers, ``all`` or a
    comma-separated list (fixtures/faults.py).
    """
    settings = load_settings(config, Path(home) if home else None)
    settings.home.mkdir(parents=True, exist_ok=True)
    # one build per home, also for flow runs a Prefect worker starts (re-entrant: the CLI holds it already)
    with home_lock(settings.home):
        log_removed(begin_build(settings.home))  # watchdog for our processes; a killed build's leftovers
        if sample:
            sample_dir, world_reused = ensure_sample_world(settings, sample_seed, n_films)
            from flows.providers import sample_services

            with sample_services(settings, sample_dir, faults) as endpoints:
                return _build(settings, config, force, endpoints, sample_dir, world_reused)
        if faults:
            raise UsageError("faults are a sample-build option", "faults_need_sample")
        return _build(settings, config, force, None, None, None)


def _build(settings: Settings, config: str | None, force: bool, endpoints: dict[str, Any] | None,
           sample_dir: Path | None, world_reused: bool | None) -> dict[str, Any]:
    sample = sample_dir is not None
    settings.home.mkdir(parents=True, exist_ok=True)
    run_id = utcnow().strftime("%Y%m%dT%H%M%S") + "-" + uuid.uuid4().hex[:6]
    spec: dict[str, Any] = {"config": config, "home": str(settings.home), "run_id": run_id, "force": force,
                            "extra": {"endpoints": endpoints}}
    if sample:
        spec["sample_dir"] = str(sample_dir)
        spec["extra"]["sample_digest"] = dir_digest(sample_dir)
        spec["extra"]["sample_world_reused"] = world_reused
    with connect(settings.state_db) as con:
        # a run still marked running died without finishing (the state DB admits one writer)
        con.execute("UPDATE runs SET status = 'interrupted' WHERE status = 'running'")
        con.execute(
            "INSERT INTO runs VALUES (?, ?, NULL, 'running', ?, ?, ?, NULL)",
            [run_id, utcnow(), sample, settings.config_hash(), __version__],
        )
    stages: dict[str, Any] = {}
    try:
        stages["inventory"] = inventory_task(spec)
        rounds = []
        paused = None
        for round_no in range(1, settings.thresholds.max_candidates + 1):
            acq = acquire_task(spec, round_no)
            proc = process_task(spec, round_no)
            rounds.append({"round": round_no, "acquire": acq, "process": proc})
            if acq.get("quota_exhausted"):
                paused = acq["quota_exhausted"]
                break
            if proc.get("needing_more", 0) == 0:
                break
        stages["rounds"] = rounds
        if paused:
            return _pause(settings, run_id, stages, paused)
        stages["cohort"] = cohort_task(spec)
        stages["curate"] = curate_task(spec)
        stages["annotate"] = annotate_task(spec)
        stages["release"] = release_task(spec)
        if stages["release"].get("blocked"):
            return _blocked(settings, run_id, stages["release"])
        summary = build_summary(settings, run_id, stages, spec)
        summary["report"] = report_task(spec, summary)
    except BaseException:
        with connect(settings.state_db) as con:
            con.execute("UPDATE runs SET status = 'failed', finished_at = ? WHERE run_id = ?", [utcnow(), run_id])
        raise
    with connect(settings.state_db) as con:
        con.execute(
            "UPDATE runs SET status = 'completed', finished_at = ?, summary = ? WHERE run_id = ?",
            [utcnow(), json.dumps(summary, default=str), run_id],
        )
    try:
        get_run_logger().info("build summary:\n%s", format_summary(summary))
    except Exception:
        pass
    return summary


def _pause(settings: Settings, run_id: str, stages: dict[str, Any], quota: dict[str, str]) -> dict[str, Any]:
    """A spent download quota stops the build cleanly: what was downloaded and processed is
    kept, nothing is published, and the next build resumes after the reset."""
    summary = {
        "run_id": run_id,
        "home": str(settings.home),
        "status": "paused",
        "reason": "quota_exhausted",
        "quota_reset": quota,
        "work": {
            "downloaded": sum(r["acquire"].get("downloaded", 0) for r in stages["rounds"]),
            "tracks_processed": sum(r["process"].get("processed", 0) for r in stages["rounds"]),
            "rounds": len(stages["rounds"]),
        },
    }
    with connect(settings.state_db) as con:
        con.execute("UPDATE runs SET status = 'paused', finished_at = ?, summary = ? WHERE run_id = ?",
                    [utcnow(), json.dumps(summary, default=str), run_id])
    try:
        get_run_logger().warning("download quota exhausted (%s): build paused, rerun after the reset", quota)
    except Exception:
        pass
    return summary


def _blocked(settings: Settings, run_id: str, rel: dict[str, Any]) -> dict[str, Any]:
    """The consistency gate failed: nothing was published; the gate report says why."""
    gate = rel.get("gate") or {}
    summary = {
        "run_id": run_id,
        "home": str(settings.home),
        "status": "blocked",
        "reason": "consistency_gate",
        "gate_report": rel.get("gate_report"),
        "gate": gate,
    }
    with connect(settings.state_db) as con:
        con.execute("UPDATE runs SET status = 'blocked', finished_at = ?, summary = ? WHERE run_id = ?",
                    [utcnow(), json.dumps(summary, default=str), run_id])
    try:
        get_run_logger().error("release blocked by the consistency gate; report %s", rel.get("gate_report"))
    except Exception:
        pass
    return summary


def build_summary(settings: Settings, run_id: str, stages: dict[str, Any], spec: dict[str, Any]) -> dict[str, Any]:
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
    downloaded = sum(r["acquire"].get("downloaded", 0) for r in stages["rounds"])
    reused_blobs = sum(r["acquire"].get("reused_blobs", 0) for r in stages["rounds"])
    processed = sum(r["process"].get("processed", 0) for r in stages["rounds"])
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
        "funnel": funnel,
        "work": {
            "downloaded": downloaded,
            "reused_raw_bytes": reused_blobs,
            "tracks_processed": processed,
            # provider entries that are no candidate (bad sidecar, FIFO, ...): attempts.search_rejected
            "refused_at_search": sum(r["acquire"].get("search_rejected", 0) for r in stages["rounds"]),
            "rounds": len(stages["rounds"]),
            "tracks_in_state": stored_tracks,
            "raw_files_in_store": stored_blobs,
            "reused_stages": reused_stages,
            "sample_world_reused": spec.get("extra", {}).get("sample_world_reused"),
        },
    }


def format_summary(s: dict[str, Any]) -> str:
    rel = s["release"]
    lines = [
        f"release {rel['version']} at {rel['path']}"
        + (" (new, " + str(rel["change"]) + ")" if rel["new"] else " (unchanged: data identical, no new version)"),
        f"films {s['films']}  tracks {s['tracks']}  entries {s['entries']}",
        "flags by layer: " + (", ".join(f"{k} {v}" for k, v in s["flags_by_layer"].items()) or "none"),
        "funnel: " + " → ".join(f"{g['gate']} {g['kept']}" for g in s["funnel"]),
    ]
    rep = s.get("report")
    if rep:
        lines.append(f"flagged-track report: {rep['path']} ({rep['flagged_tracks']} flagged, "
                     f"{rep['rejected_tracks']} rejected tracks)")
    w = s["work"]
    lines.append(
        f"work: {w['downloaded']} downloaded, {w['reused_raw_bytes']} reused from the raw store, "
        f"{w['tracks_processed']} tracks processed in {w['rounds']} rounds "
        f"({w['tracks_in_state'] - w['tracks_processed']} processed tracks and "
        f"{w['raw_files_in_store'] - w['downloaded']} raw files reused from earlier builds); "
        f"stages reused: {', '.join(w['reused_stages']) or 'none'}"
    )
    if w.get("refused_at_search"):
        lines.append(f"refused at search: {w['refused_at_search']} provider entries, each with its reason "
                     "(state table attempts, outcome search_rejected)")
    return "\n".join(lines)
