"""Which Variety pages carry box-office grosses (SPEC B1 page filter), tolerant of OCR noise.

SPEC B1 keeps a page when the text contains "estimates for this week" or "estimates for last
week", or an article title contains "picture grosses". Microfilm OCR garbles exactly these words
("listimates for This Week", "Estimates for Thls^eck", "Estimate fer This Week", "PICTDRE
GROSSES", "PICT1JRB GROSSES", "PICTURE\\nGROSSES"), so the phrases are found by a fuzzy window
search (rapidfuzz ``partial_ratio_alignment``) on normalised text (lower case, line-break hyphens
joined, everything but letters and digits turned into single spaces).

Rules, in order (the first that decides wins; every decision has a reason code):

1. ``legitimate_page`` (reject, when ``skip_legitimate``): the running head (first
   :data:`HEAD_CHARS` characters) reads LEGITIMATE and not PICTURE GROSSES — Variety's stage
   section prints "Estimates for Last Week" for plays too; SPEC B1 says those pages are stage
   shows, so no film tuple can come from them.
2. ``estimates_phrase`` (keep): "estimates for this|last week" anywhere, score ≥
   :data:`ESTIMATES_MIN`, and the matched window really holds an "estimates"-like word and a
   "week"-like word (so "estimates for the coming season" or "estimates" alone do not pass).
3. ``picture_grosses_title`` (keep): "picture grosses" in the head (the running head and the
   first headlines, where article titles are), score ≥ :data:`PICTURE_GROSSES_MIN`.
4. ``other_section_head`` (reject): the running head names another section (RADIO, MUSIC,
   VAUDEVILLE, FINANCE, …) — checked before the weaker rules below.
5. ``grosses_head`` (keep): a "GROSSES" running head (fuzzy, in the first
   :data:`RUNNING_HEAD_CHARS` characters) plus a city dateline or box-office money talk
   (1937: "GKDSSES … Chicagb, Nov. 30").
6. ``prose_grosses`` (keep): the 1920s Broadway/city reports written as prose with grosses inline
   (no estimates table): a PICTURES running head or a dateline/Broadway, and money talk — at least
   :data:`MIN_AMOUNTS` dollar amounts of $1,000 and more plus box-office words (gross, receipts,
   business, last week …). This extends SPEC B1, whose phrases miss these pages.
7. otherwise ``no_grosses_signal`` (reject).

``PageDecision.score`` is the rapidfuzz score (0–1) of the deciding phrase, 1.0 for the
structural rules' full evidence, 0.0 for ``no_grosses_signal``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz

ESTIMATES_PHRASES = ("estimates for this week", "estimates for last week")
ESTIMATES_MIN = 84.0
PICTURE_GROSSES_MIN = 80.0
GROSSES_TOKEN_MIN = 70.0
PICTURES_TOKEN_MIN = 85.0
#: where article titles and the running head sit in an OCR page
HEAD_CHARS = 400
#: where the running head line sits
RUNNING_HEAD_CHARS = 90
MIN_AMOUNTS = 3
OTHER_SECTIONS = ("radio", "music", "vaudeville", "finance", "literati", "television", "night clubs",
                  "legitimate", "concert", "obituaries", "international", "house reviews", "film reviews")
_DATELINE_RE = re.compile(
    r"\b([A-Z][A-Za-z.'^]+(?:\s[A-Z][A-Za-z.'^]+){0,2})[,.]\s*"
    r"(Jan|Feb|Fe[lI1]j|Mar|Apr|April|May|June?|July?|Aug|Sept?|Oct|Nov|Dec)[a-z]*\.?\s*\d{1,2}\b")
_AMOUNT_RE = re.compile(r"[$§|]\s?\d{1,3}(?:\s?[,.]\s?-?\s?[\dOQS]{3})+|\b\d{1,3}G\b")
_BOXOFFICE_WORDS = ("gross", "receipts", "business", "last week", "box office", "box-office", "house record",
                    "capacity", "takings", "biz", "first-run", "first run", "holdover", "stanza")
_WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


@dataclass(frozen=True)
class PageDecision:
    keep: bool
    reason: str
    phrase: str | None
    score: float


def normalize_page_text(text: str) -> str:
    """Lower case, line-break hyphens joined ("PIC-\\nTURE" → "picture"), non-alphanumerics → one space."""
    text = re.sub(r"-\s*\n\s*", "", text)
    text = re.sub(r"[^0-9a-z]+", " ", text.lower())
    return " ".join(text.split())


def _best(phrase: str, text: str) -> tuple[float, str]:
    if not text:
        return 0.0, ""
    al = fuzz.partial_ratio_alignment(phrase, text)
    if al is None:
        return 0.0, ""
    return al.score, text[al.dest_start:al.dest_end]


def _widen(text: str, window: str) -> str:
    """``window`` (a substring of ``text``) extended to whole words at both ends."""
    i = text.find(window)
    lo, hi = i, i + len(window)
    while lo > 0 and text[lo - 1] != " ":
        lo -= 1
    while hi < len(text) and text[hi] != " ":
        hi += 1
    return text[lo:hi]


def find_picture_grosses(head_norm: str) -> tuple[float, str]:
    """(score, window) for "picture grosses" in the head; 0 unless the window holds a
    "grosses"-like word and a "picture"-like word ("picture houses" does not pass)."""
    score, window = _best("picture grosses", head_norm)
    window = _widen(head_norm, window.strip()) if window.strip() else ""
    words = window.split()
    if not (len(words) >= 2 and _word_like(" ".join(words[-2:]), "grosses", 75)
            and _word_like(" ".join(words[:2]), "picture", 60)):
        return 0.0, window
    return score, window


def _word_like(window: str, word: str, minimum: float) -> bool:
    return any(fuzz.ratio(w, word) >= minimum for w in window.split())


def find_estimates(text_norm: str) -> tuple[float, str]:
    """Best (score, matched window) for the estimates phrases, after the word checks."""
    best = (0.0, "")
    for phrase in ESTIMATES_PHRASES:
        score, window = _best(phrase, text_norm)
        # a window cut at a word boundary may miss a letter: widen it to whole words
        window = window.strip()
        if window:
            window = _widen(text_norm, window)
        words = window.split()
        ok = (len(words) >= 3 and _word_like(" ".join(words[:2]), "estimates", 75)
              and (_word_like(" ".join(words[-2:]), "week", 60) or fuzz.partial_ratio("week", words[-1]) >= 75))
        if ok and score > best[0]:
            best = (score, window)
    return best


def _money_talk(text: str) -> tuple[int, int]:
    amounts = 0
    for m in _AMOUNT_RE.finditer(text):
        digits = re.sub(r"[^\d]", "", m.group(0).replace("O", "0").replace("Q", "0").replace("S", "0"))
        if m.group(0).endswith("G") or (digits and int(digits[:7]) >= 1000):
            amounts += 1
    low = text.lower()
    words = sum(1 for w in _BOXOFFICE_WORDS if w in low)
    return amounts, words


def _dateline(text: str) -> str | None:
    """A city dateline ("Chicago, Oct. 28.", "Los Angeles. May 11.") — not the issue's date line
    ("Wednesday, May 5") — or "Broadway"."""
    for m in _DATELINE_RE.finditer(text):
        city = m.group(1).split()[-1].lower()
        if max(fuzz.ratio(city, d) for d in _WEEKDAYS) < 70 and not m.group(1).isupper():
            return m.group(0)
    m = re.search(r"\bBroadway\b", text)
    return m.group(0) if m else None


def _head_token(head_norm: str, word: str, minimum: float) -> tuple[float, str]:
    best = (0.0, "")
    for w in head_norm.split():
        if abs(len(w) - len(word)) <= 2:
            s = fuzz.ratio(w, word)
            if s > best[0]:
                best = (s, w)
    return best if best[0] >= minimum else (0.0, "")


def classify_page(ocr_text: str, *, skip_legitimate: bool = True) -> PageDecision:
    """Keep or reject one page's OCR text (see the module docstring for the rules)."""
    text_norm = normalize_page_text(ocr_text or "")
    if not text_norm:
        return PageDecision(False, "empty_page", None, 0.0)
    head_norm = normalize_page_text(ocr_text[:HEAD_CHARS])
    running_norm = normalize_page_text(ocr_text[:RUNNING_HEAD_CHARS])
    pg_score, pg_window = find_picture_grosses(head_norm)
    if skip_legitimate and pg_score < PICTURE_GROSSES_MIN:
        legit = _head_token(running_norm, "legitimate", 85)
        if legit[0]:
            return PageDecision(False, "legitimate_page", legit[1], legit[0] / 100)
    est_score, est_window = find_estimates(text_norm)
    if est_score >= ESTIMATES_MIN:
        return PageDecision(True, "estimates_phrase", est_window, est_score / 100)
    if pg_score >= PICTURE_GROSSES_MIN:
        return PageDecision(True, "picture_grosses_title", pg_window, pg_score / 100)
    for section in OTHER_SECTIONS:
        s, window = _best(section, running_norm)
        if s >= 90 and (len(section) > 5 or f" {section} " in f" {running_norm} "):
            return PageDecision(False, "other_section_head", window, s / 100)
    amounts, words = _money_talk(ocr_text)
    dateline = _dateline(ocr_text)
    money = amounts >= MIN_AMOUNTS and words >= 1
    g_score, g_word = _head_token(running_norm, "grosses", GROSSES_TOKEN_MIN)
    if g_score and (dateline or money):
        return PageDecision(True, "grosses_head", g_word, g_score / 100)
    p_score, p_word = _head_token(running_norm, "pictures", PICTURES_TOKEN_MIN)
    if money and (p_score or dateline) and words >= 2:
        return PageDecision(True, "prose_grosses", dateline or p_word, 1.0)
    return PageDecision(False, "no_grosses_signal", None, 0.0)


def filter_row(item_id: str, page: int, ocr_text: str) -> dict:
    """The ``pd_page_filter`` row of one page (item, leaf, its OCR text): the per-item function
    the ``variety-filter`` stage maps over its pages."""
    d = classify_page(ocr_text)
    return {"item_id": item_id, "page": page, "keep": d.keep, "reason": d.reason, "phrase": d.phrase,
            "score": round(d.score, 4)}
