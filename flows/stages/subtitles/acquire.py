"""Stage ``acquire``: search the providers for every eligible film and language, then download
the candidates the recovery chain needs next (sql/selection.sql) into the content-addressed raw
store. Same (provider, file id) or same bytes → no second download or copy.

Candidates are ranked per film and language in provider order (OpenSubtitles first, SubDL for
recovery), each provider's by download count. Failures are recorded in ``attempts`` with a reason
code: a non-retryable refusal (unsafe archive, provider error body) rejects the candidate; a
retryable one (network, server) is tried again next round or build; a spent quota stops all
downloads from that provider at once (no request is sent until the reset) and marks the stage
incomplete, so the next build resumes where this one stopped. Refused credentials
(``auth_failed``) stop the provider for the run the same way (the candidate is not rejected: it is
tried again once the credentials are fixed).

A multi-part candidate (validators/multipart.py) is downloaded part by part by its provider and
joined only where certain, else rejected ``multi_part`` like any refused download; a joined one
gets an ``attempts`` row ``joined`` whose reason is ``multi_part_joined: <provenance JSON>`` (per
part: number, file id, raw sha256, entries, original first/last index, index shift, first
position), so every entry of the joined track maps back to its part and original index.
"""

from __future__ import annotations

import json
from datetime import timedelta
from typing import Any

import duckdb

from cinesub.bulk import delete_keys, insert_rows
from cinesub.rawstore import RawStore
from cinesub.records import Candidate, utcnow
from flows.kernel_context import RunContext, Stage
from flows.stages.subtitles.common import selection_views

_CANDIDATE_COLUMNS = ("imdb_id, language, provider, file_id, download_count, rank, uploader, release, fps, "
                      "hearing_impaired, machine_translated, ai_translated, upload_date, feature_imdb_id, url")
_ATTEMPT = """INSERT INTO attempts (run_id, imdb_id, language, provider, file_id, attempt_no, sha256, outcome,
                  reason, attempted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"""


