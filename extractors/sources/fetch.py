"""Polite fetching of the metadata sources (SPEC A1) and mirroring them into the inventory layout.

:class:`PoliteFetcher` is the only way live mode talks to Kids-in-Mind, Common Sense Media and
IMDb (docs/sources.md):

* **robots.txt** is read (stdlib :mod:`urllib.robotparser`) before the first request to a site and
  every URL it disallows for our user agent is refused with :class:`FetchError`
  ``robots_disallowed`` — no request is sent. ``Crawl-delay`` lowers the request rate further.
  robots.txt answering 401/403 or failing (5xx, network) after the retries disallows the whole
  site; 404/410 allows it (the convention of :mod:`urllib.robotparser` and of the big crawlers).
Requests go through the HTTP client layer (:mod:`extractors.http_client`, its httpx transport
:class:`extractors.providers.http.HttpTransport`): one retry policy, one token bucket, one
classification of failures for every remote source.

* **rate limit** per site: a token bucket (:class:`extractors.http_client.TokenBucket`,
  burst 1) of ``requests_per_second`` (default 1/s); every request (robots.txt, retries and
  redirects included) takes a token.
* **cache**: bodies stored content-addressed (``objects/<sha[:2]>/<sha256>``) with a per-URL
  record (``urls/<sha256(url)>.json``: url, status, sha256, content type, fetch time). A URL in
  the cache is answered from disk without any request (robots.txt is not even read) unless
  ``refresh=True``. 404/410 answers are cached too (negative cache), so a missing page is not
  asked for twice.
* **bounded retries** (``max_attempts``, default 4) on 429/5xx, timeouts, connection errors and
  truncated bodies, with exponential backoff and ``Retry-After`` (capped by
  ``max_retry_after_s``). Other 4xx are final.
* a descriptive **User-Agent** naming the tool, its purpose and a contact URL
  (:data:`DEFAULT_USER_AGENT`); robots rules are matched against its product token (``cinesub``).
* redirects are followed by hand (at most 5), each hop checked against robots.txt.

:func:`mirror_sources` crawls the Kids-in-Mind index, the CSM index, the IMDb title pages of every
IMDb id the review pages link to, and the two IMDb datasets, and writes them in the layout the
inventory stage reads (``kim/<id>.html``, ``csm/<id>.html``, ``imdb/title.basics.tsv``,
``imdb/title.ratings.tsv``, ``imdb/title/<tt>/{index,plotsummary,parentalguide}.html``).
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import json
import logging
import os
import re
import tempfile
import threading
import time
import urllib.robotparser
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from cinesub import __version__
from extractors.http_client import PAGE_RETRY_STATUSES, RetryPolicy, TokenBucket
from extractors.providers.errors import ProviderError
from extractors.providers.http import HttpGaveUp, HttpTransport, Redactor, TransportOwner

log = logging.getLogger(__name__)

PRODUCT_TOKEN = "cinesub"
DEFAULT_USER_AGENT = (f"{PRODUCT_TOKEN}/{__version__} (research corpus builder; polite crawler: "
                      f"honours robots.txt, <=1 request/s per site, caches every page; "
                      f"see docs/sources.md)")

#: reason codes of :class:`FetchError`
FETCH_REASONS: dict[str, str] = {
    "robots_disallowed": "robots.txt of the site disallows the URL for our user agent (nothing sent)",
    "bad_url": "not an absolute http(s) URL",
    "not_found": "HTTP 404/410 (cached: not asked again unless refresh=True)",
    "http_error": "another final HTTP status (4xx other than 404/410/429, or 3xx without Location)",
    "too_many_redirects": "more than 5 redirects",
    "server_error": "HTTP 5xx after the bounded retries",
    "rate_limited": "HTTP 429 after the bounded retries, or a Retry-After beyond max_retry_after_s",
    "timeout": "timeouts after the bounded retries",
    "network": "connection errors or truncated bodies after the bounded retries",
    "waf_challenge": "a bot wall instead of the page (IMDb's AWS WAF: HTTP 202 with an empty body, or any "
                     "answer with x-amzn-waf-action); not retried, not cached",
}

RETRY_STATUSES = PAGE_RETRY_STATUSES
NEGATIVE_CACHE_STATUSES = frozenset({404, 410})


class FetchError(ProviderError):
    """A page could not be fetched; ``reason_code`` is one of :data:`FETCH_REASONS`."""

    def __init__(self, reason_code: str, detail: str, *, url: str, status: int | None = None,
                 retryable: bool = False):
        super().__init__(reason_code, detail, retryable=retryable)
        self.url = url
        self.status = status


@dataclass(frozen=True)
class FetchResult:
    url: str
    status: int
    body: bytes
    sha256: str
    content_type: str | None
    fetched_at: str
    from_cache: bool


def _now_iso() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _atomic_write(path: Path, data: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


class PageCache:
    """Content-addressed bodies plus a URL → sha256 record per URL."""

    def __init__(self, root: Path | str):
        self.root = Path(root)

    def _url_path(self, url: str) -> Path:
        return self.root / "urls" / f"{hashlib.sha256(url.encode()).hexdigest()}.json"

    def object_path(self, sha: str) -> Path:
        return self.root / "objects" / sha[:2] / sha

    def get(self, url: str) -> FetchResult | None:
        rec_path = self._url_path(url)
        try:
            rec = json.loads(rec_path.read_text(encoding="utf-8"))
            body = self.object_path(rec["sha256"]).read_bytes()
        except (OSError, ValueError, KeyError, TypeError):
            return None
        if rec.get("url") != url or hashlib.sha256(body).hexdigest() != rec["sha256"]:
            return None  # corrupt or colliding entry: refetch
        return FetchResult(url, int(rec["status"]), body, rec["sha256"], rec.get("content_type"),
                           rec.get("fetched_at", ""), True)

    def put(self, url: str, status: int, body: bytes, content_type: str | None) -> FetchResult:
        sha = hashlib.sha256(body).hexdigest()
        obj = self.object_path(sha)
        if not obj.exists():
            _atomic_write(obj, body)
        fetched_at = _now_iso()
        rec = {"url": url, "status": status, "sha256": sha, "content_type": content_type,
               "fetched_at": fetched_at, "size": len(body)}
        _atomic_write(self._url_path(url), json.dumps(rec, sort_keys=True).encode())
        return FetchResult(url, status, body, sha, content_type, fetched_at, False)


@dataclass
class _Site:
    key: str
    robots: urllib.robotparser.RobotFileParser | None = None
    bucket: TokenBucket | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)


class PoliteFetcher(TransportOwner):
    """Fetch pages politely: robots.txt, per-site token bucket, on-disk cache, bounded retries.

    ``site_roots``: URL prefixes that count as separate sites (each with its own robots.txt at
    ``<root>/robots.txt`` and its own rate budget) — used when several sites share one host (the
    loopback fixture). Any other URL's site is its origin (``scheme://host:port``), robots.txt at
    ``/robots.txt``. ``clock``/``sleep`` are injectable for tests.
    """

    def __init__(
        self,
        cache_dir: Path | str,
        user_agent: str = DEFAULT_USER_AGENT,
        requests_per_second: float = 1.0,
        *,
        site_roots: Mapping[str, str] | list[str] | tuple[str, ...] = (),
        max_attempts: int = 4,
        timeout_s: float = 30.0,
        backoff_base_s: float = 1.0,
        backoff_max_s: float = 30.0,
        max_retry_after_s: float = 120.0,
        max_redirects: int = 5,
        clock: Callable[[], float] = time.monotonic,
        sleep: Callable[[float], None] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        retry: RetryPolicy | None = None,
        max_body_bytes: int = 4 << 30,  # IMDb's title.basics.tsv.gz is ~200 MB
    ):
        if not user_agent or not user_agent.strip():
            raise ValueError("a descriptive User-Agent is required")
        if requests_per_second <= 0:
            raise ValueError("requests_per_second must be > 0")
        self.cache = PageCache(cache_dir)
        self.user_agent = user_agent.strip()
        self.requests_per_second = float(requests_per_second)
        roots = site_roots.values() if isinstance(site_roots, Mapping) else site_roots
        self.site_roots = sorted({r.rstrip("/") for r in roots}, key=len, reverse=True)
        self.policy = retry or RetryPolicy(max_attempts=max_attempts, backoff_base_s=backoff_base_s,
                                           backoff_max_s=backoff_max_s, max_retry_after_s=max_retry_after_s,
                                           jitter=False, retry_statuses=PAGE_RETRY_STATUSES)
        self.max_attempts = self.policy.max_attempts
        self.max_redirects = max_redirects
        self._clock = clock
        self._sleep = sleep
        # redirects are followed here, hop by hop, each checked against robots.txt
        self.http = HttpTransport(name="pages", redactor=Redactor(), user_agent=self.user_agent, timeout_s=timeout_s,
                                  policy=self.policy, sleep=sleep, follow_redirects=False,
                                  headers={"Accept-Encoding": "identity"}, transport=transport,
                                  max_body_bytes=max_body_bytes)
        self._sites: dict[str, _Site] = {}
        self._sites_lock = threading.Lock()
        self._counts: Counter[str] = Counter()

    @property
    def stats(self) -> Counter[str]:
        """``network_requests`` (attempts included), ``cache_hits``, ``robots_fetches``,
        ``retries``, ``robots_refused``."""
        out = Counter(self._counts)
        out["network_requests"] = int(self.http.stats.get("attempts", 0))
        out["retries"] = int(self.http.stats.get("retries", 0))
        return out

    # -- sites, robots, rate -------------------------------------------------------------------
    def site_of(self, url: str) -> tuple[str, str]:
        """(site key, robots.txt URL) of ``url``."""
        for root in self.site_roots:
            if url == root or url.startswith(root + "/"):
                return root, root + "/robots.txt"
        parts = urlsplit(url)
        origin = f"{parts.scheme}://{parts.netloc}"
        return origin, origin + "/robots.txt"

    def _site(self, url: str) -> _Site:
        key, robots_url = self.site_of(url)
        with self._sites_lock:
            site = self._sites.get(key)
            if site is None:
                site = self._sites[key] = _Site(key)
                site.bucket = TokenBucket(self.requests_per_second, 1.0, clock=self._clock, sleep=self._sleep)
        with site.lock:
            if site.robots is None:
                site.robots = self._read_robots(site, robots_url)
        return site

    def _read_robots(self, site: _Site, robots_url: str) -> urllib.robotparser.RobotFileParser:
        rp = urllib.robotparser.RobotFileParser(robots_url)
        self._counts["robots_fetches"] += 1
        try:
            status, body, _ctype, _ = self._request(site, robots_url)
        except FetchError as exc:
            log.warning("robots.txt %s unreadable (%s): the site is treated as disallowed", robots_url, exc)
            rp.disallow_all = True
            return rp
        if status in (401, 403):
            rp.disallow_all = True
        elif status >= 400:
            rp.allow_all = True
        else:
            rp.parse(body.decode("utf-8", errors="replace").splitlines())
        delay = rp.crawl_delay(self.user_agent)
        if delay:
            rate = min(self.requests_per_second, 1.0 / float(delay))
            site.bucket = TokenBucket(rate, 1.0, clock=self._clock, sleep=self._sleep)
        return rp

    def allowed(self, url: str) -> bool:
        """Whether robots.txt lets our user agent fetch ``url`` (reads robots.txt if needed)."""
        site = self._site(url)
        assert site.robots is not None
        return site.robots.can_fetch(self.user_agent, url)

    # -- requests ------------------------------------------------------------------------------
    def _request(self, site: _Site, url: str) -> tuple[int, bytes, str | None, httpx.Headers]:
        """One logical GET with bounded retries; returns the final non-retryable answer."""
        assert site.bucket is not None
        try:
            r = self.http.request("GET", url, what=f"GET {url}", limiter=site.bucket)
        except HttpGaveUp as exc:
            reason = "network" if exc.reason_code == "truncated" else exc.reason_code
            detail = exc.detail if exc.wait_refused else f"GET {url}: {exc.last_detail} (after {exc.attempts} attempts)"
            raise FetchError(reason, detail, url=url, status=exc.status, retryable=True) from None
        except ProviderError as exc:  # a body over the size limit, an unusable URL
            raise FetchError("http_error" if exc.reason_code == "bad_response" else "bad_url", exc.detail,
                             url=url) from None
        return r.status, r.content, r.headers.get("content-type"), r.headers

    def fetch(self, url: str, *, refresh: bool = False) -> FetchResult:
        """The body of ``url`` (status 200), from the cache when there; see the module docstring.

        Raises :class:`FetchError` (``robots_disallowed``, ``not_found``, ...)."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise FetchError("bad_url", f"not an absolute http(s) URL: {url!r}", url=url)
        if not refresh:
            hit = self.cache.get(url)
            if hit is not None:
                self._counts["cache_hits"] += 1
                return self._final(hit)
        current = url
        for _hop in range(self.max_redirects + 1):
            site = self._site(current)
            assert site.robots is not None
            if not site.robots.can_fetch(self.user_agent, current):
                self._counts["robots_refused"] += 1
                raise FetchError("robots_disallowed", f"robots.txt of {site.key} disallows {current} "
                                 f"for {PRODUCT_TOKEN}", url=current)
            status, body, ctype, headers = self._request(site, current)
            if status in (301, 302, 303, 307, 308):
                location = headers.get("location")
                if not location:
                    raise FetchError("http_error", f"GET {current}: HTTP {status} without Location",
                                     url=current, status=status)
                current = urljoin(current, location)
                continue
            if headers.get("x-amzn-waf-action") or (status == 202 and not body):
                raise FetchError("waf_challenge", f"GET {current}: HTTP {status}, x-amzn-waf-action: "
                                 f"{headers.get('x-amzn-waf-action', '-')} (a bot challenge, not the page)",
                                 url=current, status=status)
            if status == 200 or status in NEGATIVE_CACHE_STATUSES:
                result = self.cache.put(url, status, body, ctype)
                return self._final(result)
            raise FetchError("http_error", f"GET {current}: HTTP {status}", url=current, status=status)
        raise FetchError("too_many_redirects", f"GET {url}: more than {self.max_redirects} redirects", url=url)

    @staticmethod
    def _final(result: FetchResult) -> FetchResult:
        if result.status in NEGATIVE_CACHE_STATUSES:
            raise FetchError("not_found", f"GET {result.url}: HTTP {result.status}"
                             + (" (cached)" if result.from_cache else ""), url=result.url, status=result.status)
        return result


