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

import datetime as dt
import re
from collections import Counter
from typing import Any

import duckdb

from flows.items import LocalItemRunner
from flows.kernel_context import RunContext
from flows.stages.hollywood.common import (PDStage, file_digest, gemini_inputs, gemini_read_chunked, gemini_reader,
                                           ia_client)
from flows.stages.hollywood.common import raw_store, refuse_item, replace_rows
from flows.stages.hollywood.pages import extract_failed, extract_work, filter_failed, filter_work
from flows.stages.hollywood.ocr import ensure_text_columns, member_page_text, ocr_inputs

_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")
_HEAD_DATE_RE = re.compile(r"([A-Za-z][A-Za-z^]{2,9})\.?\s+(\d{1,2})\s*[,.]?\s*(1[89]\d\d)")
#: how far a running-head date may lie outside the item's own date range (days)
ISSUE_DATE_SLACK_DAYS = 10


def _iso(value: Any) -> dt.date | None:
    try:
        return dt.date.fromisoformat(str(value)[:10]) if value else None
    except ValueError:
        return None


def head_issue_date(text: str, lo: dt.date | None = None, hi: dt.date | None = None,
                    head_chars: int = 250) -> dt.date | None:
    """The issue date printed in a page's running head ("Wednesday, March 7, 1934"), tolerant
    of OCR-damaged month names (rapidfuzz ≥ 80), and inside ``[lo, hi]`` ± a few days when given."""
    from rapidfuzz import fuzz, process

    for m in _HEAD_DATE_RE.finditer(text[:head_chars]):
        word = m.group(1).lower().replace("^", "")
        hit = process.extractOne(word, _MONTHS, scorer=fuzz.ratio, score_cutoff=80)
        if hit is None:
            continue
        try:
            d = dt.date(int(m.group(3)), _MONTHS.index(hit[0]) + 1, int(m.group(2)))
        except ValueError:
            continue
        slack = dt.timedelta(days=ISSUE_DATE_SLACK_DAYS)
        if (lo and d < lo - slack) or (hi and d > hi + slack):
            continue
        return d
    return None


def _items(ctx: RunContext) -> Any:
    """The run's item runner; in-process for a stage run outside a flow (tests)."""
    return ctx.items if ctx.items is not None else LocalItemRunner(1)


class VarietyDiscoverStage(PDStage):
    name = "variety-discover"
    version = "2"  # 2: Tesseract for pages with no or unusable text layer
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
        from extractors.providers.errors import ProviderError

        hs = ctx.settings.hollywood
        client = ia_client(ctx)
        store = raw_store(ctx)
        ids = client.search_items(variety_query(hs.variety_start, hs.variety_end))
        if hs.max_items:
            ids = ids[: hs.max_items]
        # the previous build's items and pages: an item whose fingerprint (identifier +
        # item_last_updated) is unchanged is taken over as it was, with no file fetched
        prev_items = {r["item_id"]: r for r in _rows(con, "SELECT * FROM pd_variety_items")}
        prev_pages: dict[str, list[dict[str, Any]]] = {}
        for r in _rows(con, "SELECT * FROM pd_pages ORDER BY item_id, page"):
            prev_pages.setdefault(r["item_id"], []).append(r)
        items: list[dict[str, Any]] = []
        pages: list[dict[str, Any]] = []
        reasons: Counter[str] = Counter()
        change: Counter[str] = Counter()
        for ident in ids:
            row: dict[str, Any] = {"item_id": ident, "reason": None}
            try:
                meta = client.metadata(ident)
                row["fingerprint"] = client.item_fingerprint(ident)
                old = prev_items.get(ident)
                if old is not None and old.get("fingerprint") == row["fingerprint"] and old.get("reason") is None:
                    change["unchanged"] += 1
                    items.append(old)
                    pages.extend(prev_pages.get(ident, []))
                    continue
                change["changed" if old is not None else "new"] += 1
                row.update(title=meta.get("title"), date_start=meta.get("date-start") or meta.get("date"),
                           date_end=meta.get("date-end") or meta.get("date"))
                pt = client.page_texts(ident)
            except ProviderError as exc:
                refuse_item(row, exc, reasons, items)
                continue
            texts, leaves = pt.texts, pt.alignment.leaves
            row.update(djvu_sha256=pt.sha256, text_source=pt.source, alignment=pt.alignment.source,
                       alignment_reason=pt.alignment.reason, jp2_zip=pt.names.get("jp2_zip"),
                       images_source="jp2.zip" if pt.names.get("jp2_zip") else None, n_pages=len(texts))
            if pt.alignment.reason:  # recorded per item; the pages stay usable
                reasons[pt.alignment.reason] += 1
            if not row["jp2_zip"]:
                reasons["no_page_images"] += 1
            items.append(row)
            lo, hi = _iso(row.get("date_start")), _iso(row.get("date_end"))
            prev: dt.date | None = None
            for page, text in enumerate(texts):
                # a missing or unusable page text is Tesseract's reading of the page's jp2 member (issue 17)
                got = member_page_text(ctx, client, store, ident, row["jp2_zip"], leaves[page], text)
                text = got.text or ""
                sha = store.put(text.encode("utf-8"))[0] if got.text is not None else None
                found = head_issue_date(text, lo, hi)
                if found is not None:
                    date, source = found, "running_head"
                elif prev is not None:
                    date, source = prev, "previous_page"
                else:
                    date, source = lo, "item_date"
                prev = date
                pages.append({"item_id": ident, "page": page, "leaf": leaves[page], "issue_date": date,
                              "issue_date_source": source, "ocr_sha256": sha, "image_sha256": None,
                              "text_engine": got.engine, "text_reason": got.reason})
        change["removed"] = len(set(prev_items) - set(ids))
        replace_rows(con, "pd_variety_items", items)
        ensure_text_columns(con, "pd_pages")
        replace_rows(con, "pd_pages", pages)
        return {"items": len(items), "pages": len(pages), "item_failures": dict(reasons),
                "text_engines": dict(Counter(str(p.get("text_engine")) for p in pages)),
                "text_reasons": dict(Counter(p["text_reason"] for p in pages if p.get("text_reason"))),
                "items_new": change["new"], "items_changed": change["changed"],
                "items_unchanged": change["unchanged"], "items_removed": change["removed"],
                "ia_requests": client.requests, "ia_failed_attempts": len(client.events)}


