"""Mirror Kids-in-Mind, Common Sense Media and IMDb into the inventory layout: a crawl no single
page can stop, resumable and incremental (SPEC A1; issue 16 points 3 and 4; docs/sources.md "Crawl").

:func:`mirror_sources` walks

* **Kids-in-Mind**: every letter page (:func:`extractors.sources.kim.kim_index_urls`) → the review
  pages it lists (:func:`~extractors.sources.kim.parse_kim_index`) → ``kim/<letter>/<slug>.html``;
* **Common Sense Media**: the movie-reviews index, following its pagination
  (:func:`~extractors.sources.csm.parse_csm_index` ``next_url``; a page seen twice ends it) →
  ``csm/<slug>.html``;
* **IMDb**: the datasets first (``<imdb_datasets>/<name>.gz``, streamed to disk gunzipped,
  ``imdb/<name>``), then the title pages (``IMDB_PAGES``) of every IMDb id the mirrored KIM/CSM
  pages link to → ``imdb/title/<tt>/<page>.html``.

Every URL tried gets a row in the crawl status table (:class:`CrawlStatus`, a DuckDB file kept
*outside* the mirrored tree): its status (:data:`STATUSES`), reason code (:data:`CRAWL_REASONS`),
HTTP status, tries, validators, sha256, first seen / last fetched and when it may be tried again.
A WAF challenge, a 4xx/5xx, a timeout or an unparseable page is such a row and the crawl goes on.
Challenged pages back off (``next_retry_after`` doubles per try) and are retried by a later run.

Incremental: index pages and datasets are always revalidated (``If-None-Match`` /
``If-Modified-Since``; 304 = ``not_modified``); a review or title page fetched less than
``refresh_after_days`` ago is taken from the cache without a request, an older one is
revalidated. The report says how many pages were new, changed, unchanged, cached or deferred.
After the run ``<out_dir>/SNAPSHOT.json`` holds the snapshot id (digest of the mirrored tree),
the finish time and the counts; the live environment records it in the release manifest.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import urlsplit

from cinesub import digests
from extractors.sources.fetch import FetchError, FetchResult, PoliteFetcher, _atomic_write, is_waf_challenge

log = logging.getLogger(__name__)

SITES: tuple[str, ...] = ("kim", "csm", "imdb")

from extractors.sources.imdb import IMDB_PAGES  # noqa: E402  (re-exported)
from extractors.sources.imdb_datasets import DATASETS  # noqa: E402  (re-exported)
from extractors.sources.crawl_status import (  # noqa: E402  (re-exported)
    _SAFE_ID, CRAWL_REASONS, STATUSES, CrawlStatus, _iso, _parse_iso, crawl_reason)


# --------------------------------------------------------------------------------------------
# The report
# --------------------------------------------------------------------------------------------
@dataclass
class MirrorReport:
    """What one :func:`mirror_sources` run did. ``kim`` / ``csm``: ids of the review pages on
    disk after the run; ``imdb_titles``: titles with at least one page; ``datasets``: the
    datasets on disk; ``skipped``: ``(url, reason code)`` of every URL tried that was not mirrored
    this run (failed, challenged, refused by robots.txt, or deferred by its backoff)."""

    kim: list[str] = field(default_factory=list)
    csm: list[str] = field(default_factory=list)
    imdb_titles: list[str] = field(default_factory=list)
    datasets: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    #: this run's outcome per URL: status → reason → count
    by_status: dict[str, Counter[str]] = field(default_factory=dict)
    #: new / changed / unchanged (200 same bytes or 304) / cached (not asked: fresh) / deferred (backoff)
    changes: Counter[str] = field(default_factory=Counter)
    by_site: dict[str, Counter[str]] = field(default_factory=dict)
    fetched_via_browser: int = 0
    run_id: str = ""
    snapshot_id: str | None = None
    status_db: str | None = None

    def note(self, site: str, status: str, reason: str | None) -> None:
        self.by_status.setdefault(status, Counter())[reason or ""] += 1
        self.by_site.setdefault(site, Counter())[status] += 1

    @property
    def failed(self) -> int:
        return sum(sum(self.by_status.get(s, Counter()).values()) for s in ("failed", "challenged"))

    def counts(self) -> dict[str, int]:
        return {s: sum(self.by_status.get(s, Counter()).values()) for s in STATUSES}

    def to_dict(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "kim": len(self.kim), "csm": len(self.csm),
                "imdb_titles": len(self.imdb_titles), "datasets": list(self.datasets),
                "counts": self.counts(),
                "by_status": {s: dict(sorted(c.items())) for s, c in sorted(self.by_status.items())},
                "by_site": {s: dict(sorted(c.items())) for s, c in sorted(self.by_site.items())},
                "changes": {k: int(self.changes.get(k, 0)) for k in ("new", "changed", "unchanged", "cached",
                                                                    "deferred")},
                "fetched_via_browser": self.fetched_via_browser,
                "skipped": [list(s) for s in self.skipped], "snapshot_id": self.snapshot_id,
                "status_db": self.status_db}


class BrowserLike(Protocol):
    def fetch(self, url: str) -> Any:
        """An object with ``status``, ``headers``, ``body`` (bytes) and ``content_type``."""


ProgressFn = Callable[[dict[str, Any]], None]


# --------------------------------------------------------------------------------------------
# Snapshot
# --------------------------------------------------------------------------------------------
SNAPSHOT_FILE = "SNAPSHOT.json"


def tree_digest(root: Path | str, subdirs: Iterable[str] = SITES) -> str:
    """Digest of the mirrored tree (file names and bytes of ``kim/``, ``csm/``, ``imdb/``): the
    snapshot id (:func:`cinesub.digests.tree_digest` over those folders)."""
    return digests.tree_digest(root, subdirs)


def read_snapshot(root: Path | str) -> dict[str, Any] | None:
    """``<root>/SNAPSHOT.json`` (None when absent or unreadable)."""
    try:
        data = json.loads((Path(root) / SNAPSHOT_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def default_status_path(out_dir: Path | str) -> Path:
    """Where :func:`mirror_sources` keeps the status table when not given one: beside the
    mirror (``<out_dir>.crawl.duckdb``), never inside the tree the build digests."""
    out = Path(out_dir).resolve()
    return out.parent / f"{out.name}.crawl.duckdb"


# --------------------------------------------------------------------------------------------
# The crawl
# --------------------------------------------------------------------------------------------
class _Crawl:
    def __init__(self, fetcher: PoliteFetcher, out: Path, status: CrawlStatus, report: MirrorReport,
                 refresh_after: timedelta, progress: ProgressFn | None, browser: BrowserLike | None,
                 refresh: bool = False):
        self.refresh = refresh
        self.fetcher = fetcher
        self.out = out
        self.status = status
        self.report = report
        self.refresh_after = refresh_after
        self.progress = progress
        self.browser = browser
        self.done = 0

    def _emit(self, site: str, kind: str, url: str, status: str, reason: str | None) -> None:
        self.done += 1
        if self.progress is not None:
            with contextlib.suppress(Exception):  # a broken progress bar never stops the crawl
                self.progress({"site": site, "kind": kind, "url": url, "status": status, "reason": reason,
                               "done": self.done})

    def record(self, url: str, site: str, kind: str, status: str, reason: str | None, *,
               prev: dict[str, Any] | None, result: FetchResult | None = None, http_status: int | None = None,
               requests: int = 0, rel: str | None = None, detail: str | None = None,
               fetched_via: str | None = None) -> None:
        now = self.status.now()
        ok = status in ("ok", "not_modified")
        attempts = 0 if ok else int((prev or {}).get("attempts") or 0) + 1
        row = dict(prev or {})
        row.update(url=url, site=site, kind=kind, status=status, reason=reason, attempts=attempts,
                   requests=requests, detail=(detail or "")[:500] or None, last_fetched=_iso(now),
                   first_seen=(prev or {}).get("first_seen") or _iso(now), run_id=self.report.run_id)
        row["http_status"] = http_status if http_status is not None else (
            (304 if result.not_modified else result.status) if result is not None else None)
        if result is not None:
            row.update(etag=result.etag, last_modified=result.last_modified, sha256=result.sha256,
                       fetched_via=fetched_via or result.fetched_via, path=rel)
        if ok:
            row.update(last_ok=_iso(now), next_retry_after=None)
        else:
            row["next_retry_after"] = _iso(now + self.status.backoff(status, reason or "", attempts,
                                                                     self.refresh_after))
        self.status.put(row)
        self.report.note(site, status, reason)
        if not ok:
            self.report.skipped.append((url, reason or status))
        self._emit(site, kind, url, status, reason)

    def _browser_fetch(self, url: str) -> FetchResult | str:
        """The challenged page through the browser fallback: a cached result, or the reason it failed."""
        assert self.browser is not None
        try:
            self.fetcher.limiter(url).acquire()
            page = self.browser.fetch(url)
        except Exception as exc:  # a browser that cannot start or load: the page stays challenged
            log.warning("browser fallback for %s failed: %s: %s", url, type(exc).__name__, exc)
            return f"browser_failed: {type(exc).__name__}: {exc}"
        if page.status != 200 or is_waf_challenge(page.status, page.headers, page.body):
            return f"waf_challenge: the browser got HTTP {page.status} (still challenged)"
        res = self.fetcher.cache.put(url, 200, page.body, page.content_type)
        return FetchResult(res.url, res.status, res.body, res.sha256, res.content_type, res.fetched_at,
                           False, fetched_via="browser", size=res.size)

    def get(self, url: str, site: str, kind: str, *, always_revalidate: bool, rel: str | None = None,
            dest: Path | None = None) -> FetchResult | None:
        """Fetch one URL under the crawl's rules; every outcome is a row. ``dest``: stream the
        body to this file (datasets) instead of returning it in memory."""
        prev = self.status.get(url)
        until = self.status.deferred_until(url)
        if until is not None and self.refresh and prev is not None and prev["status"] != "challenged":
            until = None  # a full refresh retries every failure now; only challenges keep their backoff
        if until is not None:
            self.report.changes["deferred"] += 1
            self.report.skipped.append((url, "backoff"))
            self.report.note(site, "deferred", prev.get("reason") if prev else None)
            self._emit(site, kind, url, "deferred", prev.get("reason") if prev else None)
            return None
        fresh = False
        if not always_revalidate:
            rec = self.fetcher.cache.record(url)
            fetched = _parse_iso(rec.get("fetched_at")) if rec else None
            fresh = (rec is not None and int(rec.get("status", 0)) in (200, 404, 410) and fetched is not None
                     and self.status.now() - fetched < self.refresh_after)
        try:
            if dest is not None:
                result = self.fetcher.fetch_to_file(url, dest, revalidate=True)
            else:
                result = self.fetcher.fetch(url, revalidate=not fresh)
        except FetchError as exc:
            status, reason = crawl_reason(exc)
            if status == "challenged" and self.browser is not None and dest is None:
                got = self._browser_fetch(url)
                if isinstance(got, FetchResult):
                    self.report.fetched_via_browser += 1
                    return self._ok(url, site, kind, got, prev, rel, exc.attempts + 1)
                if got.startswith("browser_failed"):
                    status, reason = "challenged", "waf_challenge"
                self.record(url, site, kind, status, reason, prev=prev, http_status=exc.status,
                            requests=exc.attempts + 1, detail=f"{exc.detail}; {got}")
                return None
            self.record(url, site, kind, status, reason, prev=prev, http_status=exc.status,
                        requests=exc.attempts, detail=exc.detail)
            return None
        if fresh and result.from_cache:
            self.report.changes["cached"] += 1
            self._emit(site, kind, url, "cached", None)
            return result
        return self._ok(url, site, kind, result, prev, rel, result.attempts)

    def _ok(self, url: str, site: str, kind: str, result: FetchResult, prev: dict[str, Any] | None,
            rel: str | None, requests: int) -> FetchResult:
        if result.not_modified:
            self.report.changes["unchanged"] += 1
            self.record(url, site, kind, "not_modified", "not_modified", prev=prev, result=result,
                        requests=requests, rel=rel)
            return result
        prev_sha = (prev or {}).get("sha256")
        change = "new" if not prev_sha else ("unchanged" if prev_sha == result.sha256 else "changed")
        self.report.changes[change] += 1
        self.record(url, site, kind, "ok", change, prev=prev, result=result, requests=requests, rel=rel,
                    fetched_via=result.fetched_via)
        return result

    def amend(self, url: str, reason: str, detail: str | None = None, *, status: str | None = None) -> None:
        """Change the reason (and status) of a row written this run (a page that would not parse)."""
        row = self.status.get(url)
        if row is None:
            return
        old_status, old_reason = row["status"], row["reason"]
        row["reason"], row["detail"] = reason, (detail or "")[:500] or row.get("detail")
        if status is not None:
            row["status"] = status
            if status not in ("ok", "not_modified"):
                row["next_retry_after"] = _iso(self.status.now() + self.refresh_after)
                self.report.skipped.append((url, reason))
        self.status.put(row)
        counter = self.report.by_status.get(old_status)
        if counter is not None and counter.get(old_reason or ""):
            counter[old_reason or ""] -= 1
            if not counter[old_reason or ""]:
                del counter[old_reason or ""]
        self.report.by_status.setdefault(row["status"], Counter())[reason] += 1
        site_counter = self.report.by_site.get(row["site"])
        if site_counter is not None and status is not None and status != old_status:
            site_counter[old_status] -= 1
            site_counter[status] += 1


def _same_host(url: str, root: str) -> bool:
    return urlsplit(url).netloc.lower() == urlsplit(root).netloc.lower()


def mirror_sources(
    fetcher: PoliteFetcher,
    endpoints: Mapping[str, str],
    out_dir: Path | str,
    *,
    only: Iterable[str] = SITES,
    limit: int | None = None,
    progress: ProgressFn | None = None,
    status: CrawlStatus | None = None,
    refresh_after_days: float = 30.0,
    browser: BrowserLike | None = None,
    run_id: str | None = None,
    refresh: bool = False,
) -> MirrorReport:
    """Crawl the sources into ``out_dir`` in the inventory layout (module docstring); never stops
    on one page. ``endpoints``: ``kim``, ``csm``, ``imdb`` and ``imdb_datasets`` (default
    ``<imdb>/datasets``). ``only``: the sites to crawl (IMDb ids then come from the KIM/CSM pages
    already on disk). ``limit``: at most this many review pages per site (titles for IMDb).
    ``status``: the crawl status table (default :func:`default_status_path`). ``browser``: the
    fallback for challenged pages (:class:`extractors.sources.browser.BrowserFetcher`).
    ``refresh``: revalidate every page, whatever its age. ``ValueError`` for an unknown site or a
    missing endpoint."""
    from extractors.sources.csm import csm_id_from_url, csm_index_url, parse_csm, parse_csm_index
    from extractors.sources.imdb import canonical_imdb_id
    from extractors.sources.kim import kim_index_urls, parse_kim, parse_kim_index

    sites = tuple(dict.fromkeys(s.strip() for s in only if s.strip()))
    unknown = sorted(set(sites) - set(SITES))
    if unknown or not sites:
        raise ValueError(f"unknown site(s) {unknown or sites!r}; known: {', '.join(SITES)}")
    if limit is not None and limit < 0:
        raise ValueError("limit must be >= 0")
    for s in sites:
        if not endpoints.get(s):
            raise ValueError(f"no endpoint for {s!r}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    own_status = status is None
    if status is None:
        status = CrawlStatus(default_status_path(out))
    report = MirrorReport(run_id=run_id or status.now().strftime("%Y%m%dT%H%M%S%fZ"), status_db=str(status.path))
    refresh_after = timedelta(days=0 if refresh else max(0.0, float(refresh_after_days)))
    crawl = _Crawl(fetcher, out, status, report, refresh_after, progress, browser, refresh)
    status.start_run(report.run_id, out)
    links: dict[str, str | None] = {}  # rel path of a review page → its IMDb link, parsed this run

    def store(rel: str, body: bytes) -> None:
        path = out / rel
        try:
            if path.is_file() and path.stat().st_size == len(body) and path.read_bytes() == body:
                return  # unchanged: keep the file (and its mtime)
        except OSError:
            pass
        _atomic_write(path, body)

    def review(site: str, url: str, page_id: str, parse: Callable[[str, str], Any]) -> None:
        if not _SAFE_ID.match(page_id) or ".." in page_id.split("/"):
            crawl.record(url, site, "review", "failed", "bad_id", prev=status.get(url),
                         detail=f"unsafe page id {page_id!r}")
            return
        rel = f"{site}/{page_id}.html"
        res = crawl.get(url, site, "review", always_revalidate=False, rel=rel)
        if res is None:
            return
        try:
            store(rel, res.body)
            links[rel] = parse(res.body.decode("utf-8", "replace"), url).imdb_link
        except OSError:
            raise
        except Exception as exc:  # kept on disk: the inventory records its own finding
            links[rel] = None
            crawl.amend(url, "unparseable", f"{type(exc).__name__}: {exc}")

    def index(site: str, url: str, parse: Callable[[str, str], Any]) -> Any:
        res = crawl.get(url, site, "index", always_revalidate=True)
        if res is None:
            return None
        try:
            return parse(res.body.decode("utf-8", "replace"), url)
        except Exception as exc:
            crawl.amend(url, "unparseable", f"{type(exc).__name__}: {exc}", status="failed")
            return None

    def guarded(site: str, url: str, kind: str, fn: Callable[[], Any]) -> Any:
        try:
            return fn()
        except Exception as exc:  # one bad page never stops the crawl
            log.exception("mirror: %s failed unexpectedly", url)
            crawl.record(url, site, kind, "failed", "error", prev=status.get(url), detail=f"{type(exc).__name__}: {exc}")
            return None

    try:
        # --- Kids-in-Mind: every letter page, then the review pages it lists ---------------------
        if "kim" in sites:
            kim_root = endpoints["kim"].rstrip("/")
            taken: dict[str, str] = {}
            for letter_url in kim_index_urls(kim_root):
                if limit is not None and len(taken) >= limit:
                    break
                entries = guarded("kim", letter_url, "index",
                                  lambda u=letter_url: index("kim", u, parse_kim_index))
                if entries is None:
                    continue
                if not entries:
                    crawl.amend(letter_url, "empty_index")
                for entry in entries:
                    if limit is not None and len(taken) >= limit:
                        break
                    if entry.kim_id in taken:
                        continue
                    if not _same_host(entry.url, kim_root):
                        crawl.record(entry.url, "kim", "review", "skipped", "off_site", prev=status.get(entry.url))
                        continue
                    taken[entry.kim_id] = entry.url
                    guarded("kim", entry.url, "review",
                            lambda e=entry: review("kim", e.url, e.kim_id, parse_kim))

        # --- Common Sense Media: the index, following its pagination ---------------------------
        if "csm" in sites:
            csm_root = endpoints["csm"].rstrip("/")
            page_url: str | None = csm_index_url(csm_root)
            seen_pages: set[str] = set()
            taken_csm: dict[str, str] = {}
            while page_url and page_url not in seen_pages and (limit is None or len(taken_csm) < limit):
                seen_pages.add(page_url)
                page = guarded("csm", page_url, "index", lambda u=page_url: index("csm", u, parse_csm_index))
                if page is None:
                    break
                if not page.review_urls:
                    crawl.amend(page_url, "empty_index")
                for url in page.review_urls:
                    if limit is not None and len(taken_csm) >= limit:
                        break
                    slug = csm_id_from_url(url)
                    if slug in taken_csm:
                        continue
                    if not _same_host(url, csm_root):
                        crawl.record(url, "csm", "review", "skipped", "off_site", prev=status.get(url))
                        continue
                    taken_csm[slug] = url
                    guarded("csm", url, "review", lambda u=url, s=slug: review("csm", u, s, parse_csm))
                page_url = page.next_url

        # --- IMDb: datasets first, then the title pages the review pages link to ------------------
        if "imdb" in sites:
            imdb_root = endpoints["imdb"].rstrip("/")
            datasets_root = (endpoints.get("imdb_datasets") or imdb_root + "/datasets").rstrip("/")
            for name in DATASETS:
                url = f"{datasets_root}/{name}.gz"
                guarded("imdb", url, "dataset", lambda u=url, n=name: crawl.get(
                    u, "imdb", "dataset", always_revalidate=True, rel=f"imdb/{n}", dest=out / "imdb" / n))
            ids: set[str] = set()
            for rel, link in _review_links(out, links, parse_kim, parse_csm).items():
                tt, id_status = canonical_imdb_id(link)
                if id_status == "ok" and tt:
                    ids.add(tt)
            for tt in sorted(ids)[: limit if limit is not None else None]:
                for page, template in IMDB_PAGES.items():
                    url = imdb_root + template.format(tt=tt)
                    rel = f"imdb/title/{tt}/{page}.html"

                    def title_page(u: str = url, r: str = rel) -> None:
                        res = crawl.get(u, "imdb", "title", always_revalidate=False, rel=r)
                        if res is not None:
                            store(r, res.body)

                    guarded("imdb", url, "title", title_page)
    finally:
        report.kim = _on_disk(out / "kim", ".html")
        report.csm = _on_disk(out / "csm", ".html")
        title_dir = out / "imdb" / "title"
        report.imdb_titles = sorted(p.name for p in title_dir.iterdir() if p.is_dir() and any(p.iterdir())) \
            if title_dir.is_dir() else []
        report.datasets = [n for n in DATASETS if (out / "imdb" / n).is_file()]
        report.snapshot_id = tree_digest(out)
        snapshot = {"snapshot_id": report.snapshot_id, "finished_at": _iso(status.now()), "run_id": report.run_id,
                    "sites": list(sites), "counts": report.counts(),
                    "changes": report.to_dict()["changes"],
                    "files": {"kim": len(report.kim), "csm": len(report.csm), "imdb_titles": len(report.imdb_titles),
                              "datasets": len(report.datasets)}}
        with contextlib.suppress(OSError):
            _atomic_write(out / SNAPSHOT_FILE, (json.dumps(snapshot, indent=2, sort_keys=True) + "\n").encode())
        status.finish_run(report.run_id, report.snapshot_id, report.to_dict())
        if own_status:
            status.close()
    return report


def _on_disk(root: Path, suffix: str) -> list[str]:
    if not root.is_dir():
        return []
    return sorted(p.relative_to(root).as_posix()[: -len(suffix)] for p in root.rglob(f"*{suffix}")
                  if p.is_file() and not p.name.startswith(".tmp-"))


def _review_links(out: Path, parsed: dict[str, str | None], parse_kim: Callable[[str, str], Any],
                  parse_csm: Callable[[str, str], Any]) -> dict[str, str | None]:
    """IMDb link of every review page on disk (parsed this run, else parsed from the file)."""
    links = dict(parsed)
    for site, parse in (("kim", parse_kim), ("csm", parse_csm)):
        root = out / site
        if not root.is_dir():
            continue
        for p in sorted(root.rglob("*.html")):
            rel = p.relative_to(out).as_posix()
            if rel in links or p.name.startswith(".tmp-"):
                continue
            try:
                links[rel] = parse(p.read_text(encoding="utf-8", errors="replace"), p.as_uri()).imdb_link
            except Exception:  # an unparseable page links nothing (its row says so)
                links[rel] = None
    return links
