"""Matching CCE registrations to renewals (SPEC B2; seed 003 §2.2).

What: for each registration ⟨title, reg id, reg date⟩ find its renewal among ⟨title, original
reg id, original date, renewal id, renewal date⟩ rows, and say how sure that is:

* ``matched_exact``: normalised number **and** date agree. Numbers restart with each series
  (``LP1323`` of 1930 vs ``LP239`` of 1950; NYPL's ``A100018/1936-09-15`` vs ``/1953-07-03``),
  so the key is ``family:number:date`` (``extractors.cce.normalize.reg_key``; ``L81``/``LP81``
  share a family).
* ``matched_fuzzy_review``: no exact key, but some evidence of a renewal: the same number with a
  nearby date (OCR-damaged date), an OCR candidate reading of the number, or a similar title
  (rapidfuzz) whose renewal falls in the 28th year. These go to the curator review queue and
  are **never** taken as "not renewed".
* ``unmatched``: no evidence of a renewal at all.
* ``curator_renewed`` / ``curator_not_renewed``: a curator decision (reg id, reg date, renewal
  id or None, decision, by) overrides the automatic result and is honoured on every rebuild.

Why: a missed renewal wrongly calls a film public domain; the paper matched by number, then
reviewed unmatched titles by hand. Pure functions.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Iterable, Mapping, Sequence

from rapidfuzz import fuzz

from extractors.cce.normalize import CONFIDENT, normalize_reg_id, ranges_from, reg_key

DECISIONS = ("matched_exact", "matched_fuzzy_review", "unmatched", "curator_renewed", "curator_not_renewed")
#: rapidfuzz token_sort_ratio (0-100) at or above which a title counts as similar.
TITLE_THRESHOLD = 85.0
#: A nearby date under the same number: OCR damage rather than another series.
DATE_SLACK_DAYS = 62


@dataclass(frozen=True)
class Registration:
    title: str
    reg_id: str
    reg_date: str | None  # ISO


@dataclass(frozen=True)
class Renewal:
    title: str
    orig_reg_id: str
    orig_date: str | None  # ISO
    renewal_id: str
    renewal_date: str | None  # ISO


@dataclass(frozen=True)
class CuratorDecision:
    """A curator's verdict for one registration: ``decision`` is ``renewed`` or ``not_renewed``."""

    reg_id: str
    reg_date: str
    renewal_id: str | None
    decision: str
    by: str


@dataclass(frozen=True)
class MatchCandidate:
    renewal_id: str
    renewal_date: str | None
    orig_reg_id: str
    orig_date: str | None
    title: str
    score: float
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class MatchResult:
    registration: Registration
    decision: str
    renewal: MatchCandidate | None = None
    candidates: tuple[MatchCandidate, ...] = ()
    reasons: tuple[str, ...] = ()
    reg_number_confident: bool = True
    by: str | None = None


def _d(iso: str | None) -> date | None:
    try:
        return date.fromisoformat(iso) if iso else None
    except ValueError:
        return None


def _add_years(d: date, years: int) -> date:
    try:
        return d.replace(year=d.year + years)
    except ValueError:  # 29 Feb
        return d.replace(year=d.year + years, day=28)


def renewal_plausible(reg_date: str | None, renewal_date: str | None, *, slack_days: int = 31) -> bool:
    """A 1909-Act renewal is filed in the 28th year: between the 27th and 28th anniversaries of
    the registration (``slack_days`` either side for OCR'd dates). Renewals from 1978 on
    (CPRS) follow the same window for works of 1950-1963."""
    r, n = _d(reg_date), _d(renewal_date)
    if r is None or n is None:
        return False
    return _add_years(r, 27) - timedelta(days=slack_days) <= n <= _add_years(r, 28) + timedelta(days=slack_days)


def normalize_title(title: str) -> str:
    """Case-folded title without punctuation or a leading article, for similarity."""
    t = re.sub(r"[^\w\s]", " ", title.casefold())
    t = re.sub(r"^(?:the|a|an)\s+", "", t.strip())
    return re.sub(r"\s+", " ", t).strip()


def title_similarity(a: str, b: str) -> float:
    return float(fuzz.token_sort_ratio(normalize_title(a), normalize_title(b)))


def _canon(reg_id: str, ranges: Mapping[str, tuple[int, int]] | None = None
           ) -> tuple[str | None, tuple[str, ...]]:
    """Confident canonical id (or None) and candidate ids of a raw number. ``ranges`` (of all
    numbers in the run) can only *withdraw* confidence: an exact-looking number far above its
    series (a 7th digit crept in) becomes candidates; they never make a repair confident."""
    plain = normalize_reg_id(reg_id, classes=None)
    value = plain.value
    cands = [c.reg_id for c in plain.candidates if c.confidence >= 0.3]
    if ranges and value is not None:
        ranged = normalize_reg_id(reg_id, classes=None, ranges=ranges)
        if not ranged.confident:
            value = None
            cands += [c.reg_id for c in ranged.candidates if c.confidence >= 0.3]
    return value, tuple(dict.fromkeys(cands))


