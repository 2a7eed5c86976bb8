"""Item-level work on Dask (flows/items.py): the ItemRunner contract on a real LocalCluster of
two worker processes, and a sample build through ``--runner dask`` whose release data files are
byte-identical to those of a local-runner build of the same world."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from _cli_runner import prefect_api_url, run_build, run_cli, run_parallel, sample20_build



def _job(n: int) -> tuple[str, int]:
    """A job of the contract test: 3 raises (poison), 5 kills its worker process (killer)."""
    if n == 3:
        raise ValueError("poison item")
    if n == 5:
        os._exit(9)
    return "ok", n * n


def _failed(job: int, error_type: str, message: str, step: str) -> tuple[str, int, str, str, str]:
    return "failed", job, error_type, message, step


def test_dask_runner_yields_every_result_with_poison_and_killer_jobs(monkeypatch):
    from flows.items import WORKER_DIED, DaskItemRunner

    monkeypatch.setenv("PREFECT_API_URL", prefect_api_url())  # the workers report their task runs here
    runner = DaskItemRunner(workers=2, batch_size=3)
    try:
        results = list(runner.map(_job, range(8), _failed))
        again = sorted(runner.map(_job, [0, 1, 2], _failed))  # the cluster still serves after a death
    finally:
        runner.close()
    by_job = {r[1] if r[0] == "failed" else int(r[1] ** 0.5): r for r in results}
    assert len(results) == 8 and sorted(by_job) == list(range(8))  # nothing lost, nothing twice
    assert by_job[3] == ("failed", 3, "ValueError", "poison item", "worker")
    assert by_job[5][:3] == ("failed", 5, WORKER_DIED) and by_job[5][4] == "worker"
    assert all(by_job[n] == ("ok", n * n) for n in (0, 1, 2, 4, 6, 7))
    assert again == [("ok", 0), ("ok", 1), ("ok", 4)]
    assert runner._runner is None  # closed: the local cluster is gone


def test_unreachable_scheduler_is_a_typed_error(monkeypatch):
    from cinesub.errors import DaskUnreachable, ExitCode
    from flows import items
    from flows.items import DaskItemRunner

    # nothing listens on port 9: every connect is refused at once, and the client keeps trying
    # until its connect timeout (20 s by default); the typed error, not the wait, is the point
    monkeypatch.setattr(items, "CONNECT_TIMEOUT_S", 2)
    runner = DaskItemRunner(address="tcp://127.0.0.1:9", workers=1)
    with pytest.raises(DaskUnreachable) as err:
        list(runner.map(_job, [1], _failed))
    assert err.value.reason == "dask_unreachable" and err.value.exit_code == ExitCode.UNREACHABLE
    runner.close()


def test_bad_dask_address_is_one_usage_line(tmp_path):
    proc = run_cli(tmp_path / "home", "build", "--sample", "--runner", "dask", "--dask-address", "http://x:1",
                   timeout=120)
    assert proc.returncode == 2, proc.stderr
    lines = [line for line in proc.stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and lines[0].startswith("error: ") and "tcp://HOST:PORT" in lines[0], proc.stderr


def _data_files(release: Path) -> dict[str, bytes]:
    """The release's data Parquet files (stage timings excluded: seconds differ run to run)."""
    return {str(p.relative_to(release)): p.read_bytes() for p in sorted(release.rglob("*.parquet"))
            if p.relative_to(release).as_posix() != "stats/stages.parquet"}


def test_dask_build_publishes_the_same_data_files_as_a_local_build(tmp_path):
    # the local runner (default), shared and read only; built (if no module has yet) beside the dask build
    [shared] = run_parallel(sample20_build)
    home = tmp_path / "home"
    proc = run_build(home, "--runner", "dask", films=20, timeout=900, CINESUB_EXECUTION__DASK_WORKERS="2")
    local_home, local_summary = shared.result()
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    summary = json.loads(proc.stdout)
    local_release = (local_home / "releases" / "latest").resolve()
    dask_release = (home / "releases" / "latest").resolve()
    assert local_release.name == dask_release.name
    local, dask = _data_files(local_release), _data_files(dask_release)
    assert "tracks.parquet" in local and len(local) > 5
    assert sorted(dask) == sorted(local)
    assert [name for name in local if local[name] != dask[name]] == []
    assert summary.get("status", "completed") == local_summary.get("status", "completed")


def _hollywood(home: Path, *args: str, **env: str) -> dict:
    proc = run_cli(home, "hollywood", "build", "--sample", "--json", *args, timeout=900,
                   drop_env=("CINESUB_GEMINI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"),
                   CINESUB_HOLLYWOOD__AS_OF="2026-01-01", **env)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-6000:]
    return json.loads(proc.stdout)


def test_dask_hollywood_build_reads_pages_on_the_cluster_and_publishes_the_same_files(tmp_path):
    """Issue 17 point 5: page OCR (Tesseract in discover), the page filter and both extractors
    (OCR rules, Gemini against the loopback fixture) are item jobs; on a LocalCluster of two
    workers the Hollywood release's data files are byte-identical to an in-process build's."""
    local, dask = (f.result() for f in run_parallel(  # two homes, nothing shared: side by side
        lambda: _hollywood(tmp_path / "local", CINESUB_WORKERS="1"),
        lambda: _hollywood(tmp_path / "dask", "--runner", "dask", CINESUB_EXECUTION__DASK_WORKERS="2",
                           CINESUB_EXECUTION__BATCH_SIZE="1")))
    lrel, drel = Path(local["release"]["path"]), Path(dask["release"]["path"])
    lfiles, dfiles = _data_files(lrel), _data_files(drel)
    assert "collection.parquet" in lfiles and sorted(dfiles) == sorted(lfiles)
    assert [n for n in lfiles if lfiles[n] != dfiles[n]] == []
    import duckdb

    with duckdb.connect(str(tmp_path / "dask" / "hollywood" / "state.duckdb"), read_only=True) as con:
        # Gemini read the kept pages (its rows are in the release) and the OCR-rules extractor too
        by = dict(con.execute("SELECT extractor, count(*) FROM pd_tuples GROUP BY 1").fetchall())
        assert by.get("gemini", 0) > 0 and by.get("ocr-rules", 0) > 0
    for stage in ("variety-discover", "variety-extract"):  # the same item jobs, on the cluster
        assert dask["stages"][stage]["item_jobs"] == local["stages"][stage]["item_jobs"] > 0
    assert dask["stages"]["variety-extract"]["gemini_calls"] > 0
    assert dask["stages"]["cce-discover"]["volume_jobs"] == local["stages"]["cce-discover"]["volume_jobs"] > 0
