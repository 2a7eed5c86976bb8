"""Stages ``cce-discover``, ``cce-parse`` and ``copyright-status`` (SPEC B2).

* discover: Catalog of Copyright Entries motion-picture volumes on the Internet Archive
  (``extractors.ia.CCE_QUERY``); each volume's ``_djvu.txt`` split into leaves (raw store), or,
  for a volume without a text layer, its PDF pages rendered by pdf2image (``image_only`` pages:
  kept and counted, but no OCR engine runs on them here). A leaf whose running head says RENEWAL
  is a renewal page, every other leaf a registration page. The volume's context year is
  ``extractors.cce.parse.volume_year`` of its identifier, title and IA metadata ``date``.
* parse: registrations (``extractors.cce.parse.parse_registration_text``, two-digit years read
  inside the years a cumulative volume covers: ``volume_coverage``), renewals of both
  printed layouts (``parse_renewal_text``) and the CPRS export (``read_renewal_export``; sample:
  the world's ``cprs_export.tsv``; live: ``hollywood.cprs_export_path``). Every entry that cannot
  be read is kept in ``pd_unparsed`` with its reason code.
* status: :func:`validators.copyright_match.match_registrations` and
  :func:`validators.copyright_status.classify` with the build's ``as_of``; curator decisions of
  ``pd_match_decisions`` are honoured; ``matched_fuzzy_review`` rows are the review queue.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict
from datetime import date
from pathlib import Path
from typing import Any

import duckdb

from cinesub.stage import StageContext
from flows.stages.pd_common import PDStage, file_digest, ia_client, live_marker, raw_store, replace_rows, world_dir


class CCEDiscoverStage(PDStage):
    name = "cce-discover"
    version = "2"  # 2: library century inference / entry splitting / 1P->LP reading
    reads = ()
    writes = ("pd_cce_items", "pd_cce_pages")

    def external_inputs(self, ctx: StageContext) -> dict[str, Any]:
        return live_marker(ctx)

    def run(self, ctx: StageContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from extractors.cce.parse import volume_year
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
                names = [f["name"] for f in client.list_files(ident)]
                djvu = next((n for n in names if n.endswith("_djvu.txt")), None)
                if djvu is not None:
                    texts = client.djvu_pages(ident)
                    row.update(djvu_sha256=client.cached(ident, djvu), text_source="djvu", n_pages=len(texts))
                    for leaf, text in enumerate(texts):
                        sha, _ = store.put(text.encode("utf-8"))
                        kind = "renewals" if "RENEWAL" in text[:300].upper() else "registrations"
                        pages.append({"item_id": ident, "page": leaf, "kind": kind, "ocr_sha256": sha,
                                      "image_sha256": None})
                else:
                    imgs = client.page_images(ident)  # the PDF through pdf2image
                    row.update(text_source="pdf_images", n_pages=len(imgs), reason="no_text_layer")
                    reasons["no_text_layer"] += 1
                    for p in imgs:
                        pages.append({"item_id": ident, "page": p.page, "kind": "image_only", "ocr_sha256": None,
                                      "image_sha256": p.sha256})
            except ProviderError as exc:
                row["reason"] = exc.reason_code
                reasons[exc.reason_code] += 1
            items.append(row)
        replace_rows(con, "pd_cce_items", items)
        replace_rows(con, "pd_cce_pages", pages)
        return {"volumes": len(items), "pages": len(pages), "kinds": dict(Counter(p["kind"] for p in pages)),
                "volume_failures": dict(reasons)}


def cprs_path(ctx: StageContext) -> Path | None:
    w = world_dir(ctx, "cce")
    if w is not None:
        return w / "cprs_export.tsv"
    p = ctx.settings.hollywood.cprs_export_path
    return Path(p) if p else None


class CCEParseStage(PDStage):
    name = "cce-parse"
    version = "2"  # 2: library century inference / entry splitting / 1P->LP reading
    reads = ("pd_cce_items", "pd_cce_pages")
    writes = ("pd_registrations", "pd_renewals", "pd_unparsed")

    def external_inputs(self, ctx: StageContext) -> dict[str, Any]:
        return {"cprs": file_digest(cprs_path(ctx))}

    def run(self, ctx: StageContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        from extractors.cce.normalize import normalize_reg_id
        from extractors.cce.parse import (
            parse_registration_text, parse_renewal_text, read_renewal_export, volume_coverage,
        )

        store = raw_store(ctx)
        regs: list[dict[str, Any]] = []
        rens: list[dict[str, Any]] = []
        unparsed: list[dict[str, Any]] = []

        def lost(source: str, item: str | None, page: int | None, kind: str, u: Any) -> None:
            unparsed.append({"source": source, "item_id": item, "page": page, "kind": kind, "reason": u.reason,
                             "raw": (u.raw or "")[:500], "detail": (u.detail or "")[:300]})

        def renewal_row(source: str, item: str | None, page: int | None, x: Any) -> dict[str, Any]:
            orig = x.orig_reg_id
            return {"source": source, "item_id": item, "page": page, "title": x.title,
                    "orig_reg_id": orig or x.orig_reg_raw, "orig_date": x.orig_date,
                    "renewal_id": x.renewal_id or x.renewal_raw, "renewal_date": x.renewal_date,
                    "claimant": x.claimant, "basis": x.basis, "layout": x.layout, "orig_reg_raw": x.orig_reg_raw,
                    "renewal_raw": x.renewal_raw, "confident": orig is not None and x.renewal_id is not None,
                    "reasons": ";".join(x.reasons)}

        for item, page, kind, sha, year, vol_title in con.execute(
                """SELECT p.item_id, p.page, p.kind, p.ocr_sha256, i.context_year, i.title
                   FROM pd_cce_pages p JOIN pd_cce_items i USING (item_id) ORDER BY p.item_id, p.page""").fetchall():
            source = f"cce:{item}"
            if kind == "image_only":
                unparsed.append({"source": source, "item_id": item, "page": page, "kind": "page",
                                 "reason": "image_only_page", "raw": None,
                                 "detail": "no text layer; page image stored, no OCR here"})
                continue
            text = store.get(sha).decode("utf-8")
            if kind == "renewals":
                res = parse_renewal_text(text, volume_year=year)
                for x in res.records:
                    rens.append(renewal_row(source, item, page, x))
                for u in res.unparsed:
                    lost(source, item, page, "renewal", u)
                continue
            res = parse_registration_text(text, volume_year=year, coverage=volume_coverage(item, vol_title))
            for u in res.unparsed:
                lost(source, item, page, "registration", u)
            for x in res.records:
                reg_id, confident, reasons = x.reg_id, x.reg_id is not None, list(x.reasons)
                if reg_id is None:  # another class than the film classes (1978 on: PA)
                    reading = normalize_reg_id(x.reg_raw, classes=None)
                    reg_id = reading.value
                    confident = reg_id is not None
                    reasons.append("reg:read_without_class_filter" if confident else "reg:uncertain")
                regs.append({"source": source, "item_id": item, "page": page, "title": x.title,
                             "reg_id": reg_id or x.reg_raw, "reg_date": x.reg_date, "claimant": x.claimant,
                             "reg_raw": x.reg_raw, "confident": confident,
                             "reasons": ";".join(dict.fromkeys(reasons))})
        export = cprs_path(ctx)
        if export is not None and export.is_file():
            res = read_renewal_export(export, film_only=True)
            for x in res.records:
                rens.append(renewal_row("cprs", None, None, x))
            for u in res.unparsed:
                lost("cprs", None, None, "export", u)
        replace_rows(con, "pd_registrations", regs)
        replace_rows(con, "pd_renewals", rens)
        replace_rows(con, "pd_unparsed", unparsed)
        return {"registrations": len(regs), "renewals": len(rens), "unparsed": dict(Counter(u["reason"] for u in unparsed)),
                "cprs_export": export is not None and export.is_file()}


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


def status_rows(regs: list, rens: list, decisions: list, as_of: date) -> tuple[list[dict], list[dict]]:
    """(matches, statuses) rows for the state DB / a release."""
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
    for s in classify(regs, rens, as_of=as_of, decisions=decisions):
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


class CopyrightStatusStage(PDStage):
    uses_as_of = True
    name = "copyright-status"
    version = "1"
    reads = ("pd_registrations", "pd_renewals", "pd_match_decisions")
    writes = ("pd_matches", "pd_status")

    def run(self, ctx: StageContext, con: duckdb.DuckDBPyConnection) -> dict[str, Any]:
        as_of = ctx.settings.hollywood.as_of
        regs, rens = load_matching_inputs(con)
        decisions = curator_decisions(con.execute(
            "SELECT reg_id, reg_date, renewal_id, decision, decided_by FROM pd_match_decisions ORDER BY 1, 2").fetchall())
        matches, statuses = status_rows(regs, rens, decisions, as_of)
        replace_rows(con, "pd_matches", matches)
        replace_rows(con, "pd_status", statuses)
        return {"as_of": as_of.isoformat(), "registrations": len(regs), "renewals": len(rens),
                "curator_decisions": len(decisions), "matches": dict(Counter(m["decision"] for m in matches)),
                "statuses": dict(Counter(s["status"] for s in statuses)),
                "review_queue": sum(m["decision"] == "matched_fuzzy_review" for m in matches)}
