"""A Prefect API server kept running for one CINESUB_HOME, reused by every build there.

Without one, each ``cinesub build`` starts Prefect's *ephemeral* API server and stops it at the
end: 10–40 s on 2 cores before the flow's first stage, more than a small rebuild itself
(benchmarks/bench_rebuild.py). ``cinesub server start`` starts ``prefect server start`` bound to
127.0.0.1, in its own session (a build's watchdog never ends it), with Prefect's state in the
home's ``PREFECT_HOME`` (``CINESUB_HOME/prefect`` unless configured), and records it in
``PREFECT_HOME/cinesub-server.json``. A build whose environment names no ``PREFECT_API_URL``
uses that server when it answers its health check (:func:`discover`), and the ephemeral one
otherwise; a configured ``PREFECT_API_URL`` always wins. ``cinesub server stop`` ends it.
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
from dataclasses import dataclass
from pathlib import Path

from cinesub.errors import CinesubError, ExitCode

#: the record of the running server, in the home's PREFECT_HOME
STATE_FILE = "cinesub-server.json"
#: the server log, beside it
LOG_FILE = "cinesub-server.log"
#: seconds a build waits for the recorded server's health answer before using the ephemeral one
HEALTH_TIMEOUT_S = 2.0


class ServerStartFailed(CinesubError):
    """``prefect server start`` exited or stayed unhealthy (exit 7; its log is named)."""

    reason = "server_start_failed"
    exit_code = ExitCode.FAILED


@dataclass(frozen=True)
class ServerRecord:
    pid: int
    url: str
    started_at: float
    log: str

    def to_json(self) -> str:
        return json.dumps({"pid": self.pid, "url": self.url, "started_at": self.started_at, "log": self.log})


def prefect_home() -> Path:
    """This process's PREFECT_HOME (set by :func:`cinesub.cli_common.prefect_env`)."""
    return Path(os.environ.get("PREFECT_HOME", "~/.prefect")).expanduser()


def _record_path(home: Path | None = None) -> Path:
    return (home or prefect_home()) / STATE_FILE


def read_record(home: Path | None = None) -> ServerRecord | None:
    try:
        data = json.loads(_record_path(home).read_text())
        return ServerRecord(int(data["pid"]), str(data["url"]), float(data["started_at"]), str(data["log"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def _is_server_process(pid: int) -> bool:
    """``pid`` runs and is a ``prefect server start`` (a recycled pid is not ours)."""
    try:
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        try:
            os.kill(pid, 0)
        except OSError:
            return False
        return True  # no /proc: trust the health check
    return b"server" in cmdline and any(b"prefect" in part for part in cmdline)


def healthy(url: str, timeout: float = HEALTH_TIMEOUT_S) -> bool:
    try:
        with urllib.request.urlopen(url.rstrip("/") + "/health", timeout=timeout) as resp:
            return resp.status == 200
    except (OSError, urllib.error.URLError, ValueError):
        return False


def running(home: Path | None = None) -> ServerRecord | None:
    """The recorded server when it is alive and answers its health check."""
    rec = read_record(home)
    if rec is None or not _is_server_process(rec.pid) or not healthy(rec.url):
        return None
    return rec


def discover() -> str | None:
    """Point this process at the home's server (``PREFECT_API_URL``) when one runs and the
    environment names no API; returns the URL used, or None (Prefect's ephemeral server)."""
    if os.environ.get("PREFECT_API_URL"):
        return None
    rec = running()
    if rec is None:
        return None
    os.environ["PREFECT_API_URL"] = rec.url
    return rec.url


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _prefect_cli() -> list[str]:
    script = Path(sys.executable).parent / "prefect"
    return [str(script)] if script.exists() else [sys.executable, "-m", "prefect"]


def start(port: int | None = None, timeout_s: float = 180.0) -> tuple[ServerRecord, bool]:
    """Start the home's server (or find it running); returns (record, started now)."""
    home = prefect_home()
    home.mkdir(parents=True, exist_ok=True)
    rec = running(home)
    if rec is not None:
        return rec, False
    port = port or _free_port()
    url = f"http://127.0.0.1:{port}/api"
    log = home / LOG_FILE
    env = {k: v for k, v in os.environ.items() if k != "PREFECT_API_URL"}
    env.update(PREFECT_HOME=str(home), PREFECT_SERVER_ANALYTICS_ENABLED="false", DO_NOT_TRACK="1",
               PREFECT_SERVER_UI_ENABLED=env.get("PREFECT_SERVER_UI_ENABLED", "false"))
    with open(log, "ab") as out:
        proc = subprocess.Popen([*_prefect_cli(), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                                env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                start_new_session=True)
    rec = ServerRecord(proc.pid, url, time.time(), str(log))
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerStartFailed(f"prefect server exited with code {proc.returncode}; see {log}")
        if healthy(url, timeout=1.0):
            _record_path(home).write_text(rec.to_json() + "\n")
            return rec, True
        time.sleep(0.25)
    _terminate(proc.pid)
    raise ServerStartFailed(f"prefect server did not answer on {url} within {timeout_s:g} s; see {log}")


def _terminate(pid: int, grace_s: float = 15.0) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        except PermissionError:
            os.kill(pid, sig)
        deadline = time.monotonic() + grace_s
        while time.monotonic() < deadline:
            try:
                waited, _ = os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                waited = 0
                if not _is_server_process(pid):
                    return
            if waited == pid:
                return
            time.sleep(0.1)


def stop() -> ServerRecord | None:
    """Stop the home's server; returns its record, or None when none was running."""
    home = prefect_home()
    rec = read_record(home)
    _record_path(home).unlink(missing_ok=True)
    if rec is None or not _is_server_process(rec.pid):
        return None
    _terminate(rec.pid)
    return rec
