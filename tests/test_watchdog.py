"""Issue 14 point 7: what a process starts ends with it, even when it dies without running any
cleanup (os._exit, as a SIGKILL would): cinesub.watchdog, without a build."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
GRACE_S = 20.0

pytestmark = pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="Linux /proc")

CHILD = textwrap.dedent("""
    import os, subprocess, sys, time
    before = subprocess.Popen(["sleep", "300"])  # started before the guard, as Prefect's server is
    from cinesub.watchdog import guard
    guard()
    after = subprocess.Popen([sys.executable, "-c",
        "import subprocess, time; subprocess.Popen(['sleep', '301']); time.sleep(300)"])
    time.sleep(2.5)  # the watchdog's first snapshot and the grandchild exist
    print(before.pid, after.pid, flush=True)
    os._exit(137)
""")


def _alive(pid: int) -> bool:
    try:
        s = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return s[s.rindex(")") + 2:].split()[0] != "Z"


def _tree(root: int) -> set[int]:
    kids: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        try:
            s = Path(f"/proc/{name}/stat").read_text()
        except OSError:
            continue
        if name.isdigit():
            kids.setdefault(int(s[s.rindex(")") + 2:].split()[1]), []).append(int(name))
    out, todo = set(), [root]
    while todo:
        for pid in kids.get(todo.pop(), []):
            if pid not in out:
                out.add(pid)
                todo.append(pid)
    return out


def test_everything_a_dead_process_started_ends_with_it(tmp_path):
    bystander = subprocess.Popen(["sleep", "302"])  # not the dead process's: left alone
    env = {k: v for k, v in os.environ.items() if k != "CINESUB_BUILD_TOKEN"}
    env["PYTHONPATH"] = os.pathsep.join([str(REPO), *filter(None, [os.environ.get("PYTHONPATH")])])
    proc = subprocess.Popen([sys.executable, "-c", CHILD], cwd=tmp_path, env=env, stdout=subprocess.PIPE,
                            text=True, start_new_session=True)
    seen: set[int] = set()
    try:
        while proc.poll() is None:
            seen |= _tree(proc.pid)
            time.sleep(0.1)
        before, after = (int(x) for x in proc.stdout.read().split())
        assert proc.returncode == 137
        assert {before, after} <= seen and len(seen) >= 4  # sleep, python, its sleep, the watchdog
        deadline = time.monotonic() + GRACE_S
        while any(_alive(p) for p in seen) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert sorted(p for p in seen if _alive(p)) == []
        assert _alive(bystander.pid)
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        bystander.kill()
        bystander.wait()
