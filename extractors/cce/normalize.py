"""Normalisation of Catalog of Copyright Entries numbers and dates (SPEC B2, seed 003 §2.2/App. C).

What: registration numbers (class prefix + number: ``L18658``, ``LP81``, ``MP2627``, ``AI-4905``),
renewal numbers (``R58624`` in the printed volumes up to 1977, ``RE9390`` in the online records
from 1978) and ``DMonYY`` dates (``7Feb23`` -> ``1923-02-07``), all read from OCR.

Why: the registration <-> renewal match keys on number + date, and OCR damages both: the class
letter is read as a digit (``118333`` = L18333), ``M`` becomes ``H`` or is lost (``HP1009``,
``P1005``), ``1``/``l``/``I``/``|`` and ``0``/``O`` swap, a 7th digit creeps in (``R957076``),
``R`` is read as ``8``/``B``, months are damaged (``Ju169``, ``0ct69``, ``SDec77``, ``9DecT7``), the
``L`` of a two-letter class is read as ``1``/``I``/``|`` (``1P4412`` = LP4412).
Two-digit years are put in a century from the volume's context: the years its registrations
cover (a cumulative volume: 1912-1939), its year, and a floor (no motion picture before 1890).
A wrong silent guess could turn a renewed film into a "public domain" one, so number readings
return **candidates with a confidence**, best first, and every change is recorded as a reason
code (see :data:`REASONS`) for the audit trail. Nothing here reads files; all functions are pure.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date
from statistics import median
from typing import Iterable, Mapping, Sequence

MONTHS: tuple[str, ...] = ("Jan", "Feb", "Mar", "Apr", "May", "Jun",
                           "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_MONTH_NO = {m.lower(): i + 1 for i, m in enumerate(MONTHS)}

#: Motion-picture classes: L photoplays, M other motion pictures; P = published, U = unpublished
#: (the P/U reading is general knowledge, see realdata/cce/MANIFEST.md).
FILM_CLASSES: frozenset[str] = frozenset({"L", "LP", "LU", "M", "MP", "MU"})
#: Class symbols seen in CCE / CPRS data (films and other classes); ``AI-`` is ad interim.
KNOWN_CLASSES: frozenset[str] = FILM_CLASSES | frozenset({
    "A", "AA", "AI-", "AF", "AFO", "AO", "B", "BB", "C", "D", "DP", "DU", "E", "EF", "EP", "EU",
    "F", "G", "GP", "GU", "H", "I", "J", "K", "KK", "PA", "TX", "VA", "PRINT", "LABEL",
})
#: Class families that share one numbering run across the printed forms: the 1940-49 cumulative
#: volume prints ``L81`` where the 1973 renewal prints ``LP81`` (seed 003, Figures 3-4).
CLASS_FAMILY: dict[str, str] = {"L": "LP", "LP": "LP", "M": "MP", "MP": "MP"}

#: Confidence at or above which a single best candidate counts as read.
CONFIDENT = 0.75

#: No motion picture was registered before this year (the first film copyrights date from 1894,
#: the CCE itself from 1891): a two-digit year of a film record never resolves before it.
FILM_EARLIEST_YEAR = 1890
#: Years a date may lie outside a volume's coverage and still be read (a film published in
#: December 1939 registered in January 1940 is printed in the 1940-49 volume with its 1939 date).
COVERAGE_SLACK_YEARS = 1

REASONS: dict[str, str] = {
    "digits_rejoined": "spaces inside the number were removed (e.g. 'R45 2882')",
    "separators_removed": "hyphens/spaces of a CPRS-style number were removed",
    "leading_zeros_dropped": "zero padding of a CPRS number was dropped (RE0000123456)",
    "ocr_digit_confusion": "letters inside the digits were read as digits (O->0, l/I/|->1, S->5, B->8)",
    "ocr_class_letter_read_as_digit": "the class letter was read as a digit ('1' for L, '4' for M)",
    "ocr_class_letter_confusion": "the class letter was misread (H for M, I/| for L)",
    "ocr_class_letter_L_read_as_digit": "the L of a two-letter class was read as 1, I or | (1P4412 -> LP4412)",
    "ocr_class_letter_M_remnant": "the 1/I/| before a class letter taken as the remnant of an M (1P4412 -> "
                                  "MP4412): a weak alternative to L, kept so that a volume's ranges can decide",
    "class_letter_missing": "no class letter; the expected class was supplied",
    "class_letter_lost": "one letter of a two-letter class was lost (P1005 -> MP1005)",
    "lowercase_class": "the class letter was lower case",
    "class_not_expected": "the class is not one of the classes expected here",
    "unknown_class": "the class symbol is not a known CCE class",
    "extra_digit_removed": "one digit too many for the series; a digit was removed",
    "number_outside_series_range": "the number lies outside the range its series has here",
    "in_series_range": "a repaired reading falls inside its series' range here (confidence raised)",
    "ambiguous_reading": "no single confident reading: candidates go to review",
    "ocr_R_read_as_8": "the renewal letter R was read as 8, B or &",
    "renewal_number_implausible_for_year": "the renewal number does not fit the renewal year",
    "unreadable_number": "no registration/renewal number could be read",
    "ocr_day_repaired": "OCR damage in the day was repaired (S->5, O->0, l->1, g->9)",
    "ocr_month_repaired": "OCR damage in the month was repaired (0ct, Ju1, J3an, 10c t)",
    "ocr_month_fuzzy": "the month differs from a unique month by one OCR substitution",
    "ocr_month_stray_char": "a stray character inside the month was dropped (J3an, Novw)",
    "ocr_year_repaired": "OCR damage in the year was repaired (T->7, '/'->7, l->1, O->0)",
    "ocr_year_extra_char": "the year had a stray extra character, removed",
    "two_digit_year_19xx": "two-digit year read as 19YY",
    "century_from_context": "century chosen from the volume/series year",
    "century_from_coverage": "century chosen so that the year falls in the years the volume covers",
    "century_from_floor": "the earliest century not before the floor year (no motion picture before 1890)",
    "year_outside_volume_coverage": "no century puts the two-digit year inside the years the volume covers "
                                    "(read when within a year of them, else not read)",
    "unreadable_date": "no DMonYY date could be read",
    "invalid_date": "the day does not exist in that month/year",
}

_DIGIT_FIX = {"O": "0", "o": "0", "l": "1", "I": "1", "|": "1", "i": "1", "S": "5", "B": "8"}
_PREFIX_FIX = {"I": "L", "|": "L", "H": "M", "N": "M"}
_LEAD_DIGIT_CLASS = {"1": "L", "4": "M"}
#: Glyphs an OCR engine prints for the L of ``LP``/``LU`` (``l`` is read as the letter itself).
_L_GLYPHS = frozenset("1I|")
#: Confidences of a misread first letter of a two-letter class: L for 1/I/| is the common OCR
#: confusion (a strong signal: confident on its own); M for what is left of a broken M (a narrow
#: stroke) is possible but rare, so it stays a candidate a volume's ranges can promote, never a
#: confident reading alone; M read as 4 (``4P``) is less common than L read as 1: a candidate
#: below :data:`CONFIDENT`.
_LEAD_GLYPH_CONF = {"L": 0.8, "M_remnant": 0.3, "M": 0.5}


@dataclass(frozen=True)
class NumberCandidate:
    """One reading of an OCR'd number: ``reg_id`` canonical (prefix + number, no padding)."""

    reg_id: str
    prefix: str
    number: int
    confidence: float
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class NumberReading:
    """All candidate readings of one raw number, best first (empty + ``reason`` when unreadable)."""

    raw: str
    candidates: tuple[NumberCandidate, ...]
    reason: str | None = None

    @property
    def best(self) -> NumberCandidate | None:
        return self.candidates[0] if self.candidates else None

    @property
    def confident(self) -> bool:
        """One best candidate at :data:`CONFIDENT` or above, clear of the runner-up by 0.1."""
        if not self.candidates or self.candidates[0].confidence < CONFIDENT:
            return False
        return len(self.candidates) == 1 or self.candidates[1].confidence <= self.candidates[0].confidence - 0.1

    @property
    def value(self) -> str | None:
        """The canonical id when :attr:`confident`, else ``None`` (never a silent guess)."""
        return self.best.reg_id if self.confident and self.best else None

    @property
    def reasons(self) -> tuple[str, ...]:
        if self.best is None:
            return (self.reason or "unreadable_number",)
        extra = () if self.confident else ("ambiguous_reading",)
        return self.best.reasons + extra


