"""`cinesub server start|status|stop`: a Prefect server kept for a home and reused by its builds
(cinesub/prefect_server.py). A real `prefect server start`, a real build against it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from _cli_runner import run_build, run_cli
from cinesub import prefect_server


def _flow_runs(url: str) -> list[dict]:
    req = urllib.request.Request(url.rstrip("/") + "/flow_runs/filter", data=b"{}", method="POST",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


def test_a_started_server_serves_the_homes_builds_until_it_is_stopped(tmp_path):
    home = tmp_path / "home"
    try:
        start = run_cli(home, "server", "start", "--json", ephemeral=True, timeout=300)
        assert start.returncode == 0, start.stderr
        rec = json.loads(start.stdout)
        assert rec["started"] is True and rec["url"].startswith("http://127.0.0.1:")
        assert (home / "prefect" / prefect_server.STATE_FILE).is_file()

        again = run_cli(home, "server", "start", "--json", ephemeral=True)
        assert again.returncode == 0 and json.loads(again.stdout) == {**rec, "started": False}
        status = run_cli(home, "server", "status", "--json", ephemeral=True)
        assert status.returncode == 0 and json.loads(status.stdout)["url"] == rec["url"]

        # no PREFECT_API_URL in the build's environment: it finds the home's server
        build = run_build(home, "--force", films=17, ephemeral=True)
        assert build.returncode == 0, build.stderr[-3000:]
        runs = _flow_runs(rec["url"])
        assert [r["flow_id"] for r in runs] and any(r["state_type"] == "COMPLETED" for r in runs)
        summary = json.loads(build.stdout)
        assert summary["status"] == "completed"
    finally:
        stop = run_cli(home, "server", "stop", ephemeral=True)
    assert stop.returncode == 0 and "stopped" in stop.stderr
    assert not (home / "prefect" / prefect_server.STATE_FILE).exists()
    assert run_cli(home, "server", "status", ephemeral=True).returncode == 1
    assert "no prefect server was running" in run_cli(home, "server", "stop", ephemeral=True).stderr


def test_a_dead_or_foreign_record_is_not_used(tmp_path, monkeypatch):
    home = tmp_path / "prefect"
    home.mkdir()
    monkeypatch.setenv("PREFECT_HOME", str(home))
    monkeypatch.delenv("PREFECT_API_URL", raising=False)
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    for pid in (dead.pid, os.getpid()):  # a pid that ended; a live process that is no Prefect server
        (home / prefect_server.STATE_FILE).write_text(json.dumps(
            {"pid": pid, "url": "http://127.0.0.1:9/api", "started_at": 0, "log": "x"}))
        assert prefect_server.running() is None
        assert prefect_server.discover() is None and "PREFECT_API_URL" not in os.environ
    (home / prefect_server.STATE_FILE).write_text("not json")
    assert prefect_server.read_record() is None and prefect_server.stop() is None


def test_a_configured_api_url_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("PREFECT_HOME", str(tmp_path))
    monkeypatch.setenv("PREFECT_API_URL", "http://example.invalid/api")
    assert prefect_server.discover() is None
    assert os.environ["PREFECT_API_URL"] == "http://example.invalid/api"


@pytest.mark.parametrize("args", [["server", "start", "--port", "0"], ["server", "start", "--timeout", "0"]])
def test_bad_options_are_one_line_usage_errors(tmp_path, args):
    res = run_cli(tmp_path / "h", *args, ephemeral=True)
    assert res.returncode == 2 and "Traceback" not in res.stderr
