"""Tesseract accuracy (issue 17 point 3) against the sample worlds' rendered gold pages.

    python -m benchmarks.bench_ocr [--quick]

Pages: every gold page of the sample Variety world (``cinesub.sample.variety``: the PNG page
images of ``pages/<item>/<leaf>.png``, gold ``gold/<item>/<leaf>.json`` with the printed ``text``
and the ``tuples``) and of the sample CCE world (``cinesub.sample.cce``: each volume's PDF rendered
at ``extractors.cce.gemini_pages.PAGE_DPI`` the way ``cce-discover`` renders it, gold ``text`` and
``entries``). Each page image is read by :func:`extractors.ocr_tesseract.ocr_image` with the
page segmentation mode the stages use (Variety ``PSM`` 6, CCE ``PSM_CATALOG`` 4).

Measured per page and pooled (edit distances summed over the reference lengths):

* **CER / WER** of Tesseract's text against the gold text (whitespace collapsed);
* **filter agreement** (Variety): :func:`extractors.variety.page_filter.classify_page` decides the
  same keep/drop on Tesseract's text as on the gold text;
* **tuple F1** (Variety kept pages): the OCR-rules extractor's tuples on Tesseract's text against
  the gold tuples (exact (theater, city, movie, week, gross) signatures, multiset), beside the
  same extractor on the gold text (what the rules lose without any OCR error);
* **entry accuracy** (CCE): registration (number + date) and renewal (original number + renewal
  number) keys the OCR-text parser reads from Tesseract's text, against the gold entries, beside
  the parser on the gold text.

``--quick``: the first three pages of each world. Writes ``benchmarks/results/ocr.json``.
"""

from __future__ import annotations

import json
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from benchmarks.common import print_table, publish_results, quick_main


def _tuple_f1(gold: list[dict[str, Any]], pred: list[dict[str, Any]]) -> dict[str, int]:
    from validators.extraction_metrics import tuple_signature

    g, p = Counter(map(tuple_signature, gold)), Counter(map(tuple_signature, pred))
    return {"gold": sum(g.values()), "pred": sum(p.values()), "tp": sum((g & p).values())}


def _f1(c: dict[str, int]) -> float | None:
    return round(2 * c["tp"] / (c["gold"] + c["pred"]), 4) if c["gold"] + c["pred"] else None


def _cce_keys(text: str, kind: str, year: int | None, coverage: Any) -> set[tuple]:
    from extractors.cce.parse import parse_registration_text, parse_renewal_text

    if kind == "renewals":
        return {("ren", r.orig_reg_id, r.renewal_id) for r in parse_renewal_text(text, volume_year=year).records}
    opts = {"coverage": coverage} if coverage is not None else {}
    return {("reg", r.reg_id, r.reg_date) for r in parse_registration_text(text, volume_year=year, **opts).records}


def _gold_keys(entries: list[dict[str, Any]], kind: str) -> set[tuple]:
    if kind == "renewals":
        return {("ren", e["orig_reg_id"], e["renewal_id"]) for e in entries}
    return {("reg", e["reg_id"], e["reg_date"]) for e in entries}


def variety_pages(root: Path, limit: int | None) -> list[dict[str, Any]]:
    from extractors.ocr_tesseract import error_rates, ocr_image
    from extractors.variety.ocr_grosses import extract_page
    from extractors.variety.page_filter import classify_page

    rows = []
    for gold_file in sorted((root / "gold").glob("*/*.json"))[:limit]:
        gold = json.loads(gold_file.read_text(encoding="utf-8"))
        png = root / "pages" / gold_file.parent.name / f"{gold_file.stem}.png"
        t0 = time.perf_counter()
        got = ocr_image(png.read_bytes())
        secs = time.perf_counter() - t0
        text = got.text or ""
        keep_gold, keep_ocr = classify_page(gold["text"]).keep, classify_page(text).keep
        row = {"world": "variety", "item_id": gold["item_id"], "page": gold["page"], "seconds": round(secs, 2),
               "reason": got.reason, **error_rates(gold["text"], text), "keep_gold": keep_gold, "keep_ocr": keep_ocr}
        if keep_gold:
            row["tuples_ocr"] = _tuple_f1(gold["tuples"], [t.model_dump() for t in extract_page(text).tuples])
            row["tuples_gold_text"] = _tuple_f1(gold["tuples"],
                                                [t.model_dump() for t in extract_page(gold["text"]).tuples])
        rows.append(row)
    return rows


