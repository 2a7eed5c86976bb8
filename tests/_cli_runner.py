"""Running `cinesub` in a test: its own process group, output to files, so children left behind by
a hard crash (the ephemeral Prefect server, pool workers) cannot hold a pipe open, and everything
it started is killed afterwards.

Two session-wide savings, both opt-out (``ephemeral=True``, ``seed_world=False``):

* **one Prefect server per test process** (per xdist worker), started on first use and passed to
  every `cinesub` subprocess as ``PREFECT_API_URL``, instead of an ephemeral server per command
  (its start is a third of a small build). Tests about the ephemeral server itself (process
  cleanup, the lock taken before Prefect starts) keep the ephemeral path.
* **each sample world generated once per test run** (shared by the xdist workers through a file
  lock) and copied into a fresh ``CINESUB_HOME/sample-world/seed<S>-n<N>``; the flow reuses a world
  whose marker exists, exactly as on a second build.

Thread-safe: a test may drive several `cinesub` commands at once from threads (independent builds
run side by side, :func:`run_parallel`). The one-time starts (the server, a world, a shared build)
are locked, every command gets its own environment (nothing here writes ``os.environ``) and cwd,
and each command's output files are claimed atomically.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
#: where the per-run caches live (set by tests/conftest.py to a folder shared by the xdist workers)
CACHE_ENV = "PYTEST_CINESUB_CACHE"
#: the world marker the flows look for (flows/env/sample.py SAMPLE_GENERATOR_VERSION_FILE)
WORLD_MARKER = "world.json"

#: the session server (tests/conftest.py makes ``tests._cli_runner`` and ``_cli_runner`` one module
#: object, so both names share it): ``url``, ``home`` (its PREFECT_HOME) and ``cm`` once started
_server: dict[str, object] = {}
#: held while the session server starts (threads asking for its URL at once start one server)
_server_lock = threading.Lock()
#: one lock per key (a home's output files, a home's world copy) for the threads of this process
_keyed_locks: dict[str, threading.Lock] = {}
_keyed_locks_guard = threading.Lock()


def _keyed_lock(key: str) -> threading.Lock:
    with _keyed_locks_guard:
        return _keyed_locks.setdefault(key, threading.Lock())


def run_build(home: Path, *args: str, films: int = 20, timeout: int = 600, seed_world: bool = True,
              ephemeral: bool = False, **extra_env: str) -> subprocess.CompletedProcess:
    if seed_world:
        seed_sample_world(home, films=films)
    return run_cli(home, "build", "--sample", "--films", str(films), "--json", *args, timeout=timeout,
                   ephemeral=ephemeral, **extra_env)


def cli_env(home: Path, *, ephemeral: bool = False, drop_env: tuple[str, ...] = (), **extra_env: str
            ) -> dict[str, str]:
    """The environment of a `cinesub` subprocess for ``home``: the session Prefect server, or none
    (``ephemeral``: the command starts its own), a private PREFECT_HOME."""
    env = dict(os.environ, CINESUB_HOME=str(home), PREFECT_HOME=str(home / "prefect"), **extra_env)
    for var in ("PREFECT_API_URL", *drop_env):
        env.pop(var, None)
    if not ephemeral:
        env["PREFECT_API_URL"] = prefect_api_url()
    return env


def run_cli(home: Path, *args: str, timeout: int = 600, drop_env: tuple[str, ...] = (), ephemeral: bool = False,
            **extra_env: str) -> subprocess.CompletedProcess:
    """`cinesub ARGS` with CINESUB_HOME=home (variables in ``drop_env`` removed)."""
    env = cli_env(home, ephemeral=ephemeral, drop_env=drop_env, **extra_env)
    home.mkdir(parents=True, exist_ok=True)
    out_path, err_path = _output_files(home)
    cmd = [sys.executable, "-m", "cinesub.cli", *args]
    with open(out_path, "w") as out, open(err_path, "w") as err:
        proc = subprocess.Popen(cmd, cwd=REPO, env=env, stdout=out, stderr=err, start_new_session=True)
        try:
            rc = proc.wait(timeout=timeout)
        finally:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
    return subprocess.CompletedProcess(cmd, rc, out_path.read_text(), err_path.read_text())


def _output_files(home: Path) -> tuple[Path, Path]:
    """The next free ``<home>.<n>.out``/``.err`` pair beside ``home``, created (claimed) under a
    lock, so two threads running commands for one home never share a file."""
    with _keyed_lock(f"out:{home}"):
        n = len(list(home.parent.glob(f"{home.name}.*.out")))
        out_path, err_path = home.parent / f"{home.name}.{n}.out", home.parent / f"{home.name}.{n}.err"
        out_path.touch(exist_ok=False)
        err_path.touch()
    return out_path, err_path


def run_parallel(*calls: Callable[[], Any]) -> list[Future]:
    """Start each of ``calls`` (typically a chain of `cinesub` commands) in a thread of its own and
    return their futures at once; ``future.result()`` waits and re-raises what the call raised."""
    pool = ThreadPoolExecutor(max_workers=max(1, len(calls)), thread_name_prefix="cinesub-cli")
    futures = [pool.submit(call) for call in calls]
    pool.shutdown(wait=False)
    return futures


# -- the session Prefect server ---------------------------------------------------------------


def prefect_api_url() -> str:
    """The URL of this process's Prefect server, started (and health-checked) on first use; threads
    asking at once wait for the one start."""
    with _server_lock:
        if "url" not in _server:
            _start_prefect_server()
        return str(_server["url"])


def _start_prefect_server() -> None:
    """Start the session server (the caller holds ``_server_lock``)."""
    try:
        from tests import prefect_harness as ph
    except ImportError:  # tests/ itself on sys.path
        import prefect_harness as ph  # type: ignore[no-redef]

    root = _cache_dir() / f"prefect-server-{os.getpid()}"
    root.mkdir(parents=True, exist_ok=True)
    port = ph.free_port()
    url = f"http://127.0.0.1:{port}/api"
    env = ph.prefect_env(root / "prefect-home", url)
    log = root / "server.log"
    cm = ph.background([*ph.prefect_cli(), "server", "start", "--host", "127.0.0.1", "--port", str(port)],
                       env=env, cwd=REPO, log=log)
    proc = cm.__enter__()
    try:
        ph.wait_healthy(url, proc, log, timeout=180)
    except BaseException:
        cm.__exit__(None, None, None)
        raise
    _server.update(url=url, home=root / "prefect-home", cm=cm)
    atexit.register(stop_prefect_server)


def prefect_server_home() -> Path | None:
    """The PREFECT_HOME of the session server (its SQLite database), once started."""
    with _server_lock:
        home = _server.get("home")
    return Path(str(home)) if home else None


def stop_prefect_server() -> None:
    with _server_lock:
        cm = _server.pop("cm", None)
        _server.clear()
    if cm is not None:
        cm.__exit__(None, None, None)  # type: ignore[attr-defined]


# -- sample worlds generated once per run -----------------------------------------------------


def _cache_dir() -> Path:
    path = Path(os.environ.get(CACHE_ENV) or (Path("/tmp") / f"cinesub-test-cache-{os.getpid()}"))
    path.mkdir(parents=True, exist_ok=True)
    return path


def cached_sample_world(films: int = 20, seed: int = 7) -> Path:
    """The sample world ``seed<S>-n<N>``, generated once per test run (a file lock makes the xdist
    workers, and the threads of one of them, share it: each acquire opens its own descriptor)."""
    from filelock import FileLock

    target = _cache_dir() / "worlds" / f"seed{seed}-n{films}"
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if not (target / WORLD_MARKER).exists():
            from cinesub.sample.generate import generate

            tmp = target.with_name(target.name + ".tmp")
            shutil.rmtree(tmp, ignore_errors=True)
            generate(tmp, seed=seed, n_films=films)
            os.replace(tmp, target)
    return target


def seed_sample_world(home: Path, films: int = 20, seed: int = 7) -> Path:
    """Give ``home`` a copy of the cached world (a real copy: nothing shares files with the cache);
    a home that already has that world keeps it."""
    dest = home / "sample-world" / f"seed{seed}-n{films}"
    with _keyed_lock(f"world:{dest}"):
        if not (dest / WORLD_MARKER).exists():
            src = cached_sample_world(films, seed)
            dest.parent.mkdir(parents=True, exist_ok=True)
            shutil.rmtree(dest, ignore_errors=True)
            shutil.copytree(src, dest)
    return dest


# -- builds shared by test modules ------------------------------------------------------------


def shared_build(name: str, *args: str, films: int | None = 20, builds: int = 1, seed_world: bool = True,
                 ephemeral: bool = False, timeout: int = 900) -> dict:
    """``builds`` runs of `cinesub build --sample [--films N] --json ARGS` into one home, done once
    per test run (a file lock makes the xdist workers share it) for the modules that only read
    its outputs. Returns ``{"home": Path, "runs": [{"returncode", "stdout", "stderr"}, ...]}``;
    every run must succeed. A test that writes to the home works on :func:`copy_home`."""
    import json

    from filelock import FileLock

    root = _cache_dir() / "builds" / name
    root.parent.mkdir(parents=True, exist_ok=True)
    record = root / "result.json"
    with FileLock(str(root) + ".lock"):
        if not record.exists():
            shutil.rmtree(root, ignore_errors=True)
            home = root / "home"
            film_args = ("--films", str(films)) if films is not None else ()
            if seed_world and films is not None:
                seed_sample_world(home, films=films)
            runs = []
            for _ in range(builds):
                proc = run_cli(home, "build", "--sample", *film_args, "--json", *args, timeout=timeout,
                               ephemeral=ephemeral)
                assert proc.returncode == 0, f"shared build {name}: {proc.stdout[-3000:]}{proc.stderr[-6000:]}"
                runs.append({"returncode": proc.returncode, "stdout": proc.stdout, "stderr": proc.stderr})
            record.write_text(json.dumps({"runs": runs}))
    return {"home": root / "home", "runs": json.loads(record.read_text())["runs"]}


def copy_home(src: Path, dest: Path) -> Path:
    """A private copy of a home (real copies, DuckDB files included; release links kept as links)."""
    shutil.copytree(src, dest, symlinks=True)
    return dest


def sample20_build() -> tuple[Path, dict]:
    """`cinesub build --sample --films 20 --json` into a fresh home, once per test run, with the
    ephemeral Prefect server (so the home's own PREFECT_HOME holds the run's artifacts): read by
    tests/test_report.py, tests/test_safety_reference.py, tests/test_resume.py (the uninterrupted
    release) and, copied, tests/test_review.py."""
    import json

    shared = shared_build("sample20", films=20, ephemeral=True)
    return shared["home"], json.loads(shared["runs"][0]["stdout"])
