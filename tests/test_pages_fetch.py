"""PagesFixture + PoliteFetcher + mirror_sources over a small generated sample world (SPEC A1)."""

from __future__ import annotations

import gzip
import time
from pathlib import Path

import httpx
import pytest

from cinesub.sample.generate import generate
from extractors.sources.fetch import DEFAULT_USER_AGENT, FetchError, PoliteFetcher, mirror_sources
from fixtures.faults import FaultConfig
from fixtures.pages_server import PagesFixture


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("pages-world") / "world"
    generate(root, n_films=17)
    return root


def _kim_ids(world: Path) -> list[str]:
    """``"<letter>/<slug>"`` of every KIM review page (``kim/<letter>/<slug>.html``)."""
    return sorted(p.relative_to(world / "kim").with_suffix("").as_posix() for p in (world / "kim").rglob("*.html"))


def _source_files(root: Path) -> dict[str, bytes]:
    out = {}
    for sub in ("kim", "csm", "imdb"):
        for p in sorted((root / sub).rglob("*")):
            if p.is_file():
                out[p.relative_to(root).as_posix()] = p.read_bytes()
    return out


def _fetcher(tmp: Path, srv: PagesFixture, **kw) -> PoliteFetcher:
    kw.setdefault("requests_per_second", 1000.0)
    kw.setdefault("backoff_base_s", 0.01)
    return PoliteFetcher(tmp / "cache", site_roots=srv.base_urls, **kw)


def test_fixture_serves_real_shaped_paths(world: Path) -> None:
    tt = sorted(p.name for p in (world / "imdb" / "title").iterdir())[0]
    with PagesFixture(world) as srv:
        base = srv.base_url
        kim_id = _kim_ids(world)[0]
        assert "/" in kim_id  # "<letter>/<slug>", as on the real site
        assert httpx.get(f"{base}/kim/{kim_id}.htm").content == (world / "kim" / f"{kim_id}.html").read_bytes()
        letter_page = httpx.get(f"{base}/kim/{kim_id[0]}.htm").text  # the per-letter index lists it
        assert f'href="/kim/{kim_id}.htm"' in letter_page and "Movie Reviews by Title" in letter_page
        assert httpx.get(f"{base}/kim/index.htm").status_code == 404  # real KIM has no such index
        csm_id = sorted(p.stem for p in (world / "csm").glob("*.html"))[0]
        assert httpx.get(f"{base}/csm/movie-reviews/{csm_id}").content == (world / "csm" / f"{csm_id}.html").read_bytes()
        assert f'/csm/movie-reviews/{csm_id}"' in httpx.get(f"{base}/csm/movie-reviews").text
        for path, page in ((f"/imdb/title/{tt}/", "index"), (f"/imdb/title/{tt}/plotsummary/", "plotsummary"),
                           (f"/imdb/title/{tt}/parentalguide", "parentalguide")):
            assert httpx.get(base + path).content == (world / "imdb" / "title" / tt / f"{page}.html").read_bytes()
        gz = httpx.get(f"{base}/imdb/datasets/title.basics.tsv.gz").content
        assert gz[:2] == b"\x1f\x8b"
        assert gzip.decompress(gz) == (world / "imdb" / "title.basics.tsv").read_bytes()
        assert "Disallow: /imdb/find" in httpx.get(f"{base}/imdb/robots.txt").text
        assert "Disallow: /kim/search" in httpx.get(f"{base}/robots.txt").text
        assert httpx.get(f"{base}/imdb/title/tt0000001/").status_code == 404
        assert httpx.get(f"{base}/kim/../world.json").status_code == 404


def test_mirror_is_byte_identical_to_the_world(world: Path, tmp_path: Path) -> None:
    with PagesFixture(world) as srv, _fetcher(tmp_path, srv) as f:
        report = mirror_sources(f, srv.base_urls, tmp_path / "mirror")
    want, got = _source_files(world), _source_files(tmp_path / "mirror")
    assert sorted(got) == sorted(want)
    assert all(got[k] == want[k] for k in want)
    assert len(report.kim) == len(_kim_ids(world))
    assert len(report.csm) == len(list((world / "csm").glob("*.html")))
    assert {"title.basics.tsv", "title.ratings.tsv"} <= set(report.datasets)
    # only 404s (e.g. a CSM namesake link to a film the world has no page for) are skipped
    assert all(code == "http_404" for _url, code in report.skipped)


