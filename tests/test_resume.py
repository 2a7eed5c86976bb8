"""A build that dies mid-way (hard exit while processing tracks) resumes on rerun without
redoing finished downloads or tracks, and ends with the same release as an uninterrupted one."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import duckdb
import pytest
from _cli_runner import run_build, run_parallel, sample20_build

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow


def _build(home: Path, **extra_env: str) -> subprocess.CompletedProcess:
    return run_build(home, **extra_env)


def test_crash_then_resume(tmp_path):
    # an uninterrupted build of the same world (shared, read only), built beside this one when no
    # module has built it yet (its own home and Prefect server: nothing shared with the crash)
    [uninterrupted] = run_parallel(sample20_build)
    home = tmp_path / "home"
    # batches of 5 tracks, one transaction each: the crash after 25 commits keeps 5 whole batches
    crashed = _build(home, CINESUB_FAULT_CRASH_AFTER_TRACKS="25", CINESUB_PROCESS_BATCH_TRACKS="5")
    assert crashed.returncode != 0
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        done_tracks = con.execute("SELECT count(*) FROM tracks").fetchone()[0]
        done_blobs = con.execute("SELECT count(*) FROM blobs").fetchone()[0]
        blobs_before = dict(((p, f), t) for p, f, t in con.execute(
            "SELECT provider, file_id, fetched_at FROM blobs").fetchall())
        tracks_before = dict(con.execute("SELECT track_id, processed_at FROM tracks").fetchall())
        runs = con.execute("SELECT status FROM runs").fetchall()
    assert done_tracks == 25 and done_blobs > 25
    assert runs == [("running",)]  # the dead run is visible as never finished
    assert not (home / "releases").exists()

    resumed = _build(home)
    assert resumed.returncode == 0, resumed.stderr[-4000:]
    summary = json.loads(resumed.stdout)
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        assert [r[0] for r in con.execute("SELECT status FROM runs ORDER BY started_at").fetchall()] == [
            "interrupted", "completed"]
    assert summary["work"]["tracks_processed"] == summary["work"]["tracks_in_state"] - done_tracks
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        blobs_after = dict(((p, f), t) for p, f, t in con.execute(
            "SELECT provider, file_id, fetched_at FROM blobs").fetchall())
        tracks_after = dict(con.execute("SELECT track_id, processed_at FROM tracks").fetchall())
    # nothing finished before the crash was fetched or processed again
    assert {k: blobs_after[k] for k in blobs_before} == blobs_before
    assert {k: tracks_after[k] for k in tracks_before} == tracks_before
    assert len(blobs_after) > done_blobs

    _, clean = uninterrupted.result()
    for key in ("films", "tracks", "entries", "funnel", "flags_by_layer"):
        assert summary[key] == clean[key], key
    a = Path(summary["release"]["path"])
    b = Path(clean["release"]["path"])
    for table in ("films", "tracks", "entries", "flags", "sanitization_log", "ratings", "funnel"):
        assert (a / f"{table}.parquet").read_bytes() == (b / f"{table}.parquet").read_bytes(), table
    # derived artifacts too: entities, statistics, the statistics page, the dataset card
    for name in ("films.jsonl", "stats/statistics.json", "stats/input_size.parquet", "statistics.html", "README.md"):
        assert (a / name).read_bytes() == (b / name).read_bytes(), name
