"""Stages ``variety-discover``, ``variety-filter`` and ``variety-extract`` (SPEC B1).

* discover: Variety items on the Internet Archive by date range (``extractors.ia.variety_query``),
  their metadata and page texts from a page-indexed derivative (``IAClient.page_texts``: hOCR
  search text + page index, else ``_djvu.xml``; a ``_djvu.txt`` only is reason ``no_page_index``),
  each text page aligned with its image leaf by the scan data (a mismatch is the item's
  ``alignment_reason``); no image is fetched here. Incremental: an item whose fingerprint
  (identifier + ``item_last_updated``) is unchanged keeps its previous rows and costs one metadata
  request; the stats say how many items were new, changed, unchanged, removed. ``pd_pages`` keeps
  one row per text page with its leaf, issue date and the raw-store digest of its text. The issue
  date of a leaf is read from its running head ("Wednesday, March 7, 1934"), else carried from
  the previous leaf, else the item's first date (``issue_date_source`` says which).
* filter: :func:`extractors.variety.page_filter.classify_page` on every leaf; every decision
  with its reason code is kept (``pd_page_filter``). A page whose reading or classification
  raises is kept out with reason ``internal_error`` and ``phrase`` = "<exception type>: <detail>";
  the other pages are classified (one poison page never fails the stage).
* extract: on kept pages, the OCR-rules extractor (``extractor='ocr-rules'``, always) and Gemini on
  the page images (``extractor='gemini'``, when enabled and a key is available); what an extractor
  could not read becomes a ``pd_extract_errors`` row with a reason code (a page on which the
  OCR-rules extractor raises: ``internal_error``, detail "<exception type>: <message>"), and
  ``pd_crosscheck`` records per page how far the primary extractor agrees with the other one.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import duckdb

from extractors.variety.issue_dates import head_issue_date  # noqa: F401  (re-exported: tests, docs)
from flows.kernel_context import RunContext
from flows.stages.hollywood.common import (PDStage, append_rows, file_digest, gemini_inputs, gemini_job, ia_client,
                                           ia_spec, item_runner)
from flows.stages.hollywood.common import flush_rows, raw_store, refuse_item, replace_rows
from flows.stages.hollywood.ocr import ensure_text_columns, ocr_inputs


#: items whose jobs a stage hands to the item runner at once (their page lists are built per
#: chunk), and how often a stage commits and checkpoints its rows (issue 17: memory flat in items)
ITEM_CHUNK = 8


def _items(ctx: RunContext) -> Any:
    return item_runner(ctx)


def write_item(con: duckdb.DuckDBPyConnection, row: dict[str, Any], pages: list[dict[str, Any]]) -> None:
    """Replace one item's row and pages in one transaction (a crash keeps every finished item)."""
    con.execute("BEGIN")
    try:
        con.execute("DELETE FROM pd_pages WHERE item_id = ?", [row["item_id"]])
        con.execute("DELETE FROM pd_variety_items WHERE item_id = ?", [row["item_id"]])
        append_rows(con, "pd_variety_items", [row])
        append_rows(con, "pd_pages", pages)
        con.execute("COMMIT")
    except BaseException:
        con.execute("ROLLBACK")
        raise


