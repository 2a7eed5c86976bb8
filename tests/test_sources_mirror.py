"""The crawl no single page can stop (issue 16 points 3, 4): mirror_sources over the page fixture
with IMDb's WAF challenge on some titles, the crawl status table, backoff and retries on a later
run, conditional requests (304), --limit / --only, SNAPSHOT.json and the `cinesub sources` CLI."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from cinesub.sample.generate import generate
from extractors.sources.fetch import PoliteFetcher
from extractors.sources.mirror import (CRAWL_REASONS, DATASETS, IMDB_PAGES, CrawlStatus, read_snapshot, tree_digest,
                                       mirror_sources)
from fixtures.faults import Response
from fixtures.pages_server import PagesFixture

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("mirror-world") / "world"
    generate(root, n_films=17)
    return root


def _titles(world: Path) -> list[str]:
    return sorted(p.name for p in (world / "imdb" / "title").iterdir() if p.is_dir())


class Clock:
    def __init__(self) -> None:
        self.t = datetime.now(timezone.utc)

    def __call__(self) -> datetime:
        return self.t


def _fetcher(tmp: Path, srv: PagesFixture) -> PoliteFetcher:
    return PoliteFetcher(tmp / "cache", requests_per_second=1000.0, site_roots=srv.base_urls, backoff_base_s=0.01)


def _requests(srv: PagesFixture, start: int, path_part: str) -> list[tuple[str, int]]:
    return [(e.path, e.status) for e in srv.log[start:] if path_part in e.path]


def test_waf_challenges_are_rows_the_rest_is_crawled_and_retried_after_backoff(world: Path, tmp_path: Path) -> None:
    waf = _titles(world)[:2]
    clock = Clock()
    out = tmp_path / "mirror"
    with PagesFixture(world, waf_titles=waf) as srv, _fetcher(tmp_path, srv) as f, \
            CrawlStatus(tmp_path / "crawl.duckdb", clock=clock) as st:
        r1 = mirror_sources(f, srv.base_urls, out, status=st)
        challenged = st.rows(status="challenged")
        assert sorted(r["url"] for r in challenged) == sorted(
            srv.base_urls["imdb"] + t.format(tt=tt) for tt in waf for t in IMDB_PAGES.values())
        assert {(r["reason"], r["http_status"], r["attempts"]) for r in challenged} == {("waf_challenge", 202, 1)}
        first_wait = {datetime.fromisoformat(r["next_retry_after"]) - clock.t for r in challenged}
        assert first_wait == {timedelta(seconds=st.challenge_backoff_s)}
        # the rest is crawled: every other title's pages, the KIM/CSM pages, every dataset (after the challenges)
        assert r1.counts()["challenged"] == len(challenged) and r1.to_dict()["by_status"]["challenged"] == {
            "waf_challenge": len(challenged)}
        for tt in set(r1.imdb_titles):
            assert tt not in waf
        assert len(r1.imdb_titles) >= 5
        assert r1.datasets == [n for n in DATASETS if (world / "imdb" / n).is_file()] and r1.datasets
        for name in r1.datasets:
            assert (out / "imdb" / name).read_bytes() == (world / "imdb" / name).read_bytes()
        assert len(r1.kim) == len(srv.kim_ids) and len(r1.csm) == len(srv.csm_ids)
        snap = read_snapshot(out)
        assert snap and snap["snapshot_id"] == tree_digest(out) == r1.snapshot_id
        assert snap["counts"]["challenged"] == len(challenged)
        assert not any((out / n).exists() for n in ("crawl.duckdb",)) and st.path.parent == tmp_path

        # a rerun before the backoff is over: the challenged pages are not asked for; the index
        # pages and the datasets are revalidated (304), review/title pages come from the cache
        srv.waf_titles.clear()
        clock.t += timedelta(minutes=10)
        n = len(srv.log)
        r2 = mirror_sources(f, srv.base_urls, out, status=st)
        assert not any(tt in path for tt in waf for path, _ in _requests(srv, n, "/imdb/title/"))
        assert r2.changes["deferred"] == len(challenged) + r1.counts()["failed"]  # 404s wait for the refresh window
        assert r2.changes["new"] == r2.changes["changed"] == 0
        assert r2.counts()["not_modified"] == r2.changes["unchanged"] > 0
        assert {s for _p, s in _requests(srv, n, "/")} == {304}
        assert not _requests(srv, n, "/kim/") or all(p.count("/") == 2 for p, _ in _requests(srv, n, "/kim/"))

        # after the backoff: retried, now fetched
        clock.t += timedelta(hours=2)
        srv.waf_titles.add(waf[1])  # one title still challenged: its wait doubles
        r3 = mirror_sources(f, srv.base_urls, out, status=st)
        assert waf[0] in r3.imdb_titles and waf[1] not in r3.imdb_titles
        assert r3.changes["new"] == len(IMDB_PAGES)
        again = st.rows(status="challenged")
        assert {r["attempts"] for r in again} == {2}
        assert {datetime.fromisoformat(r["next_retry_after"]) - clock.t for r in again} == {
            timedelta(seconds=2 * st.challenge_backoff_s)}
        ok = st.get(srv.base_urls["imdb"] + IMDB_PAGES["index"].format(tt=waf[0]))
        assert ok["status"] == "ok" and ok["reason"] == "new" and ok["attempts"] == 0 and ok["next_retry_after"] is None

        # refresh_after_days=0: every review page is revalidated, all answered 304
        n = len(srv.log)
        r4 = mirror_sources(f, srv.base_urls, out, status=st, refresh_after_days=0)
        kim_pages = [p for p, _ in _requests(srv, n, "/kim/") if p.count("/") == 3]
        assert len(kim_pages) == len(srv.kim_ids)
        assert r4.changes["cached"] == 0 and r4.changes["unchanged"] >= len(srv.kim_ids) + len(srv.csm_ids)
        summary = st.summary()
        assert summary["by_status"]["challenged"] == len(IMDB_PAGES)
        assert summary["retry_queue"]["waiting"] == len(IMDB_PAGES) + summary["by_status"].get("failed", 0)


class Broken(PagesFixture):
    """One KIM review page always answers 503, one CSM review page 404, one KIM letter page is garbage."""

    broken_kim: str = ""
    missing_csm: str = ""

    def handle(self, req, kind):  # type: ignore[no-untyped-def]
        if req.path == self.broken_kim:
            return Response(status=503, body=b"<html>down</html>", content_type="text/html")
        if req.path == self.missing_csm:
            return Response(status=404, body=b"<html>gone</html>", content_type="text/html")
        return super().handle(req, kind)


def test_404_and_5xx_pages_are_rows_not_stops(world: Path, tmp_path: Path) -> None:
    with Broken(world) as srv, _fetcher(tmp_path, srv) as f, CrawlStatus(tmp_path / "c.duckdb") as st:
        srv.broken_kim = f"/kim/{srv.kim_ids[0]}.htm"
        srv.missing_csm = f"/csm/movie-reviews/{srv.csm_ids[0]}"
        report = mirror_sources(f, srv.base_urls, tmp_path / "m", status=st)
        bad_kim = st.get(srv.base_url + srv.broken_kim)
        assert (bad_kim["status"], bad_kim["reason"], bad_kim["http_status"]) == ("failed", "http_5xx", 503)
        assert bad_kim["requests"] == f.max_attempts  # the bounded retries, then a row
        gone = st.get(srv.base_url + srv.missing_csm)
        assert (gone["status"], gone["reason"], gone["http_status"]) == ("failed", "http_404", 404)
        # the crawl went on: every other page, and the datasets
        assert len(report.kim) == len(srv.kim_ids) - 1 and len(report.csm) == len(srv.csm_ids) - 1
        assert report.datasets
        assert (srv.base_url + srv.broken_kim, "http_5xx") in report.skipped
        assert report.to_dict()["by_status"]["failed"]["http_5xx"] == 1
        # every reason code written is a documented one
        assert {r["reason"] for r in st.rows()} <= set(CRAWL_REASONS)


def test_limit_and_only(world: Path, tmp_path: Path) -> None:
    with PagesFixture(world) as srv, _fetcher(tmp_path, srv) as f, CrawlStatus(tmp_path / "c.duckdb") as st:
        r = mirror_sources(f, srv.base_urls, tmp_path / "m", status=st, only=("kim", "csm"), limit=2)
        assert len(r.kim) == 2 and len(r.csm) == 2 and not r.datasets and not r.imdb_titles
        assert not any(e.path.startswith("/imdb/") for e in srv.log)
        kim_reviews = [x for x in st.rows(site="kim") if x["kind"] == "review"]
        assert len(kim_reviews) == 2
        letters = [x for x in st.rows(site="kim") if x["kind"] == "index"]
        assert 1 <= len(letters) < 26  # the letter pages stop once the limit is reached
        n = len(srv.log)
        r = mirror_sources(f, srv.base_urls, tmp_path / "m", status=st, only=("imdb",), limit=1)
        assert not any(e.path.startswith(("/kim/", "/csm/")) for e in srv.log[n:])
        assert len(r.imdb_titles) == 1 and r.datasets  # the id comes from the KIM/CSM pages on disk
        with pytest.raises(ValueError):
            mirror_sources(f, srv.base_urls, tmp_path / "m", status=st, only=("kim", "nope"))


def test_fetch_to_file_streams_into_the_content_addressed_cache(world: Path, tmp_path: Path) -> None:
    name = DATASETS[0]
    with PagesFixture(world) as srv, _fetcher(tmp_path, srv) as f:
        url = f"{srv.base_urls['imdb_datasets']}/{name}.gz"
        res = f.fetch_to_file(url, tmp_path / "out" / name)
        assert res.body == b"" and res.etag and not res.not_modified
        wire = (tmp_path / "cache" / "objects" / res.sha256[:2] / res.sha256).read_bytes()
        assert wire[:2] == b"\x1f\x8b" and gzip.decompress(wire) == (world / "imdb" / name).read_bytes()
        assert (tmp_path / "out" / name).read_bytes() == (world / "imdb" / name).read_bytes()
        (tmp_path / "out" / name).unlink()
        again = f.fetch_to_file(url, tmp_path / "out" / name)  # conditional: 304, the file rebuilt from the cache
        assert again.not_modified and srv.log[-1].status == 304
        assert (tmp_path / "out" / name).read_bytes() == (world / "imdb" / name).read_bytes()


def _cli(home: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("CINESUB_")}
    e.update(CINESUB_HOME=str(home), PREFECT_HOME=str(home / "prefect"), **env)
    return subprocess.run([sys.executable, "-m", "cinesub.cli", *args], cwd=REPO, env=e, capture_output=True,
                          text=True, timeout=300)


def test_cli_usage_error_is_one_line_exit_2(tmp_path: Path) -> None:
    p = _cli(tmp_path / "home", "sources", "mirror", "--only", "kim,imbd")
    assert p.returncode == 2, (p.stdout, p.stderr)
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error:") and "--only" in lines[0], p.stderr


def test_cli_mirror_then_status(world: Path, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from cinesub.cli import app

    home = tmp_path / "home"
    runner = CliRunner()
    status = runner.invoke(app, ["sources", "status", "--home", str(home)])
    assert status.exit_code == 2 and "no crawl status" in status.output
    with PagesFixture(world, waf_titles=_titles(world)) as srv:
        ep = srv.base_urls
        env = {"CINESUB_ENDPOINTS__KIM": ep["kim"], "CINESUB_ENDPOINTS__CSM": ep["csm"],
               "CINESUB_ENDPOINTS__IMDB": ep["imdb"], "CINESUB_ENDPOINTS__IMDB_DATASETS": ep["imdb_datasets"],
               "CINESUB_SOURCES__REQUESTS_PER_SECOND": "1000"}
        p = _cli(home, "sources", "mirror", "--limit", "3", "--out", str(tmp_path / "m"), "--json", **env)
    assert p.returncode == 0, p.stderr  # challenged pages (every title here) do not fail the command
    data = json.loads(p.stdout)
    assert data["kim"] == 3 and data["csm"] == 3 and data["datasets"] and data["counts"]["challenged"] > 0
    assert (tmp_path / "m" / "SNAPSHOT.json").is_file()
    status = runner.invoke(app, ["sources", "status", "--home", str(home), "--json", "--failed"])
    assert status.exit_code == 0, status.output
    summary = json.loads(status.output)
    assert summary["last_run"]["snapshot_id"] == data["snapshot_id"]
    assert summary["by_reason"]["challenged"] == {"waf_challenge": data["counts"]["challenged"]}
    assert {r["reason"] for r in summary["pages_not_ok"]} == {"waf_challenge"}
    text = runner.invoke(app, ["sources", "status", "--home", str(home)])
    assert text.exit_code == 0 and "waf_challenge" in text.output and "retry queue" in text.output
