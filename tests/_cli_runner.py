"""Running `cinesub build` in a test: its own process group, output to files, so children left
behind by a hard crash (the ephemeral Prefect server, pool workers) cannot hold a pipe open, and
everything it started is killed afterwards."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_build(home: Path, *args: str, films: int = 20, timeout: int = 600, **extra_env: str
              ) -> subprocess.CompletedProcess:
    return run_cli(home, "build", "--sample", "--films", str(films), "--json", *args, timeout=timeout, **extra_env)


def run_cli(home: Path, *args: str, timeout: int = 600, drop_env: tuple[str, ...] = (), **extra_env: str
            ) -> subprocess.CompletedProcess:
    """`cinesub ARGS` with CINESUB_HOME=home (variables in ``drop_env`` removed)."""
    env = dict(os.environ, CINESUB_HOME=str(home), PREFECT_HOME=str(home / "prefect"), **extra_env)
    for var in ("PREFECT_API_URL", *drop_env):
        env.pop(var, None)
    home.mkdir(parents=True, exist_ok=True)
    n = len(list(home.parent.glob(f"{home.name}.*.out")))
    out_path, err_path = home.parent / f"{home.name}.{n}.out", home.parent / f"{home.name}.{n}.err"
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
