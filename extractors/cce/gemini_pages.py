"""Gemini page extractor for Catalog of Copyright Entries pages (SPEC B2, issue 10).

What: a multimodal model reads one CCE page image (a registration page of a motion-picture
catalog, or a renewal list in either printed layout) and answers a JSON list of rows
``{kind, title, reg_id, reg_date, renewal_id, renewal_date, claimant, basis, conf}`` (schema
:class:`CCERow`, sent as the response schema), every value **verbatim as printed** (``LP46O1``,
``220ct34``, ``6Dec45``). The prompt is ours: :data:`SYSTEM_INSTRUCTION`, then two worked examples
(page image → JSON, the files under ``data/examples`` written by
:func:`cinesub.sample.cce_examples.write_cce_gemini_examples`), then the page.

Why verbatim: normalisation happens after, in :func:`to_records`, with the very functions the
OCR-text parser (``extractors/cce/parse.py``) uses — its ``date; number`` pair reader
(``parse_cce_date`` + ``normalize_reg_id``), ``normalize_renewal_id``, ``normalize_basis`` — so a
Gemini row and an OCR entry of the same page become the same
:class:`~extractors.cce.parse.RegistrationRecord` / :class:`~extractors.cce.parse.RenewalRecord`
(same ids, dates, candidates and number/date reason codes), and
the two readers can be compared key by key (:func:`page_agreement`). It serves pages without a
text layer (``image_only``) and the OCR-vs-Gemini cross-check.

The machinery (client, cache per ``(model, PROMPT_VERSION, sha256(image))``, thread pool, Batch
API, reason-coded errors, key scrubbing) is :class:`extractors.gemini_pages.GeminiPageReader`;
:class:`GeminiCCEExtractor` is that reader with :data:`TASK`. Changing the prompt or the examples
must bump :data:`PROMPT_VERSION`.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from extractors import gemini_pages as _core
from extractors.cce.normalize import FILM_CLASSES, normalize_basis, normalize_renewal_id, parse_cce_date, split_reg_id
from extractors.cce.parse import ParseResult, RegistrationRecord, RenewalRecord, Unparsed, title_problem
from extractors.cce.parse import _film_floor, _registrations  # the parser's own pair reader and year floor
from extractors.gemini_pages import EXTRACTOR, REASONS, ExtractionResult, GeminiPageReader, PageRef, PageTask

__all__ = ["DEFAULT_MODEL", "EXAMPLES_DIR", "PAGE_DPI", "PROMPT_VERSION", "REASONS", "ROW_FIELDS", "TASK",
           "CCERow", "ExtractionResult", "GeminiCCEExtractor", "PageRef", "load_examples", "page_agreement",
           "page_refs_from_world", "parse_answer", "record_key", "rows_for", "to_records"]

DEFAULT_MODEL = _core.DEFAULT_MODEL
PROMPT_VERSION = "cce-pages-v1"
EXAMPLES_DIR = Path(__file__).resolve().parent / "data" / "examples"
#: dpi at which page images are rendered from a volume's PDF (``IAClient.page_images`` default,
#: used by the cce-discover stage for volumes without a text layer)
PAGE_DPI = 100

ROW_FIELDS: tuple[str, ...] = ("item_id", "page", "extractor", "model", "kind", "title", "reg_id", "reg_date",
                               "renewal_id", "renewal_date", "claimant", "basis", "confidence")

SYSTEM_INSTRUCTION = """You read scanned pages of the Catalog of Copyright Entries (U.S. Copyright \
Office) and extract motion-picture registrations and renewals.
Answer a JSON list of rows {kind, title, reg_id, reg_date, renewal_id, renewal_date, claimant, basis, conf}; \
answer [] when the page has no entries (title pages, indexes, headings only).
Page kinds:
- Registration pages: "TITLE. credits. © Claimant; 6Dec45; LP81." gives kind "registration" with \
reg_date "6Dec45", reg_id "LP81", claimant "Claimant"; renewal_id, renewal_date and basis null.
- Renewal pages (RENEWAL REGISTRATIONS) give kind "renewal"; reg_id and reg_date are the ORIGINAL \
registration. Two printed layouts:
  1950: "TITLE, a photoplay in six reels by X. © 7Feb23, L18801. R58700, 17Feb50, Claimant (PWH)" \
(renewal number before its date, claimant last);
  1954 on: "TITLE, a photoplay in seven reels by X. © 17Aug27; L24293. Claimant (PWH); 10Jun55; R151558." \
