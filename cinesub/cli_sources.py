"""`cinesub sources mirror|status`: crawl Kids-in-Mind, Common Sense Media and IMDb into the
inventory layout (:func:`extractors.sources.mirror.mirror_sources`) and show the crawl status table.

Exit codes: 0 the crawl ran to its end (some pages failed or were challenged: still 0, the summary
says how many and the status table lists them); 2 usage error (a bad ``--only``, ``--limit`` or
``--config``); the usual codes of the CLI otherwise (README "Exit codes").
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, Optional

import typer

from cinesub import cli_common as common
from cinesub.errors import UsageError

MIRROR_HELP = """Mirror the review sites and IMDb into the inventory layout (docs/sources.md "Crawl").

Endpoints come from the settings (endpoints.kim, endpoints.csm, endpoints.imdb,
endpoints.imdb_datasets); politeness from sources.requests_per_second, sources.user_agent,
sources.browser_fallback and sources.refresh_after_days.

Every URL tried gets a row in CINESUB_HOME/state/crawl.duckdb (see `cinesub sources status`); a
failed or challenged page never stops the crawl, and a rerun fetches only what is new or changed.

Exit codes: 0 done (also when some pages failed: the summary says so); 2 usage error (bad --only,
--limit or --config)."""


def _sites(only: Optional[str]) -> tuple[str, ...]:
    from extractors.sources.mirror import SITES

    if only is None:
        return SITES
    names = tuple(dict.fromkeys(s.strip().lower() for s in only.split(",") if s.strip()))
    bad = [n for n in names if n not in SITES]
    if bad or not names:
        raise UsageError(f"--only {only!r}: expected a comma-separated list of {', '.join(SITES)}", "bad_value")
    return names


def status_db(home: Path) -> Path:
    return home / "state" / "crawl.duckdb"


def _out_dir(settings: Any, out: Optional[Path]) -> Path:
    if out is not None:
        return out
    if settings.inputs.sources_dir is not None:
        return Path(settings.inputs.sources_dir)
    return settings.home / "sources" / "live"


def _progress_bar(enabled: bool):
    """A rich progress line on stderr (nothing when stderr is not a terminal or --json)."""
    from contextlib import nullcontext

    if not enabled or not sys.stderr.isatty():
        return nullcontext(None)
    from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(SpinnerColumn(), TextColumn("{task.description}"), TextColumn("{task.completed} pages"),
                    TimeElapsedColumn(), console=common.console, transient=True)


def _summary_lines(report: dict[str, Any]) -> list[str]:
    c, ch = report["counts"], report["changes"]
    lines = [f"mirrored into {report['out_dir']}: {report['kim']} KIM pages, {report['csm']} CSM pages, "
             f"{report['imdb_titles']} IMDb titles, datasets {', '.join(report['datasets']) or 'none'}",
             f"this run: {ch['new']} new, {ch['changed']} changed, {ch['unchanged']} unchanged, "
             f"{ch['cached']} cached (fresh, not asked), {ch['deferred']} deferred (backoff)"]
    by = report["by_status"]
    lines.append("by status: " + ", ".join(
        f"{s} {c[s]}" + (f" ({', '.join(f'{r} {n}' for r, n in by[s].items() if r)})" if s in by and
                         s not in ("ok",) else "") for s in c if c[s]))
    bad = c.get("failed", 0) + c.get("challenged", 0)
    if bad:
        lines.append(f"note: {bad} pages failed or were challenged; they are listed in {report['status_db']} "
                     "(`cinesub sources status`) and retried by a later run")
    lines.append(f"snapshot {report['snapshot_id']}")
    return lines


def register(app: typer.Typer) -> None:
    group = common.command_group(app, "sources", "Crawl the metadata sources (Kids-in-Mind, Common Sense "
                                 "Media, IMDb) and inspect the crawl.")

    @group.command("mirror", help=MIRROR_HELP)
    def mirror(
        config: Optional[Path] = common.config_option(),
        home: Optional[Path] = common.home_option(),
        only: Optional[str] = typer.Option(None, "--only", help="Comma-separated sites: kim,csm,imdb (default all)."),
        limit: Optional[int] = typer.Option(None, "--limit", help="At most N review pages per site (and N IMDb "
                                            "titles): a first trial."),
        out: Optional[Path] = typer.Option(None, "--out", help="Mirror folder (default inputs.sources_dir, else "
                                           "CINESUB_HOME/sources/live)."),
        refresh_after: Optional[float] = typer.Option(None, "--refresh-after", help="Days after which a review "
                                                      "page is revalidated (default sources.refresh_after_days)."),
        as_json: bool = common.json_option(),
    ) -> None:
        from cinesub.settings import load_settings
        from extractors.sources.fetch import DEFAULT_USER_AGENT, PoliteFetcher
        from extractors.sources.mirror import CrawlStatus, mirror_sources

        sites = _sites(only)
        if limit is not None and limit < 0:
            raise UsageError(f"--limit must be >= 0, got {limit}", "bad_value")
        if refresh_after is not None and refresh_after < 0:
            raise UsageError(f"--refresh-after must be >= 0 days, got {refresh_after}", "bad_value")
        h = common.home_dir(home)
        common.check_config_path(config)
        settings = load_settings(config, h)
        src = settings.sources
        ep = settings.endpoints
        endpoints = {"kim": ep.kim, "csm": ep.csm, "imdb": ep.imdb, "imdb_datasets": ep.imdb_datasets}
        out_dir = _out_dir(settings, out)
        if out_dir.exists() and not out_dir.is_dir():
            raise UsageError(f"--out {out_dir}: not a directory", "not_a_directory")
        browser = None
        if src.browser_fallback:
            from extractors.sources.browser import BrowserFetcher

            browser = BrowserFetcher(src.user_agent or DEFAULT_USER_AGENT)
        with _progress_bar(not as_json) as bar, \
                PoliteFetcher(h / "cache" / "pages", src.user_agent or DEFAULT_USER_AGENT,
                              src.requests_per_second) as fetcher, \
                CrawlStatus(status_db(h)) as status:
            task = bar.add_task("crawling", total=None) if bar is not None else None

            def progress(ev: dict[str, Any]) -> None:
                if bar is not None:
                    bar.update(task, completed=ev["done"], description=f"{ev['site']} {ev['kind']} {ev['status']}")

            try:
                report = mirror_sources(fetcher, endpoints, out_dir, only=sites, limit=limit, progress=progress,
                                        status=status, browser=browser,
                                        refresh_after_days=src.refresh_after_days if refresh_after is None
                                        else refresh_after)
            finally:
                if browser is not None:
                    browser.close()
        data = {**report.to_dict(), "out_dir": str(out_dir.resolve())}
        data.pop("skipped")
        if as_json:
            print(json.dumps(data, indent=2, sort_keys=True))
        else:
            for line in _summary_lines(data):
                print(line)

    @group.command("status")
    def status_cmd(
        home: Optional[Path] = common.home_option(),
        failed: bool = typer.Option(False, "--failed", help="Also list the failed and challenged pages."),
        as_json: bool = common.json_option(),
    ) -> None:
        """Summary of the crawl status table (CINESUB_HOME/state/crawl.duckdb): pages by status and
        reason code, by site, the retry queue and the last run. Exit 2 when no crawl ran yet."""
        from extractors.sources.mirror import CrawlStatus

        h = common.home_dir(home)
        path = status_db(h)
        if not path.is_file():
            raise UsageError(f"no crawl status in {h} yet (run `cinesub sources mirror` first)", "no_crawl")
        with CrawlStatus(path) as st:
            summary = st.summary()
            bad = [r for s in ("failed", "challenged") for r in st.rows(status=s)] if failed else []
        if as_json:
            if failed:
                summary["pages_not_ok"] = bad
            print(json.dumps(summary, indent=2, sort_keys=True, default=str))
            return
        from rich.console import Console
        from rich.table import Table

        con = Console(soft_wrap=True)
        t = Table(title=f"crawl status ({summary['pages']} pages, {summary['db']})")
        for col in ("status", "reason", "pages"):
            t.add_column(col)
        for status, reasons in summary["by_reason"].items():
            for reason, n in reasons.items():
                t.add_row(status, reason or "-", str(n))
        con.print(t)
        q = summary["retry_queue"]
        con.print(f"retry queue: {q['waiting']} pages waiting"
                  + (f" (next at {q['next_retry_after']})" if q["waiting"] else ""), highlight=False)
        last = summary["last_run"]
        if last:
            con.print(f"last run {last['run_id']}: started {last['started_at']}, finished {last['finished_at']}, "
                      f"snapshot {last['snapshot_id']}", highlight=False)
        for r in bad:
            con.print(f"{r['status']:<10} {r['reason'] or '-':<18} {r['http_status'] or '-':>4} tries {r['attempts']} "
                      f"next {r['next_retry_after'] or '-'}  {r['url']}", highlight=False)
