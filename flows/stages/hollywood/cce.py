"""Stages ``cce-discover``, ``cce-parse`` and ``copyright-status`` (SPEC B2, issue 10).

* discover: Catalog of Copyright Entries motion-picture volumes on the Internet Archive
  (``extractors.ia.CCE_QUERY``); each volume's page texts from its hOCR page index or ``_djvu.xml``
  (``IAClient.page_texts``; a ``_djvu.txt`` only is reason ``no_page_index``) and the
  page images of every volume, one page at a time (``IAClient.iter_page_images``: one ``_jp2.zip``
  member per leaf of the scan data, else the PDF rendered page by page by pdf2image at
  :data:`extractors.cce.gemini_pages.PAGE_DPI`; fitted to the model's inline limit,
  content-addressed in the raw store, ``image_sha256`` per page). Each volume is one job on the
  run's item runner (:func:`flows.stages.hollywood.pages.cce_volume_work`), and so is each
  volume's Gemini reading in ``cce-parse``. A volume without a text layer gives ``image_only`` pages. A
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
from types import SimpleNamespace
from typing import Any

import duckdb

from flows.kernel_context import RunContext
from flows.stages.hollywood.common import (PDStage, file_digest, gemini_inputs, gemini_job, ia_client, ia_spec,
                                           item_runner, raw_store, refuse_item, replace_rows)
from flows.stages.hollywood.ocr import ensure_text_columns, ocr_inputs

from flows.stages.hollywood.cce_pages import (  # noqa: F401  (the row builders, re-exported)
    EXPORT_EXTRACTOR, GEMINI_EXTRACTOR, INTERNAL_ERROR, OCR_EXTRACTOR, TESSERACT_EXTRACTOR, crosscheck_row,
    registration_row, renewal_row, unparsed_row,
)


class CCEDiscoverStage(PDStage):
    name = "cce-discover"
    version = "5"  # 2: library century inference / entry splitting / 1P->LP reading; 3: page images of every page; 4: Tesseract; 5: volume jobs, page images one page at a time
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
        from extractors.ia import CCE_QUERY
        from extractors.ocr_tesseract import PSM_CATALOG, options_of
        from extractors.providers.errors import ProviderError
        from flows.stages.hollywood.pages import cce_volume_failed, cce_volume_work

        client = ia_client(ctx)
        items, pages = [], []
        reasons: Counter[str] = Counter()
        spec, opts = ia_spec(ctx, client), options_of(ctx.settings.hollywood)
        jobs = []
        for ident in client.search_items(CCE_QUERY):
            row: dict[str, Any] = {"item_id": ident, "reason": None}
            try:
                meta = client.metadata(ident)
            except ProviderError as exc:
                refuse_item(row, exc, reasons, items)
                continue
            row.update(title=meta.get("title"), context_year=volume_year(
                ident, meta.get("title"), str(meta.get("date") or meta.get("year") or "")))
            jobs.append((spec, row, opts, PSM_CATALOG, PAGE_DPI, ctx.settings.hollywood.page_image_max_b64_bytes))
        # one volume per job on the run's item runner (page texts, page images, Tesseract)
        requests, failed_attempts = client.requests, len(client.events)
        for row, vol_pages, why, n_req, n_failed in item_runner(ctx).map(cce_volume_work, jobs, cce_volume_failed):
            items.append(row)
            pages.extend(vol_pages)
            reasons.update(why)
            requests, failed_attempts = requests + n_req, failed_attempts + n_failed
        items.sort(key=lambda r: r["item_id"])
        pages.sort(key=lambda p: (p["item_id"], p["page"]))
        replace_rows(con, "pd_cce_items", items)
        ensure_text_columns(con, "pd_cce_pages")
        replace_rows(con, "pd_cce_pages", pages)
        return {"volumes": len(items), "pages": len(pages), "kinds": dict(Counter(p["kind"] for p in pages)),
                "page_images": sum(p["image_sha256"] is not None for p in pages),
                "text_engines": dict(Counter(str(p["text_engine"]) for p in pages)),
                "text_reasons": dict(Counter(p["text_reason"] for p in pages if p["text_reason"])),
                "volume_failures": dict(reasons), "volume_jobs": len(jobs), "ia_requests": requests,
                "ia_failed_attempts": failed_attempts}


def cprs_path(ctx: RunContext) -> Path | None:
    return ctx.env.hollywood_inputs().cprs_export


class CCEParseStage(PDStage):
    name = "cce-parse"
    version = "5"  # 2: library century inference / entry splitting / 1P->LP reading; 3: Gemini pages, extractor; 4: Tesseract; 5: volume jobs
    reads = ("pd_cce_items", "pd_cce_pages")
    writes = ("pd_registrations", "pd_renewals", "pd_unparsed", "pd_cce_crosscheck")

    def items_in_out(self, stats: dict[str, Any]) -> tuple[int | None, int | None, dict[str, int]]:
        out = (stats.get("registrations") or 0) + (stats.get("renewals") or 0)
        return stats.get("pages"), out, dict(stats.get("unparsed") or {})

    def external_inputs(self, ctx: RunContext) -> dict[str, Any]:
        return {"cprs": file_digest(cprs_path(ctx)), **gemini_inputs(ctx)}

    def _gemini(self, ctx: RunContext, jobs: int = 1) -> Any:
        """The CCE Gemini page reader's item-job settings, or None (disabled / no key)."""
        return gemini_job(ctx, "cce", jobs)

    def run(self, ctx: RunContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from extractors.cce.parse import read_renewal_export, volume_coverage
        from flows.stages.hollywood.cce_pages import parse_volume_failed, parse_volume_work
        from flows.stages.hollywood.pages import gemini_item_failed, gemini_item_work

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
        with_image: dict[str, list[tuple]] = {}
        for p in pages:
            if p["image_sha256"]:
                with_image.setdefault(p["item_id"], []).append((p["page"], p["page"], "", p["image_sha256"]))
        gem = self._gemini(ctx, len(with_image))
        answers: dict[tuple[str, int], list[dict[str, Any]]] = {}
        failed: dict[tuple[str, int], Any] = {}
        if gem is not None:
            # one volume per job on the run's item runner (images read chunk by chunk, cached per image)
            spec = ia_spec(ctx)
            jobs = [(gem, spec, item_id, None, vol, 0) for item_id, vol in sorted(with_image.items())]
            calls = hits = n_rows = 0
            err_n: Counter[str] = Counter()
            for res in item_runner(ctx).map(gemini_item_work, jobs, gemini_item_failed):
                for r in res["rows"]:
                    answers.setdefault((r["item_id"], r["page"]), []).append(r)
                for item_id, page, model, reason, detail in res["errors"]:
                    failed[(item_id, page)] = SimpleNamespace(reason=reason, detail=detail, model=model)
                    err_n[reason] += 1
                calls, hits, n_rows = calls + res["calls"], hits + res["cache_hits"], n_rows + len(res["rows"])
            stats.update(gemini_model=gem.model, gemini_pages=sum(len(v) for v in with_image.values()),
                         gemini_rows=n_rows, gemini_calls=calls, gemini_cache_hits=hits, gemini_errors=dict(err_n))
            if failed:  # failed pages are asked again by the next build: no reusable marker
                stats["incomplete"] = True

        # the pages of each volume read in one job on the run's item runner (OCR-text parser on
        # text pages and Tesseract text, Gemini's answers on image-only pages, the cross-check)
        by_volume: dict[str, list[dict[str, Any]]] = {}
        for p in pages:
            q = {k: v for k, v in p.items() if k != "vol_title"}
            q["ocr_url"] = store.url_for(p["ocr_sha256"]) if p["ocr_sha256"] else None
            by_volume.setdefault(p["item_id"], []).append(q)
        jobs = [(vol, {k[1]: v for k, v in answers.items() if k[0] == item_id},
                 {k[1]: (e.reason, e.detail) for k, e in failed.items() if k[0] == item_id},
                 gem.model if gem is not None else None) for item_id, vol in sorted(by_volume.items())]
        for v_regs, v_rens, v_unparsed, v_cross in item_runner(ctx).map(parse_volume_work, jobs, parse_volume_failed):
            regs += v_regs
            rens += v_rens
            unparsed += v_unparsed
            cross += v_cross
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