class VarietyDiscoverStage(PDStage):
    name = "variety-discover"
    version = "3"  # 2: Tesseract for pages with no or unusable text layer; 3: item jobs, written item by item
    reads = ()
    writes = ("pd_variety_items", "pd_pages")
    retries = 1
    asks_archive = True

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        return {**super().external_inputs(ctx), **ocr_inputs(ctx)}

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        failed = sum((stats.get("item_failures") or {}).values())
        return stats.get("items"), (stats.get("items") or 0) - failed, dict(stats.get("item_failures") or {})

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from extractors.ia import variety_query
        from extractors.ocr_tesseract import options_of
        from extractors.providers.errors import ProviderError
        from flows.stages.hollywood.pages import discover_failed, discover_work

        hs = ctx.settings.hollywood
        client = ia_client(ctx)
        ids = client.search_items(variety_query(hs.variety_start, hs.variety_end))
        if hs.max_items:
            ids = ids[: hs.max_items]
        ensure_text_columns(con, "pd_pages")
        con.execute("ALTER TABLE pd_variety_items ADD COLUMN IF NOT EXISTS detail VARCHAR")
        # the previous build's items: one whose fingerprint (identifier + item_last_updated) is
        # unchanged keeps its rows as they are (no file fetched); the others are item jobs on the
        # run's item runner, written item by item as they finish (memory flat in the number of items)
        prev = {i: (fp, why) for i, fp, why in con.execute(
            "SELECT item_id, fingerprint, reason FROM pd_variety_items").fetchall()}
        reasons: Counter[str] = Counter()
        change: Counter[str] = Counter()
        spec, opts = ia_spec(ctx, client), options_of(hs)
        jobs = []
        for ident in ids:
            row: dict[str, Any] = {"item_id": ident, "reason": None}
            try:
                meta = client.metadata(ident)
                row["fingerprint"] = client.item_fingerprint(ident)
            except ProviderError as exc:
                refuse_item(row, exc, reasons)
                write_item(con, row, [])
                continue
            old = prev.get(ident)
            if old is not None and old[0] == row["fingerprint"] and old[1] is None:
                change["unchanged"] += 1
                continue
            change["changed" if old is not None else "new"] += 1
            row.update(title=meta.get("title"), date_start=meta.get("date-start") or meta.get("date"),
                       date_end=meta.get("date-end") or meta.get("date"))
            jobs.append((spec, row, opts))
        requests, failed_attempts = client.requests, len(client.events)
        written = 0
        for row, pages, n_req, n_failed in _items(ctx).map(discover_work, jobs, discover_failed):
            requests, failed_attempts = requests + n_req, failed_attempts + n_failed
            if row.get("reason"):
                reasons[row["reason"]] += 1
            else:
                if row.get("alignment_reason"):  # recorded per item; the pages stay usable
                    reasons[row["alignment_reason"]] += 1
                if not row.get("jp2_zip"):
                    reasons["no_page_images"] += 1
            write_item(con, row, pages)
            written += 1
            if written % ITEM_CHUNK == 0:  # committed rows into the DB file: DuckDB holds a chunk at most
                flush_rows(con)
        removed = sorted(set(prev) - set(ids))
        change["removed"] = len(removed)
        if removed:
            con.execute("DELETE FROM pd_pages WHERE list_contains(?, item_id)", [removed])
            con.execute("DELETE FROM pd_variety_items WHERE list_contains(?, item_id)", [removed])
        n_pages = con.execute("SELECT count(*) FROM pd_pages").fetchone()[0]
        return {"items": con.execute("SELECT count(*) FROM pd_variety_items").fetchone()[0], "pages": n_pages,
                "item_failures": dict(reasons),
                "text_engines": dict(con.execute("SELECT coalesce(text_engine, 'None'), count(*) FROM pd_pages "
                                                 "GROUP BY ALL ORDER BY 1").fetchall()),
                "text_reasons": dict(con.execute("SELECT text_reason, count(*) FROM pd_pages WHERE text_reason "
                                                 "IS NOT NULL GROUP BY ALL ORDER BY 1").fetchall()),
                "items_new": change["new"], "items_changed": change["changed"],
                "items_unchanged": change["unchanged"], "items_removed": change["removed"],
                "item_jobs": len(jobs), "ia_requests": requests, "ia_failed_attempts": failed_attempts}


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> list[dict[str, Any]]:
    cur = con.execute(sql, params or [])
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, r)) for r in cur.fetchall()]


class VarietyFilterStage(PDStage):
    name = "variety-filter"
    version = "1"
    reads = ("pd_pages",)
    writes = ("pd_page_filter",)

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        return stats.get("pages"), stats.get("kept"), dict(stats.get("dropped") or {})

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from flows.stages.hollywood.pages import filter_item_failed, filter_item_work

        store = raw_store(ctx)
        reasons: Counter[str] = Counter()
        dropped: Counter[str] = Counter()
        n = kept = 0
        items = [r[0] for r in con.execute("SELECT DISTINCT item_id FROM pd_pages ORDER BY 1").fetchall()]
        con.execute("BEGIN")
        try:
            con.execute("DELETE FROM pd_page_filter")
            # one item per job on the run's item runner, ITEM_CHUNK items' jobs at a time (memory
            # flat in the number of items); a page that raises is its internal_error row
            for start in range(0, len(items), ITEM_CHUNK):
                jobs = [(item_id, [(p, store.url_for(sha) if sha else None, sha) for p, sha in zip(pages, shas)])
                        for item_id, pages, shas in con.execute(
                            """SELECT item_id, list(page ORDER BY page), list(ocr_sha256 ORDER BY page)
                               FROM pd_pages WHERE list_contains(?, item_id) GROUP BY item_id ORDER BY item_id""",
                            [items[start:start + ITEM_CHUNK]]).fetchall()]
                for _item, rows in _items(ctx).map(filter_item_work, jobs, filter_item_failed):
                    append_rows(con, "pd_page_filter", rows)  # written item by item, in any order
                    for r in rows:
                        n += 1
                        kept += bool(r["keep"])
                        reasons[r["reason"]] += 1
                        if not r["keep"]:
                            dropped[r["reason"]] += 1
                del jobs
                _checkpoint(con, ITEM_CHUNK)  # each chunk committed
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        flush_rows(con)
        return {"pages": n, "kept": kept, "reasons": dict(reasons), "dropped": dict(dropped)}


