"""Stages ``cce-discover``, ``cce-parse`` and ``copyright-status`` (SPEC B2, issue 10).

* discover: Catalog of Copyright Entries motion-picture volumes on the Internet Archive
  (``extractors.ia.CCE_QUERY``); each volume's page texts from its hOCR page index or ``_djvu.xml``
  (``IAClient.page_texts``; a ``_djvu.txt`` only is reason ``no_page_index``) and the
  page images of every volume (``IAClient.page_images``: IA's ``_jp2.zip``, else the PDF rendered by
  pdf2image at :data:`extractors.cce.gemini_pages.PAGE_DPI`; PNG, content-addressed in the raw
  store, ``image_sha256`` per page). A volume without a text layer gives ``image_only`` pages. A
  page with no or an unusable text layer is read by Tesseract from its image
  (:mod:`flows.stages.hollywood.ocr`; ``text_engine`` / ``text_reason`` per page). A
  leaf whose running head says RENEWAL is a renewal page, every other leaf a registration page.
  The volume's context year is ``extractors.cce.parse.volume_year`` of its identifier, title and
  IA metadata ``date``.
* parse: registrations (``extractors.cce.parse.parse_registration_text``, two-digit years read
  inside the years a cumulative volume covers: ``volume_coverage``), renewals of both
  printed layouts (``parse_renewal_text``) and the CPRS export (``read_renewal_export``; sample:
  the world's ``cprs_export.tsv``; live: ``hollywood.cprs_export_path``). When Gemini is
  available (sample: the loopback fixture; live: a key), :class:`extractors.cce.gemini_pages.
  GeminiCCEExtractor` reads every page image (cached per image): on ``image_only`` pages its rows,
  normalised by :func:`~extractors.cce.gemini_pages.to_records` with the parser's own readers,
  ARE the extraction (``extractor='gemini'``) — without Gemini, the OCR parser on their Tesseract
  text is (``extractor='tesseract'``; no Tesseract: an ``ocr_unavailable`` row); on text pages the OCR parser stays the source of
  record and :func:`~extractors.cce.gemini_pages.page_agreement` of the two readers is kept per
  page in ``pd_cce_crosscheck``. Every entry that cannot be read is kept in ``pd_unparsed`` with
  its reason code; a page Gemini could not read is a ``gemini:<reason>`` row (and leaves the stage
  incomplete, so the next build asks again); a page whose reading raises is one ``internal_error``
  row (detail "<exception type>: <message>", none of its partial rows kept) and the other pages
  are read.
* status: :func:`validators.copyright_match.match_registrations` and
  :func:`validators.copyright_status.classify` with the build's ``as_of``; curator decisions of
  ``pd_match_decisions`` are honoured; ``matched_fuzzy_review`` rows are the review queue.
  Source works (AFI "based on": sample, the CCE world's ``afi_based_on.tsv``; live,
  ``hollywood.source_works_path``) are read by :func:`extractors.cce.source_works.read_source_works`,
  content-digested into the stage's fingerprint, passed to ``classify`` (rule R5) and stored in
  ``pd_source_works``; a malformed file fails the stage with its reason code (nothing skipped).
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from datetime import date
from pathlib import Path
from typing import Any

import duckdb

from flows.kernel_context import RunContext
from flows.stages.hollywood.common import (PDStage, file_digest, gemini_inputs, gemini_read_chunked, gemini_reader,
                                    ia_client,
                                    raw_store, refuse_item, replace_rows)
from flows.stages.hollywood.ocr import ensure_text_columns, ocr_inputs, page_text

#: ``extractor`` of the rows the OCR-text parser, Gemini and the CPRS export reader give
OCR_EXTRACTOR, GEMINI_EXTRACTOR, EXPORT_EXTRACTOR = "ocr-rules", "gemini", "export"
#: ``extractor`` of the rows the OCR-text parser read from Tesseract's text of an image-only page
TESSERACT_EXTRACTOR = "tesseract"
#: reason code of a page whose reading raised (an unforeseen bug: recorded, never a stage failure)
INTERNAL_ERROR = "internal_error"


class CCEDiscoverStage(PDStage):
    name = "cce-discover"
    version = "4"  # 2: library century inference / entry splitting / 1P->LP reading; 3: page images of every page; 4: Tesseract
    reads = ()
    writes = ("pd_cce_items", "pd_cce_pages")
    retries = 1
    asks_archive = True

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        return {**super().external_inputs(ctx), **ocr_inputs(ctx)}

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        return stats.get("volumes"), stats.get("pages"), dict(stats.get("volume_failures") or {})

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from extractors.cce.gemini_pages import PAGE_DPI
        from extractors.cce.parse import volume_year
        from extractors.ocr_tesseract import PSM_CATALOG
        from extractors.ia import CCE_QUERY
        from extractors.providers.errors import ProviderError

        client = ia_client(ctx)
        store = raw_store(ctx)
        items, pages = [], []
        reasons: Counter[str] = Counter()
        for ident in client.search_items(CCE_QUERY):
            row: dict[str, Any] = {"item_id": ident, "reason": None}
            try:
                meta = client.metadata(ident)
                row.update(title=meta.get("title"), context_year=volume_year(
                    ident, meta.get("title"), str(meta.get("date") or meta.get("year") or "")))
                texts = None
                try:  # page text from a page-indexed derivative (hOCR page index / _djvu.xml)
                    pt = client.page_texts(ident)
                    texts = pt.texts
                    row.update(djvu_sha256=pt.sha256, text_source=pt.source, n_pages=len(texts))
                except ProviderError as exc:
                    if exc.reason_code != "no_text_layer":
                        raise
            except ProviderError as exc:
                refuse_item(row, exc, reasons, items)
                continue
            images: dict[int, str] = {}
            try:
                images = {p.page: p.sha256 for p in client.page_images(ident, dpi=PAGE_DPI)}  # stored by the client
            except ProviderError as exc:  # text pages stay readable by the OCR parser
                refuse_item(row, exc, reasons)
            if texts is not None:
                for leaf, text in enumerate(texts):
                    # a missing or unusable leaf text is Tesseract's reading of the page image
                    got = page_text(ctx, store, text, images.get(leaf), psm=PSM_CATALOG)
                    sha = store.put(got.text.encode("utf-8"))[0] if got.text is not None else None
                    if sha is None:
                        kind = "image_only"
                    else:
                        kind = "renewals" if "RENEWAL" in got.text[:300].upper() else "registrations"
                    pages.append({"item_id": ident, "page": leaf, "kind": kind, "ocr_sha256": sha,
                                  "image_sha256": images.get(leaf), "text_engine": got.engine,
                                  "text_reason": got.reason})
            elif images:
                row.update(text_source="pdf_images", n_pages=len(images), reason=row["reason"] or "no_text_layer")
                reasons["no_text_layer"] += 1
                for leaf, sha in sorted(images.items()):
                    # no text layer: Tesseract's text (read by the parser when Gemini is unavailable)
                    got = page_text(ctx, store, None, sha, psm=PSM_CATALOG)
                    pages.append({"item_id": ident, "page": leaf, "kind": "image_only",
                                  "ocr_sha256": store.put(got.text.encode("utf-8"))[0] if got.text is not None else None,
                                  "image_sha256": sha, "text_engine": got.engine, "text_reason": got.reason})
            items.append(row)
        replace_rows(con, "pd_cce_items", items)
        ensure_text_columns(con, "pd_cce_pages")
        replace_rows(con, "pd_cce_pages", pages)
        return {"volumes": len(items), "pages": len(pages), "kinds": dict(Counter(p["kind"] for p in pages)),
                "page_images": sum(p["image_sha256"] is not None for p in pages),
                "text_engines": dict(Counter(str(p["text_engine"]) for p in pages)),
                "text_reasons": dict(Counter(p["text_reason"] for p in pages if p["text_reason"])),
                "volume_failures": dict(reasons)}


def cprs_path(ctx: RunContext) -> Path | None:
    return ctx.env.hollywood_inputs().cprs_export


def registration_row(source: str, item: str | None, page: int | None, x: Any, extractor: str) -> dict[str, Any]:
    """A ``pd_registrations`` row of a :class:`extractors.cce.parse.RegistrationRecord` (OCR parser
    or Gemini alike). A number of another class than the film classes (1978 on: PA) is read again
    without the class filter (``reg:read_without_class_filter``), else kept as printed."""
    from extractors.cce.normalize import normalize_reg_id

    reg_id, confident, reasons = x.reg_id, x.reg_id is not None, list(x.reasons)
    if reg_id is None:
        reading = normalize_reg_id(x.reg_raw, classes=None)
        reg_id = reading.value
        confident = reg_id is not None
        reasons.append("reg:read_without_class_filter" if confident else "reg:uncertain")
    return {"source": source, "item_id": item, "page": page, "title": x.title, "reg_id": reg_id or x.reg_raw,
            "reg_date": x.reg_date, "claimant": x.claimant, "reg_raw": x.reg_raw, "confident": confident,
            "reasons": ";".join(dict.fromkeys(reasons)), "extractor": extractor}


def renewal_row(source: str, item: str | None, page: int | None, x: Any, extractor: str) -> dict[str, Any]:
    """A ``pd_renewals`` row of a :class:`extractors.cce.parse.RenewalRecord`."""
    orig = x.orig_reg_id
    return {"source": source, "item_id": item, "page": page, "title": x.title,
            "orig_reg_id": orig or x.orig_reg_raw, "orig_date": x.orig_date,
            "renewal_id": x.renewal_id or x.renewal_raw, "renewal_date": x.renewal_date,
            "claimant": x.claimant, "basis": x.basis, "layout": x.layout, "orig_reg_raw": x.orig_reg_raw,
            # a renewal dated implausibly far from its registration (flag:...) is kept, never trusted
            "renewal_raw": x.renewal_raw,
            "confident": orig is not None and x.renewal_id is not None and not any(
                r.startswith("flag:") for r in x.reasons),
            "reasons": ";".join(x.reasons), "extractor": extractor}


def unparsed_row(source: str, item: str | None, page: int | None, kind: str, u: Any, extractor: str) -> dict[str, Any]:
    """A ``pd_unparsed`` row of an :class:`extractors.cce.parse.Unparsed`."""
    return {"source": source, "item_id": item, "page": page, "kind": kind, "reason": u.reason,
            "raw": (u.raw or "")[:500], "detail": (u.detail or "")[:300], "extractor": extractor}


def _gemini_kind(raw: str | None) -> str:
    """registration | renewal of a Gemini row that :func:`to_records` could not read (its raw JSON)."""
    try:
        kind = json.loads(raw or "{}").get("kind")
    except (ValueError, AttributeError):
        kind = None
    return kind if kind in ("registration", "renewal") else "page"


def crosscheck_row(item: str, page: int, kind: str, model: str, ocr: list[Any], gemini: list[Any]) -> dict[str, Any]:
    """A ``pd_cce_crosscheck`` row: :func:`extractors.cce.gemini_pages.page_agreement` of one text page."""
    from extractors.cce.gemini_pages import page_agreement

    a = page_agreement(ocr, gemini)
    return {"item_id": item, "page": page, "kind": kind, "model": model, "n_ocr": a["n_ocr"],
            "n_gemini": a["n_gemini"], "matched": a["matched"], "ocr_only": a["ocr_only"],
            "gemini_only": a["gemini_only"], "renewal_differs": a["renewal_differs"], "agree": a["agree"]}


class CCEParseStage(PDStage):
    name = "cce-parse"
    version = "4"  # 2: library century inference / entry splitting / 1P->LP reading; 3: Gemini pages, extractor; 4: Tesseract
    reads = ("pd_cce_items", "pd_cce_pages")
    writes = ("pd_registrations", "pd_renewals", "pd_unparsed", "pd_cce_crosscheck")

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        out = (stats.get("registrations") or 0) + (stats.get("renewals") or 0)
        return stats.get("pages"), out, dict(stats.get("unparsed") or {})

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        return {"cprs": file_digest(cprs_path(ctx)), **gemini_inputs(ctx)}

    def _gemini(self, ctx: RunContext) -> Any:
        """The CCE Gemini page extractor, or None (disabled / no key)."""
        from extractors.cce.gemini_pages import GeminiCCEExtractor

        return gemini_reader(ctx, GeminiCCEExtractor)

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from extractors.cce.gemini_pages import PageRef, to_records
        from extractors.cce.parse import (
            RenewalRecord, parse_registration_text, parse_renewal_text, read_renewal_export, volume_coverage,
        )

        store = raw_store(ctx)
        regs: list[dict[str, Any]] = []
        rens: list[dict[str, Any]] = []
        unparsed: list[dict[str, Any]] = []
        cross: list[dict[str, Any]] = []
        stats: dict[str, Any] = {}
        ensure_text_columns(con, "pd_cce_pages")
        pages = [dict(zip(("item_id", "page", "kind", "ocr_sha256", "image_sha256", "year", "vol_title",
                           "text_engine", "text_reason"), r))
                 for r in con.execute(
                     """SELECT p.item_id, p.page, p.kind, p.ocr_sha256, p.image_sha256, i.context_year, i.title,
                               p.text_engine, p.text_reason
                        FROM pd_cce_pages p JOIN pd_cce_items i USING (item_id) ORDER BY p.item_id, p.page""").fetchall()]
        for p in pages:
            p["source"] = f"cce:{p['item_id']}"
            p["coverage"] = volume_coverage(p["item_id"], p["vol_title"]) if p["kind"] != "renewals" else None

        # Gemini on every page image (cached per image; the fixture or the live API)
        gem = self._gemini(ctx)
        answers: dict[tuple[str, int], list[dict[str, Any]]] = {}
        failed: dict[tuple[str, int], Any] = {}
        if gem is not None:
            with_image = [p for p in pages if p["image_sha256"]]
            res = gemini_read_chunked(ctx, gem, with_image,  # images read chunk by chunk, not all at once
                                      lambda p: PageRef(p["item_id"], p["page"], store.get(p["image_sha256"])))
            for r in res.rows:
                answers.setdefault((r["item_id"], r["page"]), []).append(r)
            failed = {(e.item_id, e.page): e for e in res.errors}
            stats.update(gemini_model=gem.model, gemini_pages=len(with_image), gemini_rows=len(res.rows),
                         gemini_calls=res.calls, gemini_cache_hits=res.cache_hits,
                         gemini_errors=dict(Counter(e.reason for e in res.errors)))
            if res.errors:  # failed pages are asked again by the next build: no reusable marker
                stats["incomplete"] = True

        def gemini_failure(p: dict[str, Any]) -> bool:
            """A pd_unparsed row when Gemini should have read the page and did not."""
            if gem is None:
                return False
            if not p["image_sha256"]:
                unparsed.append({"source": p["source"], "item_id": p["item_id"], "page": p["page"], "kind": "page",
                                 "reason": "gemini:no_page_image", "raw": None,
                                 "detail": "the volume has no page image for this leaf", "extractor": GEMINI_EXTRACTOR})
                return True
            err = failed.get((p["item_id"], p["page"]))
            if err is not None:
                unparsed.append({"source": p["source"], "item_id": p["item_id"], "page": p["page"], "kind": "page",
                                 "reason": f"gemini:{err.reason}", "raw": None, "detail": (err.detail or "")[:300],
                                 "extractor": GEMINI_EXTRACTOR})
                return True
            return False

        def gemini_records(p: dict[str, Any]) -> Any:
            opts: dict[str, Any] = {"volume_year": p["year"]}
            if p["coverage"] is not None:
                opts["coverage"] = p["coverage"]
            return to_records(answers.get((p["item_id"], p["page"]), []), **opts)

        def parse_text(p: dict[str, Any], text: str, kind: str, extractor: str) -> Any:
            """The OCR-text parser on one page's text (IA text layer or Tesseract's)."""
            source, item, page = p["source"], p["item_id"], p["page"]
            if kind == "renewals":
                ocr = parse_renewal_text(text, volume_year=p["year"])
                rens.extend([renewal_row(source, item, page, x, extractor) for x in ocr.records])
                unparsed.extend([unparsed_row(source, item, page, "renewal", u, extractor) for u in ocr.unparsed])
            else:
                ocr = parse_registration_text(text, volume_year=p["year"], coverage=p["coverage"])
                unparsed.extend([unparsed_row(source, item, page, "registration", u, extractor)
                                 for u in ocr.unparsed])
                regs.extend([registration_row(source, item, page, x, extractor) for x in ocr.records])
            return ocr

        def read_page(p: dict[str, Any]) -> None:
            """The rows of one page (registrations, renewals, unparsed entries, cross-check)."""
            source, item, page = p["source"], p["item_id"], p["page"]
            if p["kind"] == "image_only":
                if gem is None and p["ocr_sha256"]:  # no Gemini: the parser reads Tesseract's text
                    text = store.get(p["ocr_sha256"]).decode("utf-8")
                    parse_text(p, text, "renewals" if "RENEWAL" in text[:300].upper() else "registrations",
                               TESSERACT_EXTRACTOR)
                    return
                if gem is None:
                    why = p["text_reason"] if p["text_reason"] not in (None, "no_text_layer") else "image_only_page"
                    unparsed.append({"source": source, "item_id": item, "page": page, "kind": "page",
                                     "reason": why, "raw": None,
                                     "detail": "no text layer, Gemini unavailable and no Tesseract text "
                                               f"({p['text_reason'] or 'not OCRed'}): page image stored, not read",
                                     "extractor": TESSERACT_EXTRACTOR if why != "image_only_page" else None})
                    return
                if gemini_failure(p):
                    return
                res = gemini_records(p)
                for x in res.records:
                    if isinstance(x, RenewalRecord):
                        rens.append(renewal_row(source, item, page, x, GEMINI_EXTRACTOR))
                    else:
                        regs.append(registration_row(source, item, page, x, GEMINI_EXTRACTOR))
                for u in res.unparsed:
                    unparsed.append(unparsed_row(source, item, page, _gemini_kind(u.raw), u, GEMINI_EXTRACTOR))
                return
            text = store.get(p["ocr_sha256"]).decode("utf-8")
            # a page whose text layer was unusable is read from Tesseract's text (cce-discover)
            ocr = parse_text(p, text, p["kind"], TESSERACT_EXTRACTOR if p["text_engine"] == "tesseract" else OCR_EXTRACTOR)
            if gem is not None and not gemini_failure(p):
                cross.append(crosscheck_row(item, page, p["kind"], gem.model, ocr.records, gemini_records(p).records))

        for p in pages:
            mark = (len(regs), len(rens), len(unparsed), len(cross))
            try:
                read_page(p)
            except Exception as exc:  # this page is an internal_error row; the others are read
                del regs[mark[0]:], rens[mark[1]:], unparsed[mark[2]:], cross[mark[3]:]
                unparsed.append({"source": p["source"], "item_id": p["item_id"], "page": p["page"], "kind": "page",
                                 "reason": INTERNAL_ERROR, "raw": None,
                                 "detail": f"{type(exc).__name__}: {str(exc) or repr(exc)}"[:300],
                                 "extractor": (OCR_EXTRACTOR if p["kind"] != "image_only" else
                                               GEMINI_EXTRACTOR if gem is not None else TESSERACT_EXTRACTOR)})
        export = cprs_path(ctx)
        if export is not None and export.is_file():
            res = read_renewal_export(export, film_only=True)
            rens += [renewal_row("cprs", None, None, x, EXPORT_EXTRACTOR) for x in res.records]
            unparsed += [unparsed_row("cprs", None, None, "export", u, EXPORT_EXTRACTOR) for u in res.unparsed]
        replace_rows(con, "pd_registrations", regs)
        replace_rows(con, "pd_renewals", rens)
        replace_rows(con, "pd_unparsed", unparsed)
        replace_rows(con, "pd_cce_crosscheck", cross)
        stats.update(registrations=len(regs), renewals=len(rens),
                     extractors=dict(Counter(r["extractor"] for r in regs + rens)),
                     text_engines=dict(Counter(str(p["text_engine"]) for p in pages)),
                     unparsed=dict(Counter(u["reason"] for u in unparsed)),
                     crosscheck={"pages": len(cross), "agree": sum(c["agree"] for c in cross),
                                 "disagree": sum(not c["agree"] for c in cross)},
                     cprs_export=export is not None and export.is_file())
        return stats


def load_matching_inputs(con: duckdb.DuckDBPyConnection, registrations: str = "pd_registrations",
                         renewals: str = "pd_renewals") -> tuple[list, list]:
    """Distinct registrations (by number + date) and renewals as the validators' dataclasses."""
    from validators.copyright_match import Registration, Renewal

    regs = [Registration(t or "", r, d.isoformat() if d else None) for r, d, t in con.execute(
        f"""SELECT reg_id, reg_date, any_value(title ORDER BY source, item_id, page) FROM {registrations}
            GROUP BY reg_id, reg_date ORDER BY reg_date NULLS LAST, reg_id""").fetchall()]
    rens = [Renewal(t or "", o, od.isoformat() if od else None, rid, rd.isoformat() if rd else None)
            for t, o, od, rid, rd in con.execute(
                f"""SELECT title, orig_reg_id, orig_date, renewal_id, renewal_date FROM {renewals}
                    ORDER BY source, item_id NULLS LAST, page NULLS LAST, renewal_id, orig_reg_id""").fetchall()]
    return regs, rens


