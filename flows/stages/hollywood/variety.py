"""Stages ``variety-discover``, ``variety-filter`` and ``variety-extract`` (SPEC B1).

* discover: Variety items on the Internet Archive by date range (``extractors.ia.variety_query``),
  their metadata, ``_djvu.txt`` OCR split into leaves and the page images (``_jp2.zip`` or the PDF
  through pdf2image), everything into the shared content-addressed raw store; ``pd_pages`` keeps
  one row per leaf with its issue date and the raw-store digests of its text and image. The issue
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
from flows.stages.hollywood.common import PDStage, file_digest, gemini_inputs, gemini_read, gemini_reader, ia_client
from flows.stages.hollywood.common import raw_store, refuse_item, replace_rows
from flows.stages.hollywood.pages import extract_failed, extract_work, filter_failed, filter_work

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
    version = "1"
    reads = ()
    writes = ("pd_variety_items", "pd_pages")
    retries = 1
    asks_archive = True

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
        items: list[dict[str, Any]] = []
        pages: list[dict[str, Any]] = []
        reasons: Counter[str] = Counter()
        for ident in ids:
            row: dict[str, Any] = {"item_id": ident, "reason": None}
            try:
                meta = client.metadata(ident)
                row.update(title=meta.get("title"), date_start=meta.get("date-start") or meta.get("date"),
                           date_end=meta.get("date-end") or meta.get("date"))
                texts = client.djvu_pages(ident)
                names = [f["name"] for f in client.list_files(ident)]
                djvu = next((n for n in names if n == f"{ident}_djvu.txt"), None) or \
                    next((n for n in names if n.endswith("_djvu.txt")), None)
                row["djvu_sha256"] = client.cached(ident, djvu) if djvu else None
            except ProviderError as exc:
                refuse_item(row, exc, reasons, items)
                continue
            images: dict[int, str] = {}
            try:
                imgs = client.page_images(ident)
                images = {p.page: p.sha256 for p in imgs}
                row["images_source"] = imgs[0].source.split(":")[0] if imgs else None
            except ProviderError as exc:  # text pages stay usable by the OCR-rules extractor
                refuse_item(row, exc, reasons)
            row["n_pages"] = len(texts)
            items.append(row)
            lo, hi = _iso(row.get("date_start")), _iso(row.get("date_end"))
            prev: dt.date | None = None
            for leaf, text in enumerate(texts):
                sha, _ = store.put(text.encode("utf-8"))
                found = head_issue_date(text, lo, hi)
                if found is not None:
                    date, source = found, "running_head"
                elif prev is not None:
                    date, source = prev, "previous_page"
                else:
                    date, source = lo, "item_date"
                prev = date
                pages.append({"item_id": ident, "page": leaf, "issue_date": date, "issue_date_source": source,
                              "ocr_sha256": sha, "image_sha256": images.get(leaf)})
        replace_rows(con, "pd_variety_items", items)
        replace_rows(con, "pd_pages", pages)
        return {"items": len(items), "pages": len(pages), "item_failures": dict(reasons),
                "ia_requests": client.requests, "ia_failed_attempts": len(client.events)}


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


class VarietyExtractStage(PDStage):
    name = "variety-extract"
    version = "1"
    reads = ("pd_pages", "pd_page_filter")
    writes = ("pd_tuples", "pd_extract_errors", "pd_crosscheck")

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
        kept = [dict(zip(("item_id", "page", "issue_date", "ocr_sha256", "image_sha256"), r)) for r in con.execute(
            """SELECT p.item_id, p.page, p.issue_date, p.ocr_sha256, p.image_sha256
               FROM pd_pages p JOIN pd_page_filter f USING (item_id, page)
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
            refs, pmap = [], {}
            for p in kept:
                if not p["image_sha256"]:
                    errors.append({"item_id": p["item_id"], "page": p["page"], "issue_date": p["issue_date"],
                                   "extractor": "gemini", "model": gem.model, "reason": "no_page_image",
                                   "detail": "the item has no page image for this leaf"})
                    continue
                iso = p["issue_date"].isoformat() if p["issue_date"] else ""
                refs.append(PageRef(p["item_id"], iso, p["page"], store.get(p["image_sha256"])))
                pmap[(p["item_id"], p["page"])] = p
            res = gemini_read(ctx, gem, refs)
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
        stats.update(primary=primary, errors=dict(Counter(f"{e['extractor']}:{e['reason']}" for e in errors)),
                     crosscheck=dict(Counter(c["status"] for c in cross)))
        return stats
