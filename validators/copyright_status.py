"""US copyright status of registered films as of a given date (SPEC B2; seed 003 §2.2, App. C).

Rules, applied in this order to a registration (its year stands in for the publication year):

* ``R1_95_year_term``: published more than 95 years ago -> ``public_domain``. A work published
  in year *Y* is protected through 31 December of *Y* + 95 and enters the public domain on
  1 January of *Y* + 96; so as of D it is public domain iff *Y* < D.year - 95 (1930 films are
  public domain from 2026-01-01; on 2025-12-31 they are still protected).
* ``R4_from_1978``: registered 1978 or later -> ``protected`` (1976 Act: no renewal needed).
* ``R3_automatic_renewal``: registered 1964-1977 -> ``protected`` (renewal was automatic).
* Registered before 1964 (and inside the 95 years):
  - ``R2_renewed``: an exact number+date match, or a curator's "renewed" -> ``protected``;
  - ``R2_uncertain_match``: a fuzzy/OCR candidate waiting for review, an unreadable number or
    date -> ``needs_review`` (an uncertain match never yields a public-domain answer);
  - ``R2_renewal_window_open``: the 28th year has not ended as of D -> ``protected``;
  - ``R5_source_work_renewed``: the film is based on a source work (AFI "based on") whose own
    copyright was renewed -> ``protected`` (excluded); unknown source renewal -> ``needs_review``
    (``R5_source_work_unknown``);
  - ``R2_not_renewed``: otherwise -> ``likely_public_domain``.

Every result carries its reasons (rule id, detail, matched renewal id, match decision).
Pure functions; ``as_of`` is always explicit (the build's is ``hollywood.as_of``: the run date
unless the setting freezes it).

A ranked *film* (not a registration) is judged by sql/pd_collection.sql with the same 95-year
line (:func:`public_domain_by_term` on its release year):

* ``R1_release_date``: released before the line -> ``public_domain`` even with no registration
  linked (none found, an ambiguous link, an unreadable registration date); the evidence is the
  release year and its source (the catalog release year, else the Variety ranking year, which
  bounds the release from above);
* ``R1_release_date_conflict``: released before the line, but the linked registration is dated
  inside the term -> ``needs_review`` (two dates disagree; never guessed).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Sequence

from extractors.cce.normalize import normalize_reg_id, reg_key
from validators.copyright_match import (
    CuratorDecision, MatchResult, Registration, Renewal, match_registrations,
)

STATUSES = ("public_domain", "likely_public_domain", "protected", "needs_review")
RULES: dict[str, str] = {
    "R1_95_year_term": "published more than 95 years before as_of: public domain",
    "R4_from_1978": "registered 1978 or later: protected without registration or renewal",
    "R3_automatic_renewal": "registered 1964-1977: renewal was automatic",
    "R2_renewed": "renewal found (exact number+date match or curator decision)",
    "R2_uncertain_match": "a possible renewal awaits review, or the number/date is unreadable",
    "R2_renewal_window_open": "the 28th-year renewal window has not closed as of as_of",
    "R5_source_work_renewed": "based on a source work whose copyright was renewed",
    "R5_source_work_unknown": "based on a source work whose renewal status is unknown",
    "R2_not_renewed": "registered before 1964 and no renewal found",
    "R0_no_date": "no readable registration date: no rule applies",
    # film-level rules of the collection (sql/pd_collection.sql)
    "R1_release_date": "released before the 95-year line: public domain by its release date",
    "R1_release_date_conflict": "release year before the 95-year line, registration dated inside the term",
}
#: the rules that judge a ranked film by its release year (sql/pd_collection.sql), not a registration
FILM_RULES = ("R1_release_date", "R1_release_date_conflict")


@dataclass(frozen=True)
class SourceWork:
    """A film's source work (AFI "based on"): ``renewed`` True/False, or None when unknown."""

    film_reg_id: str
    film_reg_date: str | None
    source_title: str
    renewed: bool | None
    renewal_id: str | None = None


@dataclass(frozen=True)
class Reason:
    rule: str
    detail: str
    renewal_id: str | None = None
    decision: str | None = None

    def text(self) -> str:
        extra = "".join(f"; {k} {v}" for k, v in (("renewal", self.renewal_id), ("match", self.decision)) if v)
        return f"{self.rule}: {self.detail}{extra}"


