"""Helpers of the printed renewal-entry reader (``extractors.cce.parse.parse_renewal_entry``):
claimant lists with their basis codes, the claimant-first layout, the plausibility flags of a
registration/renewal pair, and the per-entry status of ``cinesub copyright parse-entries``.

Why: the renewal match keys on number + date, so a reading that is well-formed but implausible
(a renewal after the 28th year of its registration, a registration before the first film
copyrights) must never be trusted silently: it carries a ``flag:`` reason code
(:data:`FLAG_REASONS`) and the entry's status is ``flagged``. Pure functions, no I/O.
"""

from __future__ import annotations

import re
from datetime import date
from typing import Any, Sequence

from extractors.cce.normalize import normalize_basis, parse_cce_date

#: Plausibility flags (reason ``flag:<code>``): the record is read but not trusted.
FLAG_REASONS: dict[str, str] = {
    "renewal_after_28th_year": "the renewal date lies more than 28 years after the registration date: "
                               "a 1909-Act renewal had to be made in the 28th year (OCR damage likely)",
    "renewal_before_28th_year": "the renewal date lies less than 27 years after the registration date "
                                "(before the 28th year: a misread date or number likely)",
    "registration_before_1894": "the registration date is before 1894, the first film copyrights "
                                "(and beyond any renewable term in these volumes)",
    "renewal_before_registration": "the renewal date is not after the registration date",
}

#: Entry statuses of ``parse-entries``: every record fully read and plausible; records read with
#: fields missing or uncertain; records read but flagged implausible; nothing read.
ENTRY_STATUSES = ("read", "partial", "flagged", "unread")

#: Reason codes that leave a field unread or uncertain (``partial``), by their suffix.
_PARTIAL_SUFFIXES = ("ambiguous_reading", "unreadable_number", "unreadable_date", "basis_unreadable",
                     "ad_interim_unreadable", "claimant_absent")
#: The basis codes the CCE prints after a renewal claimant.
BASIS_CODES = ("PWH", "PCW", "NK", "A", "C", "W", "E", "P", "M")

_CLAIM = re.compile(r"(?P<name>[^()]*?)\s*[({](?P<basis>[^(){}]{1,80})\)\s*(?:,?\s*(?:&|and)\s*|[,;]\s*|$)")


def _add_years(d: date, years: int) -> date:
    try:
        return d.replace(year=d.year + years)
    except ValueError:  # 29 Feb
        return d.replace(year=d.year + years, day=28)


def gap_flags(orig_iso: str | None, renewal_iso: str | None) -> list[str]:
    """``flag:`` codes of a registration date / renewal date pair (both ISO; missing: no flag)."""
    out: list[str] = []
    if orig_iso and orig_iso < "1894-01-01":
        out.append("registration_before_1894")
    if orig_iso and renewal_iso:
        od, rd = date.fromisoformat(orig_iso), date.fromisoformat(renewal_iso)
        if rd <= od:
            out.append("renewal_before_registration")
        elif rd > _add_years(od, 28):
            out.append("renewal_after_28th_year")
        elif rd < _add_years(od, 27):
            out.append("renewal_before_28th_year")
    return [f"flag:{c}" for c in out]


def read_basis(text: str) -> tuple[str | None, str, tuple[str, ...]]:
    """``(code, qualifier, reasons)`` of a parenthesis after a claimant: ``PWH`` (or its OCR
    forms), or long basis text ending in a code (``E of D. W. Griffith, PWH`` -> ``PWH`` with the
    qualifier ``E of D. W. Griffith``; reason ``long_basis_text``)."""
    t = text.strip()
    if len(t) <= 6:
        code, why = normalize_basis(t)
        return code, "", why
    m = re.match(r"^(?P<q>.*?)[,;]\s*(?P<code>[A-Za-z&#]{1,4})\s*$", t)
    if m:
        code, why = normalize_basis(m.group("code"))
        if code:
            return code, m.group("q").strip(), ("long_basis_text", *why)
    return None, t, ("basis_unreadable",)


def read_claimants(text: str) -> tuple[list[tuple[str, str | None]], str, tuple[str, ...]]:
    """Claimants with their basis codes from ``A (NK) & B (A)`` / ``X (PWH)``:
    ``([(name, code)], qualifiers, reasons)``, reasons prefixed ``basis:`` / ``claimant:``.
    Names lose leading OCR noise."""
    s = re.sub(r"^[\s\-.~,;°]+", "", text).strip()
    out: list[tuple[str, str | None]] = []
    quals: list[str] = []
    reasons: list[str] = []
    pos = 0
    for m in _CLAIM.finditer(s):
        if m.start() != pos:
            break
        code, qual, why = read_basis(m.group("basis"))
        if code is None and m.end() < len(s):  # a parenthesis inside a name, not a basis
            break
        out.append((m.group("name").strip(" ,;"), code))
        if qual:
            quals.append(qual)
        reasons += [f"basis:{r}" for r in why]
        pos = m.end()
    if not out or pos < len(s):
        return [], "", ("claimant:claimant_unreadable",)
    return out, "; ".join(quals), tuple(dict.fromkeys(reasons))


def split_claimant_first(tail: str) -> tuple[str, str, str] | None:
    """The claimant-first layout (a serial or periodical entry: ``© Street & Smith Publications,
    inc. (PCW) v. 50, nos. 4-5 ... © 15Nov22, 15Dec22, B551759, B567153. R56538-56539, 30Dec49.``):
    ``(claimant text with its basis, the words after it, the text after the second ©)``, or
    ``None`` when ``tail`` (the text after the first ©) does not start with a claimant."""
    first = re.split(r"[;,(]", tail.strip(), maxsplit=1)[0]
    if parse_cce_date(first).iso is not None:
        return None
    m = re.match(r"^(?P<claim>[^©]*?[({][A-Za-z&# .,;'-]{1,60}\))(?P<rest>[^©]*)(?:©|\((?:c|C)\))(?P<after>.*)$",
                 tail, re.S)
    if not m or not re.search(r"\d", m.group("after")):
        return None
    return m.group("claim").strip(), m.group("rest").strip(" ,;"), m.group("after").strip()


def entry_status(records: Sequence[Any]) -> tuple[str, list[str]]:
    """``(status, reasons)`` of one entry's records (see :data:`ENTRY_STATUSES`): ``flagged``
    when a record carries a ``flag:`` code, ``partial`` when an id or date is unread or a
    reason says a field is uncertain, else ``read``; ``reasons``: every record's codes."""
    if not records:
        return "unread", []
    reasons = list(dict.fromkeys(r for rec in records for r in rec.reasons))
    if any(r.startswith("flag:") for r in reasons):
        return "flagged", reasons
    for rec in records:
        ids = (getattr(rec, "orig_reg_id", getattr(rec, "reg_id", None)),
               getattr(rec, "orig_date", getattr(rec, "reg_date", None)))
        if any(v is None for v in ids) or (hasattr(rec, "renewal_id") and (
                rec.renewal_id is None or rec.renewal_date is None)):
            return "partial", reasons
    if any(r.endswith(_PARTIAL_SUFFIXES) for r in reasons):
        return "partial", reasons
    return "read", reasons