def _rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[dict[str, Any]]:
    cur = con.execute(sql)
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
        store = raw_store(ctx)
        jobs = [(item_id, page, store.url_for(sha) if sha else None, sha) for item_id, page, sha in con.execute(
                "SELECT item_id, page, ocr_sha256 FROM pd_pages ORDER BY item_id, page").fetchall()]
        # one page per job (on the run's item runner); a page that raises is its internal_error row
        rows = sorted(_items(ctx).map(filter_work, jobs, filter_failed), key=lambda r: (r["item_id"], r["page"]))
        replace_rows(con, "pd_page_filter", rows)
        return {"pages": len(rows), "kept": sum(r["keep"] for r in rows),
                "reasons": dict(Counter(r["reason"] for r in rows)),
                "dropped": dict(Counter(r["reason"] for r in rows if not r["keep"]))}


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
    the pages whose image could not be fetched."""
    from flows.stages.hollywood.pages import image_failed, image_work

    client = ia_client(ctx)
    st = ctx.settings
    base = f"{client.session.protocol}//{client.session.host}"
    jobs = [(p["item_id"], p["page"], p["leaf"], base, str(st.raw_store_url or st.raw_dir), str(st.raw_dir),
             p["jp2_zip"], st.hollywood.page_image_max_b64_bytes, client.retry) for p in kept if not p["image_sha256"]]
    by_key = {(p["item_id"], p["page"]): p for p in kept}
    failed: dict[tuple, tuple[str, str | None]] = {}
    for key, sha, reason, detail in _items(ctx).map(image_work, jobs, image_failed):
        if sha:
            by_key[key]["image_sha256"] = sha
        else:
            failed[key] = (reason or "no_page_image", detail)
    return failed


def page_state_rows(con: duckdb.DuckDBPyConnection, kept: list[dict[str, Any]], tuples: list[dict[str, Any]],
                    errors: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``pd_page_state``: every page — ``dropped`` (the filter's reason), ``failed`` (the first
    extract error's ``extractor:reason``), ``extracted`` (tuples read) or ``kept`` (nothing read)."""
    first_error: dict[tuple, str] = {}
    for e in errors:
        first_error.setdefault((e["item_id"], e["page"]), f"{e['extractor']}:{e['reason']}")
    with_tuples = {(t["item_id"], t["page"]) for t in tuples}
    kmap = {(p["item_id"], p["page"]): p for p in kept}
    out = []
    for item_id, page, leaf, keep, reason, fp in con.execute(
            """SELECT f.item_id, f.page, coalesce(p.leaf, f.page), f.keep, f.reason, i.fingerprint
               FROM pd_page_filter f LEFT JOIN pd_pages p USING (item_id, page)
               LEFT JOIN pd_variety_items i USING (item_id) ORDER BY f.item_id, f.page""").fetchall():
        k = (item_id, page)
        if not keep:
            state, why = "dropped", reason
        elif k in first_error:
            state, why = "failed", first_error[k]
        elif k in with_tuples:
            state, why = "extracted", None
        else:
            state, why = "kept", None
        out.append({"item_id": item_id, "page": page, "leaf": leaf, "state": state, "reason": why,
                    "image_sha256": (kmap.get(k) or {}).get("image_sha256"), "fingerprint": fp})
    return out


