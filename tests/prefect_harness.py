"""Helpers to drive a real Prefect server and worker from tests, with bounded waits and a
teardown that always kills what was started.

Every process is started in its own session (its own process group). Prefect's process worker
starts each flow run in yet another process group, so teardown also walks /proc for the
descendants of what we started and signals their groups; it never signals the test's own group.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

TERMINAL_STATES = {"COMPLETED", "FAILED", "CRASHED", "CANCELLED"}


def prefect_cli() -> list[str]:
    """The `prefect` console script of the running interpreter's environment."""
    script = Path(sys.executable).parent / "prefect"
    return [str(script)] if script.exists() else [sys.executable, "-m", "prefect"]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def prefect_env(prefect_home: Path, api_url: str, **extra: str) -> dict[str, str]:
    """A clean environment: no inherited PREFECT_*/CINESUB_* settings, a private PREFECT_HOME."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "CINESUB_"))}
    env.update(
        PREFECT_HOME=str(prefect_home),
        PREFECT_API_URL=api_url,
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PREFECT_SERVER_UI_ENABLED="false",
        PREFECT_CLI_WRAP_LINES="false",
        PREFECT_CLI_COLORS="false",
        PYTHONUNBUFFERED="1",
        PATH=str(Path(sys.executable).parent) + os.pathsep + os.environ.get("PATH", ""),
    )
    env.update(extra)
    return env


def tail(path: Path, limit: int = 12_000) -> str:
    try:
        text = path.read_text(errors="replace")
    except OSError as exc:
        return f"<cannot read {path}: {exc}>"
    return text if len(text) <= limit else "…" + text[-limit:]


# -- processes --------------------------------------------------------------------------------


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir() if Path("/proc").is_dir() else ():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        # pid (comm) state ppid ...; comm may hold spaces and parentheses
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(ppid, []).append(int(entry.name))
    return children


def descendants(pid: int) -> list[int]:
    children = _children_map()
    out, todo = [], list(children.get(pid, []))
    while todo:
        p = todo.pop()
        out.append(p)
        todo.extend(children.get(p, []))
    return out


def _signal_groups(pids: Sequence[int], sig: int) -> None:
    own = os.getpgrp()
    groups = set()
    for pid in pids:
        try:
            groups.add(os.getpgid(pid))
        except ProcessLookupError:
            continue
    for pgid in groups - {own}:
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def stop_tree(proc: subprocess.Popen[Any], grace_s: float = 10.0) -> None:
    """SIGTERM the process groups of `proc` and all its descendants, then SIGKILL what is left."""
    if proc.poll() is None:
        tree = [proc.pid, *descendants(proc.pid)]
    else:
        tree = [proc.pid]
    _signal_groups(tree, signal.SIGTERM)
    deadline = time.monotonic() + grace_s
    while time.monotonic() < deadline:
        if proc.poll() is not None and not any(_alive(p) for p in tree[1:]):
            break
        time.sleep(0.2)
    survivors = [p for p in tree if _alive(p)]
    if survivors or proc.poll() is None:
        _signal_groups(survivors or [proc.pid], signal.SIGKILL)
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@contextmanager
def background(cmd: Sequence[str], *, env: dict[str, str], cwd: Path, log: Path) -> Iterator[subprocess.Popen[Any]]:
    """Start `cmd` in a new session with stdout+stderr to `log`; always tear it down."""
    log.parent.mkdir(parents=True, exist_ok=True)
    with open(log, "wb") as fh:
        proc = subprocess.Popen(
            list(cmd), env=env, cwd=cwd, stdout=fh, stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL, start_new_session=True,
        )
    try:
        yield proc
    finally:
        stop_tree(proc)


def run_cli(args: Sequence[str], *, env: dict[str, str], cwd: Path, timeout: float = 180) -> str:
    """Run one `prefect` CLI command, bounded; raise with its output when it fails."""
    cmd = [*prefect_cli(), *args]
    try:
        res = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout,
                             stdin=subprocess.DEVNULL, start_new_session=True)
    except subprocess.TimeoutExpired as exc:
        raise AssertionError(f"timed out after {timeout}s: {' '.join(cmd)}\n{exc.stdout or ''}{exc.stderr or ''}")
    if res.returncode != 0:
        raise AssertionError(f"exit {res.returncode}: {' '.join(cmd)}\n{res.stdout}\n{res.stderr}")
    return res.stdout + res.stderr


# -- API --------------------------------------------------------------------------------------


def api(api_url: str, path: str, body: Any | None = None, timeout: float = 10) -> Any:
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(api_url.rstrip("/") + path, data=data, method="POST" if data else "GET",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=timeout) as resp:
        return json.loads(resp.read() or b"null")


def wait_healthy(api_url: str, proc: subprocess.Popen[Any], log: Path, timeout: float = 120) -> float:
    """Wait for /api/health; return seconds waited. Fails early when the server exits."""
    start = time.monotonic()
    while time.monotonic() - start < timeout:
        if proc.poll() is not None:
            raise AssertionError(f"prefect server exited with {proc.returncode}:\n{tail(log)}")
        try:
            if api(api_url, "/health", timeout=2) is True:
                return time.monotonic() - start
        except (urllib.error.URLError, ConnectionError, TimeoutError, json.JSONDecodeError):
            pass
        time.sleep(0.5)
    raise AssertionError(f"prefect server not healthy after {timeout}s:\n{tail(log)}")


def wait_flow_run(api_url: str, flow_run_id: str, worker: subprocess.Popen[Any], timeout: float) -> dict[str, Any]:
    """Poll a flow run until it reaches a terminal state (or the worker is gone); return it."""
    deadline = time.monotonic() + timeout
    worker_gone_at: float | None = None
    run: dict[str, Any] = {}
    while time.monotonic() < deadline:
        try:
            run = api(api_url, f"/flow_runs/{flow_run_id}")
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            run = run or {}
        if run.get("state_type") in TERMINAL_STATES:
            return run
        if worker.poll() is not None:
            # a --run-once worker exits once its run finished; give the API a moment to agree
            worker_gone_at = worker_gone_at or time.monotonic()
            if time.monotonic() - worker_gone_at > 15:
                return run
        time.sleep(2)
    return run
