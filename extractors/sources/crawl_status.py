"""The crawl status table of :mod:`extractors.sources.mirror`: one row per URL tried (status,
reason code, HTTP status, tries, validators, sha256, first seen / last fetched, next retry), in a
DuckDB file kept outside the mirrored tree (docs/sources.md "Crawl")."""

from __future__ import annotations

import contextlib
import json
import re
from collections import Counter
from collections.abc import Callable
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from extractors.sources.fetch import FetchError

#: statuses of a row of the crawl status table
STATUSES: tuple[str, ...] = ("ok", "not_modified", "failed", "challenged", "skipped")

#: reason codes of the crawl status table (``ok`` rows may carry ``unparseable`` / ``empty_index``)
CRAWL_REASONS: dict[str, str] = {
    "new": "fetched for the first time",
    "changed": "fetched again and its bytes differ from the last copy",
    "unchanged": "fetched again (200) with the same bytes as the last copy",
    "not_modified": "HTTP 304 to a conditional request (If-None-Match / If-Modified-Since): the cached copy stands",
    "waf_challenge": "a bot wall instead of the page (AWS WAF: x-amzn-waf-action, or HTTP 202 with an empty "
                     "body); retried by a later run after a backoff that doubles per try",
    "http_404": "HTTP 404", "http_410": "HTTP 410", "http_403": "HTTP 403", "http_401": "HTTP 401",
    "http_4xx": "another final 4xx (the HTTP status is in the row)",
    "http_5xx": "HTTP 5xx after the bounded retries",
    "http_429": "HTTP 429 after the bounded retries (or a Retry-After beyond the allowed wait)",
    "http_error": "another final HTTP answer (3xx without Location, a body over the size limit)",
    "timeout": "timeouts after the bounded retries",
    "network": "connection errors or truncated bodies after the bounded retries",
    "robots_disallowed": "robots.txt of the site disallows the URL for our user agent (nothing sent)",
    "too_many_redirects": "more than 5 redirects",
    "bad_url": "not an absolute http(s) URL",
    "bad_id": "the page id taken from an index is not a safe relative path (nothing fetched)",
    "off_site": "an index links a review page on another host (not fetched)",
    "unparseable": "the page was fetched but its parser raised (index: its links are lost; review page: "
                   "kept, the inventory records its own finding)",
    "empty_index": "an index page listing no review page",
    "browser_failed": "the browser fallback could not load the challenged page",
    "error": "an unexpected error while handling this page (detail in the row); the crawl went on",
}

_TRANSIENT = frozenset({"http_5xx", "http_429", "timeout", "network", "error", "browser_failed"})
_SAFE_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]*(?:/[A-Za-z0-9_][A-Za-z0-9._-]*)*$")


def crawl_reason(exc: FetchError) -> tuple[str, str]:
    """(status, reason code) of the crawl table for a :class:`FetchError`."""
    code, status = exc.reason_code, exc.status
    if code == "waf_challenge":
        return "challenged", "waf_challenge"
    if code == "robots_disallowed":
        return "skipped", "robots_disallowed"
    if code == "not_found":
        return "failed", f"http_{status}" if status in (404, 410) else "http_404"
    if code == "server_error":
        return "failed", "http_5xx"
    if code == "rate_limited":
        return "failed", "http_429"
    if code == "http_error":
        if status in (401, 403):
            return "failed", f"http_{status}"
        if status is not None and 400 <= status < 500:
            return "failed", "http_4xx"
        if status is not None and status >= 500:
            return "failed", "http_5xx"
        return "failed", "http_error"
    if code in ("timeout", "network", "too_many_redirects", "bad_url"):
        return "failed", code
    return "failed", "error"


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _iso(t: datetime | None) -> str | None:
    return t.astimezone(timezone.utc).isoformat(timespec="microseconds") if t is not None else None


def _parse_iso(v: str | None) -> datetime | None:
    if not v:
        return None
    try:
        t = datetime.fromisoformat(v)
    except ValueError:
        return None
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