def _signature(r: dict[str, Any]) -> tuple:
    from validators.extraction_metrics import tuple_signature

    return tuple_signature(r)


def crosscheck_rows(pages: list[dict[str, Any]], tuples: list[dict[str, Any]], primary: str,
                    secondary: str, secondary_ran: bool) -> list[dict[str, Any]]:
    """Per page: exact tuples in common between two extractors (multiset) and the agreement
    2·common / (n_primary + n_secondary)."""
    by: dict[tuple[str, int, str], Counter] = {}
    for t in tuples:
        by.setdefault((t["item_id"], t["page"], t["extractor"]), Counter())[_signature(t)] += 1
    out = []
    for p in pages:
        a = by.get((p["item_id"], p["page"], primary), Counter())
        b = by.get((p["item_id"], p["page"], secondary), Counter())
        na, nb = sum(a.values()), sum(b.values())
        agree = sum((a & b).values())
        if not secondary_ran:
            status = "secondary_missing"
        elif na + nb == 0:
            status = "both_empty"
        else:
            status = "agree" if agree == na == nb else "disagree"
        out.append({"item_id": p["item_id"], "page": p["page"], "issue_date": p["issue_date"],
                    "primary_extractor": primary, "secondary_extractor": secondary, "n_primary": na,
                    "n_secondary": nb, "n_agree": agree,
                    "agreement": round(2 * agree / (na + nb), 6) if na + nb else None, "status": status})
    return out


def fetch_kept_images(ctx: RunContext, kept: list[dict[str, Any]]) -> dict[tuple, tuple[str, str | None]]:
    """Fetch the image of every kept page, one ``_jp2.zip`` member per job on the run's item
    runner (a worker downloads, fits and stores it; nothing is held here): sets
    ``image_sha256`` on each page of ``kept`` and returns ``{(item, page): (reason, detail)}`` of
    the pages whose image could not be fetched. (``variety-extract`` fetches them inside its
    Gemini item jobs; this is the same fetch on its own, for the scale benchmark.)"""
    from flows.stages.hollywood.pages import image_failed, image_work

    spec = ia_spec(ctx)
    st = ctx.settings
    jobs = [(p["item_id"], p["page"], p["leaf"], spec.base_url, spec.store_loc, spec.local_root,
             p["jp2_zip"], st.hollywood.page_image_max_b64_bytes, spec.retry) for p in kept if not p["image_sha256"]]
    by_key = {(p["item_id"], p["page"]): p for p in kept}
    failed: dict[tuple, tuple[str, str | None]] = {}
    for key, sha, reason, detail in _items(ctx).map(image_work, jobs, image_failed):
        if sha:
            by_key[key]["image_sha256"] = sha
        else:
            failed[key] = (reason or "no_page_image", detail)
    return failed