def test_mirror_is_readable_by_the_inventory_parsers(world: Path, tmp_path: Path) -> None:
    from extractors.sources.imdb import read_title_basics

    with PagesFixture(world) as srv, _fetcher(tmp_path, srv) as f:
        mirror_sources(f, srv.base_urls, tmp_path / "mirror")
    df = read_title_basics(tmp_path / "mirror" / "imdb" / "title.basics.tsv")
    assert df.height == read_title_basics(world / "imdb" / "title.basics.tsv").height > 0


def test_robots_disallow_is_honoured_without_a_request(world: Path, tmp_path: Path) -> None:
    with PagesFixture(world) as srv, _fetcher(tmp_path, srv) as f:
        url = f"{srv.base_url}/imdb/find?q=stormbreak&s=tt"
        with pytest.raises(FetchError) as exc:
            f.fetch(url)
        assert exc.value.reason_code == "robots_disallowed"
        assert not any(e.path == "/imdb/find" for e in srv.log)
        assert any(e.path == "/imdb/robots.txt" for e in srv.log)  # per-site robots read
        assert f.allowed(f"{srv.base_url}/imdb/title/tt0000001/")
        assert not f.allowed(f"{srv.base_url}/kim/search?q=a")
    # an agent the robots.txt shuts out fetches nothing but robots.txt
    with PagesFixture(world) as srv, PoliteFetcher(tmp_path / "c2", "BadBot/1.0 (test)", 1000.0,
                                                  site_roots=srv.base_urls) as f:
        with pytest.raises(FetchError) as exc:
            f.fetch(f"{srv.base_url}/kim/a.htm")
        assert exc.value.reason_code == "robots_disallowed"
        assert [e.path for e in srv.log] == ["/kim/robots.txt"]


def test_robots_on_the_host_root_without_site_roots(world: Path, tmp_path: Path) -> None:
    with PagesFixture(world) as srv, PoliteFetcher(tmp_path / "c", requests_per_second=1000.0) as f:
        with pytest.raises(FetchError) as exc:
            f.fetch(f"{srv.base_url}/csm/search?q=x")
        assert exc.value.reason_code == "robots_disallowed"
        assert [e.path for e in srv.log] == ["/robots.txt"]


def test_user_agent_is_descriptive_and_sent(world: Path, tmp_path: Path) -> None:
    seen: list[str] = []

    class Recording(PagesFixture):
        def dispatch(self, req):  # type: ignore[no-untyped-def]
            seen.append(req.headers.get("user-agent", ""))
            return super().dispatch(req)

    assert DEFAULT_USER_AGENT.startswith("cinesub/") and "robots.txt" in DEFAULT_USER_AGENT
    with Recording(world) as srv, _fetcher(tmp_path, srv) as f:
        f.fetch(f"{srv.base_url}/kim/a.htm")
    assert seen and all(ua == DEFAULT_USER_AGENT for ua in seen)
    with pytest.raises(ValueError):
        PoliteFetcher(tmp_path / "c3", "  ")


def test_cache_prevents_second_requests(world: Path, tmp_path: Path) -> None:
    with PagesFixture(world) as srv:
        with _fetcher(tmp_path, srv) as f:
            mirror_sources(f, srv.base_urls, tmp_path / "m1")
        first = len(srv.log)
        assert first > 0
        # a new fetcher on the same cache: review and title pages come from the cache without a
        # request; only the index pages and the datasets are revalidated, conditionally (304)
        with _fetcher(tmp_path, srv) as f:
            mirror_sources(f, srv.base_urls, tmp_path / "m2")
            assert f.stats["cache_hits"] > 0 and f.stats["not_modified"] > 0
        again = [e for e in srv.log[first:] if not e.path.endswith("/robots.txt")]
        assert again and {e.status for e in again} == {304}
        assert all(e.path.startswith(("/kim/", "/csm/movie-reviews", "/imdb/datasets/")) for e in again)
        assert not any(e.path.startswith("/imdb/title/") or e.path.count("/") > 2 and e.path.startswith("/kim/")
                       for e in again)
        assert _source_files(tmp_path / "m1") == _source_files(tmp_path / "m2")
        # the cache is content-addressed
        with _fetcher(tmp_path, srv) as f:
            res = f.fetch(f"{srv.base_url}/kim/a.htm")
            assert res.from_cache
            assert (tmp_path / "cache" / "objects" / res.sha256[:2] / res.sha256).read_bytes() == res.body
            # a 404 is cached too (asked once)
            missing = f"{srv.base_url}/imdb/title/tt0000001/"
            for _ in range(2):
                with pytest.raises(FetchError) as exc:
                    f.fetch(missing)
                assert exc.value.reason_code == "not_found"
            assert sum(1 for e in srv.log if e.path == "/imdb/title/tt0000001/") == 1
            # refresh=True asks again
            n = len(srv.log)
            again = f.fetch(f"{srv.base_url}/kim/a.htm", refresh=True)
            assert not again.from_cache and again.body == res.body
            assert len(srv.log) > n