@dataclass(frozen=True)
class DateReading:
    """A ``DMonYY`` date read as ISO (``None`` + reason when unreadable), with what was repaired."""

    raw: str
    iso: str | None
    reasons: tuple[str, ...] = field(default_factory=tuple)

    @property
    def date(self) -> date | None:
        return date.fromisoformat(self.iso) if self.iso else None


# ---------------------------------------------------------------------------------------------
# registration numbers

def class_family(prefix: str) -> str:
    """The numbering family of a class (L and LP share one; M and MP share one; others: itself)."""
    return CLASS_FAMILY.get(prefix.upper(), prefix.upper())


def split_reg_id(reg_id: str) -> tuple[str, int] | None:
    """``'LP81'`` -> ``('LP', 81)``; ``'AI-4905'`` -> ``('AI-', 4905)``; ``'A5-4459'`` -> ``('A5-', 4459)``
    (a class symbol ending in a digit); ``None`` if not canonical."""
    m = re.fullmatch(r"([A-Z]+(?:\d-|-)?)(\d+)", reg_id.strip().upper())
    return (m.group(1), int(m.group(2))) if m else None


def reg_key(reg_id: str, reg_date: str | date | None) -> str:
    """Match key ``FAMILY:NUMBER:ISO-DATE``: numbers repeat across series, so the date is part of it.

    ``L81``/``LP81`` share a family; a non-canonical id is keyed by its upper-cased text.
    """
    parts = split_reg_id(reg_id)
    body = f"{class_family(parts[0])}:{parts[1]}" if parts else reg_id.strip().upper()
    d = reg_date.isoformat() if isinstance(reg_date, date) else (reg_date or "")
    return f"{body}:{d}"