(claimant first, renewal date before the number).
Rules:
- One row per registration. An entry with several registrations ("© 4Apr27; L23861; 18Apr27; L23902") \
gives one row each; pair renewal numbers with them in order ("R144117, R144118"), and repeat a single \
renewal number for every registration.
- Renewal lists mix all classes: keep motion pictures only (photoplays, motion pictures; classes L, LP, \
LU, M, MP, MU); skip books, plays, music and other classes.
- title: as printed, without the description (", a photoplay in seven reels by X"), reel counts or \
credits ("THE BELLS OF ST. MARY'S").
- Copy numbers and dates EXACTLY as printed, damage included: do not correct "LP46O1", "1P4412", \
"220ct34" or "R2850141"; dates stay in the printed DMonYY form ("6Dec45"), never ISO.
- The copyright sign may print as "@" or "6" before a date; it is not part of any value.
- basis: the code in parentheses after the claimant ("PWH"), without parentheses; null when none.
- claimant: as printed, without the basis; null when none.
- conf: your confidence in the row, 0 to 1."""

EXAMPLE_PROMPT = "Example page {n}. Extract the registration and renewal rows."
PAGE_PROMPT = "Extract the registration and renewal rows of this page. Answer the JSON list only."


class CCERow(BaseModel):
    kind: Literal["registration", "renewal"]
    title: str = Field(description="title as printed, without description or credits")
    reg_id: str = Field(description="registration number as printed (the original one for a renewal), e.g. LP4520")
    reg_date: str = Field(description="its date as printed, DMonYY, e.g. 6Dec45")
    renewal_id: str | None = Field(description="renewal number as printed, e.g. R285114; null for a registration")
    renewal_date: str | None = Field(description="renewal date as printed, DMonYY; null for a registration")
    claimant: str | None = Field(description="claimant as printed, without the basis; null when none")
    basis: str | None = Field(description="basis code in parentheses, e.g. PWH, without parentheses; null when none")
    conf: float = Field(ge=0.0, le=1.0, description="confidence 0-1")


def load_examples(examples_dir: Path = EXAMPLES_DIR) -> list[tuple[bytes, str]]:
    """``[(png bytes, answer JSON text)]`` of the worked examples, in name order."""
    return _core.load_examples(examples_dir, CCERow)


def parse_answer(text: str | None) -> tuple[list[CCERow] | None, str | None]:
    """Validated rows, or ``(None, reason)`` (``no_text``, ``malformed_json``, ``schema_mismatch``)."""
    return _core.parse_answer(text, CCERow)


def rows_for(page: Any, model: str, items: Sequence[CCERow | Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Output rows (:data:`ROW_FIELDS`) of one page from its answer rows."""
    out = []
    for it in items:
        d = it.model_dump() if isinstance(it, CCERow) else dict(it)
        out.append({"item_id": page.item_id, "page": page.page, "extractor": EXTRACTOR, "model": model,
                    "kind": d["kind"], "title": d["title"], "reg_id": d["reg_id"], "reg_date": d["reg_date"],
                    "renewal_id": d["renewal_id"], "renewal_date": d["renewal_date"], "claimant": d["claimant"],
                    "basis": d["basis"], "confidence": d["conf"]})
    return out


TASK = PageTask(row_model=CCERow, system_instruction=SYSTEM_INSTRUCTION, prompt_version=PROMPT_VERSION,
                examples_dir=EXAMPLES_DIR, to_rows=rows_for, example_prompt=EXAMPLE_PROMPT, page_prompt=PAGE_PROMPT,
                batch_display_name="cinesub-cce-pages")


class GeminiCCEExtractor(GeminiPageReader):
    """The CCE page reader: :class:`extractors.gemini_pages.GeminiPageReader` with :data:`TASK`.
    Keyword options are the reader's (model, base_url, thinking_level, media_resolution,
    cache_dir, max_workers, attempts, retry_initial_delay_s, timeout_s, api_version, temperature)."""

    def __init__(self, api_key: str, *, model: str = DEFAULT_MODEL, **options: Any):
        super().__init__(api_key, TASK, model=model, **options)


# ---------------------------------------------------------------------------------------------
# rows -> the parser's record types

def _clean(s: str | None) -> str:
    return re.sub(r"\s+", " ", s or "").strip()


