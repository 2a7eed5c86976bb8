"""`cinesub run list|show`: the builds recorded in the state DBs (subtitle and Hollywood) and the
per-stage statistics of one (status, reused, items in/out, dropped by reason, seconds)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Optional

import typer
from rich.console import Console
from rich.table import Table

#: (flow, state DB relative to CINESUB_HOME)
STATE_DBS = (("build-cinesub", Path("state.duckdb")), ("build-hollywood", Path("hollywood") / "state.duckdb"))


def _runs(home: Path) -> list[dict[str, Any]]:
    import duckdb

    out: list[dict[str, Any]] = []
    for flow, rel in STATE_DBS:
        path = home / rel
        if not path.is_file():
            continue
        with duckdb.connect(str(path), read_only=True) as con:
            for run_id, started, finished, status, sample in con.execute(
                    "SELECT run_id, started_at, finished_at, status, sample FROM runs ORDER BY started_at").fetchall():
                out.append({"run_id": run_id, "flow": flow, "status": status, "sample": sample,
                            "started_at": str(started), "finished_at": str(finished) if finished else None})
    return sorted(out, key=lambda r: r["started_at"])


def run_stages(home: Path, run_id: str) -> dict[str, Any]:
    """The run ``run_id`` and its stages, from whichever state DB holds it; an unknown id is a
    :class:`cinesub.errors.UsageError` (reason ``run_unknown``, exit 2)."""
    import duckdb

    from cinesub.errors import UsageError
    from flows.kernel_exec import stage_stats_rows

    for flow, rel in STATE_DBS:
        path = home / rel
        if not path.is_file():
            continue
        with duckdb.connect(str(path), read_only=True) as con:
            row = con.execute("SELECT status, started_at, finished_at FROM runs WHERE run_id = ?", [run_id]).fetchone()
            if row is None:
                continue
            return {"run_id": run_id, "flow": flow, "status": row[0], "started_at": str(row[1]),
                    "finished_at": str(row[2]) if row[2] else None, "stages": stage_stats_rows(con, run_id, flow)}
    raise UsageError(f"no run {run_id!r} in {home} (see `cinesub run list`)", "run_unknown")


def register(app: typer.Typer) -> None:
    run_app = typer.Typer(help="Recorded builds and their per-stage statistics.", no_args_is_help=True)
    app.add_typer(run_app, name="run")

    @run_app.command("list")
    def run_list(home: Optional[Path] = typer.Option(None, "--home"),
                 as_json: bool = typer.Option(False, "--json")) -> None:
        """Every recorded build of both flows, oldest first."""
        from cinesub.lock import check_home

        runs = _runs(check_home(home))
        if as_json:
            print(json.dumps(runs, indent=2))
            return
        table = Table("run", "flow", "status", "sample", "started", "finished")
        for r in runs:
            table.add_row(r["run_id"], r["flow"], r["status"], str(r["sample"]), r["started_at"], r["finished_at"] or "")
        Console().print(table)

    @run_app.command("show")
    def run_show(run_id: str = typer.Argument(..., help="The run id (`cinesub run list`)."),
                 home: Optional[Path] = typer.Option(None, "--home"),
                 as_json: bool = typer.Option(False, "--json")) -> None:
        """The stages of one build: status, reused, items in/out, dropped by reason, seconds."""
        from cinesub.lock import check_home

        run = run_stages(check_home(home), run_id)
        if as_json:
            print(json.dumps(run, indent=2, default=str))
            return
        table = Table("stage", "status", "reused", "in", "out", "dropped", "seconds",
                      title=f"{run['flow']} {run_id}: {run['status']}")
        for s in run["stages"]:
            table.add_row(s["stage"], s["status"], "yes" if s["reused"] else "",
                          "" if s["items_in"] is None else str(s["items_in"]),
                          "" if s["items_out"] is None else str(s["items_out"]),
                          ", ".join(f"{k} {v}" for k, v in s["dropped"].items()),
                          "" if s["seconds"] is None else f"{s['seconds']:.2f}")
        Console(soft_wrap=True).print(table)