def _rejoin_digits(s: str, reasons: list[str]) -> str:
    """``s`` without the spaces inside its digit runs ('R45 2882' -> 'R452882'; reason recorded)."""
    if re.search(r"\d\s+\d", s):
        reasons.append("digits_rejoined")
        return re.sub(r"(?<=\d)\s+(?=\d)", "", s)
    return s


def _fix_digits(s: str) -> tuple[str, bool]:
    out = "".join(_DIGIT_FIX.get(c, c) for c in s)
    return out, out != s


def _rank(cands: list[NumberCandidate]) -> tuple[NumberCandidate, ...]:
    best: dict[str, NumberCandidate] = {}
    for c in cands:
        if c.reg_id not in best or c.confidence > best[c.reg_id].confidence:
            best[c.reg_id] = c
    order = {rid: i for i, rid in enumerate(best)}
    return tuple(sorted(best.values(), key=lambda c: (-c.confidence, order[c.reg_id])))


def _cand(prefix: str, digits: str, conf: float, reasons: Iterable[str]) -> NumberCandidate | None:
    if not digits.isdigit():
        return None
    n = int(digits)
    return NumberCandidate(f"{prefix}{n}", prefix, n, round(conf, 3), tuple(dict.fromkeys(reasons)))


def _deletions(digits: str) -> list[str]:
    return list(dict.fromkeys(digits[:i] + digits[i + 1:] for i in range(len(digits))))


def _apply_ranges(cands: list[NumberCandidate], ranges: Mapping[str, tuple[int, int]] | None
                  ) -> list[NumberCandidate]:
    """Rank candidates against their series' range in this volume.

    A *repaired* reading inside the range gains 0.15 (``in_series_range``), outside it keeps 0.3 of
    its confidence. An *exact* reading is only doubted when it is more than five times the top of
    its range (a digit crept in: ``L114352`` among L10374..L11753); numbering restarts make low
    exact numbers (``LP20``) normal. A doubted number with too many digits also yields the
    single-digit deletions that land inside the range (``extra_digit_removed``).
    """
    if not ranges:
        return cands
    out: list[NumberCandidate] = []
    for c in cands:
        rng = ranges.get(c.prefix)
        inside = rng is not None and rng[0] <= c.number <= rng[1]
        if rng is None or inside or (not c.reasons and c.number <= 5 * rng[1]):
            out.append(c if not (inside and c.reasons) else NumberCandidate(
                c.reg_id, c.prefix, c.number, round(min(1.0, c.confidence + 0.15), 3),
                c.reasons + ("in_series_range",)))
            continue
        out.append(NumberCandidate(c.reg_id, c.prefix, c.number, round(c.confidence * 0.3, 3),
                                   c.reasons + ("number_outside_series_range",)))
        digits = str(c.number)
        if len(digits) > len(str(rng[1])):
            hits = [d for d in _deletions(digits) if d.isdigit() and rng[0] <= int(d) <= rng[1]]
            conf = c.confidence * (0.7 if len(hits) == 1 else 0.45)
            for d in hits:
                cand = _cand(c.prefix, d, conf, c.reasons + ("extra_digit_removed",))
                if cand:
                    out.append(cand)
    return out


