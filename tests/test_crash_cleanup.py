"""Issue 14 point 7 and point 9 (first two bullets), end to end: a build killed hard in the
middle leaves no process behind (Prefect's ephemeral API server, the resource tracker, pool
workers), the next build removes the temporaries it left and publishes a release that is usable
as published — readable by others whatever the umask, its ``cinesub.duckdb`` self-contained and
in the storage format DuckDB 1.x reads."""

from __future__ import annotations

import json
import os
import shutil
import signal
import struct
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from _cli_runner import cli_env, seed_sample_world

from warehouse.publish import STAGE_STATS_FILE

REPO = Path(__file__).resolve().parent.parent
pytestmark = pytest.mark.slow

FILMS = "20"
GRACE_S = 30.0  # how long the leftovers may take to go (SIGTERM, then SIGKILL after 5 s)


def _stat(pid: int) -> tuple[int, int, str] | None:
    """(parent pid, start ticks, state) of a live process, None when gone."""
    try:
        s = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    rest = s[s.rindex(")") + 2:].split()
    return int(rest[1]), int(rest[19]), rest[0]


def _cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return ""


def _tree(root: int) -> dict[int, tuple[int, str]]:
    """{pid: (start ticks, command line)} of the descendants of ``root``."""
    kids: dict[int, list[int]] = {}
    ticks: dict[int, int] = {}
    for name in os.listdir("/proc"):
        if name.isdigit() and (st := _stat(int(name))):
            kids.setdefault(st[0], []).append(int(name))
            ticks[int(name)] = st[1]
    out, todo = {}, [root]
    while todo:
        for pid in kids.get(todo.pop(), []):
            if pid not in out:
                out[pid] = (ticks[pid], _cmdline(pid))
                todo.append(pid)
    return out


def _still_running(seen: dict[int, tuple[int, str]]) -> dict[int, str]:
    out = {}
    for pid, (ticks, cmd) in seen.items():
        st = _stat(pid)
        if st and st[1] == ticks and st[2] != "Z":
            out[pid] = cmd
    return out


def _env(home: Path, ephemeral: bool, **extra: str) -> dict[str, str]:
    env = cli_env(home, ephemeral=ephemeral, **extra)
    env.pop("CINESUB_BUILD_TOKEN", None)
    return env


def _start(home: Path, log: Path, umask: int | None = None, ephemeral: bool = True, **extra: str
           ) -> subprocess.Popen:
    """A build; ``ephemeral``: with its own Prefect server (the killed build's point), else with the
    session's (the next build's point is the release, not the server)."""
    home.mkdir(parents=True, exist_ok=True)
    seed_sample_world(home, films=int(FILMS))
    cmd = [sys.executable, "-m", "cinesub.cli", "build", "--sample", "--films", FILMS, "--json"]
    preexec = (lambda: os.umask(umask)) if umask is not None else None
    with open(log.with_suffix(".out"), "w") as out, open(log.with_suffix(".err"), "w") as err:
        return subprocess.Popen(cmd, cwd=REPO, env=_env(home, ephemeral, **extra), stdout=out, stderr=err,
                                stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=preexec)


def _reap_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


@pytest.fixture(scope="module")
def crashed(tmp_path_factory):
    """A build that dies hard (os._exit(137), no atexit, no finally) while processing tracks,
    with its processes recorded while it ran and what was still running afterwards."""
    root = tmp_path_factory.mktemp("crash")
    home = root / "home"
    proc = _start(home, root / "crash", CINESUB_FAULT_CRASH_AFTER_TRACKS="25", CINESUB_PROCESS_BATCH_TRACKS="5")
    build_ticks = None
    seen: dict[int, tuple[int, str]] = {}
    try:
        while proc.poll() is None:
            if build_ticks is None and (st := _stat(proc.pid)):
                build_ticks = st[1]
            seen.update(_tree(proc.pid))
            time.sleep(0.1)
        deadline = time.monotonic() + GRACE_S
        left = _still_running(seen)
        while left and time.monotonic() < deadline:
            time.sleep(0.25)
            left = _still_running(seen)
    finally:
        _reap_group(proc.pid)  # whatever the verdict, nothing outlives the test
    return {"home": home, "rc": proc.returncode, "pid": proc.pid, "ticks": build_ticks, "seen": seen,
            "left": left, "stderr": (root / "crash.err").read_text()[-3000:]}


def test_a_killed_build_leaves_no_process_behind(crashed):
    assert crashed["rc"] == 137, crashed["stderr"]
    cmds = [cmd for _, cmd in crashed["seen"].values()]
    # the test saw what it is about: Prefect's server and multiprocessing's helpers were running
    assert any("uvicorn" in c and "prefect.server" in c for c in cmds), cmds
    assert any("resource_tracker" in c for c in cmds), cmds
    assert crashed["left"] == {}, f"still running after the build died: {crashed['left']}"


