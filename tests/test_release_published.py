"""Issue 14 points 7 and 9 at the unit level (no build): temporaries named after their writer
and swept once it is gone; Hollywood releases and exports readable by others whatever the umask;
the release database self-contained and in the storage format DuckDB 1.x reads."""

from __future__ import annotations

import json
import os
import shutil
import struct
import subprocess
import time
from pathlib import Path

import duckdb
import pytest

from cinesub import tmpfiles
from flows.stages.hollywood.common import pd_connect
from tests.test_release_export import make_release
from warehouse.export import FORMATS, export_release
from warehouse.pd_release import TABLES, publish


@pytest.fixture()
def umask077():
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


@pytest.fixture()
def state(tmp_path):
    with pd_connect(tmp_path / "state.duckdb") as con:
        con.execute("INSERT INTO pd_top100 VALUES (1934, 1, 'tt9100001', 'imdb', 1000.0, 2, 4), "
                    "(1934, 2, 'loop follies', 'title', 500.0, 1, 1)")
        yield con, tmp_path / "releases"


def _pub(con, rdir: Path) -> dict:
    return publish(con, rdir, config_hash="cfg", inputs={"sample_world": "abc"}, as_of="2026-01-01",
                   primary_extractor="gemini")


def _dead_tag() -> str:
    """The owner tag of a process that has ended."""
    p = subprocess.Popen(["sleep", "30"])
    try:
        tag = tmpfiles.owner_tag(p.pid)
    finally:
        p.kill()
        p.wait()
    return tag


def _modes(root: Path) -> dict[str, str]:
    """Paths under ``root`` (itself included) whose mode is not 0755 (dirs) / 0644 (files)."""
    return {str(p): oct(p.stat().st_mode & 0o777) for p in [root, *root.rglob("*")]
            if not p.is_symlink() and (p.stat().st_mode & 0o777) != (0o755 if p.is_dir() else 0o644)}


# --- temporaries ------------------------------------------------------------------------------
def test_sweep_removes_only_what_a_gone_writer_left(tmp_path):
    dead, mine = _dead_tag(), tmpfiles.owner_tag()
    pid, ticks = mine.split(".")
    reused = f"{pid}.{int(ticks) + 1}"  # this pid, another process start: a reused pid
    names = {
        f".tmp-release-{dead}-aaaa": "stale", f".tmp-latest-{dead}-bbbb": "stale",
        f".tmp-pd-world-{reused}-cccc": "stale", ".tmp-release-oldstyle": "stale",
        f".tmp-release-{mine}-dddd": "kept", ".tmp-fresh-untagged": "kept", "1.0.0": "kept",
        "LATEST": "kept",
    }
    for name in names:
        p = tmp_path / name
        if "release" in name or "world" in name or name == "1.0.0":
            (p / "stats").mkdir(parents=True)
        else:
            p.write_text("x")
    old = time.time() - 2 * tmpfiles.UNTAGGED_STALE_S
    os.utime(tmp_path / ".tmp-release-oldstyle", (old, old))
    nested = tmp_path / "raw" / "sha256" / "ab" / "cd"
    nested.mkdir(parents=True)
    (nested / f".tmp-raw-{dead}-eeee").write_text("x")
    (nested / "abcd").write_text("kept")

    removed = tmpfiles.sweep(tmp_path, recursive=True)
    assert sorted(p.name for p in removed) == sorted([n for n, v in names.items() if v == "stale"]
                                                     + [f".tmp-raw-{dead}-eeee"])
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([n for n, v in names.items() if v == "kept"]
                                                                + ["raw"])
    assert [p.name for p in nested.iterdir()] == ["abcd"]