def status_rows(regs: list, rens: list, decisions: list, as_of: date,
                source_works: list | tuple = ()) -> tuple[list[dict], list[dict]]:
    """(matches, statuses) rows for the state DB / a release; ``source_works``
    (:class:`validators.copyright_status.SourceWork`) feed rule R5."""
    from validators.copyright_match import match_registrations
    from validators.copyright_status import classify

    matches = []
    for m in match_registrations(regs, rens, decisions=decisions):
        matches.append({"reg_id": m.registration.reg_id, "reg_date": m.registration.reg_date,
                        "title": m.registration.title, "decision": m.decision,
                        "renewal_id": m.renewal.renewal_id if m.renewal else None,
                        "renewal_date": m.renewal.renewal_date if m.renewal else None,
                        "n_candidates": len(m.candidates),
                        "candidates": json.dumps([asdict(c) for c in m.candidates], sort_keys=True),
                        "reasons": ";".join(m.reasons), "decided_by": m.by, "n_renewals_searched": len(rens)})
    statuses = []
    for s in classify(regs, rens, as_of=as_of, decisions=decisions, source_works=source_works):
        first = s.reasons[0] if s.reasons else None
        statuses.append({"reg_id": s.reg_id, "reg_date": s.reg_date, "title": s.title, "status": s.status,
                         "rule": first.rule if first else "none", "reason": s.reason,
                         "renewal_id": first.renewal_id if first else None,
                         "match_decision": first.decision if first else None, "as_of": as_of})
    return matches, statuses


