"""tests/_cli_runner.py driven from several threads at once (independent builds run side by side,
e.g. tests/test_acquisition_faults.py): one session server, one copy of a world per home, one pair
of output files per command, and no change to the test process's environment."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest

import _cli_runner as cr

THREADS = 8


def _together(fn, n: int = THREADS) -> list:
    """``fn(i)`` for ``i < n``, each in its own thread, all released at one barrier."""
    barrier = threading.Barrier(n)

    def call(i: int):
        barrier.wait()
        return fn(i)

    return [f.result(timeout=600) for f in cr.run_parallel(*(lambda i=i: call(i) for i in range(n)))]


def test_threads_asking_for_the_server_at_once_start_one(monkeypatch):
    """The first askers all wait for one start (a slow one here, so that they all ask during it)."""
    starts = []

    def slow_start() -> None:
        starts.append(threading.get_ident())
        time.sleep(0.3)
        cr._server.update(url=f"http://127.0.0.1:9/api/{len(starts)}", home=Path("/nonexistent/prefect"))

    monkeypatch.setattr(cr, "_server", {})  # this test's own (fake) server; the session's is left alone
    monkeypatch.setattr(cr, "_start_prefect_server", slow_start)
    urls = _together(lambda _: cr.prefect_api_url())
    assert len(starts) == 1 and urls == ["http://127.0.0.1:9/api/1"] * THREADS
    assert cr.prefect_server_home() == Path("/nonexistent/prefect")
    cr.stop_prefect_server()
    assert cr.prefect_server_home() is None


def test_each_command_gets_its_own_environment(monkeypatch):
    monkeypatch.setattr(cr, "_server", {"url": "http://127.0.0.1:9/api", "home": Path("/nonexistent/prefect")})
    before = dict(os.environ)
    envs = _together(lambda i: cr.cli_env(Path(f"/nonexistent/h{i}"), CINESUB_TEST_MARK=str(i)))
    assert [(e["CINESUB_HOME"], e["PREFECT_HOME"], e["CINESUB_TEST_MARK"]) for e in envs] == [
        (f"/nonexistent/h{i}", f"/nonexistent/h{i}/prefect", str(i)) for i in range(THREADS)]
    assert {e["PREFECT_API_URL"] for e in envs} == {"http://127.0.0.1:9/api"}
    assert "PREFECT_API_URL" not in cr.cli_env(Path("/nonexistent/h"), ephemeral=True)
    assert dict(os.environ) == before  # nothing is passed through the test process's environment


def test_threads_claim_distinct_output_files_for_one_home(tmp_path):
    home = tmp_path / "home"
    pairs = _together(lambda _: cr._output_files(home))
    assert len({out for out, _ in pairs}) == len({err for _, err in pairs}) == THREADS
    assert sorted(p.name for out, err in pairs for p in (out, err)) == sorted(
        f"home.{n}.{ext}" for n in range(THREADS) for ext in ("out", "err"))


def test_threads_seeding_one_home_leave_one_whole_copy_of_the_world(tmp_path):
    home = tmp_path / "home"
    dests = _together(lambda _: cr.seed_sample_world(home, films=17))
    assert len(set(dests)) == 1
    src = cr.cached_sample_world(films=17)
    files = {p.relative_to(src): p.read_bytes() for p in src.rglob("*") if p.is_file()}
    copied = {p.relative_to(dests[0]): p.read_bytes() for p in dests[0].rglob("*") if p.is_file()}
    assert (dests[0] / cr.WORLD_MARKER).is_file() and copied == files
    assert [p.name for p in (home / "sample-world").iterdir()] == [dests[0].name]


def test_run_parallel_runs_the_calls_side_by_side_and_keeps_their_errors():
    barrier = threading.Barrier(3, timeout=60)  # passes only if all three run at once

    def ok(i: int) -> int:
        barrier.wait()
        return i * i

    def boom() -> None:
        barrier.wait()
        raise ValueError("boom")

    first, second, third = cr.run_parallel(lambda: ok(2), boom, lambda: ok(3))
    assert first.result(timeout=60) == 4 and third.result(timeout=60) == 9
    with pytest.raises(ValueError, match="boom"):
        second.result(timeout=60)
