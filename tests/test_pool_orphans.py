"""Issue 14 point 7 (pool workers): the spawn workers of the process stage end with their parent.
A process running :func:`flows.worker_pool.run_isolated` is killed with SIGKILL mid-work (no
cleanup code of its own can run); its workers, busy on jobs that would take minutes, are gone
soon after instead of living on re-parented to init."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from _pool_jobs import POOL_SCRIPT

TESTS = Path(__file__).resolve().parent
REPO = TESTS.parent
WAIT_S = 60.0  # an upper bound for slow machines, not a speed requirement


def _alive_children(ppid: int) -> list[int]:
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            cmd = (d / "cmdline").read_bytes()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        if int(fields[1]) == ppid and fields[0] != "Z" and b"spawn_main" in cmd:
            out.append(int(d.name))
    return out


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2:].split()[0] != "Z"  # a zombie has ended


def _wait_for(cond, limit: float = WAIT_S):
    end = time.monotonic() + limit
    while time.monotonic() < end:
        value = cond()
        if value:
            return value
        time.sleep(0.2)
    return cond()


def test_pool_workers_end_when_their_parent_is_killed():
    script = POOL_SCRIPT.format(repo=str(REPO), tests=str(TESTS))
    proc = subprocess.Popen([sys.executable, "-c", script], cwd=REPO, start_new_session=True,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers: list[int] = []
    try:
        workers = _wait_for(lambda: (lambda w: w if len(w) == 2 else [])(_alive_children(proc.pid)))
        assert len(workers) == 2, "the pool did not start its two workers"
        time.sleep(1.0)  # the workers have run their initializer and are busy on a job
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        assert _wait_for(lambda: not any(_alive(p) for p in workers)), \
            f"pool workers outlived their killed parent: {[p for p in workers if _alive(p)]}"
    finally:
        for pid in workers:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