def curator_decisions(rows: list[tuple]) -> list:
    """``(reg_id, reg_date, renewal_id, decision, by)`` rows → CuratorDecision."""
    from validators.copyright_match import CuratorDecision

    return [CuratorDecision(r, d.isoformat() if hasattr(d, "isoformat") else str(d), rid, dec, by)
            for r, d, rid, dec, by in rows]


def source_works_path(ctx: RunContext) -> Path | None:
    """The source-work TSV (AFI "based on"): the sample CCE world's ``afi_based_on.tsv``, else
    ``hollywood.source_works_path`` (None: no source-work data, rule R5 never applies)."""
    return ctx.env.hollywood_inputs().source_works


def load_source_works(path: Path | None) -> list:
    """The source works of ``path`` (none when ``path`` is None). A configured file that is missing
    or malformed fails the stage (:class:`extractors.cce.source_works.SourceWorksError`, reason code
    and line in the message): a silently skipped row could turn a film based on a renewed novel
    into "likely public domain"."""
    from extractors.cce.source_works import SourceWorksError, read_source_works

    if path is None:
        return []
    try:
        return read_source_works(path)
    except SourceWorksError as e:
        raise SourceWorksError(e.reason_code, f"copyright-status: source-work file (hollywood.source_works_path) "
                                              f"is malformed [{e.reason_code}]: {e}") from None