# --------------------------------------------------------------------------------------------
# The crawl status table
# --------------------------------------------------------------------------------------------
_COLUMNS = ("url", "site", "kind", "status", "reason", "http_status", "attempts", "requests", "etag",
            "last_modified", "sha256", "path", "fetched_via", "detail", "first_seen", "last_fetched",
            "last_ok", "next_retry_after", "run_id")
_SCHEMA = """
CREATE TABLE IF NOT EXISTS crawl_pages (
    url VARCHAR, site VARCHAR, kind VARCHAR, status VARCHAR, reason VARCHAR,
    http_status INTEGER, attempts INTEGER, requests INTEGER, etag VARCHAR, last_modified VARCHAR,
    sha256 VARCHAR, path VARCHAR, fetched_via VARCHAR, detail VARCHAR, first_seen VARCHAR,
    last_fetched VARCHAR, last_ok VARCHAR, next_retry_after VARCHAR, run_id VARCHAR);
CREATE TABLE IF NOT EXISTS crawl_runs (
    run_id VARCHAR PRIMARY KEY, started_at VARCHAR, finished_at VARCHAR, out_dir VARCHAR,
    snapshot_id VARCHAR, report VARCHAR);
"""


class CrawlStatus:
    """The per-page status table of the crawl, in a DuckDB file (``crawl_pages``, ``crawl_runs``).

    ``challenge_backoff_s``: the first wait after a WAF challenge, doubled per further try, at most
    ``backoff_max_s``. ``failure_backoff_s``: the same for transient failures (5xx, 429,
    timeouts, network; default 0 = the next run tries again). Permanent failures (4xx, robots)
    are tried again after the refresh window of the run. ``clock`` is injectable for tests.
    """

    def __init__(self, path: Path | str, *, clock: Callable[[], datetime] = _now,
                 challenge_backoff_s: float = 3600.0, failure_backoff_s: float = 0.0,
                 backoff_max_s: float = 14 * 86400.0):
        import duckdb

        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.clock = clock
        self.challenge_backoff_s = float(challenge_backoff_s)
        self.failure_backoff_s = float(failure_backoff_s)
        self.backoff_max_s = float(backoff_max_s)
        self._con = duckdb.connect(str(self.path))
        self._con.execute(_SCHEMA)
        # rows live in memory during a crawl and go to the file in batches (one DuckDB upsert per
        # page would cost more than the page); flush() after every ``flush_every`` changes and at close
        self._rows: dict[str, dict[str, Any]] = {
            r[0]: dict(zip(_COLUMNS, r)) for r in self._con.execute(
                f"SELECT {', '.join(_COLUMNS)} FROM crawl_pages").fetchall()}
        self._dirty: set[str] = set()
        self.flush_every = 200

    def flush(self) -> None:
        if not self._dirty:
            return
        import pyarrow as pa

        batch = [self._rows[u] for u in sorted(self._dirty)]
        table = pa.table({c: [r.get(c) for r in batch] for c in _COLUMNS},
                         schema=pa.schema([(c, pa.int64() if c in ("http_status", "attempts", "requests")
                                            else pa.string()) for c in _COLUMNS]))
        con = self._con
        con.register("_crawl_batch", table)
        try:
            con.execute("BEGIN TRANSACTION")
            con.execute("DELETE FROM crawl_pages WHERE url IN (SELECT url FROM _crawl_batch)")
            con.execute(f"INSERT INTO crawl_pages SELECT {', '.join(_COLUMNS)} FROM _crawl_batch")
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        finally:
            con.unregister("_crawl_batch")
        self._dirty.clear()

    def close(self) -> None:
        try:
            self.flush()
        finally:
            with contextlib.suppress(Exception):
                self._con.close()

    def __enter__(self) -> CrawlStatus:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def now(self) -> datetime:
        return self.clock()

    # -- rows ----------------------------------------------------------------------------------
    def get(self, url: str) -> dict[str, Any] | None:
        row = self._rows.get(url)
        return dict(row) if row is not None else None

    def rows(self, *, status: str | None = None, site: str | None = None) -> list[dict[str, Any]]:
        return [dict(r) for u, r in sorted(self._rows.items())
                if (status is None or r["status"] == status) and (site is None or r["site"] == site)]

    def put(self, row: Mapping[str, Any]) -> None:
        url = row["url"]
        self._rows[url] = {c: row.get(c) for c in _COLUMNS}
        self._dirty.add(url)
        if len(self._dirty) >= self.flush_every:
            self.flush()

    def deferred_until(self, url: str) -> datetime | None:
        """When a failed/challenged/skipped URL may be tried again, if that is still ahead."""
        row = self.get(url)
        if row is None or row["status"] in ("ok", "not_modified"):
            return None
        when = _parse_iso(row["next_retry_after"])
        return when if when is not None and when > self.now() else None

    def backoff(self, status: str, reason: str, attempts: int, refresh_after: timedelta) -> timedelta:
        n = max(0, attempts - 1)
        if status == "challenged":
            return timedelta(seconds=min(self.backoff_max_s, self.challenge_backoff_s * 2 ** min(n, 30)))
        if reason in _TRANSIENT:
            return timedelta(seconds=min(self.backoff_max_s, self.failure_backoff_s * 2 ** min(n, 30)))
        return refresh_after

    # -- runs ----------------------------------------------------------------------------------
    def start_run(self, run_id: str, out_dir: Path) -> None:
        self._con.execute("INSERT OR REPLACE INTO crawl_runs VALUES (?, ?, NULL, ?, NULL, NULL)",
                          [run_id, _iso(self.now()), str(out_dir)])

    def finish_run(self, run_id: str, snapshot_id: str | None, report: Mapping[str, Any]) -> None:
        self.flush()
        self._con.execute("UPDATE crawl_runs SET finished_at = ?, snapshot_id = ?, report = ? WHERE run_id = ?",
                          [_iso(self.now()), snapshot_id, json.dumps(report, sort_keys=True, default=str), run_id])

    def last_run(self) -> dict[str, Any] | None:
        row = self._con.execute("SELECT run_id, started_at, finished_at, out_dir, snapshot_id, report "
                                "FROM crawl_runs ORDER BY started_at DESC, run_id DESC LIMIT 1").fetchone()
        if row is None:
            return None
        out = dict(zip(("run_id", "started_at", "finished_at", "out_dir", "snapshot_id", "report"), row))
        out["report"] = json.loads(out["report"]) if out["report"] else None
        return out

    def summary(self) -> dict[str, Any]:
        """Counts of the table: by status, by (status, reason), by site and status; the retry queue."""
        self.flush()
        con = self._con
        by_status = dict(con.execute("SELECT status, count(*) FROM crawl_pages GROUP BY 1 ORDER BY 1").fetchall())
        by_reason: dict[str, dict[str, int]] = {}
        for status, reason, n in con.execute("SELECT status, coalesce(reason, ''), count(*) FROM crawl_pages "
                                             "GROUP BY 1, 2 ORDER BY 1, 2").fetchall():
            by_reason.setdefault(status, {})[reason] = n
        by_site: dict[str, dict[str, int]] = {}
        for site, status, n in con.execute("SELECT site, status, count(*) FROM crawl_pages GROUP BY 1, 2 "
                                           "ORDER BY 1, 2").fetchall():
            by_site.setdefault(site, {})[status] = n
        now = _iso(self.now())
        waiting = con.execute("SELECT count(*), min(next_retry_after) FROM crawl_pages WHERE status NOT IN "
                              "('ok', 'not_modified') AND next_retry_after > ?", [now]).fetchone()
        return {"db": str(self.path), "pages": sum(by_status.values()), "by_status": by_status,
                "by_reason": by_reason, "by_site": by_site,
                "retry_queue": {"waiting": int(waiting[0]), "next_retry_after": waiting[1]},
                "last_run": self.last_run()}