def page_state_rows(con: duckdb.DuckDBPyConnection, item_id: str, images: dict[int, str],
                    tuples: list[dict[str, Any]], errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``pd_page_state`` of one item: every page — ``dropped`` (the filter's reason), ``failed``
    (the first extract error's ``extractor:reason``), ``extracted`` (tuples read) or ``kept``
    (nothing read); ``images``: the kept pages' fetched image digests by page."""
    first_error: dict[int, str] = {}
    for e in errors:
        first_error.setdefault(e["page"], f"{e['extractor']}:{e['reason']}")
    with_tuples = {t["page"] for t in tuples}
    out = []
    for page, leaf, keep, reason, fp in con.execute(
            """SELECT f.page, coalesce(p.leaf, f.page), f.keep, f.reason, i.fingerprint
               FROM pd_page_filter f LEFT JOIN pd_pages p USING (item_id, page)
               LEFT JOIN pd_variety_items i USING (item_id) WHERE f.item_id = ? ORDER BY f.page""",
            [item_id]).fetchall():
        if not keep:
            state, why = "dropped", reason
        elif page in first_error:
            state, why = "failed", first_error[page]
        elif page in with_tuples:
            state, why = "extracted", None
        else:
            state, why = "kept", None
        out.append({"item_id": item_id, "page": page, "leaf": leaf, "state": state, "reason": why,
                    "image_sha256": images.get(page) if keep else None, "fingerprint": fp})
    return out


def _checkpoint(con: duckdb.DuckDBPyConnection, done: int) -> None:
    """Commit (and checkpoint, :func:`flush_rows`) every ITEM_CHUNK items inside a stage that
    rewrites its tables (a transaction's rows are held in memory until its commit); a crash
    leaves the stage unfinished, and the next build runs it again from scratch."""
    if done % ITEM_CHUNK == 0:
        con.execute("COMMIT")
        flush_rows(con)
        con.execute("BEGIN")


_OUT_TABLES = ("pd_tuples", "pd_extract_errors", "pd_crosscheck", "pd_page_state")


def _kept_pages(con: duckdb.DuckDBPyConnection, item_ids: list[str]) -> list[tuple[str, Any, list[dict[str, Any]]]]:
    """``(item_id, jp2 zip name, kept pages)`` of the items of ``item_ids`` that have kept pages,
    by item; each page a dict of page, issue_date, ocr_sha256, image_sha256, leaf, by page."""
    cols = ("page", "issue_date", "ocr_sha256", "image_sha256", "leaf")
    return [(item_id, zip_name, [dict(zip(cols, r)) for r in zip(*lists)]) for item_id, zip_name, *lists in
            con.execute(
                """SELECT p.item_id, any_value(i.jp2_zip), list(p.page ORDER BY p.page),
                          list(p.issue_date ORDER BY p.page), list(p.ocr_sha256 ORDER BY p.page),
                          list(p.image_sha256 ORDER BY p.page), list(coalesce(p.leaf, p.page) ORDER BY p.page)
                   FROM pd_pages p JOIN pd_page_filter f USING (item_id, page)
                   LEFT JOIN pd_variety_items i USING (item_id)
                   WHERE f.keep AND list_contains(?, p.item_id) GROUP BY p.item_id ORDER BY p.item_id""",
                [item_ids]).fetchall()]


class VarietyExtractStage(PDStage):
    name = "variety-extract"
    version = "3"  # 2: kept images fetched per page in item-runner jobs; pd_page_state; 3: item-level jobs, Gemini in them
    reads = ("pd_variety_items", "pd_pages", "pd_page_filter")
    writes = _OUT_TABLES

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        return {**gemini_inputs(ctx), "primary": ctx.primary_extractor,
                "citymap": file_digest(ctx.settings.hollywood.citymap_path)}

    def _gemini(self, ctx: RunContext, jobs: int = 1) -> Any:
        """The Gemini page reader's item-job settings, or None (disabled / no key)."""
        return gemini_job(ctx, "variety", jobs)

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from flows.stages.hollywood.pages import (extract_item_failed, extract_item_work, gemini_item_failed,
                                                  gemini_item_work)

        hs = ctx.settings.hollywood
        store = raw_store(ctx)
        primary = ctx.primary_extractor
        citymap = str(hs.citymap_path) if hs.citymap_path else None
        # every item of the filter, ITEM_CHUNK at a time: its kept pages (4 % of the leaves at the
        # paper's scale) are read, extracted, cross-checked and written per chunk, so nothing held
        # here grows with the number of items (issue 17); one job per item with kept pages
        all_items = [r[0] for r in con.execute("SELECT DISTINCT item_id FROM pd_page_filter ORDER BY 1").fetchall()]
        n_kept, n_jobs = con.execute("SELECT count(*), count(DISTINCT item_id) FROM pd_page_filter WHERE keep").fetchone()
        errors_by: Counter[str] = Counter()
        stats: dict[str, Any] = {"kept_pages": n_kept, "item_jobs": n_jobs}
        gem = self._gemini(ctx, n_jobs)
        secondary = "ocr-rules" if primary == "gemini" else "gemini"
        ran = secondary == "ocr-rules" or gem is not None
        spec = ia_spec(ctx) if gem is not None else None
        n_ocr = calls = hits = n_gem = n_images = 0
        gem_errors: Counter[str] = Counter()
        cross_n: Counter[str] = Counter()
        state_n: Counter[str] = Counter()

        def errors_of(item_id: str, rows: list[dict[str, Any]]) -> None:
            append_rows(con, "pd_extract_errors", rows)
            errors_by.update(f"{e['extractor']}:{e['reason']}" for e in rows)

        con.execute("BEGIN")
        try:
            for t in _OUT_TABLES:
                con.execute(f'DELETE FROM "{t}"')
            for start in range(0, len(all_items), ITEM_CHUNK):
                chunk = all_items[start:start + ITEM_CHUNK]
                items = _kept_pages(con, chunk)
                dates = {(item_id, p["page"]): p["issue_date"] for item_id, _, pages in items for p in pages}
                images: dict[str, dict[int, str]] = {}
                # the OCR-rules extractor: one item per job; rows written item by item
                jobs = [(item_id, [({"item_id": item_id, "page": p["page"], "issue_date": p["issue_date"]},
                                    store.url_for(p["ocr_sha256"]) if p["ocr_sha256"] else None, p["ocr_sha256"])
                                   for p in pages], citymap) for item_id, _, pages in items]
                for item_id, tuples, errors in _items(ctx).map(extract_item_work, jobs, extract_item_failed):
                    append_rows(con, "pd_tuples", tuples)
                    errors_of(item_id, errors)
                    n_ocr += len(tuples)
                if gem is not None:
                    jobs = [(gem, spec, item_id, zip_name,
                             [(p["page"], p["leaf"], p["issue_date"].isoformat() if p["issue_date"] else "",
                               p["image_sha256"]) for p in pages], hs.page_image_max_b64_bytes)
                            for item_id, zip_name, pages in items]
                    for res in _items(ctx).map(gemini_item_work, jobs, gemini_item_failed):
                        item_id = res["item_id"]
                        images[item_id] = res["images"]
                        n_images += len(res["images"])
                        rows, seqs = [], Counter()
                        for r in res["rows"]:
                            k = (r["item_id"], r["page"])
                            rows.append({"item_id": r["item_id"], "page": r["page"], "issue_date": dates[k],
                                         "extractor": "gemini", "model": r["model"], "seq": seqs[k],
                                         "theater": r["theater"], "city": r["city"], "movie": r["movie"],
                                         "week": r["week"], "gross": r["gross"], "confidence": r["confidence"],
                                         "line_no": None})
                            seqs[k] += 1
                        append_rows(con, "pd_tuples", rows)
                        errs = [{"item_id": item_id, "page": page, "issue_date": dates[(item_id, page)],
                                 "extractor": "gemini", "model": gem.model,
                                 "reason": "no_page_image" if reason == "no_page_images" else f"image:{reason}",
                                 "detail": detail or "the item has no page image for this leaf"}
                                for page, (reason, detail) in sorted(res["image_failures"].items())]
                        errs += [{"item_id": i, "page": page, "issue_date": dates[(i, page)], "extractor": "gemini",
                                  "model": model, "reason": reason, "detail": detail}
                                 for i, page, model, reason, detail in res["errors"]]
                        errors_of(item_id, errs)
                        gem_errors.update(e["reason"] for e in errs
                                          if not e["reason"].startswith(("image:", "no_page_image")))
                        calls, hits, n_gem = calls + res["calls"], hits + res["cache_hits"], n_gem + len(rows)
                # per item: the cross-check of its kept pages and the state of all its pages
                kept_by = {item_id: pages for item_id, _, pages in items}
                for item_id in chunk:
                    tuples = _rows(con, "SELECT * FROM pd_tuples WHERE item_id = ?", [item_id])
                    errors = _rows(con, "SELECT * FROM pd_extract_errors WHERE item_id = ?", [item_id])
                    pages = [{"item_id": item_id, "page": p["page"], "issue_date": p["issue_date"]}
                             for p in kept_by.get(item_id, [])]
                    cross = crosscheck_rows(pages, tuples, primary, secondary, secondary_ran=ran)
                    append_rows(con, "pd_crosscheck", cross)
                    cross_n.update(c["status"] for c in cross)
                    state = page_state_rows(con, item_id, images.get(item_id, {}), tuples, errors)
                    append_rows(con, "pd_page_state", state)
                    state_n.update(r["state"] for r in state)
                del items, dates, images, jobs, kept_by
                _checkpoint(con, ITEM_CHUNK)  # each chunk committed
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
        stats["ocr_rules_tuples"] = n_ocr
        if gem is not None:
            stats.update(images_fetched=n_images, gemini_tuples=n_gem, gemini_calls=calls, gemini_cache_hits=hits,
                         gemini_errors=dict(gem_errors))
            if gem_errors:  # failed pages are retried by the next build: no reusable marker
                stats["incomplete"] = True
        flush_rows(con)
        stats["page_states"] = dict(state_n)
        stats.update(primary=primary, errors=dict(errors_by), crosscheck=dict(cross_n))
        return stats