def _cand(n: Renewal, score: float, reasons: Iterable[str]) -> MatchCandidate:
    return MatchCandidate(n.renewal_id, n.renewal_date, n.orig_reg_id, n.orig_date, n.title,
                          round(score, 1), tuple(reasons))


def match_registrations(registrations: Sequence[Registration], renewals: Sequence[Renewal], *,
                        decisions: Sequence[CuratorDecision] = (),
                        title_threshold: float = TITLE_THRESHOLD) -> list[MatchResult]:
    """One :class:`MatchResult` per registration, in input order (see the module docstring)."""
    ranges = ranges_from([r.reg_id for r in registrations] + [n.orig_reg_id for n in renewals], classes=None)
    exact: dict[str, list[Renewal]] = {}
    by_number: dict[str, list[Renewal]] = {}
    by_candidate: dict[str, list[Renewal]] = {}
    for n in renewals:
        value, cands = _canon(n.orig_reg_id, ranges)
        if value:
            exact.setdefault(reg_key(value, n.orig_date), []).append(n)
            by_number.setdefault(reg_key(value, None), []).append(n)
        for c in cands:
            if c != value:
                by_candidate.setdefault(reg_key(c, n.orig_date), []).append(n)
    curated: dict[str, CuratorDecision] = {}
    for dec in decisions:
        value, _ = _canon(dec.reg_id)
        curated[reg_key(value or dec.reg_id, dec.reg_date)] = dec

    out: list[MatchResult] = []
    for reg in registrations:
        value, cands = _canon(reg.reg_id, ranges)
        confident = value is not None
        key = reg_key(value or reg.reg_id, reg.reg_date)
        dec = curated.get(key)
        if dec is not None:
            ren = next((n for n in renewals if dec.renewal_id and n.renewal_id == dec.renewal_id), None)
            renewal = _cand(ren, 100.0, ("curator",)) if ren else None
            decision = "curator_renewed" if dec.decision == "renewed" else "curator_not_renewed"
            out.append(MatchResult(reg, decision, renewal, (), (f"curator_decision:{dec.decision}",),
                                   confident, dec.by))
            continue
        hits = exact.get(key, []) if confident and reg.reg_date else []
        if hits:
            best = _cand(hits[0], 100.0, ("number_and_date",))
            out.append(MatchResult(reg, "matched_exact", best,
                                   tuple(_cand(h, 100.0, ("number_and_date",)) for h in hits),
                                   ("number_and_date_match",), True))
            continue
        review: list[MatchCandidate] = []
        notes: list[str] = [] if confident else ["reg_number_uncertain"]
        rd = _d(reg.reg_date)
        if confident:
            for n in by_number.get(reg_key(value, None), []):  # type: ignore[arg-type]
                od = _d(n.orig_date)
                if rd and od and abs((od - rd).days) <= DATE_SLACK_DAYS:
                    review.append(_cand(n, 90.0, ("same_number_nearby_date",)))
                else:
                    notes.append(f"number_collision_other_date:{n.orig_date}")
        for c in (cands if reg.reg_date else ()):
            for n in exact.get(reg_key(c, reg.reg_date), []) + by_candidate.get(reg_key(c, reg.reg_date), []):
                if c != value:
                    review.append(_cand(n, 80.0, ("ocr_candidate_number",)))
        if value and reg.reg_date:
            for n in by_candidate.get(key, []):
                review.append(_cand(n, 80.0, ("renewal_number_ocr_candidate",)))
        for n in renewals:
            sim = title_similarity(reg.title, n.title) if reg.title and n.title else 0.0
            if sim < title_threshold:
                continue
            plaus = renewal_plausible(reg.reg_date, n.renewal_date)
            same_year = bool(rd and _d(n.orig_date) and _d(n.orig_date).year == rd.year)  # type: ignore[union-attr]
            if plaus or same_year:
                why = ["title_similarity"] + (["renewal_in_28th_year"] if plaus else []) + (
                    ["same_registration_year"] if same_year else [])
                review.append(_cand(n, sim * (1.0 if plaus else 0.9), why))
        seen: dict[str, MatchCandidate] = {}
        for c in sorted(review, key=lambda c: -c.score):
            seen.setdefault(c.renewal_id, c)
        review = list(seen.values())
        if review:
            out.append(MatchResult(reg, "matched_fuzzy_review", review[0], tuple(review),
                                   tuple(dict.fromkeys(notes + ["review_queue"])), confident))
        else:
            out.append(MatchResult(reg, "unmatched", None, (), tuple(dict.fromkeys(notes + ["no_renewal_found"])),
                                   confident))
    return out


__all__ = ["CONFIDENT", "CuratorDecision", "DECISIONS", "MatchCandidate", "MatchResult", "Registration",
           "Renewal", "match_registrations", "normalize_title", "renewal_plausible", "title_similarity"]
