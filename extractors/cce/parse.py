"""Parsing Catalog of Copyright Entries text and exports into renewal / registration records.

What (SPEC B2, seed 003 §2.2 and Appendix C):

* **Renewal entries** in both printed layouts (realdata/cce/MANIFEST.md):
  1950 (commas, renewal number *before* its date, claimant last)::

      TITLE, a photoplay in ten reels, by X. © 7Feb23, L18658. R58624, 17Feb50, Y (PWH)

  1954 on (semicolons, claimant first, renewal date *before* the number)::

      TITLE, a photoplay in seven reels by X. © 17Aug27; L24293. Y (PWH); 10Jun55; R151558.

  with several registrations per entry (``© 31May22, B528574; 24Aug22, B548911 ...``), renewal
  lists and ranges (``R61801, R61806``; ``R63718-63725``) and ad-interim notes
  (``(pub. abroad 15Feb23, AI-4905)``). :func:`parse_renewal_text` splits OCR text into entries.
* **Registration entries** of the registration volumes / cumulative catalogs::

      THE BELLS OF ST. MARY'S. Rainbow Productions. 126 min., sd., b&w, 35 mm.
      © Rainbow Productions, inc.; 6Dec45; LP81.

  split at each closing ``DATE; NUMBER.`` (:func:`split_registration_entries`), so a title that
  ends in a year (``BROADWAY SERENADE OF 1934.``) stays whole. Two-digit years of a cumulative
  volume are read inside the years it covers (:func:`volume_coverage`: ``1912-1939``).

* **Archive-Watch records** (``{t, y, reg, r, c, vol}``, realdata) re-read with the same
  normalisation, the volume's own numbers giving each number its series range.
* **CPRS / NYPL exports** (:func:`read_renewal_export`), see its docstring for the layout.

Why: the renewal match keys on number + date, so every number and date goes through
``extractors.cce.normalize`` with its reason codes, and nothing is silently skipped: every entry
either yields records or an :class:`Unparsed` with a reason code (:data:`UNPARSED_REASONS`).
Pure functions; the export reader only reads the file it is given.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

from extractors.cce.entries import gap_flags, read_claimants, split_claimant_first
from extractors.cce.normalize import (
    FILM_CLASSES, FILM_EARLIEST_YEAR, NumberCandidate, NumberReading, normalize_basis, normalize_reg_id,
    normalize_renewal_id, parse_cce_date, ranges_from,
)

UNPARSED_REASONS: dict[str, str] = {
    "no_copyright_date": "no © marker followed by a readable date: not an entry (or © lost to OCR)",
    "orphan_renewal_fragment": "a renewal date/number with no entry around it (page/column break)",
    "no_renewal_number": "an entry with a registration but no renewal part (truncated by OCR)",
    "layout_not_recognised": "a renewal number is present but neither printed layout fits",
    "no_registration": "no registration date + number pair could be read",
    "renewal_count_mismatch": "several registrations and renewals whose counts do not pair up",
    "renewal_range_too_long": "a renewal range over 500 numbers (an OCR-damaged bound)",
    "renewal_date_unreadable": "the renewal date could not be read",
    "orig_reg_uncertain": "the original registration number has no single confident reading",
    "renewal_id_uncertain": "the renewal number has no single confident reading",
    "title_not_read": "the title slot holds a credit, a description or a fragment, not a title",
    "missing_field": "an export row lacks a required column value",
}

_COPYRIGHT = re.compile(r"©|\((?:c|C)\)")
_OCR_COPYRIGHT = re.compile(r"(?:(?<![\w])@|(?<![\w.])6G?)\s*(?=[0-9OolIS]{1,2}\s?[A-Za-z0-9]{3}[0-9TlIO/]{1,3}[;,.\s])")
_DESCRIPTION = re.compile(
    r"(?:[,;]|(?<=[?!.]))\s+(?:an?|An?|2)\s+(?:photoplay|motion picture|comedy|drama|play|cartoon|"
    r"serial|newsreel|[a-z]+ in (?:a |\w+ )(?:prologue|reels?|acts?|parts?))\b")
_BY = re.compile(r"[,;]?\s+by\s+")
_ABBREV = {"st", "mr", "mrs", "dr", "jr", "sr", "co", "inc", "no", "vol", "pt", "ft", "mt", "bros"}
_CREDIT = re.compile(r"^(?:by\s+)?[\w.,&' -]*\b(?:Inc|Corp|Corporation|Company|Productions?|Pictures|Ltd|Co)\.?$",
                     re.I)
_PUB_ABROAD = re.compile(r"\(\s*pub\.\s*abroad\s+([^)]*)\)", re.I)


@dataclass(frozen=True)
class RenewalRecord:
    """One (registration, renewal) pair. Ids are canonical and ``None`` unless confidently read;
    the raw strings, candidates and reason codes (``field:reason``) keep the audit trail."""

    title: str
    orig_reg_id: str | None
    orig_date: str | None
    renewal_id: str | None
    renewal_date: str | None
    claimant: str | None
    basis: str | None
    layout: str
    raw: str = ""
    orig_reg_raw: str = ""
    renewal_raw: str = ""
    orig_year: int | None = None
    description: str = ""
    note: str = ""
    reasons: tuple[str, ...] = ()
    orig_reg_candidates: tuple[NumberCandidate, ...] = ()
    renewal_candidates: tuple[NumberCandidate, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["orig_reg_candidates"] = [asdict(c) for c in self.orig_reg_candidates]
        d["renewal_candidates"] = [asdict(c) for c in self.renewal_candidates]
        return d


@dataclass(frozen=True)
class RegistrationRecord:
    """One registration ⟨title, reg id, reg date⟩ with claimant and audit fields."""

    title: str
    reg_id: str | None
    reg_date: str | None
    claimant: str | None = None
    raw: str = ""
    reg_raw: str = ""
    description: str = ""
    reasons: tuple[str, ...] = ()
    reg_candidates: tuple[NumberCandidate, ...] = ()


@dataclass(frozen=True)
class Unparsed:
    """An entry that could not be read, with a reason code and what could be read of it."""

    raw: str
    reason: str
    detail: str = ""
    partial: Mapping[str, Any] = field(default_factory=dict)


@dataclass
class ParseResult:
    records: list[Any] = field(default_factory=list)
    unparsed: list[Unparsed] = field(default_factory=list)

    def extend(self, other: "ParseResult") -> None:
        self.records += other.records
        self.unparsed += other.unparsed


# ---------------------------------------------------------------------------------------------
# titles

def split_title(head: str) -> tuple[str, str, tuple[str, ...]]:
    """``(title, description, reasons)`` from the text before ``©``.

    Cuts the printed description (``, a photoplay in ten reels``), the ``by``-statement, an
    ``AUTHOR.|Title`` author part, a serial chapter number (``6. The Gun-Cane murder``) and, for
    upper-case titles, the first following word with lower-case letters (``REPORTS. Apr., July``).
    """
    reasons: list[str] = []
    s = re.sub(r"\s+", " ", head).strip()
    if "|" in s:
        s = s.split("|", 1)[1].strip()
        reasons.append("author_prefix_removed")
    lead = re.match(r"^(?:[_~\-.,'\"]+\s*)+", s)
    if lead:
        s = s[lead.end():]
        reasons.append("leading_noise_removed")
    chapter = re.match(r"^\d{1,2}\.\s+(?=\S)", s)
    if chapter:
        s = s[chapter.end():]
        reasons.append("serial_chapter_number")
    description = ""
    m = _DESCRIPTION.search(s)
    if m:
        description = s[m.start():].strip(" ,;")
        s = s[:m.start()]
    m = _BY.search(s)
    if m and m.start() > 0:
        description = (s[m.start():].strip(" ,;") + (" " + description if description else "")).strip()
        s = s[:m.start()]
    words = s.split(" ")
    first = next((w for w in words if len(re.sub(r"[^A-Za-z]", "", w)) >= 2), "")
    if first and first == first.upper():
        keep = []
        for w in words:
            if re.search(r"[a-z]", w) or (keep and keep[-1].endswith(".") and w[:1].isdigit()
                                          and not re.fullmatch(r"\w\.", keep[-1])):
                break
            keep.append(w)
        if len(keep) < len(words):
            description = (" ".join(words[len(keep):]) + (" " + description if description else "")).strip()
            s = " ".join(keep)
    else:
        for m2 in re.finditer(r"\.\s+(?=[A-Z(])", s):
            prev = re.findall(r"[\w']+$", s[:m2.start()])
            if prev and (prev[0].lower() in _ABBREV or len(prev[0]) == 1):
                continue
            description = (s[m2.end():] + (" " + description if description else "")).strip()
            s = s[:m2.start()]
            break
    return s.strip(" ,;:.-"), description, tuple(reasons)


def title_problem(title: str) -> str | None:
    """Why a title slot is not a title (``None`` when it looks like one): a production credit
    (``Pictures Corporation``, ``Productions, Inc``), a fragment starting in lower case or with an
    open parenthesis, a description kept in the slot, or too short."""
    t = title.strip()
    if len(re.sub(r"[^A-Za-z]", "", t)) < 2:
        return "title_too_short"
    if _CREDIT.match(t) and len(t.split()) <= 4:
        return "title_is_credit"
    if t[0].islower() or t.startswith("("):
        return "title_fragment"
    if re.search(r"\b(?:photoplay|motion picture) in\b", t, re.I):
        return "title_is_description"
    return None


# ---------------------------------------------------------------------------------------------
# renewal entries

def _find_copyright(text: str) -> tuple[int, int, tuple[str, ...]] | None:
    m = _COPYRIGHT.search(text)
    if m:
        return m.start(), m.end(), ()
    m = _OCR_COPYRIGHT.search(text)
    if m:
        return m.start(), m.end(), ("ocr_copyright_sign",)
    return None


def _film_floor(classes: Iterable[str] | None) -> int | None:
    """:data:`FILM_EARLIEST_YEAR` when only motion-picture classes are expected, else no floor."""
    if classes is None:
        return None
    wanted = {c.upper() for c in classes}
    return FILM_EARLIEST_YEAR if wanted and wanted <= FILM_CLASSES else None


def _registrations(part: str, *, volume_year: int | None, classes: Iterable[str] | None,
                   ranges: Mapping[str, tuple[int, int]] | None, coverage: tuple[int, int] | None = None
                   ) -> tuple[list[tuple[Any, NumberReading]], list[str]]:
    """(date reading, number reading) pairs of ``DATE, REG; DATE, REG`` / ``DATE; REG``, or of a
    list of dates followed by as many numbers (``15Nov22, 15Dec22, B551759, B567153``: paired in
    order, stray ``dates_listed_before_numbers``-free). A date whose year no century puts inside
    ``coverage`` is kept out as stray, with its reason."""
    pairs: list[tuple[Any, NumberReading]] = []
    stray: list[str] = []
    pending = None
    floor = _film_floor(classes)
    toks = [t.strip() for t in re.split(r"\s*[;,]\s*", part) if t.strip()]
    dates = [parse_cce_date(t, context_year=volume_year, coverage=coverage, min_year=floor) for t in toks]
    k = next((i for i, d in enumerate(dates) if d.iso is None), len(toks))
    if 1 < k and len(toks) == 2 * k and all(d.iso is None for d in dates[k:]):
        return [(d, normalize_reg_id(t, classes=classes, ranges=ranges)) for d, t in zip(dates[:k], toks[k:])], []
    for tok, d in zip(toks, dates):
        if d.iso is None and "year_outside_volume_coverage" in d.reasons:
            if pending is not None:
                stray.append(pending.raw)
            stray.append(f"{tok} (year_outside_volume_coverage)")
            pending = None
            continue
        if d.iso and pending is None:
            pending = d
            continue
        if pending is not None:
            pairs.append((pending, normalize_reg_id(tok, classes=classes, ranges=ranges)))
            pending = None
        else:
            stray.append(tok)
    if pending is not None:
        stray.append(pending.raw)
    return pairs, stray


def _renewal_ids(part: str) -> tuple[list[str], str | None, bool]:
    """Raw renewal numbers of ``R61801, R61806`` / ``R63718-63725`` (a range expanded), and
    whether a later number printed without its ``R`` (``R427033-427035, 427037-427038``) took the
    letter of the first."""
    out: list[str] = []
    letter = "R"
    carried = False
    for tok in [t.strip() for t in part.split(",") if t.strip()]:
        if re.fullmatch(r"\d{4,7}(?:\s*-\s*\d+)?", tok) and out:
            tok, carried = letter + tok, True
        m = re.fullmatch(r"([R8B])\s?(\d+)\s*-\s*[R8B]?\s?(\d+)", tok)
        if m:
            lo_s, hi_s = m.group(2), m.group(3)
            if len(hi_s) < len(lo_s):
                hi_s = lo_s[:len(lo_s) - len(hi_s)] + hi_s
            lo, hi = int(lo_s), int(hi_s)
            if not 0 <= hi - lo <= 500:
                return out, "renewal_range_too_long", carried
            out += [f"R{n}" for n in range(lo, hi + 1)]
        else:
            out.append(tok)
        if not out[-1][:1].isdigit():
            letter = out[-1][0]
    return out, None, carried


_BASIS = r"[({](?P<basis>[^(){};]{1,6}|[^(){}]{7,80}?,\s*[A-Za-z&#]{1,4})\)"
_RIDS = r"(?P<rids>[R8B]\s?[\dOolI]{3,7}(?:\s*[-,]\s*[R8B]?\s?[\dOolI]{2,7})*)"
_L1954 = re.compile(r"^(?P<regs>.*?)\.\s+(?P<claim>.*?)\s*" + _BASIS + r"\s*;\s*"
                    r"(?P<rdate>[^;]{4,12}?)\s*;\s*(?P<rids>[R8B&][^;]*?)\s*\.?\s*$", re.S)
_L1950 = re.compile(r"^(?P<regs>.*?)\.\s+" + _RIDS + r"\s*,\s*(?P<rdate>[^,]{4,12}?)\s*,\s*(?P<claim>.*?\))\s*\.?\s*$",
                    re.S)
#: the claimant-first layout: claimant before the registrations, renewal part ``R.., DATE.`` alone
_LCF = re.compile(r"^(?P<regs>.*?)\.\s+" + _RIDS + r"\s*,\s*(?P<rdate>[^,]{4,12}?)\s*\.?\s*$", re.S)


def _ad_interim(note: str, *, volume_year: int | None) -> tuple[Any, NumberReading] | None:
    """The ``(date, number)`` of ``pub. abroad 15Feb23, AI-4905`` when both read."""
    parts = [p.strip() for p in re.split(r"\s*,\s*", note) if p.strip()]
    d = parse_cce_date(parts[0].split()[-1], context_year=volume_year) if parts else None
    num = next((p for p in parts[1:] if re.match(r"A\s?I", p, re.I)), None)
    if d is None or d.iso is None or num is None:
        return None
    reg = normalize_reg_id(num, classes=None)
    return (d, reg) if reg.value else None


def parse_renewal_entry(text: str, *, volume_year: int | None = None,
                        classes: Iterable[str] | None = None,
                        ranges: Mapping[str, tuple[int, int]] | None = None,
                        coverage: tuple[int, int] | None = None
                        ) -> list[RenewalRecord] | Unparsed:
    """Read one printed renewal entry (1950, 1954 or claimant-first layout) into one record per
    registration, plus one for an ad-interim registration printed in parentheses.

    ``classes``: registration classes expected (``None``: any known class, as in the mixed 1950
    list; ``FILM_CLASSES`` for the motion-picture volumes). ``volume_year`` dates two-digit years
    and checks renewal numbers; ``coverage`` (optional) bounds the *original* registration years.
    A record whose number has no confident reading keeps ``None`` for that id, its candidates and
    an ``orig_reg:``/``renewal:`` reason code; an implausible date pair carries a ``flag:`` code
    (:data:`extractors.cce.entries.FLAG_REASONS`). Several claimants (``A (NK) & B (A)``) are
    joined with ``"; "``, their basis codes likewise.
    """
    raw = text
    s = re.sub(r"\s+", " ", text).strip()
    mark = _find_copyright(s)
    if mark is None:
        if re.search(r"[R8B]\s?\d[\d ]{3,8}", s) and parse_cce_date(s.split(";")[0]).iso:
            return Unparsed(raw, "orphan_renewal_fragment", "renewal date/number without an entry")
        return Unparsed(raw, "no_copyright_date", "no © marker with a date")
    head, tail = s[:mark[0]], s[mark[1]:].strip()
    base_reasons = list(mark[2])
    title, description, title_reasons = split_title(head)
    claim_text = None
    cf = split_claimant_first(tail)
    if cf is not None:
        claim_text, rest, tail = cf
        description = (description + " " + rest).strip()
        base_reasons.append("claimant_first_layout")
    note = ""
    interim = None
    pa = _PUB_ABROAD.search(tail)
    if pa:
        note = "pub. abroad " + pa.group(1).strip()
        tail = (tail[:pa.start()].rstrip(" ,") + ", " + tail[pa.end():].lstrip(" ,")).strip()
        interim = _ad_interim(pa.group(1), volume_year=volume_year)
        base_reasons.append("ad_interim_registration" if interim else "ad_interim_unreadable")
    if claim_text is not None:
        m, layout = _LCF.match(tail), "claimant_first"
    else:
        m, layout = _L1954.match(tail), "1954"
        if m is None:
            m, layout = _L1950.match(tail), "1950"
    if m is None:
        regs_only = tail.split(".")[0]
        pairs, _ = _registrations(regs_only, volume_year=volume_year, classes=classes, ranges=ranges,
                                  coverage=coverage)
        partial = {"title": title, "registrations": [(d.iso, r.value or r.raw) for d, r in pairs]}
        if not re.search(r"[R8B]\s?\d[\d ]{3,8}", tail):
            return Unparsed(raw, "no_renewal_number", "entry without renewal part", partial)
        return Unparsed(raw, "layout_not_recognised", "no printed layout fits", partial)
    pairs, stray = _registrations(m.group("regs"), volume_year=volume_year, classes=classes, ranges=ranges,
                                  coverage=coverage)
    if not pairs:
        return Unparsed(raw, "no_registration", f"registration part {m.group('regs')!r}"
                        + (f"; stray {stray}" if stray else ""), {"title": title})
    rdate = parse_cce_date(m.group("rdate"), context_year=volume_year, min_year=_film_floor(classes))
    if rdate.iso is None:
        return Unparsed(raw, "renewal_date_unreadable", m.group("rdate"), {"title": title})
    rids, why, carried = _renewal_ids(m.group("rids"))
    if why:
        return Unparsed(raw, why, m.group("rids"), {"title": title})
    if carried:
        base_reasons.append("renewal_letter_carried")
    if len(rids) == 1 and len(pairs) > 1:
        rids = rids * len(pairs)
        base_reasons.append("one_renewal_for_several_registrations")
    if len(rids) != len(pairs):
        return Unparsed(raw, "renewal_count_mismatch", f"{len(pairs)} registrations, {len(rids)} renewals",
                        {"title": title})
    if interim is not None:
        pairs.append(interim)
        rids.append(rids[0])
    if claim_text is None:
        claim_text = m.group("claim") if "basis" not in m.groupdict() else f"{m.group('claim')} ({m.group('basis')})"
    claims, qualifier, claim_reasons = read_claimants(claim_text)
    claimant = "; ".join(c[0] for c in claims) or None
    basis = "; ".join(dict.fromkeys(c[1] for c in claims if c[1])) or None
    if qualifier:
        note = (note + "; " if note else "") + f"basis text: {qualifier}"
    year = int(rdate.iso[:4])
    out = []
    for i, ((odate, reg), rid_raw) in enumerate(zip(pairs, rids)):
        ren = normalize_renewal_id(rid_raw, year=year)
        reasons = (base_reasons + [f"title:{r}" for r in title_reasons]
                   + [f"orig_reg:{r}" for r in reg.reasons] + [f"orig_date:{r}" for r in odate.reasons]
                   + [f"renewal:{r}" for r in ren.reasons] + [f"renewal_date:{r}" for r in rdate.reasons]
                   + list(claim_reasons) + [f"stray:{t}" for t in stray]
                   + gap_flags(odate.iso, rdate.iso))
        if interim is not None and i == len(pairs) - 1:
            reasons.append("ad_interim_record")
        out.append(RenewalRecord(
            title=title, orig_reg_id=reg.value, orig_date=odate.iso, renewal_id=ren.value,
            renewal_date=rdate.iso, claimant=claimant, basis=basis, layout=layout, raw=raw,
            orig_reg_raw=reg.raw, renewal_raw=rid_raw, orig_year=int(odate.iso[:4]),
            description=description, note=note, reasons=tuple(dict.fromkeys(reasons)),
            orig_reg_candidates=reg.candidates, renewal_candidates=ren.candidates))
    return out


_END_1954 = re.compile(r"(?<=;)\s*[R8B]\s?\d[\d ]{3,8}(?:-\d+)?\.(?=\s+\S)")
_END_1950 = re.compile(r"\s[({][A-Za-z&#]{1,4}\)\.?(?=\s+[A-Z\"'_(\[])")


def split_entries(text: str) -> list[str]:
    """Split OCR'd renewal-list text into entry strings (lines joined, end-of-line hyphens kept).

    An entry ends after ``; R123456.`` (1954 layout) or after the closing ``(BASIS)`` of a 1950
    entry when the next word starts a new one. Blank lines always end an entry.
    """
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        joined = re.sub(r"-\n\s*", "-", block)
        joined = re.sub(r"\s*\n\s*", " ", joined).strip()
        if not joined:
            continue
        cuts = sorted({m.end() for m in _END_1954.finditer(joined)} | {m.end() for m in _END_1950.finditer(joined)})
        start = 0
        for c in cuts + [len(joined)]:
            piece = joined[start:c].strip()
            if piece:
                out.append(piece)
            start = c
    return out


def _collect(parsed: Iterable[Any]) -> ParseResult:
    """One :class:`ParseResult` from per-entry results (a list of records, or an Unparsed)."""
    result = ParseResult()
    for got in parsed:
        if isinstance(got, Unparsed):
            result.unparsed.append(got)
        else:
            result.records += got
    return result


def parse_renewal_text(text: str, *, volume_year: int | None = None, classes: Iterable[str] | None = None,
                       ranges: Mapping[str, tuple[int, int]] | None = None,
                       coverage: tuple[int, int] | None = None) -> ParseResult:
    """Every entry of an OCR'd renewal list: records, and an :class:`Unparsed` for each entry
    that could not be read (never silently skipped)."""
    return _collect(parse_renewal_entry(entry, volume_year=volume_year, classes=classes, ranges=ranges,
                                        coverage=coverage) for entry in split_entries(text))


# ---------------------------------------------------------------------------------------------
# registration entries

def parse_registration_entry(text: str, *, volume_year: int | None = None,
                             classes: Iterable[str] | None = FILM_CLASSES,
                             ranges: Mapping[str, tuple[int, int]] | None = None,
                             coverage: tuple[int, int] | None = None
                             ) -> list[RegistrationRecord] | Unparsed:
    """Read one registration entry: ``TITLE. credits. © Claimant; 6Dec45; LP81.`` (claimant
    optional, several ``date; number`` pairs allowed, ``©`` OCR'd as ``@``/``6`` tolerated).

    ``volume_year`` and ``coverage`` (the years a cumulative volume covers, see
    :func:`volume_coverage`) put two-digit years in their century; with film classes no year
    resolves before :data:`~extractors.cce.normalize.FILM_EARLIEST_YEAR`. A date outside the
    coverage is not read: the entry then comes back ``no_registration`` saying so."""
    raw = text
    s = re.sub(r"\s+", " ", text).strip()
    mark = _find_copyright(s)
    if mark is None:
        return Unparsed(raw, "no_copyright_date", "no © marker with a date")
    head, tail = s[:mark[0]], s[mark[1]:].strip().rstrip(".")
    title, description, title_reasons = split_title(head)
    toks = [t.strip() for t in re.split(r"\s*;\s*", tail) if t.strip()]
    claimant_parts: list[str] = []
    while toks and parse_cce_date(toks[0].split(",")[0], context_year=volume_year).iso is None:
        claimant_parts.append(toks.pop(0))
    pairs, stray = _registrations("; ".join(toks), volume_year=volume_year, classes=classes, ranges=ranges,
                                  coverage=coverage)
    if not pairs:
        return Unparsed(raw, "no_registration", f"after ©: {tail!r}" + (f"; stray {stray}" if stray else ""),
                        {"title": title})
    out = []
    for d, reg in pairs:
        reasons = (list(mark[2]) + [f"title:{r}" for r in title_reasons] + [f"reg:{r}" for r in reg.reasons]
                   + [f"reg_date:{r}" for r in d.reasons] + [f"stray:{t}" for t in stray])
        out.append(RegistrationRecord(title=title, reg_id=reg.value, reg_date=d.iso,
                                      claimant="; ".join(claimant_parts) or None, raw=raw, reg_raw=reg.raw,
                                      description=description, reasons=tuple(dict.fromkeys(reasons)),
                                      reg_candidates=reg.candidates))
    return out


#: The close of a registration entry: a ``DMonYY`` date, ``;`` (or ``,``), the registration
#: number (OCR-tolerant: ``LP46O1``, ``l10910``, ``111485``, ``1P4412``, ``LP 4412``) and a full stop,
#: or the end of a line when OCR lost the full stop.
_REG_CLOSE = re.compile(
    r"(?P<date>(?<![\w])[0-9OolIS|g]{1,2}\s?[A-Za-z0-9¢|]{3,4}\s?[0-9TlIO|/]{1,3})\s*[;,]\s*"
    r"(?P<num>[A-Za-z|14]{0,3}-?\s?[0-9OolIiS|](?:[ ]?[0-9OolIiS|]){0,7})(?:\.(?=\s|$)|[ ]*(?=\n|$))")


def split_registration_entries(text: str) -> list[str]:
    """Registration entries of a page: paragraphs (blank-line separated) cut after each closing
    ``DATE; NUMBER.`` (``; 10Jan34; LP4412.``), lines joined with spaces.

    Only a date followed by a registration number closes an entry, so a title or credit that
    ends in a number and a full stop (``BROADWAY SERENADE OF 1934.``, ``No. 1.``) does not; a
    line ending in ``DATE; NUMBER`` without its full stop (lost to OCR) closes one too. Text
    without a closing number (a page heading) comes back as its own piece.
    """
    out: list[str] = []
    for block in re.split(r"\n\s*\n", text):
        lines = re.sub(r"[ \t]*\n[ \t]*", "\n", block).strip()
        if not lines:
            continue
        start = 0
        for m in _REG_CLOSE.finditer(lines):
            if parse_cce_date(m.group("date")).iso is None:
                continue
            piece = re.sub(r"\s+", " ", lines[start:m.end()]).strip()
            if piece:
                out.append(piece)
            start = m.end()
        rest = re.sub(r"\s+", " ", lines[start:]).strip()
        if rest:
            out.append(rest)
    return out


def parse_registration_text(text: str, *, volume_year: int | None = None,
                            classes: Iterable[str] | None = FILM_CLASSES,
                            ranges: Mapping[str, tuple[int, int]] | None = None,
                            coverage: tuple[int, int] | None = None) -> ParseResult:
    """Registration entries of a volume page (split by :func:`split_registration_entries`):
    records, and an :class:`Unparsed` with its reason for every piece that is not an entry.
    ``coverage``: the years a cumulative volume covers (:func:`volume_coverage`)."""
    return _collect(parse_registration_entry(piece, volume_year=volume_year, classes=classes, ranges=ranges,
                                             coverage=coverage) for piece in split_registration_entries(text))


# ---------------------------------------------------------------------------------------------
# Archive-Watch records (realdata/cce)

_YEAR_RANGE = (re.compile(r"(?<!\d)(1[89]\d\d)(1[89]\d\d)(?!\d)"),  # motionpict19121939...
               re.compile(r"(?<!\d)(1[89]\d\d)\s*(?:-|\u2013|\u2014|to)\s*(1[89]\d\d|\d\d)(?!\d)", re.I))


def volume_coverage(volume_id: str, title: str | None = None) -> tuple[int, int] | None:
    """``(first, last)`` years of registrations a cumulative volume covers, from its identifier
    (``motionpict19121939librrich``) or its title (``Motion Pictures 1912-1939``, ``1940 to
    1949``); ``None`` for a single-year volume (``catalogofcopyri341213libr``; ``Parts 12-13``
    is no year range)."""
    for text in (volume_id or "", title or ""):
        for pattern in _YEAR_RANGE:
            for m in pattern.finditer(text):
                lo, hi_s = int(m.group(1)), m.group(2)
                hi = int(hi_s) if len(hi_s) == 4 else lo // 100 * 100 + int(hi_s)
                if lo < hi <= lo + 50:
                    return lo, hi
    return None


def volume_year(volume_id: str, title: str | None = None, date: str | None = None) -> int | None:
    """Year of a CCE volume, the context two-digit years are read in: for a cumulative volume the
    *last* year it covers (``motionpict19121939...`` -> 1939: its dates run up to it, so ``34``
    reads 1934), else an explicit ``19xx`` in the identifier, else the third series volume number
    (``catalogofcopyri341213libr``: series 3, vol. 4, parts 12-13 -> 1950; third-series volume *n*
    covers 1946 + *n*), else a year in ``title``, else the item's metadata ``date`` (``1951``,
    ``1951-06-01``: the publication year)."""
    cov = volume_coverage(volume_id, title)
    if cov:
        return cov[1]
    m = re.search(r"(19[0-7]\d)", volume_id)
    if m:
        return int(m.group(1))
    m = re.search(r"3(\d{1,2})1213", volume_id)
    if m:
        return 1946 + int(m.group(1))
    m = re.search(r"(?<!\d)(1[89]\d\d|19[0-7]\d)(?!\d)", title or "")
    if m:
        return int(m.group(1))
    m = re.match(r"\s*(1[89]\d\d|20\d\d)", str(date or ""))
    return int(m.group(1)) if m else None


def _claim_from_fragment(c: str, year: int | None) -> tuple[str | None, str | None, list[str]]:
    """Claimant, basis and reason codes from an Archive-Watch ``c`` field: ``Claimant (PWH)``,
    optionally followed by the next entry's ``; 15Aug77; 8069902`` (kept only as a reason)."""
    reasons: list[str] = []
    c = c.strip()
    if not c:
        return None, None, ["claimant_absent"]
    if "©" in c:
        return None, None, ["claimant_slot_holds_entry_fragment"]
    m = re.match(r"^(?P<claim>.*?)\s*[({](?P<basis>[^(){}]{1,6})\)(?P<rest>.*)$", c)
    if not m:
        return None, None, ["claimant_unreadable"]
    claim = re.sub(r"^(?:[\W\d_]+\s*|[A-Z]\.\s+(?=[A-Z]))", "", m.group("claim")).strip(" ,;") or None
    basis, why = normalize_basis(m.group("basis"))
    reasons += [f"basis:{r}" for r in why]
    if m.group("rest").strip(" ;-.°<>"):
        reasons.append("trailing_fragment_kept_out")
    return claim, basis, reasons