def _misread_first_letter(prefix_raw: str, digits: str, reasons: list[str], accept: set[str]
                          ) -> list[NumberCandidate]:
    """Candidates for a two-letter class whose first letter was read as a digit-like glyph:
    ``1P``/``IP``/``|P`` (``U`` likewise) -> ``LP`` (strong) or ``MP`` (weak), ``4P`` -> ``MP``."""
    if len(prefix_raw) != 2 or not prefix_raw[1].isalpha():
        return []
    glyph, second = prefix_raw[0], prefix_raw[1].upper()
    out: list[NumberCandidate | None] = []
    if glyph in _L_GLYPHS:
        if "L" + second in accept:
            out.append(_cand("L" + second, digits, _LEAD_GLYPH_CONF["L"],
                             reasons + ["ocr_class_letter_L_read_as_digit"]))
        if "M" + second in accept:
            out.append(_cand("M" + second, digits, _LEAD_GLYPH_CONF["M_remnant"],
                             reasons + ["ocr_class_letter_M_remnant"]))
    elif glyph in _LEAD_DIGIT_CLASS and _LEAD_DIGIT_CLASS[glyph] + second in accept:
        cls = _LEAD_DIGIT_CLASS[glyph] + second
        out.append(_cand(cls, digits, _LEAD_GLYPH_CONF[cls[0]], reasons + ["ocr_class_letter_read_as_digit"]))
    return [c for c in out if c]


def _digit_class(raw: str, prefix: str, digits_raw: str, accept: set[str], reasons: list[str]) -> NumberReading:
    """A class symbol ending in a digit (``A5-4459``: letter class + digit + hyphen): exact when its
    letter class is accepted here, else ``class_not_expected`` (never read as a film number)."""
    digits, fixed = _fix_digits(digits_raw)
    if fixed:
        reasons.append("ocr_digit_confusion")
    if not digits.isdigit():
        return NumberReading(raw, (), "unreadable_number")
    ok = prefix.rstrip("-").rstrip("0123456789") in accept
    cand = _cand(prefix, digits, 1.0 if ok else 0.5, reasons + ([] if ok else ["class_not_expected"]))
    return NumberReading(raw, (cand,) if cand else (), None if cand else "unreadable_number")


def normalize_reg_id(raw: str, *, classes: Iterable[str] | None = FILM_CLASSES,
                     ranges: Mapping[str, tuple[int, int]] | None = None) -> NumberReading:
    """Read an OCR'd registration number into ranked candidates.

    ``classes``: the classes expected here (default: motion-picture classes); ``None`` accepts any
    known class. ``ranges``: per-class ``(lo, hi)`` number ranges of the series in this volume (see
    ``extractors.cce.parse.series_ranges``); they rank candidates and drive the extra-digit repair.
    The *order* of ``ranges`` (or of ``classes``) gives the class tried first for a bare number.
    A two-letter class whose L was read as ``1``/``I``/``|`` (``1P4412``) reads as ``LP4412`` at 0.8
    (``ocr_class_letter_L_read_as_digit``), with ``MP4412`` at 0.3 (``ocr_class_letter_M_remnant``)
    beside it: confident alone, while a volume whose MP range holds the number (and LP's does not)
    turns it into an unconfident reading for review.
    """
    expected = [c.upper() for c in (ranges.keys() if ranges else (classes or ()))]
    if not expected and classes:
        expected = sorted(c.upper() for c in classes)
    accept = {c.upper() for c in classes} if classes is not None else set(KNOWN_CLASSES)
    s = (raw or "").strip().strip(".,;:")
    reasons: list[str] = []
    s = _rejoin_digits(s, reasons)
    dm = re.fullmatch(r"([A-Za-z]{1,2})(\d)-\s?(\d[0-9OolIi|SB]*)", s)
    if dm and dm.group(1).upper() in KNOWN_CLASSES:  # a class symbol ending in a digit: A5-4459
        return _digit_class(raw, dm.group(1).upper() + dm.group(2) + "-", dm.group(3), accept, reasons)
    m = re.fullmatch(r"([A-Za-z|]*|[14][A-Za-z])(-?)\s?(\d[0-9OolIi|SB]*)", s)
    if not m:
        return NumberReading(raw, (), "unreadable_number")
    prefix_raw, hyphen, digits_raw = m.group(1), m.group(2), m.group(3)
    # letters that look like digits at the start of the number belong to the number
    digits, fixed = _fix_digits(digits_raw)
    if fixed:
        reasons.append("ocr_digit_confusion")
    if not digits.isdigit():
        return NumberReading(raw, (), "unreadable_number")
    cands: list[NumberCandidate] = []
    prefix = prefix_raw.upper() + hyphen
    if prefix_raw and prefix_raw != prefix_raw.upper():
        reasons.append("lowercase_class")
    if prefix == "AI":
        prefix = "AI-"
    misread = [] if prefix in accept else _misread_first_letter(prefix_raw, digits, reasons, accept)
    if misread:
        cands += misread
    elif prefix:
        if prefix in accept:
            cands.append(_cand(prefix, digits, 1.0, reasons))  # type: ignore[arg-type]
        elif prefix in KNOWN_CLASSES and prefix not in _PREFIX_FIX and not (
                len(prefix) == 1 and any(e.endswith(prefix) and len(e) == 2 for e in expected)):
            cands.append(_cand(prefix, digits, 0.5, reasons + ["class_not_expected"]))  # type: ignore[arg-type]
        else:
            fixed_prefix = "".join(_PREFIX_FIX.get(ch, ch) for ch in prefix)
            if fixed_prefix != prefix and fixed_prefix in accept:
                cands.append(_cand(fixed_prefix, digits, 0.8, reasons + ["ocr_class_letter_confusion"]))  # type: ignore[arg-type]
            for e in expected:  # a letter of a two-letter class lost: P1005 -> MP1005 / LP1005
                if len(e) == 2 and e.endswith(prefix) and e in accept:
                    cands.append(_cand(e, digits, 0.55, reasons + ["class_letter_lost"]))  # type: ignore[arg-type]
            if not cands:
                cands.append(_cand(prefix, digits, 0.3, reasons + ["unknown_class"]))  # type: ignore[arg-type]
    else:
        lead = digits_raw[0]
        cls = _LEAD_DIGIT_CLASS.get(digits[0]) if lead.isdigit() else None
        if cls is None and lead in "lI|":
            cls = "L"
        if cls and len(digits) > 1:
            # with a volume context the context's classes of that family; without, the base class
            family = [e for e in expected if e.startswith(cls) and e in accept
                      and e not in ("LU", "MU")] if ranges else []
            conf = 0.7 if cls == "L" else 0.45
            for e in family or ([cls] if cls in accept else []):
                cands.append(_cand(e, digits[1:], conf, reasons + ["ocr_class_letter_read_as_digit"]))  # type: ignore[arg-type]
        for e in (expected if ranges else [c for c in ("L", "M") if c in accept]):
            if e in accept and e not in ("LU", "MU"):
                cands.append(_cand(e, digits, 0.6 if ranges else 0.4, reasons + ["class_letter_missing"]))  # type: ignore[arg-type]
        if not cands:
            return NumberReading(raw, (), "unreadable_number")
    ranked = _rank([c for c in _apply_ranges([c for c in cands if c], ranges) if c])
    return NumberReading(raw, ranked, None if ranked else "unreadable_number")


