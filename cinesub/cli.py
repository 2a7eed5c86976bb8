"""The ``cinesub`` command line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(help="Build, audit and publish research corpora about films.", no_args_is_help=True)
sample_app = typer.Typer(help="The embedded sample world.", no_args_is_help=True)
app.add_typer(sample_app, name="sample")

console = Console(stderr=True)


def _home(home: Optional[Path]) -> Path:
    return (home or Path(os.environ.get("CINESUB_HOME", "./var"))).resolve()


def _prefect_env(home: Path) -> None:
    """Keep Prefect's own state under CINESUB_HOME unless the user configured Prefect."""
    os.environ.setdefault("PREFECT_HOME", str(home / "prefect"))
    Path(os.environ["PREFECT_HOME"]).expanduser().mkdir(parents=True, exist_ok=True)
    os.environ.setdefault("PREFECT_LOGGING_LEVEL", "WARNING")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")
    # the first start of the ephemeral API server migrates its database: slow on 2 cores
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "180")


@app.command()
def build(
    sample: bool = typer.Option(False, "--sample", help="Build from the embedded sample world (offline)."),
    config: Optional[Path] = typer.Option(None, "--config", help="TOML or YAML settings file."),
    home: Optional[Path] = typer.Option(None, "--home", help="CINESUB_HOME (default ./var)."),
    seed: int = typer.Option(7, help="Sample world seed."),
    films: int = typer.Option(40, help="Sample world size."),
    force: bool = typer.Option(False, help="Rerun every stage even when its inputs are unchanged."),
    faults: Optional[str] = typer.Option(None, help="Sample builds: provider fault modes, 'all' or a list "
                                         "(rate_429,quota,server_5xx,slow,truncated,html_body,zip_bomb,zip_slip)."),
    as_json: bool = typer.Option(False, "--json", help="Print the summary as JSON on stdout."),
) -> None:
    """Run the build-cinesub flow and print where the release is and a summary."""
    h = _home(home)
    _prefect_env(h)
    if config is not None and not config.exists():
        console.print(f"[red]config file not found: {config}[/red]")
        raise typer.Exit(2)
    if faults and not sample:
        console.print("[red]--faults needs --sample (fault modes belong to the fixture servers)[/red]")
        raise typer.Exit(2)
    if faults:
        from fixtures.faults import parse_faults

        try:
            parse_faults(faults)
        except ValueError as exc:
            console.print(f"[red]{exc}[/red]")
            raise typer.Exit(2)
    if not sample:
        from cinesub.settings import load_settings

        settings = load_settings(config, h)
        missing = [name for name, value in (("inputs.sources_dir", settings.inputs.sources_dir),
                                            ("inputs.subtitles_dir", settings.inputs.subtitles_dir))
                   if value is None or not Path(value).is_dir()]
        if missing:
            console.print(f"[red]a non-sample build needs {', '.join(missing)} (an existing directory; "
                          "set it in --config or CINESUB_INPUTS__SOURCES_DIR / CINESUB_INPUTS__SUBTITLES_DIR), "
                          "or use --sample[/red]")
            raise typer.Exit(2)
    from flows.build import build_cinesub, format_summary

    summary = build_cinesub(sample=sample, config=str(config) if config else None, home=str(h),
                            sample_seed=seed, n_films=films, force=force, faults=faults)
    paused = summary.get("status") == "paused"
    blocked = summary.get("status") == "blocked"
    if as_json:
        print(json.dumps(summary, indent=2, default=str))
    elif blocked:
        Console(stderr=True).print(
            f"[red]release blocked by the consistency gate[/red]: {summary['gate'].get('n_failures')} failures "
            f"({', '.join(f'{code} {n}' for codes in (summary['gate'].get('counts') or {}).values() for code, n in codes.items())}); "
            f"nothing was published. Report: {summary['gate_report']}")
    elif paused:
        Console().print(f"build paused: download quota exhausted (reset {summary['quota_reset']}); "
                        f"{summary['work']['downloaded']} files downloaded and kept. Rerun after the reset "
                        "to resume; nothing was published.")
    else:
        _print_summary(summary, format_summary)
    if paused:
        raise typer.Exit(3)
    if blocked:
        raise typer.Exit(4)


def _print_summary(summary: dict, format_summary) -> None:
    out = Console()
    out.print(format_summary(summary))
    t = Table(title="funnel (SPEC A1)")
    for col in ("gate", "kept", "dropped", "reasons"):
        t.add_column(col)
    for g in summary["funnel"]:
        t.add_row(f"{g['gate_no']} {g['gate']}", str(g["kept"]), str(g["dropped"]),
                  ", ".join(f"{k} {v}" for k, v in g["reasons"].items()))
    out.print(t)
    t = Table(title="flags by layer (all candidates / selected cohort tracks)")
    t.add_column("layer")
    t.add_column("all")
    t.add_column("selected")
    for layer, n in summary["flags_by_layer"].items():
        t.add_row(layer, str(n), str(summary["flags_on_selected_tracks"].get(layer, 0)))
    out.print(t)


@sample_app.command("generate")
def sample_generate(
    directory: Path = typer.Argument(..., help="Where to write the sample world."),
    seed: int = typer.Option(7),
    films: int = typer.Option(40),
    as_json: bool = typer.Option(False, "--json"),
) -> None:
    """Write the deterministic sample world (pages, datasets, subtitles, ground truth)."""
    from cinesub.sample.generate import generate

    manifest = generate(directory, seed=seed, n_films=films)
    info = {
        "directory": str(directory.resolve()),
        "films": len(manifest.get("films", [])),
        "candidates": len(manifest.get("candidates", [])),
        "funnel": manifest.get("funnel"),
    }
    if as_json:
        print(json.dumps(info, indent=2))
    else:
        Console().print(f"sample world written to {info['directory']}: {info['films']} films, "
                        f"{info['candidates']} subtitle candidates (ground truth in manifest.json)")


# --- command groups defined in their own modules (each adds itself here) -------------------
# (register lines below)
from cinesub import cli_inspect; cli_inspect.register(app)  # noqa: E702
from cinesub import cli_review; cli_review.register(app)  # noqa: E702
from cinesub import cli_coverage; cli_coverage.register(app)  # noqa: E702
from cinesub import cli_ratings; cli_ratings.register(app)  # noqa: E702
from cinesub import cli_safety; cli_safety.register(app)  # noqa: E702
from cinesub import cli_release; cli_release.register(app)  # noqa: E702
from cinesub import cli_copyright; cli_copyright.register(app)  # noqa: E702
from cinesub import cli_boxoffice; cli_boxoffice.register(app)  # noqa: E702
from cinesub import cli_hollywood; cli_hollywood.register(app)  # noqa: E702


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(app())

