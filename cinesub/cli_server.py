"""`cinesub server start|stop|status`: the Prefect API server kept running for a home, which every
build there then reuses instead of starting Prefect's ephemeral server (cinesub/prefect_server.py,
docs/rebuilds.md)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from cinesub import cli_common as common


def register(app: typer.Typer) -> None:
    server_app = common.command_group(app, "server", "The home's Prefect API server, reused by every build "
                                      "(start, stop, status).")

    def _enter(home: Optional[Path]) -> Path:
        h = common.home_dir(home)
        common.prefect_env(h, discover=False)
        return h

    @server_app.command("start")
    def server_start(home: Optional[Path] = common.home_option(),
                     port: Optional[int] = typer.Option(None, "--port", min=1, max=65535,
                                                        help="Port on 127.0.0.1 (default: a free one)."),
                     timeout: float = typer.Option(180.0, "--timeout", min=1.0,
                                                   help="Seconds to wait for the server's health check."),
                     as_json: bool = common.json_option("Print the server record as JSON.")) -> None:
        """Start the home's Prefect server (or report the one running); builds here then use it."""
        from cinesub import prefect_server

        _enter(home)
        rec, started = prefect_server.start(port=port, timeout_s=timeout)
        if as_json:
            print(json.dumps({"url": rec.url, "pid": rec.pid, "started": started, "log": rec.log}))
        else:
            common.console.print(f"prefect server {'started' if started else 'already running'}: {rec.url} "
                                 f"(pid {rec.pid}, log {rec.log})", highlight=False)

    @server_app.command("stop")
    def server_stop(home: Optional[Path] = common.home_option()) -> None:
        """Stop the home's Prefect server; builds go back to Prefect's ephemeral server."""
        from cinesub import prefect_server

        _enter(home)
        rec = prefect_server.stop()
        common.console.print(f"prefect server stopped (pid {rec.pid})" if rec else "no prefect server was running",
                             highlight=False)

    @server_app.command("status")
    def server_status(home: Optional[Path] = common.home_option(),
                      as_json: bool = common.json_option("Print the status as JSON.")) -> None:
        """Whether the home's Prefect server runs (exit 0) or not (exit 1)."""
        from cinesub import prefect_server

        _enter(home)
        rec = prefect_server.running()
        if as_json:
            print(json.dumps({"running": rec is not None, "url": rec.url if rec else None,
                              "pid": rec.pid if rec else None}))
        else:
            common.console.print(f"running: {rec.url} (pid {rec.pid})" if rec else "not running", highlight=False)
        raise typer.Exit(0 if rec else 1)