class VarietyExtractStage(PDStage):
    name = "variety-extract"
    version = "2"  # 2: kept images fetched per page (one jp2 member) in item-runner jobs; pd_page_state
    reads = ("pd_variety_items", "pd_pages", "pd_page_filter")
    writes = ("pd_tuples", "pd_extract_errors", "pd_crosscheck", "pd_page_state")

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        return {**gemini_inputs(ctx), "primary": ctx.primary_extractor,
                "citymap": file_digest(ctx.settings.hollywood.citymap_path)}

    def _gemini(self, ctx: RunContext) -> Any:
        """The Gemini page extractor, or None (disabled / no key)."""
        from extractors.variety.gemini_pages import GeminiPageExtractor

        return gemini_reader(ctx, GeminiPageExtractor)

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from extractors.variety.gemini_pages import PageRef

        hs = ctx.settings.hollywood
        store = raw_store(ctx)
        primary = ctx.primary_extractor
        cols = ("item_id", "page", "issue_date", "ocr_sha256", "image_sha256", "leaf", "jp2_zip", "fingerprint")
        kept = [dict(zip(cols, r)) for r in con.execute(
            """SELECT p.item_id, p.page, p.issue_date, p.ocr_sha256, p.image_sha256, coalesce(p.leaf, p.page),
                      i.jp2_zip, i.fingerprint
               FROM pd_pages p JOIN pd_page_filter f USING (item_id, page)
               LEFT JOIN pd_variety_items i USING (item_id)
               WHERE f.keep ORDER BY p.item_id, p.page""").fetchall()]
        tuples: list[dict[str, Any]] = []
        errors: list[dict[str, Any]] = []
        citymap = str(hs.citymap_path) if hs.citymap_path else None
        jobs = [({k: p[k] for k in ("item_id", "page", "issue_date")},
                 store.url_for(p["ocr_sha256"]) if p["ocr_sha256"] else None, p["ocr_sha256"], citymap) for p in kept]
        # the OCR-rules extractor, one page per job; rows in page order whatever the completion order
        for _, page_tuples, page_errors in sorted(_items(ctx).map(extract_work, jobs, extract_failed),
                                                  key=lambda r: r[0]):
            tuples.extend(page_tuples)
            errors.extend(page_errors)
        stats: dict[str, Any] = {"kept_pages": len(kept), "ocr_rules_tuples": len(tuples)}
        gem = self._gemini(ctx)
        if gem is not None:
            fetch = fetch_kept_images(ctx, kept)
            stats["images_fetched"] = sum(1 for p in kept if p["image_sha256"])
            with_image, pmap = [], {}
            for p in kept:
                if not p["image_sha256"]:
                    reason, detail = fetch.get((p["item_id"], p["page"]), ("no_page_image", None))
                    errors.append({"item_id": p["item_id"], "page": p["page"], "issue_date": p["issue_date"],
                                   "extractor": "gemini", "model": gem.model,
                                   "reason": "no_page_image" if reason == "no_page_images" else f"image:{reason}",
                                   "detail": detail or "the item has no page image for this leaf"})
                    continue
                with_image.append(p)
                pmap[(p["item_id"], p["page"])] = p

            def ref(p: dict[str, Any]) -> PageRef:  # the image is read when its chunk is sent
                iso = p["issue_date"].isoformat() if p["issue_date"] else ""
                return PageRef(p["item_id"], iso, p["page"], store.get(p["image_sha256"]))

            res = gemini_read_chunked(ctx, gem, with_image, ref)
            seqs: Counter[tuple[str, int]] = Counter()
            for r in res.rows:
                k = (r["item_id"], r["page"])
                tuples.append({"item_id": r["item_id"], "page": r["page"], "issue_date": pmap[k]["issue_date"],
                               "extractor": "gemini", "model": r["model"], "seq": seqs[k], "theater": r["theater"],
                               "city": r["city"], "movie": r["movie"], "week": r["week"], "gross": r["gross"],
                               "confidence": r["confidence"], "line_no": None})
                seqs[k] += 1
            for e in res.errors:
                errors.append({"item_id": e.item_id, "page": e.page, "issue_date": pmap[(e.item_id, e.page)]["issue_date"],
                               "extractor": "gemini", "model": e.model, "reason": e.reason, "detail": e.detail})
            stats.update(gemini_tuples=len(res.rows), gemini_calls=res.calls, gemini_cache_hits=res.cache_hits,
                         gemini_errors=dict(Counter(e.reason for e in res.errors)))
            if res.errors:  # failed pages are retried by the next build: no reusable marker
                stats["incomplete"] = True
        secondary = "ocr-rules" if primary == "gemini" else "gemini"
        cross = crosscheck_rows(kept, tuples, primary, secondary, secondary_ran=(secondary == "ocr-rules" or gem is not None))
        replace_rows(con, "pd_tuples", tuples)
        replace_rows(con, "pd_extract_errors", errors)
        replace_rows(con, "pd_crosscheck", cross)
        state = page_state_rows(con, kept, tuples, errors)
        replace_rows(con, "pd_page_state", state)
        stats["page_states"] = dict(Counter(r["state"] for r in state))
        stats.update(primary=primary, errors=dict(Counter(f"{e['extractor']}:{e['reason']}" for e in errors)),
                     crosscheck=dict(Counter(c["status"] for c in cross)))
        return stats