@pytest.fixture(scope="module")
def resumed(crashed, tmp_path_factory):
    """The temporaries the killed build would have left (named as its writers name them, after
    its pid and start time, plus an old untagged one), then the next build under umask 077."""
    home, tag = crashed["home"], f"{crashed['pid']}.{crashed['ticks']}"
    planted = [
        home / "releases" / f".tmp-release-{tag}-a1b2c3d4",
        home / "releases" / f".tmp-latest-{tag}-e5f6g7h8",
        home / "hollywood" / "releases" / f".tmp-release-{tag}-i9j0k1l2",
        home / "sample-world" / f".tmp-world-{tag}-m3n4o5p6",
        home / "raw" / "sha256" / "ab" / "cd" / f".tmp-raw-{tag}-q7r8s9t0",
        home / "releases" / ".tmp-release-oldstyle",  # an earlier cinesub's, untouched for an hour
    ]
    for p in planted:
        p.parent.mkdir(parents=True, exist_ok=True)
        if "release-" in p.name or "world-" in p.name:
            (p / "stats").mkdir(parents=True)
            (p / "films.parquet").write_bytes(b"half written")
        else:
            p.write_bytes(b"half written")
    old = time.time() - 3600
    os.utime(planted[-1], (old, old))
    root = tmp_path_factory.mktemp("resume")
    proc = _start(home, root / "resume", umask=0o077, ephemeral=False)
    try:
        rc = proc.wait(timeout=900)
    finally:
        _reap_group(proc.pid)
    out, err = (root / "resume.out").read_text(), (root / "resume.err").read_text()
    assert rc == 0, err[-4000:]
    return home, json.loads(out), planted


def test_next_build_removes_what_the_killed_build_left(resumed):
    home, summary, planted = resumed
    assert summary["release"]["new"] is True
    assert [p for p in planted if p.exists() or p.is_symlink()] == []
    leftovers = [str(p) for p in home.rglob(".tmp-*") if "prefect" not in p.relative_to(home).parts[:1]]
    assert leftovers == []


def test_release_is_readable_by_others_whatever_the_umask(resumed):
    home, summary, _ = resumed
    rel = Path(summary["release"]["path"])
    paths = [rel, *rel.rglob("*")]
    assert len(paths) > 10
    wrong = {str(p.relative_to(rel.parent)): oct(p.stat().st_mode & 0o777) for p in paths
             if (p.stat().st_mode & 0o777) != (0o755 if p.is_dir() else 0o644)}
    assert wrong == {}
    assert (home / "releases" / "LATEST").stat().st_mode & 0o777 == 0o644


def test_release_database_opens_from_anywhere_with_plain_duckdb(resumed, tmp_path, monkeypatch):
    _, summary, _ = resumed
    rel = Path(summary["release"]["path"])
    manifest = json.loads((rel / "manifest.json").read_text())
    moved = tmp_path / "copy" / rel.name
    shutil.copytree(rel, moved)
    elsewhere = tmp_path / "unrelated-cwd"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    db = moved / "cinesub.duckdb"
    with duckdb.connect(str(db), read_only=True) as con:
        tables = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        views = con.execute("SELECT count(*) FROM duckdb_views() WHERE NOT internal").fetchone()[0]
        expected = {f.removesuffix(".parquet") for f in manifest["files"]
                    if f.endswith(".parquet") and "/" not in f}
        # the build's per-stage statistics (stats/stages.parquet, timings) are run metadata, not
        # data: listed in the manifest, deliberately not a table of the release database
        expected |= {"stats_" + Path(f).stem for f in manifest["files"] if f.startswith("stats/")
                     and f.endswith(".parquet") and f != STAGE_STATS_FILE}
        assert STAGE_STATS_FILE in manifest["files"] and "stats_stages" not in tables
        assert expected <= tables and views == 0
        for name in sorted(tables):
            n = con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0]
            meta = manifest["files"].get(f"{name}.parquet") or \
                manifest["files"].get(f"stats/{name.removeprefix('stats_')}.parquet")
            assert n == meta["rows"], name
        tags = con.execute("SELECT tags FROM duckdb_databases() WHERE database_name = 'cinesub'").fetchone()[0]
    assert tags.get("storage_version", "").startswith("v1.0.0"), tags
    # the file header's storage version number: 64 is what DuckDB 1.0 to 1.x write and read
    header = db.read_bytes()[:20]
    assert header[8:12] == b"DUCK" and struct.unpack("<Q", header[12:20])[0] == 64
