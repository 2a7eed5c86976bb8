"""A build's helper processes end with it, however it ends (``kill -9`` included).

A build starts processes it does not always get to stop: Prefect's ephemeral API server (a
``uvicorn`` subprocess Prefect starts on the first API call and stops only from ``atexit``),
multiprocessing's resource tracker, pool workers, ``pdftoppm``. When the build process is
killed they are re-parented to init and live on. :func:`guard` starts one small watchdog process
per build process:

* it marks the build's environment with a fresh token (``CINESUB_BUILD_TOKEN``): every process
  the build starts from then on inherits it, however deep, and keeps it after re-parenting;
* it records, every :data:`SNAPSHOT_S` seconds, the descendants of the build process (with their
  start times), which covers what was started before the mark (the Prefect server of a flow run
  is started before the flow's body runs);
* when the build process is gone (its parent pid changes), it sends SIGTERM, then after
  :data:`GRACE_S` SIGKILL, to every process of this user that carries the token or was recorded
  (same pid and start time: a reused pid is left alone), and exits.

It ignores SIGINT and SIGHUP so a Ctrl-C or a closed terminal that ends the build still gets the
leftovers cleaned up. Linux (``/proc``); elsewhere :func:`guard` does nothing.

Run as ``python -m cinesub.watchdog PARENT_PID TOKEN``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

ENV = "CINESUB_BUILD_TOKEN"
POLL_S = 0.2
SNAPSHOT_S = 1.0
GRACE_S = 5.0

_guarded: dict[int, subprocess.Popen] = {}


def guard() -> subprocess.Popen | None:
    """Start the watchdog of this process once (idempotent per process); None off Linux."""
    pid = os.getpid()
    if pid in _guarded:
        return _guarded[pid]
    if not Path(f"/proc/{pid}/stat").exists():
        return None
    token = uuid.uuid4().hex
    os.environ[ENV] = token
    # no inherited stdio: it must not hold a caller's pipe open after the build has exited
    proc = subprocess.Popen([sys.executable, "-m", "cinesub.watchdog", str(pid), token],
                            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            close_fds=True)
    _guarded[pid] = proc
    return proc


# --- the watchdog process --------------------------------------------------------------------
def _stat(pid: int) -> tuple[int, int] | None:
    """(parent pid, start ticks) of ``pid``, None when it is gone."""
    try:
        s = Path(f"/proc/{pid}/stat").read_text()
        rest = s[s.rindex(")") + 2:].split()
        return int(rest[1]), int(rest[19])
    except (OSError, ValueError, IndexError):
        return None


def _pids() -> list[int]:
    return [int(n) for n in os.listdir("/proc") if n.isdigit()]


def descendants(root: int) -> dict[int, int]:
    """{pid: start ticks} of every descendant of ``root`` now."""
    children: dict[int, list[tuple[int, int]]] = {}
    for pid in _pids():
        st = _stat(pid)
        if st:
            children.setdefault(st[0], []).append((pid, st[1]))
    out: dict[int, int] = {}
    todo = [root]
    while todo:
        for pid, ticks in children.get(todo.pop(), []):
            if pid not in out:
                out[pid] = ticks
                todo.append(pid)
    return out


def _carries(pid: int, marker: bytes) -> bool:
    try:
        env = Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return False
    return env.startswith(marker) or b"\0" + marker in env


def _victims(token: str, known: dict[int, int]) -> dict[int, int]:
    me, uid = os.getpid(), os.getuid()
    marker = f"{ENV}={token}\0".encode()
    out: dict[int, int] = {}
    for pid in _pids():
        if pid == me:
            continue
        st = _stat(pid)
        if st is None:
            continue
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
        except OSError:
            continue
        if known.get(pid) == st[1] or _carries(pid, marker):
            out[pid] = st[1]
    return out


def _signal_all(victims: dict[int, int], sig: int) -> dict[int, int]:
    """Signal those still alive (same start time); return them."""
    alive = {}
    for pid, ticks in victims.items():
        st = _stat(pid)
        if st is None or st[1] != ticks:
            continue
        try:
            os.kill(pid, sig)
            alive[pid] = ticks
        except ProcessLookupError:
            pass
    return alive


def cleanup(token: str, known: dict[int, int]) -> None:
    victims = _signal_all(_victims(token, known), signal.SIGTERM)
    deadline = time.monotonic() + GRACE_S
    while victims and time.monotonic() < deadline:
        time.sleep(POLL_S)
        victims = {p: t for p, t in victims.items() if (_stat(p) or (0, None))[1] == t and not _zombie(p)}
    _signal_all(victims, signal.SIGKILL)
    # what the victims started while dying
    _signal_all(_victims(token, {}), signal.SIGKILL)


def _zombie(pid: int) -> bool:
    try:
        s = Path(f"/proc/{pid}/stat").read_text()
        return s[s.rindex(")") + 2:].split()[0] == "Z"
    except (OSError, ValueError, IndexError):
        return True


def watch(parent: int, token: str) -> None:
    known: dict[int, int] = {}
    last = 0.0
    while os.getppid() == parent:
        now = time.monotonic()
        if now - last >= SNAPSHOT_S:
            known.update(descendants(parent))
            last = now
        time.sleep(POLL_S)
    cleanup(token, known)


def main(argv: list[str]) -> int:
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    parent, token = int(argv[0]), argv[1]
    watch(parent, token)
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(sys.argv[1:]))