# --------------------------------------------------------------------------------------------
# Mirroring
# --------------------------------------------------------------------------------------------
IMDB_PAGES: dict[str, str] = {"index": "/title/{tt}/", "plotsummary": "/title/{tt}/plotsummary/",
                              "parentalguide": "/title/{tt}/parentalguide"}
DATASETS: tuple[str, ...] = ("title.basics.tsv", "title.ratings.tsv")
_HREF = re.compile(r"""<a\b[^>]*\bhref\s*=\s*["']([^"']+)["']""", re.I)


def _links(html: str, base: str) -> list[str]:
    return [urljoin(base, h.strip()) for h in _HREF.findall(html)]


@dataclass
class MirrorReport:
    kim: list[str] = field(default_factory=list)
    csm: list[str] = field(default_factory=list)
    imdb_titles: list[str] = field(default_factory=list)
    datasets: list[str] = field(default_factory=list)
    #: (url, reason code) of pages that could not be mirrored (404, robots, errors)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"kim": len(self.kim), "csm": len(self.csm), "imdb_titles": len(self.imdb_titles),
                "datasets": list(self.datasets), "skipped": [list(s) for s in self.skipped]}


def mirror_sources(
    fetcher: PoliteFetcher,
    base_urls: Mapping[str, str],
    out_dir: Path | str,
    *,
    refresh: bool = False,
) -> MirrorReport:
    """Crawl the three sources into ``out_dir`` in the inventory layout; return what was written.

    ``base_urls``: ``kim`` (index at ``<kim>/index.htm``, pages ``<kim>/<id>.htm``), ``csm``
    (index at ``<csm>/movie-reviews``, pages ``<csm>/movie-reviews/<slug>``), ``imdb`` (title
    pages ``<imdb>/title/<tt>/...``) and optionally ``imdb_datasets`` (default
    ``<imdb>/datasets``; IMDb's real host is ``https://datasets.imdbws.com``). IMDb ids are those
    the KIM and CSM pages link to, canonicalised (malformed links are the funnel's business, not
    fetched). A page that is missing (404) or refused by robots.txt is recorded in ``skipped``;
    other fetch errors propagate (the crawl is resumable: everything fetched is cached).
    """
    from extractors.sources.csm import parse_csm
    from extractors.sources.imdb import canonical_imdb_id
    from extractors.sources.kim import parse_kim

    out = Path(out_dir)
    report = MirrorReport()
    kim_root = base_urls["kim"].rstrip("/")
    csm_root = base_urls["csm"].rstrip("/")
    imdb_root = base_urls["imdb"].rstrip("/")
    datasets_root = base_urls.get("imdb_datasets", imdb_root + "/datasets").rstrip("/")

    def get(url: str) -> bytes | None:
        try:
            return fetcher.fetch(url, refresh=refresh).body
        except FetchError as exc:
            if exc.reason_code in ("not_found", "robots_disallowed"):
                report.skipped.append((url, exc.reason_code))
                log.info("mirror: skipped %s (%s)", url, exc.reason_code)
                return None
            raise

    ids: set[str] = set()

    def note_link(link: str | None) -> None:
        tt, status = canonical_imdb_id(link)
        if status == "ok" and tt:
            ids.add(tt)

    def index_links(index_url: str) -> list[str]:
        index = get(index_url)
        return [link.split("#", 1)[0] for link in _links(index.decode("utf-8", "replace") if index else "", index_url)]

    def mirror_reviews(site: str, pages: dict[str, str], parse: Any, written: list[str]) -> None:
        for key, url in sorted(pages.items()):
            body = get(url)
            if body is None:
                continue
            _atomic_write(out / site / f"{key}.html", body)
            written.append(key)
            with contextlib.suppress(Exception):  # an unparsable page is the inventory's finding
                note_link(parse(body.decode("utf-8"), url).imdb_link)

    # --- Kids-in-Mind -------------------------------------------------------------------------
    index_url = kim_root + "/index.htm"
    kim_pages: dict[str, str] = {}
    for link in index_links(index_url):
        if link.startswith(kim_root + "/") and link.endswith(".htm") and link != index_url:
            kim_id = link[len(kim_root) + 1: -len(".htm")]
            if kim_id and "/" not in kim_id:
                kim_pages.setdefault(kim_id, link)
    mirror_reviews("kim", kim_pages, parse_kim, report.kim)

    # --- Common Sense Media -------------------------------------------------------------------
    prefix = csm_root + "/movie-reviews/"
    csm_pages: dict[str, str] = {}
    for link in index_links(csm_root + "/movie-reviews"):
        link = link.split("?", 1)[0]
        if link.startswith(prefix):
            slug = link[len(prefix):].strip("/")
            if slug and "/" not in slug:
                csm_pages.setdefault(slug, link)
    mirror_reviews("csm", csm_pages, parse_csm, report.csm)

    # --- IMDb title pages ---------------------------------------------------------------------
    for tt in sorted(ids):
        got = 0
        for page, template in IMDB_PAGES.items():
            body = get(imdb_root + template.format(tt=tt))
            if body is None:
                continue
            _atomic_write(out / "imdb" / "title" / tt / f"{page}.html", body)
            got += 1
        if got:
            report.imdb_titles.append(tt)

    # --- IMDb datasets (gzipped on the wire, plain TSV on disk) ---------------------------------
    for name in DATASETS:
        body = get(f"{datasets_root}/{name}.gz")
        if body is None:
            continue
        data = gzip.decompress(body) if body[:2] == b"\x1f\x8b" else body
        _atomic_write(out / "imdb" / name, data)
        report.datasets.append(name)
    return report
