"""The ``cinesub`` command line."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Optional

# before anything imports Prefect: its first-run telemetry banner and events stay off
os.environ.setdefault("DO_NOT_TRACK", "1")

import typer  # noqa: E402
from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from cinesub import cli_common as common  # noqa: E402
from cinesub.cli_common import home_dir as _home  # noqa: E402
from cinesub.errors import ExitCode, UsageError  # noqa: E402


class _GuardedTyper(typer.Typer):
    """``app()`` (the ``cinesub`` script) runs through :func:`cinesub.cli_errors.run_guarded`:
    every error is one line on stderr and a documented exit code, never a traceback."""

    def __call__(self, *args, **kwargs):
        if args or kwargs:  # a caller driving click itself (tests, embedding)
            return super().__call__(*args, **kwargs)
        from cinesub.cli_errors import run_guarded

        _skip_exit_collection()
        sys.exit(run_guarded(lambda **kw: super(_GuardedTyper, self).__call__(**kw)))


def _skip_exit_collection() -> None:
    """The ``cinesub`` process ends without the interpreter's last garbage collection of every
    object a build left (Prefect, pydantic, Polars: about 1 s of a build's wall time on 2 cores;
    docs/rebuilds.md, "Fixed costs of a build"). Registered before the command imports Prefect, so
    it runs after every other exit handler (theirs drain Prefect's logs and events first); the
    objects are then frozen out of the collector, not finalised one by one: open files and
    sockets are closed by the OS, stdout and stderr are still flushed."""
    import atexit
    import gc

    atexit.register(gc.freeze)


app = _GuardedTyper(help="Build, audit and publish research corpora about films.", no_args_is_help=True)
sample_app = typer.Typer(help="The embedded sample world.", no_args_is_help=True)
app.add_typer(sample_app, name="sample")

def _version(value: bool) -> None:
    if value:
        from importlib.metadata import PackageNotFoundError, version

        try:
            v = version("cinesub")
        except PackageNotFoundError:  # running from a source tree that was never installed
            from cinesub import __version__ as v
        print(f"cinesub {v}")
        raise typer.Exit(0)


@app.callback()
def _root(version: bool = typer.Option(False, "--version", is_eager=True, callback=_version,
                                       help="Print the version and exit.")) -> None:
    pass


@app.command()
def build(
    sample: bool = typer.Option(False, "--sample", help="Build from the embedded sample world (offline)."),
    config: Optional[Path] = common.config_option(),
    home: Optional[Path] = common.home_option(),
    seed: int = typer.Option(7, help="Sample world seed."),
    films: int = typer.Option(40, help="Sample world size."),
    force: bool = common.force_option(),
    faults: Optional[str] = typer.Option(None, help="Sample builds: provider fault modes, 'all' or a list "
                                         "(rate_429,quota,server_5xx,slow,truncated,html_body,zip_bomb,zip_slip)."),
    as_json: bool = common.json_option(),
    wait: bool = common.wait_option(),
    wait_timeout: Optional[float] = common.wait_timeout_option(),
    runner: Optional[str] = common.runner_option(),
    dask_address: Optional[str] = common.dask_address_option(),
    refresh_search: bool = typer.Option(False, "--refresh-search", help="Ask the subtitle providers again even "
                                        "where the search cache is fresh (providers.search_ttl_hours)."),
) -> None:
    """Run the build-cinesub flow and print where the release is and a summary (nothing changed
    since the last build: its summary, reused, without running the flow; docs/rebuilds.md)."""
    from cinesub.settings import load_settings

    h = common.build_home(home, config, wait_timeout)
    if faults and not sample:
        raise UsageError("--faults needs --sample (fault modes belong to the fixture servers)")
    if faults:
        from flows.env.sample import parse_faults

        parse_faults(faults)  # a bad name is a UsageError (exit 2)
    if sample:
        check_films(films)
    common.check_runner(runner, dask_address)
    settings = load_settings(config, h)  # a bad config is an error before anything runs
    if not sample:
        missing = [name for name, value in (("inputs.sources_dir", settings.inputs.sources_dir),
                                            ("inputs.subtitles_dir", settings.inputs.subtitles_dir))
                   if value is None or not Path(value).is_dir()]
        if missing:
            raise UsageError(f"a non-sample build needs {', '.join(missing)} (an existing directory; "
                             "set it in --config or CINESUB_INPUTS__SOURCES_DIR / CINESUB_INPUTS__SUBTITLES_DIR), "
                             "or use --sample", "inputs_missing")
    with common.build_session(h, wait, wait_timeout):
        summary = None if force or refresh_search or faults else _unchanged(settings, sample, seed, films)
        if summary is not None:  # nothing changed: no flow, no Prefect, no fixture server
            if as_json:
                print(json.dumps(summary, indent=2, default=str))
            else:
                from flows.summary_text import format_summary

                _print_summary(summary, lambda s: f"nothing changed since build {s['reused_build']}: its release "
                               f"and summary stand (build {s['run_id']}: reused, no stage ran)\n" + format_summary(s))
            return
        from flows.build import build_cinesub, cli_run_settings, format_summary

        with cli_run_settings(sample):
            summary = build_cinesub(sample=sample, config=str(config) if config else None, home=str(h),
                                    sample_seed=seed, n_films=films, force=force, faults=faults,
                                    runner=runner, dask_address=dask_address, refresh_search=refresh_search)
    paused = summary.get("status") == "paused"
    blocked = summary.get("status") == "blocked"
    if as_json:
        print(json.dumps(summary, indent=2, default=str))
    elif blocked:
        Console(stderr=True, soft_wrap=True).print(
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
        raise typer.Exit(ExitCode.PAUSED)
    if blocked:
        raise typer.Exit(ExitCode.BLOCKED)


def _unchanged(settings, sample: bool, seed: int, films: int) -> dict | None:
    """The last build's summary when nothing changed since (flows/kernel_fastpath.py), else None."""
    from flows.env import environment
    from flows.kernel_fastpath import new_run_id, try_reuse

    env = environment(settings, sample, seed=seed, n_films=films)
    return try_reuse(settings, env, new_run_id())


def check_films(films: int) -> None:
    from cinesub.sample.catalog import max_films
    from cinesub.sample.generate import MIN_FILMS

    if films < MIN_FILMS:
        raise UsageError(f"--films {films}: the sample world needs at least {MIN_FILMS} films (one per funnel "
                         "case plus passing films)", "bad_value")
    if films > max_films():
        raise UsageError(f"--films {films}: the sample world has titles for at most {max_films()} films",
                         "bad_value")


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

    check_films(films)
    if directory.exists() and not directory.is_dir():
        raise UsageError(f"{directory} is not a directory", "not_a_directory")
    try:
        manifest = generate(directory, seed=seed, n_films=films)
    except FileExistsError as exc:
        raise UsageError(str(exc), "directory_not_empty") from None
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
from cinesub import cli_runs; cli_runs.register(app)  # noqa: E702
from cinesub import cli_sources; cli_sources.register(app)  # noqa: E702
from cinesub import cli_server; cli_server.register(app)  # noqa: E702


def main() -> None:  # pragma: no cover
    app()


if __name__ == "__main__":  # pragma: no cover
    app()

