"""The optional Gemini-assisted curation pass inside a real sample build: the real google-genai
client against the loopback Gemini fixture, enabled by settings from the environment; the key
never reaches any output."""

from __future__ import annotations

import json

import duckdb
import pytest
from _cli_runner import run_build

from fixtures.gemini_server import GeminiFixture

pytestmark = pytest.mark.slow
KEY = "gemini-test-key-5c1d2e"


def test_gemini_pass_runs_in_the_build_and_keeps_the_key_secret(tmp_path):
    home = tmp_path / "home"
    with GeminiFixture(api_key=KEY) as srv:
        proc = run_build(home, CINESUB_CURATION__GEMINI_ENABLED="true",
                         CINESUB_CURATION__GEMINI_BASE_URL=srv.base_url,
                         CINESUB_CURATION__GEMINI_MODEL="gemini-fixture-1",
                         CINESUB_CURATION__GEMINI_API_KEY=KEY)
        n_requests = len(srv.requests)
    assert proc.returncode == 0, proc.stderr[-4000:]
    summary = json.loads(proc.stdout)
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        methods = dict(con.execute("SELECT method, count(*) FROM curation GROUP BY 1").fetchall())
        errors = con.execute("SELECT count(*) FROM curation WHERE gemini_error IS NOT NULL").fetchone()[0]
        rows = con.execute("SELECT count(*) FROM curation").fetchone()[0]
    assert summary["films"] > 0 and rows == 3 * summary["films"]
    assert n_requests > 0  # the real client called the fixture
    assert errors == 0
    assert any("gemini" in m for m in methods), methods
    for text in (proc.stdout, proc.stderr):
        assert KEY not in text
    for p in home.rglob("*"):
        if p.is_file() and not p.is_symlink():
            assert KEY.encode() not in p.read_bytes(), p