def source_work_rows(source_works: list) -> list[dict[str, Any]]:
    """``pd_source_works`` rows of :class:`validators.copyright_status.SourceWork` values; the
    film's registration number normalised as classify() reads it (``1P4630`` → ``LP4630``), so
    the collection audit joins on the same key; the number as given is kept beside it."""
    from extractors.cce.normalize import normalize_reg_id

    return [{"film_reg_id": normalize_reg_id(s.film_reg_id, classes=None).value or s.film_reg_id,
             "film_reg_id_raw": s.film_reg_id, "film_reg_date": s.film_reg_date, "source_title": s.source_title,
             "renewed": s.renewed, "renewal_id": s.renewal_id} for s in source_works]


class CopyrightStatusStage(PDStage):
    uses_as_of = True
    name = "copyright-status"
    version = "3"  # 2: source works (AFI "based on", rule R5); 3: their numbers normalised
    reads = ("pd_registrations", "pd_renewals", "pd_match_decisions")
    writes = ("pd_matches", "pd_status", "pd_source_works")

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        return stats.get("registrations"), sum((stats.get("statuses") or {}).values()), {}

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        path = source_works_path(ctx)
        return {"source_works": file_digest(path), "source_works_configured": path is not None}

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        as_of = ctx.settings.hollywood.as_of
        sources = load_source_works(source_works_path(ctx))
        regs, rens = load_matching_inputs(con)
        decisions = curator_decisions(con.execute(
            "SELECT reg_id, reg_date, renewal_id, decision, decided_by FROM pd_match_decisions ORDER BY 1, 2").fetchall())
        matches, statuses = status_rows(regs, rens, decisions, as_of, sources)
        replace_rows(con, "pd_matches", matches)
        replace_rows(con, "pd_status", statuses)
        replace_rows(con, "pd_source_works", source_work_rows(sources))
        return {"as_of": as_of.isoformat(), "registrations": len(regs), "renewals": len(rens),
                "curator_decisions": len(decisions), "matches": dict(Counter(m["decision"] for m in matches)),
                "statuses": dict(Counter(s["status"] for s in statuses)),
                "source_works": len(sources),
                "source_work_rules": dict(Counter(s["rule"] for s in statuses if s["rule"].startswith("R5_"))),
                "review_queue": sum(m["decision"] == "matched_fuzzy_review" for m in matches)}
