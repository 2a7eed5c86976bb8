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

* **conditional requests**: the ``ETag`` / ``Last-Modified`` of a page are kept with its cache
  record; ``fetch(url, revalidate=True)`` sends them back (``If-None-Match`` /
  ``If-Modified-Since``) and a 304 returns the cached body (``not_modified=True``).
* **streamed bodies**: :meth:`PoliteFetcher.fetch_to_file` streams a body (the IMDb datasets)
  into the content-addressed cache while hashing it and writes it, gunzipped, to a file — never
  a whole dataset in memory.

The crawl itself (:func:`mirror_sources`, the crawl status table, backoff, snapshots) lives in
:mod:`extractors.sources.mirror`; ``from extractors.sources.fetch import mirror_sources`` keeps
working.
"""

from __future__ import annotations

import contextlib
import dataclasses
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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import urljoin, urlsplit

import httpx

from cinesub import __version__
from extractors.http_client import (PAGE_RETRY_STATUSES, AttemptFailed, RetriesExhausted, RetryPolicy, TokenBucket,
                                    call_with_retries, retry_after_seconds, status_reason, transport_reason)
from extractors.providers.errors import ProviderError
from extractors.providers.http import HttpGaveUp, HttpTransport, Redactor, TransportOwner
from extractors.sources.imdb import is_waf_challenge  # one rule for a bot wall (re-exported)

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
        #: network requests made before giving up (set by the fetcher when known)
        self.attempts: int = 0


@dataclass(frozen=True)
class FetchResult:
    url: str
    status: int
    body: bytes
    sha256: str
    content_type: str | None
    fetched_at: str
    from_cache: bool
    #: validators the server sent (stored with the cache record, sent back on revalidation)
    etag: str | None = None
    last_modified: str | None = None
    #: the server answered 304 to a conditional request: ``body`` is the cached one
    not_modified: bool = False
    #: network requests this fetch made (retries and redirect hops included; 0 from the cache)
    attempts: int = 0
    #: ``http`` (this fetcher) or ``browser`` (extractors.sources.browser)
    fetched_via: str = "http"
    #: the body's size; for :meth:`PoliteFetcher.fetch_to_file` the body is on disk, not here
    size: int | None = None


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

    def record(self, url: str) -> dict[str, Any] | None:
        """The URL's cache record (no body read), or None."""
        try:
            rec = json.loads(self._url_path(url).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return rec if isinstance(rec, dict) and rec.get("url") == url and "sha256" in rec else None

    def get(self, url: str, *, with_body: bool = True) -> FetchResult | None:
        """The cached answer of ``url`` (its body checked against its sha256), or None.
        ``with_body=False``: only check the object exists (large streamed files)."""
        rec = self.record(url)
        if rec is None:
            return None
        obj = self.object_path(rec["sha256"])
        try:
            if with_body:
                body = obj.read_bytes()
                if hashlib.sha256(body).hexdigest() != rec["sha256"]:
                    return None  # corrupt entry: refetch
            else:
                body = b""
                if not obj.is_file():
                    return None
        except OSError:
            return None
        return FetchResult(url, int(rec["status"]), body, rec["sha256"], rec.get("content_type"),
                           rec.get("fetched_at", ""), True, rec.get("etag"), rec.get("last_modified"),
                           size=rec.get("size"))

    def _write_record(self, url: str, status: int, sha: str, size: int, content_type: str | None,
                      etag: str | None, last_modified: str | None) -> str:
        fetched_at = _now_iso()
        rec = {"url": url, "status": status, "sha256": sha, "content_type": content_type,
               "fetched_at": fetched_at, "size": size, "etag": etag, "last_modified": last_modified}
        _atomic_write(self._url_path(url), json.dumps(rec, sort_keys=True).encode())
        return fetched_at

    def put(self, url: str, status: int, body: bytes, content_type: str | None, *,
            etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        sha = hashlib.sha256(body).hexdigest()
        obj = self.object_path(sha)
        if not obj.exists():
            _atomic_write(obj, body)
        fetched_at = self._write_record(url, status, sha, len(body), content_type, etag, last_modified)
        return FetchResult(url, status, body, sha, content_type, fetched_at, False, etag, last_modified,
                           size=len(body))

    def put_file(self, url: str, status: int, tmp: Path, sha: str, size: int, content_type: str | None, *,
                 etag: str | None = None, last_modified: str | None = None) -> FetchResult:
        """Move the already-hashed file ``tmp`` into the object store (a streamed body)."""
        obj = self.object_path(sha)
        obj.parent.mkdir(parents=True, exist_ok=True)
        if obj.exists():
            tmp.unlink(missing_ok=True)
        else:
            os.replace(tmp, obj)
        fetched_at = self._write_record(url, status, sha, size, content_type, etag, last_modified)
        return FetchResult(url, status, b"", sha, content_type, fetched_at, False, etag, last_modified, size=size)

    def touch(self, hit: FetchResult, *, etag: str | None, last_modified: str | None) -> FetchResult:
        """A 304 confirmed ``hit``: refresh its fetch time (and validators, when the server sent new ones)."""
        etag = etag or hit.etag
        last_modified = last_modified or hit.last_modified
        size = hit.size if hit.size is not None else len(hit.body)
        fetched_at = self._write_record(hit.url, hit.status, hit.sha256, size, hit.content_type, etag, last_modified)
        return dataclasses.replace(hit, fetched_at=fetched_at, etag=etag, last_modified=last_modified,
                                   not_modified=True, from_cache=True)


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
        self._tl = threading.local()  # per-thread count of the requests of the fetch in progress
        self._tl.attempts = 0

    @property
    def stats(self) -> Counter[str]:
        """``network_requests`` (attempts included), ``cache_hits``, ``robots_fetches``,
        ``retries``, ``robots_refused``."""
        out = Counter(self._counts)
        out["network_requests"] = int(self.http.stats.get("attempts", 0)) + out.pop("stream_requests", 0)
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

    def limiter(self, url: str) -> TokenBucket:
        """The rate budget of ``url``'s site (reads robots.txt if needed): what a request sent by
        other means (the browser fallback) takes its token from."""
        site = self._site(url)
        assert site.bucket is not None
        return site.bucket

    def allowed(self, url: str) -> bool:
        """Whether robots.txt lets our user agent fetch ``url`` (reads robots.txt if needed)."""
        site = self._site(url)
        assert site.robots is not None
        return site.robots.can_fetch(self.user_agent, url)

    # -- requests ------------------------------------------------------------------------------
    def _request(self, site: _Site, url: str, headers: Mapping[str, str] | None = None
                 ) -> tuple[int, bytes, str | None, httpx.Headers]:
        """One logical GET with bounded retries; returns the final non-retryable answer."""
        assert site.bucket is not None
        try:
            r = self.http.request("GET", url, what=f"GET {url}", limiter=site.bucket, headers=headers)
        except HttpGaveUp as exc:
            reason = "network" if exc.reason_code == "truncated" else exc.reason_code
            detail = exc.detail if exc.wait_refused else f"GET {url}: {exc.last_detail} (after {exc.attempts} attempts)"
            err = FetchError(reason, detail, url=url, status=exc.status, retryable=True)
            err.attempts = exc.attempts
            raise err from None
        except ProviderError as exc:  # a body over the size limit, an unusable URL
            raise FetchError("http_error" if exc.reason_code == "bad_response" else "bad_url", exc.detail,
                             url=url) from None
        self._tl.attempts = getattr(self._tl, "attempts", 0) + r.attempts
        return r.status, r.content, r.headers.get("content-type"), r.headers

    def _allowed_site(self, url: str) -> _Site:
        site = self._site(url)
        assert site.robots is not None
        if not site.robots.can_fetch(self.user_agent, url):
            self._counts["robots_refused"] += 1
            raise FetchError("robots_disallowed", f"robots.txt of {site.key} disallows {url} "
                             f"for {PRODUCT_TOKEN}", url=url)
        return site

    @staticmethod
    def _validators(hit: FetchResult | None) -> dict[str, str]:
        if hit is None or hit.status != 200:
            return {}
        out = {}
        if hit.etag:
            out["If-None-Match"] = hit.etag
        if hit.last_modified:
            out["If-Modified-Since"] = hit.last_modified
        return out

    @staticmethod
    def _check_waf(url: str, status: int, headers: Mapping[str, str], body: bytes) -> None:
        if is_waf_challenge(status, headers, body):
            raise FetchError("waf_challenge", f"GET {url}: HTTP {status}, x-amzn-waf-action: "
                             f"{headers.get('x-amzn-waf-action', '-')} (a bot challenge, not the page)",
                             url=url, status=status)

    def fetch(self, url: str, *, refresh: bool = False, revalidate: bool = False) -> FetchResult:
        """The body of ``url`` (status 200), from the cache when there; see the module docstring.

        ``revalidate``: a cached page is asked for again with ``If-None-Match`` /
        ``If-Modified-Since`` (its stored ``ETag`` / ``Last-Modified``); a 304 answer returns the
        cached body with ``not_modified=True``. ``refresh``: ask unconditionally.

        Raises :class:`FetchError` (``robots_disallowed``, ``not_found``, ``waf_challenge``, ...)."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise FetchError("bad_url", f"not an absolute http(s) URL: {url!r}", url=url)
        hit = None if refresh else self.cache.get(url)
        if hit is not None and not revalidate:
            self._counts["cache_hits"] += 1
            return self._final(hit)
        conditional = self._validators(hit)
        with self._counting_attempts():
            def request(site: _Site, current: str) -> tuple[int, httpx.Headers, Any, bytes]:
                status, body, ctype, headers = self._request(site, current, conditional or None)
                return status, headers, (body, ctype), body

            current, status, headers, (body, ctype) = self._follow(url, request)
            if status == 304 and hit is not None and conditional:
                self._counts["not_modified"] += 1
                result = self.cache.touch(hit, etag=headers.get("etag"), last_modified=headers.get("last-modified"))
                return dataclasses.replace(result, attempts=self._tl.attempts)
            if status == 200 or status in NEGATIVE_CACHE_STATUSES:
                result = self.cache.put(url, status, body, ctype, etag=headers.get("etag"),
                                        last_modified=headers.get("last-modified"))
                return self._final(dataclasses.replace(result, attempts=self._tl.attempts))
            raise FetchError("http_error", f"GET {current}: HTTP {status}", url=current, status=status)

    @contextlib.contextmanager
    def _counting_attempts(self) -> Iterator[None]:
        """Count the requests of one fetch (``attempts``), also on the error it raises."""
        self._tl.attempts = 0
        try:
            yield
        except FetchError as exc:
            exc.attempts = max(exc.attempts, getattr(self._tl, "attempts", 0))
            raise

    def _follow(self, url: str, request: Callable[[_Site, str], tuple[int, httpx.Headers, Any, bytes]]
                ) -> tuple[str, int, httpx.Headers, Any]:
        """Send ``request`` (status, headers, payload, first bytes) along redirects, each hop
        checked against robots.txt; a bot wall raises ``waf_challenge``. Returns the last URL, its
        status, headers and payload."""
        current = url
        for _hop in range(self.max_redirects + 1):
            site = self._allowed_site(current)
            status, headers, payload, head = request(site, current)
            if status in (301, 302, 303, 307, 308):
                location = headers.get("location")
                if not location:
                    raise FetchError("http_error", f"GET {current}: HTTP {status} without Location",
                                     url=current, status=status)
                current = urljoin(current, location)
                continue
            self._check_waf(current, status, headers, head)
            return current, status, headers, payload
        raise FetchError("too_many_redirects", f"GET {url}: more than {self.max_redirects} redirects", url=url)

    # -- streamed bodies (the IMDb datasets: never a whole file in memory) -----------------------
    def fetch_to_file(self, url: str, dest: Path | str, *, gunzip: bool = True, revalidate: bool = True,
                      refresh: bool = False) -> FetchResult:
        """Stream ``url`` into the content-addressed cache (hashing as it goes, never holding the
        body in memory), then write it to ``dest`` — gunzipped (streamed) when ``gunzip`` and the
        body is gzip. Same robots.txt, rate limit, retries and validators as :meth:`fetch`; a 304
        (``revalidate``) rewrites ``dest`` from the cached object only when ``dest`` is missing.
        The result's ``body`` is empty (``size`` and ``sha256`` are those of the wire bytes)."""
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise FetchError("bad_url", f"not an absolute http(s) URL: {url!r}", url=url)
        dest = Path(dest)
        hit = None if refresh else self.cache.get(url, with_body=False)
        if hit is not None and hit.status == 200 and not revalidate:
            self._counts["cache_hits"] += 1
            if not dest.is_file():
                self._materialise(hit.sha256, dest, gunzip)
            return hit
        conditional = self._validators(hit)
        with self._counting_attempts():
            def request(site: _Site, current: str) -> tuple[int, httpx.Headers, Any, bytes]:
                status, headers, tmp, sha, size, small = self._stream(site, current, conditional or None)
                return status, headers, (tmp, sha, size), small

            current, status, headers, (tmp, sha, size) = self._follow(url, request)
            if status == 304 and hit is not None and conditional:
                self._counts["not_modified"] += 1
                result = self.cache.touch(hit, etag=headers.get("etag"), last_modified=headers.get("last-modified"))
                if not dest.is_file():
                    self._materialise(hit.sha256, dest, gunzip)
                return dataclasses.replace(result, attempts=self._tl.attempts)
            if status == 200 and tmp is not None:
                result = self.cache.put_file(url, status, tmp, sha, size, headers.get("content-type"),
                                             etag=headers.get("etag"), last_modified=headers.get("last-modified"))
                self._materialise(sha, dest, gunzip)
                return dataclasses.replace(result, attempts=self._tl.attempts)
            if status in NEGATIVE_CACHE_STATUSES:
                raise FetchError("not_found", f"GET {current}: HTTP {status}", url=current, status=status)
            raise FetchError("http_error", f"GET {current}: HTTP {status}", url=current, status=status)

    def _materialise(self, sha: str, dest: Path, gunzip: bool) -> None:
        """Copy (gunzipping, streamed) the cached object ``sha`` to ``dest`` atomically."""
        src = self.cache.object_path(sha)
        dest.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=dest.parent, prefix=".tmp-", suffix=dest.suffix)
        try:
            with open(src, "rb") as raw, os.fdopen(fd, "wb") as out:
                is_gz = raw.read(2) == b"\x1f\x8b"
                raw.seek(0)
                reader = gzip.GzipFile(fileobj=raw, mode="rb") if (gunzip and is_gz) else raw
                while chunk := reader.read(1 << 20):
                    out.write(chunk)
            os.replace(tmp, dest)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    def _stream(self, site: _Site, url: str, headers: Mapping[str, str] | None
                ) -> tuple[int, httpx.Headers, Path | None, str, int, bytes]:
        """One streamed GET with bounded retries: (status, headers, temp file of a 200 body,
        its sha256, its size, the first bytes of any other answer)."""
        assert site.bucket is not None
        client = self.http.client  # the transport's client: same User-Agent, same headers
        tmp_dir = self.cache.root / "objects" / "tmp"
        tmp_dir.mkdir(parents=True, exist_ok=True)

        def attempt(n: int) -> tuple[int, httpx.Headers, Path | None, str, int, bytes]:
            site.bucket.acquire()
            self._counts["stream_requests"] += 1
            self._tl.attempts = getattr(self._tl, "attempts", 0) + 1
            tmp: Path | None = None
            try:
                with client.stream("GET", url, headers=headers) as r:
                    if self.policy.retries_status(r.status_code):
                        excerpt = r.read()[:100].decode("utf-8", "replace")
                        raise AttemptFailed(status_reason(r.status_code), f"HTTP {r.status_code} ({excerpt!r})",
                                            retry_after=retry_after_seconds(r.headers), status=r.status_code)
                    if r.status_code != 200:
                        small = b""
                        for chunk in r.iter_bytes():
                            small += chunk
                            if len(small) > 65536:
                                break
                        return r.status_code, r.headers, None, "", len(small), small
                    fd, name = tempfile.mkstemp(dir=tmp_dir, prefix=".stream-")
                    tmp = Path(name)
                    h, size = hashlib.sha256(), 0
                    with os.fdopen(fd, "wb") as out:
                        for chunk in r.iter_bytes(1 << 20):
                            size += len(chunk)
                            if size > self.http.max_body_bytes:
                                raise FetchError("http_error", f"GET {url}: body larger than "
                                                 f"{self.http.max_body_bytes} bytes", url=url, status=200)
                            h.update(chunk)
                            out.write(chunk)
                    declared = r.headers.get("content-length")
                    if (declared and declared.strip().isdigit() and not r.headers.get("content-encoding")
                            and int(declared) != size):
                        raise AttemptFailed("truncated", f"GET {url}: {size} of {declared} bytes")
                    head = b""
                    if size <= 65536:
                        head = tmp.read_bytes()
                    return 200, r.headers, tmp, h.hexdigest(), size, head
            except httpx.TransportError as exc:
                if tmp is not None:
                    tmp.unlink(missing_ok=True)
                reason = transport_reason(exc) or "network"
                raise AttemptFailed(reason, f"GET {url}: {type(exc).__name__}") from None
            except BaseException:
                if tmp is not None:
                    tmp.unlink(missing_ok=True)
                raise

        try:
            return call_with_retries(attempt, self.policy, sleep=self._sleep)
        except RetriesExhausted as exc:
            last = exc.last
            reason = "network" if last.reason == "truncated" else last.reason
            err = FetchError(reason, f"GET {url}: {last.detail} (after {exc.attempts} attempts)", url=url,
                             status=last.status, retryable=True)
            err.attempts = exc.attempts
            raise err from None

    @staticmethod
    def _final(result: FetchResult) -> FetchResult:
        if result.status in NEGATIVE_CACHE_STATUSES:
            raise FetchError("not_found", f"GET {result.url}: HTTP {result.status}"
                             + (" (cached)" if result.from_cache else ""), url=result.url, status=result.status)
        return result


# --------------------------------------------------------------------------------------------
# Mirroring lives in extractors.sources.mirror; the old import path keeps working
# --------------------------------------------------------------------------------------------
_MIRROR_NAMES = ("DATASETS", "IMDB_PAGES", "CrawlStatus", "MirrorReport", "mirror_sources")


def __getattr__(name: str) -> Any:  # lazy: extractors.sources.mirror imports this module
    if name in _MIRROR_NAMES:
        from extractors.sources import mirror

        return getattr(mirror, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["DATASETS", "DEFAULT_USER_AGENT", "FETCH_REASONS", "CrawlStatus", "FetchError", "FetchResult",
           "IMDB_PAGES", "MirrorReport", "PageCache", "PoliteFetcher", "is_waf_challenge", "mirror_sources"]
