"""One build per CINESUB_HOME (issue 14 point 4): a second writer exits at once with one line
naming the holder (exit 6) or waits with --wait; a dead holder's lock never blocks."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests._cli_runner import REPO, run_cli

#: a helper process that takes the lock, says so, and holds it until stdin closes (or for N s)
HOLDER = """
import sys, time
from cinesub.lock import HomeLock
lock = HomeLock(sys.argv[1], command="cinesub build --sample (test holder)").acquire()
print("held", flush=True)
hold = float(sys.argv[2]) if len(sys.argv) > 2 else None
if hold is None:
    sys.stdin.read()
else:
    time.sleep(hold)
lock.release()
"""


def _holder(home: Path, *args: str) -> subprocess.Popen:
    p = subprocess.Popen([sys.executable, "-c", HOLDER, str(home), *args], cwd=REPO, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, text=True)
    assert p.stdout.readline().strip() == "held"
    return p


def _end(p: subprocess.Popen) -> None:
    if p.poll() is None:
        p.stdin.close()
        p.wait(30)


def _one_line(stderr: str) -> str:
    lines = [ln for ln in stderr.splitlines() if ln.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr
    return lines[0]


def test_second_build_exits_at_once_naming_the_holder(tmp_path):
    home = tmp_path / "home"
    holder = _holder(home)
    try:
        p = run_cli(home, "build", "--sample", "--home", str(home), timeout=120)
        line = _one_line(p.stderr)
        assert p.returncode == 6, p.stderr
        assert f"pid {holder.pid}" in line and "test holder" in line and "since" in line and "--wait" in line
        assert "home_locked" in line
        assert not (home / "state.duckdb").exists()  # nothing ran
        hp = run_cli(home, "hollywood", "build", "--sample", "--home", str(home), timeout=120)
        assert hp.returncode == 6 and f"pid {holder.pid}" in _one_line(hp.stderr)
        # a curator decision writes the state too: it waits for no build, it says who holds the home
        dp = run_cli(home, "hollywood", "review", "decide-alias", "1940", "Gone", "none", "--by", "me",
                     "--home", str(home), timeout=120)
        assert dp.returncode == 6 and f"pid {holder.pid}" in _one_line(dp.stderr)
    finally:
        _end(holder)
    assert (home / "cinesub.lock").read_text() == ""  # released cleanly: an empty file


def test_wait_gives_up_after_the_timeout(tmp_path):
    home = tmp_path / "home"
    holder = _holder(home)
    try:
        p = run_cli(home, "build", "--sample", "--home", str(home), "--wait", "--wait-timeout", "1", timeout=120)
    finally:
        _end(holder)
    assert p.returncode == 6, p.stderr
    assert "waiting for" in p.stderr and "gave up waiting" in p.stderr and "Traceback" not in p.stderr
    assert not (home / "state.duckdb").exists()


def test_wait_acquires_when_the_holder_finishes(tmp_path):
    from cinesub.lock import HomeLock

    home = tmp_path / "home"
    holder = _holder(home, "1.5")
    seen = []
    lock = HomeLock(home, command="test").acquire(wait=True, timeout=60, poll=0.05, on_wait=seen.append)
    try:
        assert holder.wait(30) == 0
        assert len(seen) == 1 and seen[0].pid == holder.pid  # told once who it waited for
        assert lock.stale is None  # the holder released properly
        assert json.loads((home / "cinesub.lock").read_text())["pid"] == os.getpid()
    finally:
        lock.release()


def test_lock_of_a_killed_build_is_taken_over(tmp_path):
    from cinesub.lock import HomeLock

    home = tmp_path / "home"
    holder = _holder(home)
    os.kill(holder.pid, signal.SIGKILL)  # a crash: no release, the file still names it
    holder.wait(30)
    assert json.loads((home / "cinesub.lock").read_text())["pid"] == holder.pid
    lock = HomeLock(home).acquire()  # no wait needed: the kernel dropped the dead holder's lock
    try:
        assert lock.stale is not None and lock.stale.pid == holder.pid
    finally:
        lock.release()


def test_stale_lock_file_of_a_dead_pid_does_not_block_a_writer(tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (home / "cinesub.lock").write_text(json.dumps({"pid": dead.pid, "proc_start": "1", "host": socket.gethostname(),
                                                   "command": "cinesub build", "since": "2020-01-01T00:00:00+00:00"}))
    p = run_cli(home, "hollywood", "review", "decide-alias", "1940", "Gone", "none", "--by", "me",
                "--home", str(home), timeout=120)
    assert p.returncode == 0, p.stderr
    assert (home / "cinesub.lock").read_text() == ""


def test_staleness_detects_dead_pids_and_reused_pids():
    from cinesub.lock import Holder, is_stale, process_start

    me = os.getpid()
    host = socket.gethostname()
    start = process_start(me)
    assert start is not None and start == process_start(me)
    assert not is_stale(Holder(me, start, host, "x", "t"))
    assert is_stale(Holder(me, str(int(start) + 1), host, "x", "t"))  # same PID, another process: reused
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert is_stale(Holder(dead.pid, None, host, "x", "t"))


def test_without_flock_the_file_is_the_lock(tmp_path, monkeypatch):
    """Where flock is unsupported (ENOLCK), a live holder still blocks and a reused PID does not."""
    import fcntl

    from cinesub import lock as lockmod
    from cinesub.errors import HomeLocked

    real = fcntl.flock

    def no_flock(fd, op):
        if op & fcntl.LOCK_UN:
            return real(fd, op)
        raise OSError(errno.ENOLCK, "No locks available")

    monkeypatch.setattr(lockmod.fcntl, "flock", no_flock)
    home = tmp_path / "home"
    home.mkdir()
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for _ in range(100):  # /proc/<pid>/stat is there at once, but be patient on a busy machine
            if lockmod.process_start(sleeper.pid):
                break
            time.sleep(0.05)
        live = {"pid": sleeper.pid, "proc_start": lockmod.process_start(sleeper.pid), "host": socket.gethostname(),
                "command": "cinesub build", "since": "2020-01-01T00:00:00+00:00"}
        (home / "cinesub.lock").write_text(json.dumps(live))
        with pytest.raises(HomeLocked, match=f"pid {sleeper.pid}"):
            lockmod.HomeLock(home).acquire()
        (home / "cinesub.lock").write_text(json.dumps(dict(live, proc_start="1")))  # PID reused since
        lock = lockmod.HomeLock(home).acquire()
        assert lock.stale is not None and lock.stale.pid == sleeper.pid
        lock.release()
    finally:
        sleeper.kill()
        sleeper.wait()


def test_lock_is_reentrant_in_one_process(tmp_path):
    from cinesub.lock import HomeLock, home_lock

    with home_lock(tmp_path / "h", command="outer"):
        with home_lock(tmp_path / "h", command="inner"):  # e.g. a flow run inside a locked command
            pass
        assert json.loads((tmp_path / "h" / "cinesub.lock").read_text())["command"] == "outer"
    lock = HomeLock(tmp_path / "h").acquire()
    assert lock.stale is None
    lock.release()


def test_home_that_is_a_file_is_a_usage_error(tmp_path):
    from cinesub.errors import UsageError
    from cinesub.lock import HomeLock

    f = tmp_path / "file"
    f.write_text("x")
    with pytest.raises(UsageError, match="not a directory"):
        HomeLock(f).acquire()


def _run_in_pty(cmd: list[str], env: dict[str, str], timeout: float, on_output=None) -> tuple[int, str]:
    """Run ``cmd`` on a pseudo-terminal (Prefect shows its telemetry banner only on a terminal);
    ``on_output(text so far)`` is called after each chunk."""
    import pty
    import select

    master, slave = pty.openpty()
    p = subprocess.Popen(cmd, cwd=REPO, env=env, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    out, deadline = b"", time.monotonic() + timeout
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if ready:
                try:
                    chunk = os.read(master, 65536)
                except OSError:  # EIO: every writer has closed the terminal
                    break
                if not chunk:
                    break
                out += chunk
                if on_output is not None:
                    on_output(out.decode("utf-8", "replace"))
            elif p.poll() is not None:
                break
        rc = p.wait(max(1.0, deadline - time.monotonic()))
    finally:
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        os.close(master)
    return rc, out.decode("utf-8", "replace")


@pytest.mark.slow
def test_build_waits_for_the_holder_and_prints_no_telemetry_banner(tmp_path):
    """A real `cinesub build --sample --wait` on a terminal, started while another process holds
    the home: it says it waits, runs when the holder is done, and Prefect stays silent about
    telemetry (DO_NOT_TRACK=1 is set for it)."""
    from prefect._internal.analytics.ci_detection import CI_ENV_VARS

    home = tmp_path / "home"
    env = {k: v for k, v in os.environ.items()
           if k not in CI_ENV_VARS and k != "DO_NOT_TRACK" and k != "PREFECT_API_URL" and not k.startswith("CINESUB_")}
    env.update(CINESUB_HOME=str(home), PREFECT_HOME=str(tmp_path / "fresh-prefect-home"), COLUMNS="200")
    holder = _holder(home)

    def release_once_it_waits(text: str) -> None:
        if "waiting for" in text and holder.poll() is None:
            _end(holder)

    try:
        rc, out = _run_in_pty([sys.executable, "-m", "cinesub.cli", "build", "--sample", "--films", "17", "--wait",
                               "--home", str(home)], env, timeout=900, on_output=release_once_it_waits)
    finally:
        _end(holder)
    assert holder.returncode == 0
    assert rc == 0, out[-3000:]
    assert "waiting for" in out and f"pid {holder.pid}" in out
    assert (home / "releases" / "1.0.0" / "manifest.json").is_file()
    assert "anonymous usage data" not in out and "DO_NOT_TRACK" not in out and "telemetry" not in out.lower()
    assert "Traceback" not in out
    assert (home / "cinesub.lock").read_text() == ""