def cce_pages(root: Path, limit: int | None) -> list[dict[str, Any]]:
    from extractors.cce.gemini_pages import PAGE_DPI
    from extractors.cce.parse import volume_coverage, volume_year
    from extractors.ia import page_images_from_pdf
    from extractors.ocr_tesseract import PSM_CATALOG, error_rates, ocr_image

    rows = []
    for item in sorted((root / "ia").iterdir()):
        meta = json.loads((item / "_item.json").read_text(encoding="utf-8"))
        year = volume_year(item.name, meta.get("title"), str(meta.get("date") or ""))
        images = page_images_from_pdf((item / f"{item.name}.pdf").read_bytes(), dpi=PAGE_DPI)
        for img in images:
            gold = json.loads((root / "gold" / item.name / f"{img.page:04d}.json").read_text(encoding="utf-8"))
            t0 = time.perf_counter()
            got = ocr_image(img.png, psm=PSM_CATALOG)
            secs = time.perf_counter() - t0
            text = got.text or ""
            row = {"world": "cce", "item_id": item.name, "page": img.page, "seconds": round(secs, 2),
                   "reason": got.reason, "kind": gold["kind"], **error_rates(gold["text"], text)}
            if gold["entries"]:
                kind = gold["kind"]
                cov = volume_coverage(item.name, meta.get("title")) if kind != "renewals" else None
                want = _gold_keys(gold["entries"], kind)
                row["entries"] = {"gold": len(want), "ocr_read": len(want & _cce_keys(text, kind, year, cov)),
                                  "gold_text_read": len(want & _cce_keys(gold["text"], kind, year, cov))}
            rows.append(row)
    return rows[:limit] if limit else rows


def _pooled(rows: list[dict[str, Any]]) -> dict[str, Any]:
    chars = sum(r["ref_chars"] for r in rows)
    words = sum(r["ref_words"] for r in rows)
    out: dict[str, Any] = {
        "pages": len(rows), "seconds": round(sum(r["seconds"] for r in rows), 1),
        "cer": round(sum(r["char_edits"] for r in rows) / max(chars, 1), 4),
        "wer": round(sum(r["word_edits"] for r in rows) / max(words, 1), 4),
        "ocr_failures": dict(Counter(r["reason"] for r in rows if r["reason"]))}
    if any("keep_gold" in r for r in rows):
        out["filter_agreement"] = round(sum(r["keep_gold"] == r["keep_ocr"] for r in rows) / max(len(rows), 1), 4)
    for key in ("tuples_ocr", "tuples_gold_text"):
        parts = [r[key] for r in rows if key in r]
        if parts:
            c = {k: sum(p[k] for p in parts) for k in ("gold", "pred", "tp")}
            out[f"tuple_f1_{key[7:]}"] = _f1(c)
    parts = [r["entries"] for r in rows if "entries" in r]
    if parts:
        g = sum(p["gold"] for p in parts)
        out["entry_accuracy_ocr"] = round(sum(p["ocr_read"] for p in parts) / g, 4) if g else None
        out["entry_accuracy_gold_text"] = round(sum(p["gold_text_read"] for p in parts) / g, 4) if g else None
    return out


def run(quick: bool = False, write: bool = True) -> dict[str, Any]:
    from cinesub.sample.cce import generate_cce_world
    from cinesub.sample.variety import generate_variety_world
    from extractors.ocr_tesseract import ocr_fingerprint, tesseract_version

    limit = 3 if quick else None
    with tempfile.TemporaryDirectory(prefix="bench-ocr-") as tmp:
        generate_variety_world(Path(tmp) / "variety")
        generate_cce_world(Path(tmp) / "cce")
        if tesseract_version() is None:
            payload = {"engine": ocr_fingerprint(), "error": "ocr_unavailable: tesseract is not installed",
                       "quick": quick}
            print(payload["error"])
            if write:
                publish_results("ocr", payload)
            return payload
        var = variety_pages(Path(tmp) / "variety", limit)
        cce = cce_pages(Path(tmp) / "cce", limit)
    summary = {"variety": _pooled(var), "cce": _pooled(cce)}
    print_table(["world", "pages", "CER", "WER", "filter agree", "tuple F1 (OCR)", "tuple F1 (gold text)",
                 "entries (OCR)", "entries (gold text)", "s"],
                [[w, s["pages"], s["cer"], s["wer"], s.get("filter_agreement", "-"), s.get("tuple_f1_ocr", "-"),
                  s.get("tuple_f1_gold_text", "-"), s.get("entry_accuracy_ocr", "-"),
                  s.get("entry_accuracy_gold_text", "-"), s["seconds"]] for w, s in summary.items()])
    payload = {"engine": ocr_fingerprint(), "summary": summary, "pages": var + cce, "quick": quick,
               "source": "sample worlds (seed 1934): cinesub.sample.variety pages/*.png, cinesub.sample.cce PDFs "
                         "rendered at PAGE_DPI; gold text/tuples/entries from their gold/ folders"}
    if write:
        publish_results("ocr", payload)
    return payload


if __name__ == "__main__":
    quick_main(__doc__, run, "the first three pages of each world")
