"""Offline box-office extractor over Variety OCR text (SPEC B1, issue 9): rules, no model.

Used where no multimodal model is available and as a cross-check of the Gemini extractor; it
emits the same tuples {theater, city, movie, week, gross, confidence} with provenance (issue
date, item, page, ``extractor='ocr-rules'``, ``model=None``) and the line of the entry.

What it reads (the "Estimates for This Week" tables of 1928–1950s grosses pages)::

    Chicago, Oct. 28.                                   ← a dateline heads the city's column
    ... lead prose ...
    Estimates for This Week                             ← or "... for Last Week" (1920s)
    Chicago (B&K) (3,900; 98)—"Crimson Pirate" (WB), plus vaude (2d wk). Weak $25,000.
      Last week, $38,000.
    Palace (RKO) (2,500; 40-85)—"Hitler Higher" (RKO) and "Rookies Burma" (RKO). Fine $17,000.
      Last week, "Career Girl" (PRC), nice $23,500. Next week, "Jungle Book" (UA).
    SHOWCASE (5 houses)—"Gone" (MG). Big $60,000.

Rules (what the Gemini worked examples teach, SPEC B1):

* an entry starts at ``Theatre (Circuit) (seats; prices)—``; several houses in one entry
  ("Chinese, Globe, El Rey (FWC) (2,048; 782; 861; 70-$1.10)—") stay one theater string;
  ``SHOWCASE (N houses)—`` gives theater ``SHOWCASE:N``;
* the city is the latest dateline before the entry ("San Francisco, Nov. 3."), a "Broadway"
  heading means New York; names go through :mod:`extractors.variety.citymap` (an unknown name is
  kept as printed, with lower confidence);
* the films billed before the first gross share it: each gets a tuple with the whole gross (the
  ranking divides it later, SPEC B1); in an "Estimates for This Week" table the first gross is
  ``this week``; ``Last week, $X`` is ``last week`` for the same films, or for the film it names
  (``Last week, "Career Girl" (PRC), $23,500``); ``Next week, "Title"`` gives ``next week`` with
  gross null; in an "Estimates for Last Week" table the first gross is ``last week``;
* money: ``$14,000``, ``14G`` = 14,000, OCR forms ``S17,- 000``, ``$9,QQ0``, ``$49,- 146.45``
  (cents dropped); a money-like token that cannot be read is a ``bad_amount``;
* pages headed LEGITIMATE are stage shows: skipped whole (``skipped='legitimate_page'``).

Nothing is dropped silently: an entry without a readable title or gross, an amount that cannot
be read, or a page without any estimates table is listed in ``ExtractResult.unparsed`` with a
reason code (``no_title``, ``no_gross``, ``bad_amount``, ``outside_estimates_block``,
``no_estimates_block``, ``no_entries`` — a table header without a readable entry). Confidence
starts at 1.0 and drops for repaired money (×0.85), an unknown city (×0.7) and titles with OCR
debris (×0.8).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from pydantic import BaseModel
from rapidfuzz import fuzz

from extractors.variety.citymap import lookup_city
from extractors.variety.page_filter import classify_page

EXTRACTOR = "ocr-rules"
Week = Literal["this week", "last week", "next week"]


class GrossTuple(BaseModel):
    theater: str
    city: str | None
    movie: str
    week: Week
    gross: int | None
    confidence: float
    line_no: int
    issue_date: str | None = None
    item_id: str | None = None
    page: int | None = None
    extractor: str = EXTRACTOR
    model: str | None = None


class Unparsed(BaseModel):
    line_no: int
    text: str
    reason: str


@dataclass
class ExtractResult:
    tuples: list[GrossTuple] = field(default_factory=list)
    unparsed: list[Unparsed] = field(default_factory=list)
    skipped: str | None = None


# one character → one character, so offsets (and line numbers) survive
_CHARMAP = str.maketrans({"“": '"', "”": '"', "„": '"', "″": '"', "‘": "'", "’": "'", "´": "'", "`": "'",
                          "–": "—", "―": "—", "■": " ", "•": " ", "«": " ", "»": " ", "*": " ",
                          "~": " "})
_MONTHS = r"(?:Jan|Feb|Fe[lI1]j|Mar|Apr|April|May|June?|July?|Aug|Sept?|Oct|Nov|Dec)[a-z]*"
_DATELINE_RE = re.compile(rf"((?:[A-Z][A-Za-z.'^]*\s?){{1,3}})[,.]\s*{_MONTHS}\.?\s*\d{{1,2}}\b")
_BROADWAY_RE = re.compile(r"(?m)^\s*Broadway\s*$")
_ESTIMATES_RE = re.compile(r"[EeLl1I]?[a-z1!]{0,3}t[a-z1!^]{0,4}ates?\W{0,3}f\w{1,2}\W{1,3}(?P<wk>[A-Za-z]{3,5})\W{0,3}\w{0,6}",
                           re.I)
_ANCHOR_RE = re.compile(
    r"(?:SHOWCASE\s*\(\s*(?P<n>\d+)\s*(?:houses|theatres|theaters|spots|sites)?\s*\)"
    r"|[(t\[]\s*(?P<seats>\d[\d,.]*(?:\s*[;:,.]\s*[\d$.,!\-]+(?:\s?\d[\d.]*)?)+)\s*[)\]'i]?)"
    r"\s*(?:—|--)\s*")
_TITLE_RE = re.compile(r"(?:(?<=[\s—(,])|^)[\"']{1,2}\s*(?P<t>[A-Z0-9][^\"\n]{0,80}?)[\"']{1,2}(?=[\s(),.;:]|$)"
                       r"(?:\s*\((?P<dist>[^()]{1,12})\))?")
_MONEY_RE = re.compile(r"(?P<cur>[$§|]|\bS(?=\d))\s?(?P<num>\d{1,3}(?:\s?[,.]\s?-?\s?[\dOQo]{3})*(?:\.\d{2})?)"
                       r"|(?<![\w$])(?P<g>\d{1,3}(?:\.\d)?)G\b")
_MONEYISH_RE = re.compile(r"[$§!|]\s?[\d:;,.!]{3,}|\bS[\d:;,.!]{3,}")
_LAST_RE = re.compile(r"\bLa\W?[s8]\W?t[\s.,;:]{0,4}w\W?[a-z]{1,4}\b[.,;:]*|\bFirst\s+week\s+was\b", re.I)
_NEXT_RE = re.compile(r"\bNext\s+week\b[.,;:]*", re.I)
_JUNK = "■•^«»*|~"
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def _line_no(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def clean_title(raw: str) -> tuple[str, bool]:
    """Title as printed, debris removed: line-break hyphens joined ("Be- cause" → "Because"),
    junk glyphs dropped, whitespace collapsed. Returns (title, had_debris)."""
    t = re.sub(r"(\w)-\s+([a-z])", r"\1\2", raw)
    debris = any(c in t for c in _JUNK)
    t = "".join(c for c in t if c not in _JUNK)
    t = " ".join(t.split()).strip(" ,.;:'\"")
    return t, debris


def parse_money(token: str) -> tuple[int | None, bool]:
    """``$14,000`` → 14000, ``14G`` → 14000, ``S17,- 000`` → 17000 (repaired); (None, _) when unreadable."""
    m = _MONEY_RE.fullmatch(token.strip()) or _MONEY_RE.search(token)
    if not m:
        return None, False
    if m.group("g"):
        return int(round(float(m.group("g")) * 1000)), False
    raw = m.group("num")
    repaired = m.group("cur") != "$" or bool(re.search(r"[OQo]|-|\s", raw))
    num = re.sub(r"[\s-]", "", raw).translate(str.maketrans("OQo", "000"))
    cents = re.search(r"\.(\d{2})$", num) if re.search(r"[,.]\d{3}\.\d{2}$", num) else None
    if cents:
        num = num[: cents.start()]
    digits = re.sub(r"[,.]", "", num)
    if not digits.isdigit():
        return None, repaired
    return int(digits), repaired


def _first_money(text: str) -> tuple[int | None, bool, int, bool]:
    """(amount, repaired, position, saw_unreadable_money) of the first amount in ``text``."""
    m = _MONEY_RE.search(text)
    bad = _MONEYISH_RE.search(text)
    if m:
        value, repaired = parse_money(m.group(0))
        if bad and bad.start() < m.start():
            return value, repaired, m.start(), True
        return value, repaired, m.start(), False
    return None, False, -1, bool(bad)


@dataclass
class _Marker:
    pos: int
    end: int
    kind: str  # city | estimates
    value: str
    known: bool = True


def _markers(text: str, citymap) -> list[_Marker]:
    out: list[_Marker] = []
    for m in _DATELINE_RE.finditer(text):
        words = m.group(1).split()
        if not words or max(fuzz.ratio(words[-1].lower(), d) for d in _WEEKDAYS) >= 70:
            continue  # the issue's date line ("Wednesday, May 5"), not a city
        city, known = None, False
        for k in range(min(3, len(words)), 0, -1):  # longest known suffix: "Drew Curious Chicago"
            found, _ = lookup_city(" ".join(words[-k:]), citymap)
            if found is not None:
                city, known = found.normalized, True
                break
        if city is None:
            city = " ".join(words[-2:]).strip(".'^")
        out.append(_Marker(m.start(), m.end(), "city", city, known))
    for m in _BROADWAY_RE.finditer(text):
        out.append(_Marker(m.start(), m.end(), "city", "New York", True))
    for m in _ESTIMATES_RE.finditer(text):
        wk = m.group("wk").lower()
        if len(m.group(0)) > 40:
            continue
        kind = "last" if wk.startswith(("las", "lasl", "l")) and not wk.startswith("th") else "this"
        out.append(_Marker(m.start(), m.end(), "estimates", kind))
    return sorted(out, key=lambda k: k.pos)


_CIRCUIT_RE = re.compile(r"(?:\(\s*(?P<c>[^()]{1,20})|(?<=\s)[A-Z(](?P<c2>[A-Z][\w&.]{0,8}))\)\s*$")
_HEAD_TOKEN_RE = re.compile(r"[A-Z0-9][\w'&.\-^]*,?|&|of|de|la")


def _entry_head(text: str, lo: int, hi: int) -> tuple[str, str | None, int]:
    """(theater, circuit, start offset) from the text just before an anchor: the circuit in
    parentheses (or "CWB)" when the opening parenthesis was read as a letter), then the run of
    capitalised words before it ("Chinese, Globe, El Rey", "Loew's State")."""
    seg = text[lo:hi].rstrip()
    circuit = None
    m = _CIRCUIT_RE.search(seg)
    if m:
        circuit = (m.group("c") or m.group("c2") or "").strip()
        seg = seg[: m.start()].rstrip()
    tokens = list(re.finditer(r"\S+", seg))
    kept: list[re.Match[str]] = []
    for m_tok in reversed(tokens):
        t = m_tok.group(0)
        if not _HEAD_TOKEN_RE.fullmatch(t) or "$" in t or (t.endswith(".") and len(t) > 3):
            break
        kept.append(m_tok)
        if len(kept) >= 8:
            break
    start = lo + (kept[-1].start() if kept else len(seg))
    printed = " ".join(m_tok.group(0) for m_tok in reversed(kept))
    theater = "".join(c for c in printed if c not in _JUNK).strip(" ,;")
    return theater, circuit, start


def _split_titles(bill: str) -> list[tuple[str, bool, int]]:
    """Titles billed at the start of an entry body: (title, debris, offset)."""
    out = []
    for m in _TITLE_RE.finditer(bill):
        title, debris = clean_title(m.group("t"))
        if title:
            out.append((title, debris, m.start()))
    return out


def extract_page(text: str, *, issue_date: str | None = None, item_id: str | None = None, page: int | None = None,
                 citymap=None, model: str | None = None) -> ExtractResult:
    """All tuples of one page's OCR text (see the module docstring for the rules)."""
    res = ExtractResult()
    decision = classify_page(text or "")
    if decision.reason == "legitimate_page":
        res.skipped = "legitimate_page"
        return res
    text = (text or "").translate(_CHARMAP)
    markers = _markers(text, citymap)
    anchors = list(_ANCHOR_RE.finditer(text))
    if not any(k.kind == "estimates" for k in markers):
        res.unparsed.append(Unparsed(line_no=1, text=" ".join(text[:120].split()), reason="no_estimates_block"))
    elif not anchors:
        first = next(k for k in markers if k.kind == "estimates")
        res.unparsed.append(Unparsed(line_no=_line_no(text, first.pos), text=" ".join(text[first.pos:first.pos + 160].split()),
                                     reason="no_entries"))
    prov = {"issue_date": issue_date, "item_id": item_id, "page": page, "model": model}
    stops = sorted([k.pos for k in markers] + [len(text)])
    heads = []
    prev = 0
    for a in anchors:
        lo = max([prev] + [k.end for k in markers if k.end <= a.start()])
        heads.append(_entry_head(text, lo, a.start()))
        prev = a.end()
    for i, a in enumerate(anchors):
        theater, _circuit, head_lo = heads[i]
        if a.group("n"):
            theater, head_lo = f"SHOWCASE:{a.group('n')}", a.start()
        nxt = heads[i + 1][2] if i + 1 < len(anchors) else len(text)
        body_end = min([s for s in stops if s > a.end()] + [nxt])
        body = text[a.end():body_end]
        line_no = _line_no(text, head_lo)
        snippet = " ".join(text[head_lo:body_end].split())[:200]
        est = [k for k in markers if k.kind == "estimates" and k.pos < a.start()]
        if not est:
            res.unparsed.append(Unparsed(line_no=line_no, text=snippet, reason="outside_estimates_block"))
            continue
        block = est[-1].value
        cities = [k for k in markers if k.kind == "city" and k.pos < a.start()]
        city = cities[-1].value if cities else None
        city_known = bool(cities and cities[-1].known)
        # split the body: bill … gross | Last week … | Next week …
        last_m = _LAST_RE.search(body)
        next_m = _NEXT_RE.search(body)
        cut1 = last_m.start() if last_m else len(body)
        cut2 = next_m.start() if next_m and next_m.start() >= cut1 else len(body)
        part0, part1, part2 = body[:cut1], body[cut1:cut2], body[cut2:]
        amount0, rep0, pos0, bad0 = _first_money(part0)
        bill = part0[:pos0] if pos0 >= 0 else part0
        titles = _split_titles(bill)
        if not titles:
            res.unparsed.append(Unparsed(line_no=line_no, text=snippet, reason="no_title"))
            continue
        base = 1.0 * (0.7 if not city_known else 1.0)

        def emit(title: str, debris: bool, week: str, gross: int | None, repaired: bool) -> None:
            conf = base * (0.8 if debris else 1.0) * (0.85 if repaired else 1.0)
            res.tuples.append(GrossTuple(theater=theater, city=city, movie=title, week=week, gross=gross,
                                         confidence=round(conf, 3), line_no=line_no, **prov))

        week0 = "this week" if block == "this" else "last week"
        if amount0 is None:
            res.unparsed.append(Unparsed(line_no=line_no, text=snippet, reason="bad_amount" if bad0 else "no_gross"))
        else:
            for title, debris, _ in titles:
                emit(title, debris, week0, amount0, rep0)
        if part1:
            amount1, rep1, pos1, bad1 = _first_money(part1)
            named = _split_titles(part1[:pos1] if pos1 >= 0 else part1)
            if amount1 is None:
                res.unparsed.append(Unparsed(line_no=line_no, text=" ".join(part1.split())[:200],
                                             reason="bad_amount" if bad1 else "no_gross"))
            else:
                for title, debris, _ in (named or titles):
                    emit(title, debris, "last week", amount1, rep1)
        if part2:
            for title, debris, _ in _split_titles(part2)[:1] if _split_titles(part2) else []:
                emit(title, debris, "next week", None, False)
    return res


def page_rows(page: dict, text: str, citymap=None) -> tuple[list[dict], list[dict]]:
    """(``pd_tuples`` rows, ``pd_extract_errors`` rows) of the OCR-rules extractor on one kept
    page (``page``: item_id, page, issue_date): the per-item function of ``variety-extract``."""
    iso = page["issue_date"].isoformat() if page["issue_date"] else None
    res = extract_page(text, issue_date=iso, item_id=page["item_id"], page=page["page"], citymap=citymap)
    where = {"item_id": page["item_id"], "page": page["page"], "issue_date": page["issue_date"],
             "extractor": "ocr-rules", "model": None}
    tuples = [{**where, "seq": seq, "theater": t.theater, "city": t.city, "movie": t.movie, "week": t.week,
               "gross": t.gross, "confidence": t.confidence, "line_no": t.line_no} for seq, t in enumerate(res.tuples)]
    errors = [{**where, "reason": res.skipped, "detail": None}] if res.skipped else []
    errors += [{**where, "reason": u.reason, "detail": f"line {u.line_no}: {u.text}"[:300]} for u in res.unparsed]
    return tuples, errors