def _raw(d: Mapping[str, Any]) -> str:
    return json.dumps({k: d.get(k) for k in ("kind", "title", "reg_id", "reg_date", "renewal_id", "renewal_date",
                                             "claimant", "basis")}, ensure_ascii=False)


def to_records(rows: Iterable[CCERow | Mapping[str, Any]], *, volume_year: int | None = None,
               coverage: tuple[int, int] | None = None,
               registration_classes: Iterable[str] | None = FILM_CLASSES,
               renewal_classes: Iterable[str] | None = None,
               ranges: Mapping[str, tuple[int, int]] | None = None) -> ParseResult:
    """Gemini rows (answer rows or :func:`rows_for` output) as the OCR parser's records.

    The parser's own reading, with its defaults (registrations: film classes; renewals: any
    class): the ``date; number`` pair goes through the parser's pair reader (``parse_cce_date``
    with ``volume_year``, ``coverage`` and the film-year floor, ``normalize_reg_id`` with the
    classes and ``ranges``), the renewal date through ``parse_cce_date``, the renewal number
    through ``normalize_renewal_id`` with the renewal year, the basis through
    ``normalize_basis``. Numbers keep their candidates and are ``None`` unless confidently read;
    reason codes are prefixed by field as the parser's are (``reg:``, ``orig_reg:``,
    ``renewal:`` …). Renewals get ``layout="gemini"``; the title is Gemini's, with a
    ``title:`` reason when it does not look like one. A row that cannot become a record is an
    :class:`~extractors.cce.parse.Unparsed` with the parser's reason codes: ``no_registration``
    (date unreadable or outside ``coverage``), ``no_renewal_number``, ``renewal_date_unreadable``.
    """
    result = ParseResult()
    for it in rows:
        d = it.model_dump() if isinstance(it, CCERow) else dict(it)
        raw = _raw(d)
        renewal = d.get("kind") == "renewal"
        classes = renewal_classes if renewal else registration_classes
        classes = list(classes) if classes is not None else None
        title = _clean(d.get("title")).strip(" ,;:.")
        problem = title_problem(title)
        t_reasons = [f"title:{problem}"] if problem else []
        reg_raw, date_raw = _clean(d.get("reg_id")), _clean(d.get("reg_date"))
        pairs, stray = _registrations(f"{date_raw}; {reg_raw}", volume_year=volume_year, classes=classes,
                                      ranges=ranges, coverage=coverage)
        if not pairs:
            result.unparsed.append(Unparsed(raw, "no_registration", f"{date_raw!r}; {reg_raw!r}: stray {stray}",
                                            {"title": title, "reg_id": reg_raw}))
            continue
        claimant = _clean(d.get("claimant")) or None
        if not renewal:
            for odate, reg in pairs:
                reasons = t_reasons + [f"reg:{r}" for r in reg.reasons] + [f"reg_date:{r}" for r in odate.reasons]
                if d.get("renewal_id") or d.get("renewal_date"):
                    reasons.append("gemini:renewal_fields_on_registration")
                result.records.append(RegistrationRecord(
                    title=title, reg_id=reg.value, reg_date=odate.iso, claimant=claimant, raw=raw, reg_raw=reg.raw,
                    reasons=tuple(dict.fromkeys(reasons)), reg_candidates=reg.candidates))
            continue
        rid_raw, rdate_raw = _clean(d.get("renewal_id")), _clean(d.get("renewal_date"))
        if not rid_raw:
            result.unparsed.append(Unparsed(raw, "no_renewal_number", "renewal row without a renewal number",
                                            {"title": title, "registrations": [(o.iso, r.value or r.raw)
                                                                               for o, r in pairs]}))
            continue
        rdate = parse_cce_date(rdate_raw, context_year=volume_year, min_year=_film_floor(classes))
        if rdate.iso is None:
            result.unparsed.append(Unparsed(raw, "renewal_date_unreadable", rdate_raw, {"title": title}))
            continue
        ren = normalize_renewal_id(rid_raw, year=int(rdate.iso[:4]))
        basis, b_reasons = normalize_basis(d["basis"].strip("() ")) if d.get("basis") else (None, ())
        for odate, reg in pairs:
            reasons = (t_reasons + [f"orig_reg:{r}" for r in reg.reasons] + [f"orig_date:{r}" for r in odate.reasons]
                       + [f"renewal:{r}" for r in ren.reasons] + [f"renewal_date:{r}" for r in rdate.reasons]
                       + [f"basis:{r}" for r in b_reasons])
            result.records.append(RenewalRecord(
                title=title, orig_reg_id=reg.value, orig_date=odate.iso, renewal_id=ren.value,
                renewal_date=rdate.iso, claimant=claimant, basis=basis, layout="gemini", raw=raw,
                orig_reg_raw=reg.raw, renewal_raw=rid_raw, orig_year=int(odate.iso[:4]),
                reasons=tuple(dict.fromkeys(reasons)), orig_reg_candidates=reg.candidates,
                renewal_candidates=ren.candidates))
    return result