def read_archivewatch(records: Sequence[Mapping[str, Any]]) -> ParseResult:
    """Re-read Archive-Watch renewal records (``t`` title, ``y`` original year, ``reg``, ``r``,
    ``c`` claimant text, ``vol`` volume id) with this module's normalisation.

    Each volume's exactly-read registration numbers give the series ranges that rank OCR repairs
    (``118333`` -> ``L18333`` only when L18333 fits the volume). A record comes out in
    ``records`` when its registration number, renewal number and title are all read; otherwise
    in ``unparsed`` with the first failing reason (``orig_reg_uncertain``, ``renewal_id_uncertain``,
    ``title_not_read``) and the partial record (``partial['record']``) with every reason code.
    """
    by_vol: dict[str, list[str]] = {}
    for rec in records:
        by_vol.setdefault(str(rec.get("vol", "")), []).append(str(rec.get("reg", "")))
    vol_ranges = {v: ranges_from(ids) for v, ids in by_vol.items()}
    result = ParseResult()
    for rec in records:
        vol = str(rec.get("vol", ""))
        vyear = volume_year(vol)
        title, description, t_reasons = split_title(str(rec.get("t", "")))
        problem = title_problem(title)
        reg = normalize_reg_id(str(rec.get("reg", "")), ranges=vol_ranges.get(vol))
        ren = normalize_renewal_id(str(rec.get("r", "")), year=vyear)
        claimant, basis, c_reasons = _claim_from_fragment(str(rec.get("c", "")), vyear)
        reasons = ([f"title:{r}" for r in t_reasons] + ([f"title:{problem}"] if problem else [])
                   + [f"orig_reg:{r}" for r in reg.reasons] + [f"renewal:{r}" for r in ren.reasons]
                   + [f"claimant:{r}" for r in c_reasons])
        y = rec.get("y")
        orig_year = int(y) if isinstance(y, int) or (isinstance(y, str) and y.isdigit()) else None
        if orig_year and vyear and not 26 <= vyear - orig_year <= 29:
            reasons.append("orig_year:outside_28th_year_window")
        out = RenewalRecord(
            title=title, orig_reg_id=reg.value, orig_date=None, renewal_id=ren.value, renewal_date=None,
            claimant=claimant, basis=basis, layout="archivewatch", raw=str(dict(rec)),
            orig_reg_raw=reg.raw, renewal_raw=ren.raw, orig_year=orig_year, description=description,
            note=vol, reasons=tuple(dict.fromkeys(reasons)), orig_reg_candidates=reg.candidates,
            renewal_candidates=ren.candidates)
        why = ("orig_reg_uncertain" if reg.value is None else "renewal_id_uncertain" if ren.value is None
               else "title_not_read" if problem else None)
        if why is None:
            result.records.append(out)
        else:
            result.unparsed.append(Unparsed(out.raw, why, "; ".join(out.reasons), {"record": out}))
    return result


# ---------------------------------------------------------------------------------------------
# CPRS / NYPL exports (extractors/cce/export.py)

def read_renewal_export(source: str | Path, *, film_only: bool = False) -> ParseResult:
    """Read a CPRS renewal export or an NYPL cce-renewals TSV: see
    :func:`extractors.cce.export.read_renewal_export` (imported here late: no import cycle)."""
    from extractors.cce.export import read_renewal_export as read

    return read(source, film_only=film_only)
