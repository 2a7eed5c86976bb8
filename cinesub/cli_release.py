"""`cinesub release list|show`: the versioned releases under CINESUB_HOME/releases."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table


def _releases_dir(home: Optional[Path]) -> Path:
    return (home or Path(os.environ.get("CINESUB_HOME", "./var"))).resolve() / "releases"


def register(app: typer.Typer) -> None:
    release_app = typer.Typer(help="Versioned releases (list, show).", no_args_is_help=True)
    app.add_typer(release_app, name="release")

    @release_app.command("list")
    def release_list(home: Optional[Path] = typer.Option(None, "--home"),
                     as_json: bool = typer.Option(False, "--json")) -> None:
        """Every release, oldest first, with its change kind and row counts."""
        from warehouse.release import latest_version, list_releases

        rdir = _releases_dir(home)
        latest = latest_version(rdir)
        rows = []
        for v in list_releases(rdir):
            man = json.loads((rdir / v / "manifest.json").read_text())
            rows.append({"version": v, "change": man.get("change"), "previous": man.get("previous"),
                         "latest": v == latest,
                         "films": man["files"].get("films.parquet", {}).get("rows"),
                         "tracks": man["files"].get("tracks.parquet", {}).get("rows"),
                         "entries": man["files"].get("entries.parquet", {}).get("rows")})
        if as_json:
            print(json.dumps(rows, indent=2))
            return
        t = Table(title=f"releases in {rdir}")
        for col in ("version", "change", "films", "tracks", "entries", "latest"):
            t.add_column(col)
        for r in rows:
            t.add_row(r["version"], str(r["change"]), str(r["films"]), str(r["tracks"]), str(r["entries"]),
                      "*" if r["latest"] else "")
        Console().print(t)

    @release_app.command("show")
    def release_show(version: str = typer.Argument(..., help="a version, or 'latest'"),
                     home: Optional[Path] = typer.Option(None, "--home"),
                     as_json: bool = typer.Option(False, "--json")) -> None:
        """The manifest of one release (files with sha256, size and rows; config hash; inputs)."""
        from warehouse.release import latest_version

        rdir = _releases_dir(home)
        if version == "latest":
            version = latest_version(rdir) or ""
        path = rdir / version / "manifest.json"
        if not version or not path.is_file():
            Console(stderr=True).print(f"[red]no release {version or '(none yet)'} in {rdir}[/red]")
            raise typer.Exit(2)
        man = json.loads(path.read_text())
        if as_json:
            print(json.dumps(man, indent=2))
            return
        c = Console()
        c.print(f"release {man['version']} ({man.get('change')}, previous {man.get('previous')}) at {rdir / version}")
        c.print(f"code {man.get('code_version')}  config {man.get('config_hash')}  inputs {man.get('inputs')}")
        t = Table()
        for col in ("file", "rows", "size", "sha256"):
            t.add_column(col)
        for name, meta in sorted(man["files"].items()):
            t.add_row(name, str(meta.get("rows")), str(meta.get("size")), meta.get("sha256", "")[:16])
        c.print(t)