def test_rate_limit_spaces_requests_wall_clock(world: Path, tmp_path: Path) -> None:
    rps = 10.0
    sent: list[tuple[float, str]] = []

    class Stamping(httpx.HTTPTransport):  # when the fetcher lets each request go (client side)
        def handle_request(self, request: httpx.Request) -> httpx.Response:
            sent.append((time.monotonic(), request.url.path))
            return super().handle_request(request)

    with PagesFixture(world) as srv, _fetcher(tmp_path, srv, requests_per_second=rps,
                                             transport=Stamping()) as f:
        ids = _kim_ids(world)[:5]
        for kim_id in ids:
            f.fetch(f"{srv.base_url}/kim/{kim_id}.htm")
        server_paths = [path for _t, path in srv.arrivals]
    assert [p for _t, p in sent] == server_paths
    times = [t for t, _p in sent]
    assert len(times) == 6  # robots.txt + 5 pages, one site: one bucket
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert min(gaps) >= 1 / rps - 0.02, gaps
    assert times[-1] - times[0] >= 5 / rps - 0.02


def test_rate_limit_with_injected_clock_is_per_site(world: Path, tmp_path: Path) -> None:
    now = [0.0]
    sent: list[tuple[float, str]] = []

    def sleep(s: float) -> None:
        now[0] += s

    with PagesFixture(world) as srv, _fetcher(tmp_path, srv, requests_per_second=1.0,
                                             clock=lambda: now[0], sleep=sleep) as f:
        for kim_id in _kim_ids(world)[:3]:
            f.fetch(f"{srv.base_url}/kim/{kim_id}.htm")
            sent.append((now[0], "kim"))
        kim_end = now[0]
        f.fetch(f"{srv.base_url}/csm/movie-reviews")
        sent.append((now[0], "csm"))
    # kim: robots at t=0, pages at 1, 2, 3 (1 request/s); csm has its own bucket
    assert [t for t, s in sent if s == "kim"] == pytest.approx([1.0, 2.0, 3.0])
    assert kim_end == pytest.approx(3.0)
    # csm: its robots.txt takes the csm bucket's first token (no wait), the index waits one second
    assert sent[-1][0] == pytest.approx(kim_end + 1.0)


def test_bounded_retries_recover_from_5xx_and_truncation(world: Path, tmp_path: Path) -> None:
    with PagesFixture(world, faults="server_5xx,truncated") as srv, _fetcher(tmp_path, srv) as f:
        mirror_sources(f, srv.base_urls, tmp_path / "mirror")
        injected = srv.faults_injected()
        assert injected["server_5xx"] > 0 and injected["truncated"] > 0
        assert f.stats["retries"] >= injected["server_5xx"]
    assert _source_files(tmp_path / "mirror") == _source_files(world)


def test_timeout_is_retried(world: Path, tmp_path: Path) -> None:
    cfg = FaultConfig(slow_long_s=1.5, slow_delay_s=0.0)
    with PagesFixture(world, faults="slow", config=cfg) as srv, _fetcher(tmp_path, srv, timeout_s=0.4) as f:
        mirror_sources(f, srv.base_urls, tmp_path / "mirror")
        assert srv.plan.injected["slow_long"] == 1
        assert f.stats["retries"] >= 1
    assert _source_files(tmp_path / "mirror") == _source_files(world)


def test_retries_are_bounded(world: Path, tmp_path: Path) -> None:
    cfg = FaultConfig(server_5xx_repeat=10, key_fault_every=1)  # every page fails 10 times
    with PagesFixture(world, faults="server_5xx", config=cfg) as srv, _fetcher(tmp_path, srv, max_attempts=3) as f:
        with pytest.raises(FetchError) as exc:
            f.fetch(f"{srv.base_url}/kim/a.htm")
        assert exc.value.reason_code == "server_error" and "after 3 attempts" in str(exc.value)
        assert sum(1 for e in srv.log if e.path == "/kim/a.htm") == 3


def test_bad_url(tmp_path: Path) -> None:
    with PoliteFetcher(tmp_path / "c") as f:
        with pytest.raises(FetchError) as exc:
            f.fetch("file:///etc/passwd")
        assert exc.value.reason_code == "bad_url"