# ---------------------------------------------------------------------------------------------
# renewal numbers

#: (decimal year, approximate renewal number issued then): read off the real records in
#: realdata/cce (1950 volume R57078..R68902, R151558 on 10Jun55, R211372 on 26Mar58, the 1969
#: volume R452013..R475009, R542408 on 3Jan73, the 1977 volume R668920..R682675).
RENEWAL_ANCHORS: tuple[tuple[float, int], ...] = (
    (1950.1, 57000), (1950.5, 66000), (1955.45, 151558), (1958.2, 211372),
    (1969.0, 452000), (1969.8, 475000), (1973.0, 542408), (1977.6, 669963), (1978.0, 684000),
)


def _estimate(year: float) -> float:
    a = RENEWAL_ANCHORS
    if year <= a[0][0]:
        (x0, y0), (x1, y1) = a[0], a[1]
    elif year >= a[-1][0]:
        (x0, y0), (x1, y1) = a[-2], a[-1]
    else:
        i = next(i for i in range(1, len(a)) if a[i][0] >= year)
        (x0, y0), (x1, y1) = a[i - 1], a[i]
    return y0 + (y1 - y0) * (year - x0) / (x1 - x0)


def renewal_number_window(year: int) -> tuple[int, int] | None:
    """Plausible ``R`` numbers for renewals made in ``year`` (1950-1977), else ``None``."""
    if not 1950 <= year <= 1977:
        return None
    return int(_estimate(year) * 0.9), int(_estimate(year + 1) * 1.1)