def test_writers_name_their_temporaries_after_themselves(tmp_path):
    from cinesub.rawstore import RawStore

    d = tmpfiles.mkdtemp("release", tmp_path)
    assert d.name.startswith(f".tmp-release-{tmpfiles.owner_tag()}-") and not tmpfiles.is_stale(d)
    store = RawStore(tmp_path / "raw")
    seen = []
    real = tmpfiles.mkstemp

    def spy(kind, directory, suffix=""):
        fd, path = real(kind, directory, suffix)
        seen.append(Path(path).name)
        return fd, path

    tmpfiles.mkstemp = spy
    try:
        store.put(b"bytes")
    finally:
        tmpfiles.mkstemp = real
    assert seen and seen[0].startswith(f".tmp-raw-{tmpfiles.owner_tag()}-")


def test_publish_removes_a_killed_publications_temporaries(state):
    con, rdir = state
    dead = _dead_tag()
    rdir.mkdir(parents=True)
    (rdir / f".tmp-release-{dead}-x1y2z3w4").mkdir()
    (rdir / f".tmp-release-{dead}-x1y2z3w4" / "top100.parquet").write_bytes(b"half")
    (rdir / f".tmp-latest-{dead}-q1w2e3r4").write_text("9.9.9\n")
    live = tmpfiles.mkdtemp("release", rdir)  # a writer still at work (this process)
    res = _pub(con, rdir)
    assert res["version"] == "1.0.0"
    assert sorted(p.name for p in rdir.iterdir()) == sorted(["1.0.0", "LATEST", "latest", live.name])


def test_export_removes_a_killed_exports_temporary(tmp_path):
    rel = make_release(tmp_path)
    leftover = tmp_path / "exports" / f".tmp-export-{_dead_tag()}-abcdefgh"
    leftover.mkdir(parents=True)
    (leftover / "films.parquet").write_bytes(b"half")
    export_release(rel, tmp_path / "exports" / "parquet", "parquet")
    assert [p.name for p in (tmp_path / "exports").iterdir()] == ["parquet"]


# --- readable as published --------------------------------------------------------------------
def test_hollywood_release_is_readable_by_others(state, umask077):
    con, rdir = state
    res = _pub(con, rdir)
    assert _modes(Path(res["path"])) == {}
    assert (rdir / "LATEST").stat().st_mode & 0o777 == 0o644


@pytest.mark.parametrize("fmt", FORMATS)
def test_export_is_readable_by_others(tmp_path, umask077, fmt):
    rel = make_release(tmp_path)
    out = export_release(rel, tmp_path / "out" / fmt, fmt, date_published="2026-03-01")
    assert len(list(out.iterdir())) >= 2
    assert _modes(out) == {}


# --- the release database ---------------------------------------------------------------------
def test_hollywood_release_database_opens_from_anywhere(state, tmp_path, monkeypatch):
    con, rdir = state
    res = _pub(con, rdir)
    rel = Path(res["path"])
    manifest = json.loads((rel / "manifest.json").read_text())
    moved = tmp_path / "moved" / "1.0.0"
    moved.parent.mkdir()
    shutil.move(str(rel), moved)  # the original place is gone
    elsewhere = tmp_path / "cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    db = moved / "cinesub.duckdb"
    with duckdb.connect(str(db), read_only=True) as rcon:
        tables = {r[0] for r in rcon.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert tables == set(TABLES)
        assert rcon.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchone()[0] == 0
        for name in TABLES:
            n = rcon.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
            assert n == manifest["files"][f"{name}.parquet"]["rows"], name
        assert rcon.execute("SELECT key FROM top100 ORDER BY rank").fetchall() == [("tt9100001",), ("loop follies",)]
        tags = rcon.execute("SELECT tags FROM duckdb_databases() WHERE database_name = 'cinesub'").fetchone()[0]
    assert tags["storage_version"].startswith("v1.0.0")
    head = db.read_bytes()[:20]
    assert head[8:12] == b"DUCK" and struct.unpack("<Q", head[12:20])[0] == 64  # DuckDB 1.0 .. 1.x

    from warehouse.load import open_release

    with open_release(moved) as rcon:  # the loader still works
        assert rcon.execute("SELECT count(*) FROM collection").fetchone()[0] == 0