# ---------------------------------------------------------------------------------------------
# OCR parser vs Gemini

def _id_or_raw(value: str | None, raw: str) -> str:
    return value if value else "?" + re.sub(r"\s+", "", raw or "").upper()


def record_key(rec: RegistrationRecord | RenewalRecord) -> tuple[str, str, str | None]:
    """``(kind, registration id, registration date)``: the match key (number + date) of a record;
    an id without a confident reading is its printed form prefixed ``?``."""
    if isinstance(rec, RenewalRecord):
        return "renewal", _id_or_raw(rec.orig_reg_id, rec.orig_reg_raw), rec.orig_date
    return "registration", _id_or_raw(rec.reg_id, rec.reg_raw), rec.reg_date


def _is_film(rec: Any) -> bool:
    if not isinstance(rec, RenewalRecord) or rec.orig_reg_id is None:
        return True  # registration volumes hold films only; an unread number is kept (and shows)
    parts = split_reg_id(rec.orig_reg_id)
    return parts is None or parts[0] in FILM_CLASSES


def page_agreement(ocr: Iterable[Any], gemini: Iterable[Any], *, film_only: bool = True) -> dict[str, Any]:
    """Agreement of the OCR parser's and Gemini's records of one page, by :func:`record_key`
    (counted, so a key printed twice must be read twice) and, for renewals found by both, by
    renewal number. ``film_only`` leaves out renewals of other classes (the mixed 1950 lists,
    which the prompt tells Gemini to skip). Keys are strings ``kind|reg_id|reg_date``.

    Returns ``{n_ocr, n_gemini, matched, ocr_only[], gemini_only[], renewal_differs[], agree}``.
    """
    def keep(recs: Iterable[Any]) -> list[Any]:
        return [r for r in recs if not film_only or _is_film(r)]

    o, g = keep(ocr), keep(gemini)
    ko, kg = Counter(record_key(r) for r in o), Counter(record_key(r) for r in g)

    def fmt(k: tuple[str, str, str | None]) -> str:
        return f"{k[0]}|{k[1]}|{k[2] or ''}"

    def renewals(recs: list[Any]) -> dict[tuple[str, str, str | None], set[str]]:
        out: dict[tuple[str, str, str | None], set[str]] = {}
        for r in recs:
            if isinstance(r, RenewalRecord):
                out.setdefault(record_key(r), set()).add(_id_or_raw(r.renewal_id, r.renewal_raw))
        return out

    ro, rg = renewals(o), renewals(g)
    differs = sorted(f"{fmt(k)}: {'/'.join(sorted(ro[k]))} != {'/'.join(sorted(rg[k]))}"
                     for k in ro.keys() & rg.keys() if ro[k] != rg[k])
    ocr_only = sorted(fmt(k) for k in (ko - kg).elements())
    gem_only = sorted(fmt(k) for k in (kg - ko).elements())
    return {"n_ocr": len(o), "n_gemini": len(g), "matched": sum((ko & kg).values()), "ocr_only": ocr_only,
            "gemini_only": gem_only, "renewal_differs": differs,
            "agree": not ocr_only and not gem_only and not differs}


# ---------------------------------------------------------------------------------------------
# sample worlds

def page_refs_from_world(world_dir: Path | str, *, dpi: int = PAGE_DPI) -> list[PageRef]:
    """PageRefs of a CCE sample world's pages: each volume's PDF (``ia/<id>/<id>.pdf``) rendered
    with pdf2image at ``dpi`` as the flow renders a volume without a text layer."""
    from extractors.ia import page_images_from_pdf

    out = []
    for pdf in sorted(Path(world_dir).glob("ia/*/*.pdf")):
        for p in page_images_from_pdf(pdf.read_bytes(), dpi=dpi):
            out.append(PageRef(pdf.parent.name, p.page, p.png))
    return out