def normalize_renewal_id(raw: str, *, year: int | None = None) -> NumberReading:
    """Read an OCR'd renewal number (``R58624``, ``RE9390``, ``RE-123-456``, ``8670686``).

    ``year``: the renewal year (or the volume year), which checks an ``R`` number against
    :func:`renewal_number_window` and drives the extra-digit repair (``R957076`` -> ``R57076``).
    """
    s = (raw or "").strip().strip(".,;:")
    reasons: list[str] = []
    m = re.fullmatch(r"R\s*E\s*[-\s]?([\dOolI|\s-]+)", s, flags=re.I)
    if m:
        body = m.group(1)
        if re.search(r"[\s-]", body.strip()):
            reasons.append("separators_removed")
        digits, fixed = _fix_digits(re.sub(r"[\s-]", "", body))
        if fixed:
            reasons.append("ocr_digit_confusion")
        if not digits.isdigit():
            return NumberReading(raw, (), "unreadable_number")
        if len(digits) > 1 and digits.startswith("0"):
            reasons.append("leading_zeros_dropped")
        cand = _cand("RE", digits, 1.0, reasons)
        return NumberReading(raw, (cand,) if cand else (), None if cand else "unreadable_number")
    s = _rejoin_digits(s, reasons)
    m = re.fullmatch(r"([R8B&])\s?([\dOolI|SB]{3,7})", s)
    if not m:
        return NumberReading(raw, (), "unreadable_number")
    letter, body = m.group(1), m.group(2)
    digits, fixed = _fix_digits(body)
    if fixed:
        reasons.append("ocr_digit_confusion")
    if not digits.isdigit():
        return NumberReading(raw, (), "unreadable_number")
    conf = 1.0
    if letter != "R":
        reasons.append("ocr_R_read_as_8")
        conf = 0.8
    cands = [_cand("R", digits, conf, reasons)]
    window = renewal_number_window(year) if year else None
    if window and not window[0] <= int(digits) <= window[1]:
        cands = [_cand("R", digits, conf * 0.3, reasons + ["renewal_number_implausible_for_year"])]
        if len(digits) > len(str(window[1])):
            hits = [d for d in _deletions(digits) if window[0] <= int(d) <= window[1]]
            for d in hits:
                cands.append(_cand("R", d, conf * (0.7 if len(hits) == 1 else 0.45),
                                   reasons + ["extra_digit_removed"]))
    ranked = _rank([c for c in cands if c])
    return NumberReading(raw, ranked, None if ranked else "unreadable_number")


# ---------------------------------------------------------------------------------------------
# dates

_DAY_FIX = {"O": "0", "o": "0", "l": "1", "I": "1", "|": "1", "i": "1", "S": "5", "s": "5", "g": "9", "B": "8"}
_MON_FIX = {"0": "o", "1": "l", "|": "l", "5": "s", "¢": "c", "8": "b"}
_YEAR_FIX = {"T": "7", "/": "7", "l": "1", "I": "1", "|": "1", "O": "0", "o": "0", "S": "5", "B": "8"}
_DATE_TOKEN = re.compile(
    r"(?<![A-Za-z0-9])[0-9OolI|Sg]{1,2}\s?[A-Za-z0-9¢|]{2,3}[A-Za-z0-9¢|/ ]?[0-9TlIO|/Sw]{1,4}(?![A-Za-z0-9])")


def _month(token: str) -> tuple[int, str | None] | None:
    """Month number and repair reason for a 3-4 character month token (``None``: not a month)."""
    t = token.replace(" ", "")
    low = t.lower()
    if low in _MONTH_NO:
        return _MONTH_NO[low], None
    mapped = "".join(_MON_FIX.get(c, c) for c in low)
    if len(mapped) == 4:  # one stray character: J3an, Novw
        for i in range(1, 4):  # position 0 would be a digit of the day
            cut = mapped[:i] + mapped[i + 1:]
            if cut in _MONTH_NO:
                return _MONTH_NO[cut], "ocr_month_stray_char"
        return None
    if len(mapped) != 3:
        return None
    if mapped in _MONTH_NO:
        return _MONTH_NO[mapped], "ocr_month_repaired"
    # one non-letter standing for one letter (3ul -> Jul); the letters must all agree
    near = [m for m in _MONTH_NO
            if sum(a != b for a, b in zip(m, mapped)) == 1
            and all(a == b or not b.isalpha() for a, b in zip(m, mapped))]
    if len(near) == 1:
        return _MONTH_NO[near[0]], "ocr_month_fuzzy"
    return None


