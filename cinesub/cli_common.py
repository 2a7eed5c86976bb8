"""What the ``cinesub`` commands share: the home folder, Prefect's environment, the build lock,
argument checks and the options every build command takes (one declaration each)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console

from cinesub.errors import UsageError

console = Console(stderr=True, soft_wrap=True)


def home_dir(home: Optional[Path]) -> Path:
    """CINESUB_HOME from ``--home`` (or the environment), checked (:func:`cinesub.lock.check_home`)."""
    from cinesub.lock import check_home

    return check_home(home)


def prefect_env(home: Path, discover: bool = True) -> None:
    """Keep Prefect's own state under CINESUB_HOME unless the user configured Prefect; with
    ``discover``, use the home's running Prefect server (``cinesub server start``) when the
    environment names no API (cinesub/prefect_server.py)."""
    os.environ.setdefault("DO_NOT_TRACK", "1")  # Prefect's telemetry banner and events: off
    os.environ.setdefault("PREFECT_HOME", str(home / "prefect"))
    Path(os.environ["PREFECT_HOME"]).expanduser().mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # the first start of the ephemeral API server migrates its database: slow on 2 cores
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")
    if discover:
        from cinesub import prefect_server

        prefect_server.discover()


def check_config_path(config: Optional[Path]) -> None:
    if config is not None and not config.is_file():
        raise UsageError(f"config file not found (or not a file): {config}", "config_not_found")


def check_wait_timeout(value: Optional[float]) -> None:
    import math

    if value is not None and not (math.isfinite(value) and value >= 0):
        raise UsageError(f"--wait-timeout must be a finite number of seconds >= 0, got {value}", "bad_value")


def build_lock(home: Path, wait: bool = False, timeout: Optional[float] = None):
    """The exclusive lock on ``home`` for a build (docs: README "Exit codes", 6)."""
    from cinesub.lock import home_lock

    def waiting(holder) -> None:
        console.print(f"waiting for {home}: locked by {holder.describe() if holder else 'another process'}",
                      highlight=False)

    def stale(holder) -> None:
        console.print(f"note: took over the lock of {holder.describe()}, which ended without releasing it",
                      highlight=False)

    return home_lock(home, wait=wait, timeout=timeout, on_wait=waiting, on_stale=stale)


def command_group(app: typer.Typer, name: str, help: str) -> typer.Typer:
    """A ``cinesub NAME ...`` command group, added to ``app``."""
    group = typer.Typer(help=help, no_args_is_help=True)
    app.add_typer(group, name=name)
    return group


def build_home(home: Optional[Path], config: Optional[Path], wait_timeout: Optional[float]) -> Path:
    """The checked home of a build command, after checking ``--config`` and ``--wait-timeout``."""
    h = home_dir(home)
    check_config_path(config)
    check_wait_timeout(wait_timeout)
    return h


@contextmanager
def build_session(home: Path, wait: bool, wait_timeout: Optional[float]) -> Iterator[None]:
    """Prefect's environment, the home's build lock and the process watchdog around one build;
    its input trees are hashed once (cinesub/digests.py ``one_snapshot``)."""
    from cinesub.digests import one_snapshot

    prefect_env(home)
    with build_lock(home, wait, wait_timeout), one_snapshot():
        from cinesub.watchdog import guard

        guard()  # before Prefect starts its API server: everything the build starts ends with it
        yield


def json_option(help: str = "Print the summary as JSON on stdout.") -> Any:
    return typer.Option(False, "--json", help=help)


# --------------------------------------------------------------------------------------------
# options shared by the build commands
# --------------------------------------------------------------------------------------------
def home_option() -> Any:
    return typer.Option(None, "--home", help="CINESUB_HOME (default ./var).")


def config_option() -> Any:
    return typer.Option(None, "--config", help="TOML or YAML settings file.")


def force_option() -> Any:
    return typer.Option(False, "--force", help="Rerun every stage even when its inputs are unchanged.")


def wait_option() -> Any:
    return typer.Option(False, "--wait", help="When another build holds this home, wait for it.")


def wait_timeout_option() -> Any:
    return typer.Option(None, "--wait-timeout", help="With --wait: give up after this many seconds (exit 6).")


def runner_option() -> Any:
    return typer.Option(None, "--runner", help="Where per-item work runs: local (spawn processes, the default) "
                        "or dask (a Dask cluster; docs/distributed.md). Default: execution.runner.")


def dask_address_option() -> Any:
    return typer.Option(None, "--dask-address", help="With --runner dask: the scheduler, tcp://HOST:PORT "
                        "(without it a LocalCluster runs for the length of the build).")


def check_runner(runner: str | None, dask_address: str | None) -> None:
    """A bad ``--runner``/``--dask-address`` is a :class:`UsageError` before anything runs."""
    from cinesub.settings import check_dask_address

    if runner is not None and runner not in ("local", "dask"):
        raise UsageError(f"--runner must be 'local' or 'dask', not {runner!r}", "runner_unknown")
    if dask_address is not None:
        if runner == "local":
            raise UsageError("--dask-address needs --runner dask", "runner_conflict")
        try:
            check_dask_address(dask_address)
        except ValueError as exc:
            raise UsageError(f"--dask-address: {exc}", "dask_address_invalid") from None
