"""`cinesub release list|show|diff|withdraw|export`: the versioned releases under CINESUB_HOME/releases."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from cinesub.cli_common import command_group, home_option, json_option


def _releases_dir(home: Optional[Path]) -> Path:
    from cinesub.lock import check_home

    return check_home(home) / "releases"


def _manifest(path: Path) -> dict:
    """A release manifest; a damaged one is a one-line error (exit 2), not a traceback."""
    from cinesub.errors import UsageError

    try:
        man = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise UsageError(f"release manifest {path} is unreadable or not JSON: {exc}", "manifest_damaged") from None
    if not isinstance(man, dict) or not isinstance(man.get("files", {}), dict):
        raise UsageError(f"release manifest {path} is not a manifest object", "manifest_damaged")
    return man


def register(app: typer.Typer) -> None:
    release_app = command_group(app, "release", "Versioned releases (list, show, diff, withdraw, export).")

    @release_app.command("list")
    def release_list(home: Optional[Path] = home_option(), as_json: bool = json_option("Print the list as JSON.")) -> None:
        """Every release, oldest first, with its change kind and row counts."""
        from warehouse.release import latest_version, list_releases

        rdir = _releases_dir(home)
        latest = latest_version(rdir)
        rows = []
        for v in list_releases(rdir):
            man = _manifest(rdir / v / "manifest.json")
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
            Console(stderr=True, soft_wrap=True).print(f"[red]no release {version or '(none yet)'} in {rdir}[/red]")
            raise typer.Exit(2)
        man = _manifest(path)
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

    @release_app.command("diff")
    def release_diff(v1: str = typer.Argument(..., help="older version (or 'latest' or a path)"),
                     v2: str = typer.Argument(..., help="newer version (or 'latest' or a path)"),
                     home: Optional[Path] = typer.Option(None, "--home"),
                     as_json: bool = typer.Option(False, "--json")) -> None:
        """Films and tracks added, removed and changed between two releases (and the change kind)."""
        from warehouse.diff import diff_releases, render_diff_text
        from warehouse.load import resolve

        rdir = _releases_dir(home)
        try:
            a, b = resolve(rdir, v1), resolve(rdir, v2)
        except FileNotFoundError as exc:
            Console(stderr=True, soft_wrap=True).print(f"[red]{exc}[/red]")
            raise typer.Exit(2)
        d = diff_releases(a, b)
        if as_json:
            print(json.dumps(d, indent=2, default=str))
        else:
            print(render_diff_text(d))

    @release_app.command("withdraw")
    def release_withdraw(film: str = typer.Argument(..., help="IMDb id (tt…) of the film to withdraw"),
                         reason: str = typer.Option(..., "--reason", help="why (kept in the withdrawal log)"),
                         by: Optional[str] = typer.Option(None, "--by", help="who asked (kept in the log only)"),
                         home: Optional[Path] = typer.Option(None, "--home"),
                         config: Optional[Path] = typer.Option(None, "--config"),
                         as_json: bool = typer.Option(False, "--json")) -> None:
        """Remove a film on request: a new major release without it; the withdrawal is logged."""
        from cinesub.settings import load_settings
        from cinesub.state import connect
        from warehouse.load import resolve
        from warehouse.release import ReleaseBlocked
        from warehouse.withdraw import WithdrawError, withdraw

        from cinesub.lock import check_home, home_lock

        if config is not None and not config.is_file():
            raise typer.BadParameter(f"config file not found: {config}", param_hint="--config")
        settings = load_settings(str(config) if config else None, check_home(home))
        rdir = settings.releases_dir
        err = Console(stderr=True, soft_wrap=True)
        try:
            latest = _manifest(resolve(rdir, "latest") / "manifest.json")
        except FileNotFoundError as exc:
            err.print(f"[red]{exc}[/red]")
            raise typer.Exit(2)
        kwargs = {"config_hash": settings.config_hash(), "inputs": latest.get("inputs", {}),
                  "countries": tuple(settings.countries), "languages": tuple(settings.languages),
                  "release_settings": settings.release, "reports_dir": settings.reports_dir,
                  "thresholds": settings.thresholds}
        try:
            with home_lock(settings.home), connect(settings.state_db) as con:
                from warehouse.release import read_selection  # the sets the build's survey chose

                kwargs["languages"] = read_selection(con, "languages", kwargs["languages"])
                kwargs["countries"] = read_selection(con, "countries", kwargs["countries"])
                out = withdraw(con, rdir, film, reason=reason, requested_by=by, publish_kwargs=kwargs)
        except WithdrawError as exc:
            err.print(f"[red]{exc.code}: {exc}[/red]")
            raise typer.Exit(2)
        except ReleaseBlocked as exc:
            err.print(f"[red]{exc}[/red]")
            raise typer.Exit(4)
        if as_json:
            print(json.dumps(out, indent=2, default=str))
            return
        rel = out["release"]
        Console().print(f"withdrew {film}: release {rel['version']} ({rel.get('kind')}) at {rel['path']}; "
                        f"logged in {rdir / 'withdrawals.jsonl'}")

    @release_app.command("export")
    def release_export(version: str = typer.Argument(..., help="a version, 'latest', or a release path"),
                       fmt: str = typer.Option(..., "--format", help="json | parquet | hf"),
                       out: Path = typer.Option(..., "--out", help="target directory (new or empty)"),
                       public_only: bool = typer.Option(False, "--public-only",
                                                        help="only the stratified public sample (SPEC C)"),
                       home: Optional[Path] = typer.Option(None, "--home"),
                       as_json: bool = typer.Option(False, "--json")) -> None:
        """Export a release as film-entity JSON, Parquet tables, or a Hugging Face dataset folder."""
        from warehouse.export import export_release
        from warehouse.load import resolve

        err = Console(stderr=True, soft_wrap=True)
        if fmt not in ("json", "parquet", "hf"):
            err.print(f"[red]unknown format {fmt!r}: use json, parquet or hf[/red]")
            raise typer.Exit(2)
        try:
            src = resolve(_releases_dir(home), version)
            path = export_release(src, out, fmt, public_only=public_only)
        except (FileNotFoundError, FileExistsError, ValueError) as exc:
            err.print(f"[red]{exc}[/red]")
            raise typer.Exit(2)
        if as_json:
            print(json.dumps({"version": src.name, "format": fmt, "path": str(path), "public_only": public_only}))
        else:
            Console().print(f"exported {src.name} as {fmt} to {path}")