def resolve_two_digit_year(yy: int, *, context_year: int | None = None,
                           coverage: tuple[int, int] | None = None,
                           min_year: int | None = None) -> tuple[int | None, tuple[str, ...]]:
    """The four-digit year of a printed two-digit year, with its reason codes.

    ``coverage``: the ``(first, last)`` years the volume's registrations cover (a cumulative
    volume: ``(1912, 1939)``); the year is put in the century that lands inside it, or within
    :data:`COVERAGE_SLACK_YEARS` of it (flagged ``year_outside_volume_coverage``); a year that no
    century brings near the coverage is not read (``None``), never pushed into another century.
    Without a coverage, ``context_year`` (the volume year) puts it in the latest century not more
    than 5 years after that year; without either, 19YY. ``min_year`` (motion pictures:
    :data:`FILM_EARLIEST_YEAR`) excludes centuries that would put the year before it.
    """
    options = [c + yy for c in (1800, 1900, 2000) if min_year is None or c + yy >= min_year]

    def why(y: int, default: str) -> str:
        return "two_digit_year_19xx" if 1900 <= y < 2000 else default

    if coverage is not None:
        lo, hi = min(coverage), max(coverage)
        inside = [y for y in options if lo <= y <= hi]
        if inside:
            if context_year is not None and len(inside) > 1:  # a coverage wider than a century
                inside = [y for y in inside if y <= context_year + 5] or inside
            return inside[-1], ("century_from_coverage",)
        near = min(options, key=lambda y: max(lo - y, y - hi), default=None)
        if near is not None and max(lo - near, near - hi) <= COVERAGE_SLACK_YEARS:
            return near, ("century_from_coverage", "year_outside_volume_coverage")
        return None, ("year_outside_volume_coverage",)
    if context_year is None:
        return 1900 + yy, ("two_digit_year_19xx",)  # 19YY is never below a floor of 1890..1899
    fits = [y for y in options if y <= context_year + 5]
    if fits:
        return fits[-1], (why(fits[-1], "century_from_context"),)
    return options[0], (why(options[0], "century_from_context"), "century_from_floor")


_COSTLY = {"ocr_month_stray_char": 3, "ocr_month_fuzzy": 3, "ocr_year_extra_char": 2}


def _date_cost(r: DateReading) -> int:
    return sum(_COSTLY.get(x, 1) for x in r.reasons)


def parse_cce_date(raw: str, *, context_year: int | None = None, coverage: tuple[int, int] | None = None,
                   min_year: int | None = None) -> DateReading:
    """``'7Feb23'`` -> ``1923-02-07``; also OCR-damaged forms and ISO dates.

    ``context_year``: the volume year (or the renewal year); ``coverage``: the years a (cumulative)
    volume's registrations cover; ``min_year``: the earliest possible year (motion pictures:
    :data:`FILM_EARLIEST_YEAR`). A two-digit year is resolved by :func:`resolve_two_digit_year`
    (default 19YY); one no century puts inside the coverage gives no date
    (``year_outside_volume_coverage``). A three-character year (``3l1``) keeps the reading inside
    the coverage when given, else the one closest to ``context_year - 28`` (a renewal volume
    renews 28-year-old works), else drops a doubled character.
    """
    s = (raw or "").strip().strip(".,;:-~°")
    if re.fullmatch(r"\d{4}-\d{2}-\d{2}", s):
        try:
            return DateReading(raw, date.fromisoformat(s).isoformat(), ())
        except ValueError:
            return DateReading(raw, None, ("invalid_date",))
    compact = s.replace(" ", "") if len(s) <= 12 else s
    best: DateReading | None = None
    for i in (1, 2):
        for j in (i + 3, i + 4):
            day_raw, mon_raw, year_raw = compact[:i], compact[i:j], compact[j:]
            if not day_raw or len(mon_raw) < 3 or not year_raw:
                continue
            reasons: list[str] = []
            day_s = "".join(_DAY_FIX.get(c, c) for c in day_raw)
            if not day_s.isdigit():
                continue
            if day_s != day_raw:
                reasons.append("ocr_day_repaired")
            mon = _month(mon_raw)
            if mon is None:
                continue
            if mon[1]:
                reasons.append(mon[1])
            y = year_raw.replace("w", "")
            y_fixed = "".join(_YEAR_FIX.get(c, c) for c in y)
            if not y_fixed.isdigit():
                continue
            if y_fixed != year_raw:
                reasons.append("ocr_year_repaired")
            year: int | None
            why: tuple[str, ...] = ()
            if len(y_fixed) == 4:
                year = int(y_fixed)
            elif len(y_fixed) == 2:
                year, why = resolve_two_digit_year(int(y_fixed), context_year=context_year,
                                                   coverage=coverage, min_year=min_year)
                reasons += why
            elif len(y_fixed) == 3:
                options = list(dict.fromkeys(y_fixed[:k] + y_fixed[k + 1:] for k in range(3)))
                dup = [k for k in range(2) if y_fixed[k] == y_fixed[k + 1]]
                doubled = y_fixed[:dup[0]] + y_fixed[dup[0] + 1:] if dup else y_fixed[:2]
                fitting = [o for o in options if coverage is not None and "year_outside_volume_coverage" not in
                           resolve_two_digit_year(int(o), context_year=context_year, coverage=coverage,
                                                  min_year=min_year)[1]]
                if fitting:
                    pick = doubled if doubled in fitting else fitting[0]
                elif context_year is not None:
                    target = (context_year - 28) % 100
                    pick = min(options, key=lambda o: abs(int(o) - target))
                else:
                    pick = doubled
                year, why = resolve_two_digit_year(int(pick), context_year=context_year,
                                                   coverage=coverage, min_year=min_year)
                reasons += ["ocr_year_extra_char", *why]
            else:
                continue
            if year is None:
                if best is None:
                    best = DateReading(raw, None, tuple(why))
                continue
            try:
                iso = date(year, mon[0], int(day_s)).isoformat()
            except ValueError:
                if best is None:
                    best = DateReading(raw, None, ("invalid_date",))
                continue
            cand = DateReading(raw, iso, tuple(dict.fromkeys(reasons)))
            if best is None or best.iso is None or _date_cost(cand) < _date_cost(best):
                best = cand
    return best or DateReading(raw, None, ("unreadable_date",))