class AcquireStage(Stage):
    name = "acquire"
    reads = ("films", "candidates", "tracks", "decisions", "blobs", "attempts", "selected_attributes",
             "search_cache")
    writes = ("candidates", "blobs", "attempts", "search_cache")
    retries = 2

    def __init__(self, round_no: int = 1, search: bool | None = None):
        self.round_no = round_no
        self.search = round_no == 1 if search is None else search  # the providers are searched once a build
        self.name = f"acquire#{round_no}"

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        # candidates the chain needs in, raw files in the store out
        return (stats.get("needed"), stats.get("downloaded", 0) + stats.get("reused_blobs", 0),
                {"download_failed": stats.get("failed", 0), "download_rejected": stats.get("rejected", 0),
                 "search_failed": stats.get("search_failed", 0), "search_rejected": stats.get("search_rejected", 0)})

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        return ctx.env.acquire_inputs(ctx.run_id)

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        providers = ctx.env.subtitle_providers()
        by_name = {p.name: p for p in providers}
        store = RawStore.for_settings(ctx.settings)
        selection_views(con, ctx)
        stats: dict[str, Any] = {"searched": 0, "candidates": 0, "downloaded": 0, "reused_blobs": 0,
                                 "failed": 0, "rejected": 0, "search_failed": 0, "search_rejected": 0}
        if self.search:
            self._search(ctx, con, providers, stats)

        needed = con.execute(
            "SELECT imdb_id, language, provider, file_id, rank, download_count FROM needed_candidates ORDER BY 1, 2"
        ).fetchall()
        known = {(p, f): s for p, f, s in con.execute("SELECT provider, file_id, sha256 FROM blobs").fetchall()}
        meta = {(r[0], r[1]): r for r in con.execute("SELECT provider, file_id, url FROM candidates").fetchall()}
        stopped: dict[str, str] = {}
        for imdb_id, language, prov, file_id, rank, count in needed:
            sha = known.get((prov, file_id))
            if sha is not None and store.has(sha):
                stats["reused_blobs"] += 1
                continue
            if prov in stopped or prov not in by_name:
                continue
            cand = Candidate(imdb_id=imdb_id, language=language, provider=prov, file_id=file_id,
                             download_count=count, url=meta[(prov, file_id)][2])
            try:
                data = by_name[prov].download(cand)
            except Exception as exc:
                code = getattr(exc, "reason_code", None) or type(exc).__name__
                if code == "auth_failed":  # refused credentials: the provider is off for the run
                    stopped[prov] = "auth_failed"
                    stats["failed"] += 1
                    con.execute(_ATTEMPT, [ctx.run_id, imdb_id, language, prov, file_id, rank, None,
                                           "download_failed", f"{code}: {exc}"[:500], utcnow()])
                    continue
                if code == "quota_exhausted":
                    reset = getattr(exc, "reset_time_utc", None)
                    stopped[prov] = str(reset) if reset else "unknown"
                    con.execute(_ATTEMPT, [ctx.run_id, imdb_id, language, prov, file_id, rank, None,
                                           "quota_exhausted", f"quota_exhausted: reset {stopped[prov]}", utcnow()])
                    continue
                retryable = bool(getattr(exc, "retryable", True))
                outcome = "download_failed" if retryable else "download_rejected"
                stats["failed" if retryable else "rejected"] += 1
                con.execute(_ATTEMPT, [ctx.run_id, imdb_id, language, prov, file_id, rank, None, outcome,
                                       f"{code}: {exc}"[:500], utcnow()])
                continue
            sha, new = store.put(data)
            con.execute(
                "INSERT OR REPLACE INTO blobs VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [prov, file_id, sha, len(data), meta[(prov, file_id)][2], language, imdb_id, count, utcnow()],
            )
            stats["downloaded" if new else "reused_blobs"] += 1
            joined = getattr(by_name[prov], "joins", {}).get(file_id)
            if joined is not None:  # a multi-part candidate: the provenance of its parts
                stats["joined"] = stats.get("joined", 0) + 1
                con.execute(_ATTEMPT, [ctx.run_id, imdb_id, language, prov, file_id, rank, sha, "joined",
                                       "multi_part_joined: " + json.dumps(joined, sort_keys=True), utcnow()])
            if new:
                ctx.item_done("download", con)  # committed (the kernel's test hooks sit behind it)
        stats["needed"] = len(needed)
        if stopped:
            quota = {p: r for p, r in stopped.items() if r != "auth_failed"}
            if quota:
                stats["quota_exhausted"] = quota
            if len(quota) < len(stopped):
                stats["auth_failed"] = sorted(p for p, r in stopped.items() if r == "auth_failed")
        if stopped or stats["search_failed"] or stats["failed"]:
            stats["incomplete"] = True
        return stats

    def _search(self, ctx: RunContext, con, providers, stats) -> None:
        """Search every eligible film × wanted language at every provider, except where the
        search cache (``search_cache``) holds a fresh answer: searched within
        ``providers.search_ttl_hours`` and with the same input digest (docs/rebuilds.md). A pair
        with any new answer is ranked again over all its providers (cached ones from
        ``candidates``), so the ranks are those of a full search."""
        pairs = con.execute(
            "SELECT e.imdb_id, l.language FROM eligible_films e CROSS JOIN wanted_languages l ORDER BY 1, 2"
        ).fetchall()
        now = utcnow()
        ttl = ctx.settings.providers.search_ttl_hours
        refresh = ctx.force or ctx.refresh_search or ttl <= 0 or not ctx.env.search_cacheable
        inputs = ctx.env.search_inputs(sorted({imdb_id for imdb_id, _ in pairs}))
        cache = {} if refresh else {
            (i, lang, p): (d, t) for i, lang, p, d, t in con.execute(
                "SELECT imdb_id, language, provider, input_digest, searched_at FROM search_cache").fetchall()}
        horizon = now - timedelta(hours=ttl)
        old: dict[tuple[str, str, str], list[list[Any]]] = {}
        for row in con.execute(f"SELECT {_CANDIDATE_COLUMNS} FROM candidates ORDER BY rank").fetchall():
            old.setdefault((row[0], row[1], row[2]), []).append(list(row))
        rows: list[list[Any]] = []
        redone: list[tuple[str, str]] = []
        cached: list[list[Any]] = []
        off: set[str] = set()  # providers that refused the credentials or whose daily limit is spent
        stats["search_cached"] = 0
        for imdb_id, language in pairs:
            digest = inputs.get(imdb_id)
            answers: list[list[list[Any]]] = []
            fresh_pair = True
            for provider in providers:
                key = (imdb_id, language, provider.name)
                hit = cache.get(key)
                if hit is not None and hit[0] == digest and hit[1] >= horizon:
                    stats["search_cached"] += 1
                    answers.append(old.get(key, []))
                    continue
                fresh_pair = False
                if provider.name in off:  # recorded once (below); not asked again this run
                    stats["search_skipped"] = stats.get("search_skipped", 0) + 1
                    answers.append(old.get(key, []))
                    continue
                try:
                    if hasattr(provider, "scan"):  # a provider that reports the entries it refused
                        listing = provider.scan(imdb_id, language)
                        hits, refused = listing.candidates, listing.refused
                    else:
                        hits, refused = provider.search(imdb_id, language), []
                except Exception as exc:
                    stats["search_failed"] += 1
                    code = getattr(exc, "reason_code", None) or type(exc).__name__
                    con.execute(_ATTEMPT, [ctx.run_id, imdb_id, language, provider.name, "-", 0, None,
                                           "search_failed", f"{code}: {exc}"[:500], utcnow()])
                    if code in ("auth_failed", "quota_exhausted"):
                        off.add(provider.name)
                    answers.append(old.get(key, []))  # the last answer stands until a search succeeds
                    continue
                stats["searched"] += 1
                for r in refused:  # one bad file is a recorded rejection of that file only
                    stats["search_rejected"] += 1
                    con.execute(_ATTEMPT, [ctx.run_id, imdb_id, language, provider.name, r.file_id, 0, None,
                                           "search_rejected", f"{r.reason_code}: {r.detail}"[:500], utcnow()])
                ranked = sorted(hits, key=lambda c: (-c.download_count, c.file_id))
                answers.append([[c.imdb_id, c.language, c.provider, c.file_id, c.download_count, 0,
                                 c.uploader, c.release, c.fps, c.hearing_impaired, c.machine_translated,
                                 c.ai_translated, c.upload_date, c.feature_imdb_id, c.url] for c in ranked])
                cached.append([imdb_id, language, provider.name, digest, now, ctx.run_id, len(ranked), len(refused)])
            if fresh_pair:
                continue  # every answer cached: its candidates rows stand as they are
            redone.append((imdb_id, language))
            for rank, row in enumerate((r for answer in answers for r in answer), start=1):
                rows.append(row[:5] + [rank] + row[6:])
        names = sorted({p.name for p in providers})
        marks = ",".join("?" * len(names))
        con.execute("BEGIN")
        if stats["search_failed"] == 0:  # a complete search: pairs no longer wanted go
            con.execute("CREATE OR REPLACE TEMP TABLE _pairs (imdb_id VARCHAR, language VARCHAR)")
            insert_rows(con, "_pairs", pairs)
            for table in ("candidates", "search_cache"):
                con.execute(f"DELETE FROM {table} t WHERE provider IN ({marks}) AND NOT EXISTS (SELECT 1 FROM "
                            "_pairs p WHERE p.imdb_id = t.imdb_id AND p.language = t.language)", names)
        delete_keys(con, "candidates", ("imdb_id", "language"), redone, where=f"t.provider IN ({marks})",
                    params=names)
        insert_rows(con, "candidates", rows, replace=True)
        if not ctx.env.search_cacheable:  # answers no later build may reuse: the next one searches afresh
            con.execute(f"DELETE FROM search_cache WHERE provider IN ({marks})", names)
        else:
            insert_rows(con, "search_cache", cached, replace=True)
        con.execute("COMMIT")
        stats["candidates"] = con.execute("SELECT count(*) FROM candidates").fetchone()[0]
        stats["candidates_new"] = len(rows)
