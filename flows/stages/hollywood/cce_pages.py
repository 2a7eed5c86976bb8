"""The per-volume job of ``cce-parse`` (flows/items.py: a local process or a Dask worker) and
the row builders of the CCE tables: the OCR-text parser on a volume's text pages (IA text layer
or Tesseract's), Gemini's answers on its image-only pages (read by the volume's Gemini job
before), the cross-check of the two readers per text page. A job carries the volume's pages
(raw-store URLs and digests), Gemini's answers and failures by page and the model name; it
returns rows, and the stage writes them. Kept apart from the stage so that a worker imports
only this, the raw store and the extractors."""

from __future__ import annotations

import json
from typing import Any

from cinesub.rawstore import read_blob

#: ``extractor`` of the rows the OCR-text parser, Gemini and the CPRS export reader give
OCR_EXTRACTOR, GEMINI_EXTRACTOR, EXPORT_EXTRACTOR = "ocr-rules", "gemini", "export"
#: ``extractor`` of the rows the OCR-text parser read from Tesseract's text of an image-only page
TESSERACT_EXTRACTOR = "tesseract"
#: reason code of a page whose reading raised (an unforeseen bug: recorded, never a stage failure)
INTERNAL_ERROR = "internal_error"



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


def _text(p: dict[str, Any]) -> str:
    return read_blob(p["ocr_url"], p["ocr_sha256"]).decode("utf-8")


def parse_volume_work(job: tuple) -> tuple[list, list, list, list]:
    """One CCE volume of ``cce-parse`` (in a worker): ``(pages, Gemini answers {page: rows},
    Gemini failures {page: (reason, detail)}, model or None)`` → (registration rows, renewal rows,
    unparsed rows, cross-check rows). A page whose reading raises is one ``internal_error`` row
    (none of its partial rows kept) and the other pages are read."""
    from extractors.cce import parse as cce_parse
    from extractors.cce.gemini_pages import to_records

    pages, answers, failed, model = job
    regs: list[dict[str, Any]] = []
    rens: list[dict[str, Any]] = []
    unparsed: list[dict[str, Any]] = []
    cross: list[dict[str, Any]] = []

    def gemini_failure(p: dict[str, Any]) -> bool:
        """A pd_unparsed row when Gemini should have read the page and did not."""
        if model is None:
            return False
        if not p["image_sha256"]:
            unparsed.append({"source": p["source"], "item_id": p["item_id"], "page": p["page"], "kind": "page",
                             "reason": "gemini:no_page_image", "raw": None,
                             "detail": "the volume has no page image for this leaf", "extractor": GEMINI_EXTRACTOR})
            return True
        err = failed.get(p["page"])
        if err is not None:
            unparsed.append({"source": p["source"], "item_id": p["item_id"], "page": p["page"], "kind": "page",
                             "reason": f"gemini:{err[0]}", "raw": None, "detail": (err[1] or "")[:300],
                             "extractor": GEMINI_EXTRACTOR})
            return True
        return False

    def gemini_records(p: dict[str, Any]) -> Any:
        opts: dict[str, Any] = {"volume_year": p["year"]}
        if p["coverage"] is not None:
            opts["coverage"] = p["coverage"]
        return to_records(answers.get(p["page"], []), **opts)

    def parse_text(p: dict[str, Any], text: str, kind: str, extractor: str) -> Any:
        """The OCR-text parser on one page's text (IA text layer or Tesseract's)."""
        source, item, page = p["source"], p["item_id"], p["page"]
        if kind == "renewals":
            ocr = cce_parse.parse_renewal_text(text, volume_year=p["year"])
            rens.extend([renewal_row(source, item, page, x, extractor) for x in ocr.records])
            unparsed.extend([unparsed_row(source, item, page, "renewal", u, extractor) for u in ocr.unparsed])
        else:
            ocr = cce_parse.parse_registration_text(text, volume_year=p["year"], coverage=p["coverage"])
            unparsed.extend([unparsed_row(source, item, page, "registration", u, extractor) for u in ocr.unparsed])
            regs.extend([registration_row(source, item, page, x, extractor) for x in ocr.records])
        return ocr

    def read_page(p: dict[str, Any]) -> None:
        """The rows of one page (registrations, renewals, unparsed entries, cross-check)."""
        source, item, page = p["source"], p["item_id"], p["page"]
        if p["kind"] == "image_only":
            if model is None and p["ocr_sha256"]:  # no Gemini: the parser reads Tesseract's text
                text = _text(p)
                parse_text(p, text, "renewals" if "RENEWAL" in text[:300].upper() else "registrations",
                           TESSERACT_EXTRACTOR)
                return
            if model is None:
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
                if isinstance(x, cce_parse.RenewalRecord):
                    rens.append(renewal_row(source, item, page, x, GEMINI_EXTRACTOR))
                else:
                    regs.append(registration_row(source, item, page, x, GEMINI_EXTRACTOR))
            for u in res.unparsed:
                unparsed.append(unparsed_row(source, item, page, _gemini_kind(u.raw), u, GEMINI_EXTRACTOR))
            return
        # a page whose text layer was unusable is read from Tesseract's text (cce-discover)
        ocr = parse_text(p, _text(p), p["kind"], TESSERACT_EXTRACTOR if p["text_engine"] == "tesseract" else OCR_EXTRACTOR)
        if model is not None and not gemini_failure(p):
            cross.append(crosscheck_row(item, page, p["kind"], model, ocr.records, gemini_records(p).records))

    for p in pages:
        mark = (len(regs), len(rens), len(unparsed), len(cross))
        try:
            read_page(p)
        except Exception as exc:  # noqa: BLE001 - this page is an internal_error row; the others are read
            del regs[mark[0]:], rens[mark[1]:], unparsed[mark[2]:], cross[mark[3]:]
            unparsed.append(page_error_row(p, model, type(exc).__name__, str(exc) or repr(exc)))
    return regs, rens, unparsed, cross


def page_error_row(p: dict[str, Any], model: str | None, error_type: str, message: str) -> dict[str, Any]:
    """The ``internal_error`` row of a page whose reading raised."""
    return {"source": p["source"], "item_id": p["item_id"], "page": p["page"], "kind": "page",
            "reason": INTERNAL_ERROR, "raw": None, "detail": f"{error_type}: {message}"[:300],
            "extractor": (OCR_EXTRACTOR if p["kind"] != "image_only" else
                          GEMINI_EXTRACTOR if model is not None else TESSERACT_EXTRACTOR)}


def parse_volume_failed(job: tuple, error_type: str, message: str, step: str) -> tuple[list, list, list, list]:
    """Every page of a volume whose job raised (or whose worker died): an ``internal_error`` row each."""
    pages, _answers, _failed, model = job
    return [], [], [page_error_row(p, model, error_type, message) for p in pages], []
