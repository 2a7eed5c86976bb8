"""Raw store and stage completion markers."""

from __future__ import annotations

import hashlib
import os

import pytest

from cinesub.rawstore import RawStore
from cinesub.settings import load_settings
from flows.kernel_context import RunContext, Stage
from flows.kernel_exec import execute
from cinesub.state import connect


def test_raw_store_is_content_addressed_idempotent_and_read_only(tmp_path):
    store = RawStore(tmp_path / "raw")
    data = b"1\n00:00:01,000 --> 00:00:02,000\nHi\n"
    sha, new = store.put(data)
    assert new and sha == hashlib.sha256(data).hexdigest()
    path = store.path_for(sha)
    assert path == tmp_path / "raw" / "sha256" / sha[:2] / sha[2:4] / sha
    assert not os.access(path, os.W_OK) or os.geteuid() == 0
    assert oct(path.stat().st_mode & 0o777) == "0o444"
    assert store.put(data) == (sha, False)
    assert store.get(sha) == data
    assert not [p for p in path.parent.iterdir() if p.name.startswith(".tmp-")]


def test_raw_store_detects_corruption(tmp_path):
    store = RawStore(tmp_path)
    sha, _ = store.put(b"abc")
    p = store.path_for(sha)
    p.chmod(0o644)
    p.write_bytes(b"abd")
    with pytest.raises(IOError):
        store.get(sha)
    with pytest.raises(ValueError):
        store.path_for("../../etc/passwd")


class _Counting(Stage):
    name = "counting"
    reads = ("films",)
    writes = ("funnel",)
    runs = 0

    def run(self, ctx, con):
        type(self).runs += 1
        return {"n": con.execute("SELECT count(*) FROM films").fetchone()[0]}


def test_stage_is_reused_until_its_inputs_change(tmp_path):
    settings = load_settings(home=tmp_path)
    ctx = RunContext(settings=settings, run_id="r1")
    _Counting.runs = 0
    assert execute(_Counting(), ctx)["reused"] is False
    again = execute(_Counting(), RunContext(settings=settings, run_id="r2"))
    assert again["reused"] is True and _Counting.runs == 1
    with connect(settings.state_db) as con:
        con.execute("INSERT INTO films (kim_id, imdb_id_status, link_status) VALUES ('k1', 'ok', 'agree')")
    third = execute(_Counting(), RunContext(settings=settings, run_id="r3"))
    assert third["reused"] is False and third["n"] == 1 and _Counting.runs == 2
    assert execute(_Counting(), RunContext(settings=settings, run_id="r4"), force=True)["reused"] is False
    with connect(settings.state_db) as con:
        rows = con.execute("SELECT run_id, status FROM stage_runs ORDER BY started_at").fetchall()
    assert [r[1] for r in rows] == ["completed", "reused", "completed", "completed"]
