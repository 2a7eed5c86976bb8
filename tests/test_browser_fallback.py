"""The browser fallback for challenged pages (issue 16 point 3): a loopback page that yields its
content only after a script sets a cookie (fixtures/js_challenge_server.py) — the plain fetcher
gets ``waf_challenge``, Playwright driving Debian's Chromium gets the page, and a crawl with the
fallback stores it (``fetched_via = browser``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from extractors.sources.browser import CHROMIUM, BrowserFetcher
from extractors.sources.fetch import FetchError, PoliteFetcher
from extractors.sources.mirror import IMDB_PAGES, CrawlStatus, mirror_sources
from fixtures.js_challenge_server import JsChallengeServer

PAGE = b"<!DOCTYPE html><html><head><title>The real page</title></head><body><h1>Content</h1></body></html>"


@pytest.fixture(autouse=True)
def _chromium() -> None:
    assert Path(CHROMIUM).exists(), "Debian chromium is installed by scripts/setup.sh (make setup)"


def test_plain_fetcher_is_challenged_the_browser_passes(tmp_path: Path) -> None:
    with JsChallengeServer({"/title/tt0000001/": PAGE}) as srv:
        with PoliteFetcher(tmp_path / "c", requests_per_second=1000.0) as f:
            with pytest.raises(FetchError) as exc:
                f.fetch(f"{srv.base_url}/title/tt0000001/")
            assert exc.value.reason_code == "waf_challenge" and exc.value.status == 202
        assert srv.passed == 0
        with BrowserFetcher("cinesub-test/1.0 (browser fallback test)", timeout_s=20) as b:
            page = b.fetch(f"{srv.base_url}/title/tt0000001/")
        assert page.status == 200 and page.body == PAGE and not page.rendered
        assert page.navigations >= 2 and srv.passed >= 1  # the challenge, then the reload with the cookie


def test_mirror_with_browser_fallback_stores_challenged_pages(tmp_path: Path) -> None:
    from cinesub.sample.generate import generate
    from fixtures.pages_server import PagesFixture

    world = tmp_path / "world"
    generate(world, n_films=17)
    out = tmp_path / "m"

    def title_page(path: str) -> bytes | None:  # the world's IMDb pages, behind the JS challenge
        for page, template in IMDB_PAGES.items():
            parts = path.strip("/").split("/")
            if len(parts) >= 2 and parts[0] == "title" and path == template.format(tt=parts[1]):
                f = world / "imdb" / "title" / parts[1] / f"{page}.html"
                return f.read_bytes() if f.is_file() else None
        return None

    with PagesFixture(world) as pages, JsChallengeServer(title_page) as waf:
        endpoints = {**pages.base_urls, "imdb": waf.base_url}
        with PoliteFetcher(tmp_path / "cache", requests_per_second=1000.0, site_roots=pages.base_urls,
                           backoff_base_s=0.01) as f, CrawlStatus(tmp_path / "c.duckdb") as st, \
                BrowserFetcher(timeout_s=20) as browser:
            mirror_sources(f, endpoints, out, only=("kim",), limit=1, status=st)
            report = mirror_sources(f, endpoints, out, only=("imdb",), limit=1, status=st, browser=browser)
            rows = [r for r in st.rows(site="imdb") if r["kind"] == "title"]
    assert report.fetched_via_browser == len(rows) > 0
    assert {(r["status"], r["fetched_via"]) for r in rows if r["status"] != "failed"} == {("ok", "browser")}
    tt = report.imdb_titles[0]
    for page in IMDB_PAGES:
        src = world / "imdb" / "title" / tt / f"{page}.html"
        if src.is_file():
            assert (out / "imdb" / "title" / tt / f"{page}.html").read_bytes() == src.read_bytes()