def find_dates(text: str, *, context_year: int | None = None, coverage: tuple[int, int] | None = None,
               min_year: int | None = None) -> list[tuple[int, int, DateReading]]:
    """All readable ``DMonYY`` dates in ``text``: ``(start, end, reading)`` in order."""
    out = []
    for m in _DATE_TOKEN.finditer(text):
        r = parse_cce_date(m.group(0), context_year=context_year, coverage=coverage, min_year=min_year)
        if r.iso:
            out.append((m.start(), m.end(), r))
    return out


def normalize_basis(raw: str) -> tuple[str | None, tuple[str, ...]]:
    """Claimant basis code (``PWH``, ``PCW``, ``A``, ``C``, ``W``, ``E``, ``NK``, ``P``, ``M``)
    from an OCR'd parenthesis content (``PwH``, ``PW#H``, ``P&H``, ``EWH``, ``eH``, ``Pw``).

    Ties among one-edit readings go to ``PWH``, the basis of nearly every motion-picture renewal;
    such a reading carries ``basis_ocr_repaired``. Unreadable -> ``(None, ('basis_unreadable',))``.
    """
    known = ("PWH", "PCW", "NK", "A", "C", "W", "E", "P", "M")
    t = re.sub(r"[^A-Za-z]", "", raw or "").upper()
    if t in known:
        return t, (() if t == (raw or "").strip() else ("basis_ocr_repaired",))
    if not t:
        return None, ("basis_unreadable",)

    from rapidfuzz.distance import Levenshtein

    near = [k for k in known if Levenshtein.distance(t, k) == 1 and len(k) > 1]
    if near:
        return ("PWH" if "PWH" in near else near[0]), ("basis_ocr_repaired",)
    return None, ("basis_unreadable",)


def ranges_from(ids: Iterable[str], *, classes: Iterable[str] | None = FILM_CLASSES,
                min_count: int = 3) -> dict[str, tuple[int, int]]:
    """Per-class ``(lo, hi)`` number ranges of a volume's exactly-read ids (``L18658``...): the
    context :func:`normalize_reg_id` ranks candidates with. Robust to OCR outliers: only classes
    in ``classes`` (``None``: any known class) seen ``min_count`` times or more, and only numbers
    within a factor 3 of the class median count; the range is padded by 10% of its width (at
    least 2% of its top). Classes come out most frequent first."""
    accept = {c.upper() for c in classes} if classes is not None else set(KNOWN_CLASSES)
    seen: dict[str, list[int]] = {}
    for rid in ids:
        parts = split_reg_id(rid)
        if parts and parts[0] in accept:
            seen.setdefault(parts[0], []).append(parts[1])
    seen = {k: v for k, v in seen.items() if len(v) >= min_count}
    out: dict[str, tuple[int, int]] = {}
    for prefix, nums in sorted(seen.items(), key=lambda kv: -len(kv[1])):
        med = median(nums)
        core = [n for n in nums if med / 3 <= n <= med * 3] or nums
        lo, hi = min(core), max(core)
        pad = max(int((hi - lo) * 0.1), int(hi * 0.02), 1)
        out[prefix] = (max(lo - pad, 1), hi + pad)
    return out


def expected_classes(ranges: Mapping[str, tuple[int, int]] | None) -> Sequence[str]:
    """The classes of a ranges mapping, most frequent first."""
    return tuple(ranges or ())