@dataclass(frozen=True)
class StatusResult:
    reg_id: str
    reg_date: str | None
    title: str
    status: str
    reasons: tuple[Reason, ...]

    @property
    def reason(self) -> str:
        return " | ".join(r.text() for r in self.reasons)

    def to_json(self) -> dict[str, str | None]:
        return {"reg_id": self.reg_id, "reg_date": self.reg_date, "title": self.title,
                "status": self.status, "reason": self.reason}


def public_domain_by_term(year: int, as_of: date) -> bool:
    """True iff a work published in ``year`` is past its 95-year term on ``as_of``."""
    return year < as_of.year - 95


def _reg_year(reg: Registration) -> int | None:
    try:
        return date.fromisoformat(reg.reg_date).year if reg.reg_date else None
    except ValueError:
        return None


def status_for(match: MatchResult, as_of: date, sources: Sequence[SourceWork] = ()) -> StatusResult:
    """The SPEC B2 status of one matched registration (see the module docstring)."""
    reg = match.registration

    def res(status: str, *reasons: Reason) -> StatusResult:
        return StatusResult(reg.reg_id, reg.reg_date, reg.title, status, tuple(reasons))

    year = _reg_year(reg)
    renewal_id = match.renewal.renewal_id if match.renewal else None
    if year is None:
        return res("needs_review", Reason("R0_no_date", f"registration date {reg.reg_date!r} unreadable",
                                          renewal_id, match.decision))
    if public_domain_by_term(year, as_of):
        return res("public_domain", Reason("R1_95_year_term",
                                           f"published {year}; term ended {year + 95}-12-31 (as of {as_of})"))
    if year >= 1978:
        return res("protected", Reason("R4_from_1978", f"registered {year}"))
    if year >= 1964:
        return res("protected", Reason("R3_automatic_renewal", f"registered {year}"))
    if match.decision in ("matched_exact", "curator_renewed"):
        who = f" by {match.by}" if match.by else ""
        return res("protected", Reason("R2_renewed", f"registered {year}; renewed{who}", renewal_id, match.decision))
    if match.decision == "matched_fuzzy_review" or not match.reg_number_confident:
        detail = (f"registered {year}; {len(match.candidates)} possible renewal(s) to review"
                  if match.candidates else f"registered {year}; registration number {reg.reg_id!r} not read with confidence")
        return res("needs_review", Reason("R2_uncertain_match", detail, renewal_id, match.decision))
    if match.decision not in ("unmatched", "curator_not_renewed"):
        return res("needs_review", Reason("R2_uncertain_match", f"unknown match decision {match.decision!r}",
                                          renewal_id, match.decision))
    reg_d = date.fromisoformat(reg.reg_date)  # type: ignore[arg-type]
    try:
        window_end = reg_d.replace(year=reg_d.year + 28)
    except ValueError:
        window_end = reg_d.replace(year=reg_d.year + 28, day=28)
    if as_of < window_end:
        return res("protected", Reason("R2_renewal_window_open", f"registered {reg.reg_date}; renewal possible "
                                       f"until {window_end}", None, match.decision))
    renewed_src = [s for s in sources if s.renewed]
    if renewed_src:
        s = renewed_src[0]
        return res("protected", Reason("R5_source_work_renewed", f"based on {s.source_title!r}, renewed",
                                       s.renewal_id, match.decision))
    unknown_src = [s for s in sources if s.renewed is None]
    if unknown_src:
        return res("needs_review", Reason("R5_source_work_unknown",
                                          f"based on {unknown_src[0].source_title!r}, renewal unknown",
                                          None, match.decision))
    by = f" (curator {match.by})" if match.by else ""
    return res("likely_public_domain", Reason("R2_not_renewed", f"registered {year}; no renewal found{by}",
                                              None, match.decision))


def classify(registrations: Sequence[Registration], renewals: Sequence[Renewal], *, as_of: date,
             decisions: Sequence[CuratorDecision] = (), source_works: Sequence[SourceWork] = ()
             ) -> list[StatusResult]:
    """Match, then apply the status rules; one result per registration, in input order."""
    by_film: dict[str, list[SourceWork]] = {}
    for s in source_works:
        value = normalize_reg_id(s.film_reg_id, classes=None).value or s.film_reg_id
        by_film.setdefault(reg_key(value, s.film_reg_date), []).append(s)
    out = []
    for m in match_registrations(registrations, renewals, decisions=decisions):
        value = normalize_reg_id(m.registration.reg_id, classes=None).value or m.registration.reg_id
        out.append(status_for(m, as_of, by_film.get(reg_key(value, m.registration.reg_date), [])))
    return out
