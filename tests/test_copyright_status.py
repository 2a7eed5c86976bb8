"""Copyright status rules and registration <-> renewal matching (SPEC B2), each rule at its
boundaries, number collisions across series, OCR-damaged numbers, uncertain matches, curator
decisions, source works, and ``cinesub copyright classify`` end to end."""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from cinesub import cli_copyright
from validators.copyright_match import (
    CuratorDecision, Registration, Renewal, match_registrations, renewal_plausible,
)
from validators.copyright_status import STATUSES, SourceWork, classify, public_domain_by_term

JAN1_2026 = date(2026, 1, 1)
DEC31_2025 = date(2025, 12, 31)


def _one(reg: Registration, renewals=(), as_of=JAN1_2026, **kw):
    (res,) = classify([reg], list(renewals), as_of=as_of, **kw)
    assert res.status in STATUSES
    return res


# ---------------------------------------------------------------------------------------------
# the 95-year line

@pytest.mark.parametrize("year, as_of, pd", [
    (1930, JAN1_2026, True), (1930, DEC31_2025, False), (1931, JAN1_2026, False),
    (1929, DEC31_2025, True), (1931, date(2027, 1, 1), True), (1931, date(2026, 12, 31), False),
])
def test_95_year_boundary(year, as_of, pd):
    assert public_domain_by_term(year, as_of) is pd
    renewed = Renewal("X", "LP100", f"{year}-12-31", "R200000", f"{year + 27}-12-01")
    res = _one(Registration("X", "LP100", f"{year}-12-31"), [renewed], as_of=as_of)
    # renewed or not, a work past its term is public domain; inside it, the renewal protects it
    assert res.status == ("public_domain" if pd else "protected"), res.reason
    assert res.reasons[0].rule == ("R1_95_year_term" if pd else "R2_renewed")


def test_1930_film_protected_until_new_year():
    reg = Registration("ALL QUIET ON THE WESTERN FRONT", "LP1323", "1930-05-17")
    ren = Renewal("ALL QUIET ON THE WESTERN FRONT", "LP1323", "1930-05-17", "R211372", "1958-03-26")
    assert _one(reg, [ren], as_of=DEC31_2025).status == "protected"
    assert _one(reg, [ren], as_of=JAN1_2026).status == "public_domain"
    # unrenewed 1930 film on 2025-12-31: past its 28th year, not renewed -> likely PD
    assert _one(reg, [], as_of=DEC31_2025).status == "likely_public_domain"


# ---------------------------------------------------------------------------------------------
# 1963 / 1964 and 1977 / 1978

def test_1963_vs_1964():
    late63 = Registration("Film 63", "LP27000", "1963-12-31")
    early64 = Registration("Film 64", "LP27001", "1964-01-01")
    assert _one(late63).status == "likely_public_domain"
    assert _one(late63).reasons[0].rule == "R2_not_renewed"
    assert _one(early64).status == "protected" and _one(early64).reasons[0].rule == "R3_automatic_renewal"
    # a 1963 registration could still be renewed until its 28th anniversary
    assert _one(late63, as_of=date(1991, 6, 1)).reasons[0].rule == "R2_renewal_window_open"
    # and a renewal found protects it
    ren = Renewal("Film 63", "LP27000", "1963-12-31", "RE555555", "1991-02-01")
    assert _one(late63, [ren]).status == "protected"


def test_1977_vs_1978():
    a = _one(Registration("A", "LP48000", "1977-12-31"))
    b = _one(Registration("B", "PA1", "1978-01-01"))
    assert (a.status, a.reasons[0].rule) == ("protected", "R3_automatic_renewal")
    assert (b.status, b.reasons[0].rule) == ("protected", "R4_from_1978")


def test_renewal_window_is_the_28th_year():
    assert renewal_plausible("1927-08-17", "1955-06-10")  # ADAM AND EVIL
    assert renewal_plausible("1945-12-06", "1973-01-03")  # Bells of St. Mary's
    assert not renewal_plausible("1945-12-06", "1971-01-03")
    assert not renewal_plausible("1945-12-06", "1974-03-01")
    assert not renewal_plausible(None, "1973-01-03")


# ---------------------------------------------------------------------------------------------
# matching

def test_number_collision_across_series_is_keyed_by_date():
    """LP239 of 1950 (The Next Voice You Hear, renewed R669963) must not renew an LP239 of
    another series."""
    renewed = Renewal("The Next voice you hear", "LP239", "1950-06-29", "R669963", "1977-08-15")
    other = Registration("Some short", "LP239", "1941-03-03")
    same = Registration("The Next Voice You Hear", "LP239", "1950-06-29")
    m_other, m_same = match_registrations([other, same], [renewed])
    assert m_same.decision == "matched_exact" and m_same.renewal.renewal_id == "R669963"
    assert m_other.decision == "unmatched"
    assert "number_collision_other_date:1950-06-29" in m_other.reasons
    assert _one(other, [renewed]).status == "likely_public_domain"
    assert _one(same, [renewed]).status == "protected"


def test_l_and_lp_forms_of_one_number_match():
    """The cumulative volume prints L81 where the renewal prints LP81 (seed 003, Figs 3-4)."""
    reg = Registration("The Bells of St. Mary's", "L81", "1945-12-06")
    ren = Renewal("BELLS OF ST. MARY'S", "LP81", "1945-12-06", "R542408", "1973-01-03")
    res = _one(reg, [ren])
    assert res.status == "protected" and res.reasons[0].renewal_id == "R542408"


def test_ocr_damaged_numbers_never_give_confident_public_domain():
    # the registration number itself is OCR-damaged ('111485' for L11485)
    reg = Registration("THE MAGNIFICENT AMBERSONS", "111485", "1942-07-10")
    ren = Renewal("THE MAGNIFICENT AMBERSONS", "L11485", "1942-07-10", "R467006", "1969-07-10")
    m = match_registrations([reg], [ren])[0]
    assert m.decision == "matched_fuzzy_review" and not m.reg_number_confident
    assert _one(reg, [ren]).status == "needs_review"
    # no renewal in sight, but the number cannot be read: still review, never likely PD
    assert _one(reg, []).status == "needs_review"
    assert _one(reg, []).reasons[0].rule == "R2_uncertain_match"
    # the renewal's original number OCR-damaged (L113513: a digit crept in): a candidate only
    ren2 = Renewal("THE WOMAN IN THE HOUSE", "L113513", "1942-01-05", "R460945", "1969-01-06")
    reg2 = Registration("Another title altogether", "L11351", "1942-01-05")
    series = [Renewal(f"Other {n}", f"L{n}", "1942-02-02", f"R46{n}", "1969-02-02") for n in (11200, 11400, 11600)]
    m2 = match_registrations([reg2], [ren2] + series)[0]
    assert m2.decision == "matched_fuzzy_review" and m2.renewal.renewal_id == "R460945"
    assert _one(reg2, [ren2] + series).status == "needs_review"
    # without a series around it the long number cannot be doubted: nothing links them
    assert match_registrations([reg2], [ren2])[0].decision == "unmatched"


def test_fuzzy_title_with_plausible_date_goes_to_review():
    reg = Registration("Detour", "LP128", "1945-11-30")
    ren = Renewal("DETOUR.", "LP182", "1945-11-30", "R542500", "1973-01-05")  # digits swapped
    m = match_registrations([reg], [ren])[0]
    assert m.decision == "matched_fuzzy_review" and m.renewal.renewal_id == "R542500"
    assert "title_similarity" in m.renewal.reasons and m.renewal.score >= 85
    res = _one(reg, [ren])
    assert res.status == "needs_review" and "matched_fuzzy_review" in res.reason
    # same number, OCR-damaged date a few days off: review, not a miss
    ren_d = Renewal("Something else", "LP128", "1945-12-03", "R542501", "1973-01-05")
    assert match_registrations([reg], [ren_d])[0].decision == "matched_fuzzy_review"
    # a similar title renewed in the wrong years is no evidence
    far = Renewal("Detour", "LP9", "1960-01-01", "R800000", "1988-01-01")
    assert match_registrations([reg], [far])[0].decision == "unmatched"


def test_curator_decisions_are_honoured():
    reg = Registration("Detour", "LP128", "1945-11-30")
    ren = Renewal("DETOUR.", "LP182", "1945-11-30", "R542500", "1973-01-05")
    no = CuratorDecision("LP128", "1945-11-30", None, "not_renewed", "curator-a")
    yes = CuratorDecision("LP128", "1945-11-30", "R542500", "renewed", "curator-b")
    r_no = _one(reg, [ren], decisions=[no])
    assert r_no.status == "likely_public_domain" and "curator-a" in r_no.reason
    r_yes = _one(reg, [ren], decisions=[yes])
    assert r_yes.status == "protected" and r_yes.reasons[0].renewal_id == "R542500"
    # a decision for another registration date does not apply
    other = CuratorDecision("LP128", "1950-01-01", None, "not_renewed", "curator-a")
    assert _one(reg, [ren], decisions=[other]).status == "needs_review"


def test_source_work_renewal_excludes():
    reg = Registration("Based on a novel", "LP5000", "1950-03-01")
    renewed = SourceWork("LP5000", "1950-03-01", "The Novel", True, "R300000")
    unknown = SourceWork("LP5000", "1950-03-01", "The Play", None)
    not_renewed = SourceWork("LP5000", "1950-03-01", "The Story", False)
    r = _one(reg, source_works=[renewed])
    assert (r.status, r.reasons[0].rule, r.reasons[0].renewal_id) == ("protected", "R5_source_work_renewed", "R300000")
    assert _one(reg, source_works=[unknown]).status == "needs_review"
    assert _one(reg, source_works=[not_renewed]).status == "likely_public_domain"
    # a source work listed for another film changes nothing
    assert _one(reg, source_works=[SourceWork("LP5001", "1950-03-01", "X", True)]).status == "likely_public_domain"


def test_unreadable_registration_date_needs_review():
    res = _one(Registration("No date", "LP1", None))
    assert res.status == "needs_review" and res.reasons[0].rule == "R0_no_date"


# ---------------------------------------------------------------------------------------------
# CLI

def _app() -> typer.Typer:
    app = typer.Typer()

    @app.callback()
    def _root() -> None:
        """test root"""

    cli_copyright.register(app)
    return app


def _write(path: Path, rows: list[list[str]]) -> Path:
    path.write_text("\n".join("\t".join(r) for r in rows) + "\n", encoding="utf-8")
    return path


@pytest.fixture()
def tsvs(tmp_path):
    regs = _write(tmp_path / "R.tsv", [
        ["title", "reg_id", "reg_date"],
        ["All Quiet on the Western Front", "LP1323", "1930-05-17"],
        ["Dracula", "LP1947", "1931-02-02"],
        ["The Bells of St. Mary's", "L81", "1945-12-06"],
        ["Some short", "LP239", "1941-03-03"],
        ["Detour", "LP128", "1945-11-30"],
        ["The Magnificent Ambersons", "111485", "1942-07-10"],
        ["Late film", "LP27001", "1964-01-01"],
        ["Later film", "PA1", "1978-01-01"],
        ["Forgotten", "LP3000", "1950-04-04"],
    ])
    rens = _write(tmp_path / "N.tsv", [
        ["title", "orig_reg_id", "orig_date", "renewal_id", "renewal_date"],
        ["ALL QUIET ON THE WESTERN FRONT", "LP1323", "1930-05-17", "R211372", "1958-03-26"],
        ["DRACULA", "LP1947", "1931-02-02", "R227698", "1958-12-01"],
        ["BELLS OF ST. MARY'S", "LP81", "1945-12-06", "R542408", "1973-01-03"],
        ["The Next voice you hear", "LP239", "1950-06-29", "R669963", "1977-08-15"],
        ["DETOUR", "LP182", "1945-11-30", "R542500", "1973-01-05"],
    ])
    return regs, rens


def test_classify_cli_end_to_end(tsvs):
    regs, rens = tsvs
    res = CliRunner().invoke(_app(), ["copyright", "classify", "--registrations", str(regs), "--renewals", str(rens),
                                      "--as-of", "2026-01-01", "--json"])
    assert res.exit_code == 0, res.output
    rows = json.loads(res.stdout)
    assert all(set(r) == {"reg_id", "reg_date", "title", "status", "reason"} for r in rows)
    got = {(r["reg_id"], r["reg_date"]): r["status"] for r in rows}
    assert got == {
        ("LP1323", "1930-05-17"): "public_domain",
        ("LP1947", "1931-02-02"): "protected",
        ("L81", "1945-12-06"): "protected",
        ("LP239", "1941-03-03"): "likely_public_domain",
        ("LP128", "1945-11-30"): "needs_review",
        ("111485", "1942-07-10"): "needs_review",
        ("LP27001", "1964-01-01"): "protected",
        ("PA1", "1978-01-01"): "protected",
        ("LP3000", "1950-04-04"): "likely_public_domain",
    }
    assert all(r["reason"] for r in rows)
    # one day earlier the 1930 film is still protected by its renewal
    res = CliRunner().invoke(_app(), ["copyright", "classify", "--registrations", str(regs), "--renewals", str(rens),
                                      "--as-of", "2025-12-31", "--json"])
    assert {r["reg_id"]: r["status"] for r in json.loads(res.stdout)}["LP1323"] == "protected"


def test_classify_cli_decisions_file(tsvs, tmp_path):
    regs, rens = tsvs
    dec = _write(tmp_path / "D.tsv", [["reg_id", "reg_date", "renewal_id", "decision", "by"],
                                      ["LP128", "1945-11-30", "", "not_renewed", "ana"]])
    res = CliRunner().invoke(_app(), ["copyright", "classify", "--registrations", str(regs), "--renewals", str(rens),
                                      "--as-of", "2026-01-01", "--json", "--decisions", str(dec)])
    assert res.exit_code == 0, res.output
    row = next(r for r in json.loads(res.stdout) if r["reg_id"] == "LP128")
    assert row["status"] == "likely_public_domain" and "ana" in row["reason"]


@pytest.mark.parametrize("case, message", [
    ("missing_file", "no such file"),
    ("missing_column", "missing column(s) reg_date"),
    ("bad_date", "not an ISO date"),
    ("bad_as_of", "--as-of"),
])
def test_classify_cli_bad_input_exits_2(tsvs, tmp_path, case, message):
    regs, rens = tsvs
    as_of = "2026-01-01"
    if case == "missing_file":
        regs = tmp_path / "nope.tsv"
    elif case == "missing_column":
        regs = _write(tmp_path / "bad.tsv", [["title", "reg_id"], ["X", "LP1"]])
    elif case == "bad_date":
        regs = _write(tmp_path / "bad.tsv", [["title", "reg_id", "reg_date"], ["X", "LP1", "7Feb23"]])
    else:
        as_of = "01/01/2026"
    res = CliRunner().invoke(_app(), ["copyright", "classify", "--registrations", str(regs), "--renewals", str(rens),
                                      "--as-of", as_of, "--json"])
    assert res.exit_code == 2
    assert message in res.stderr.replace("\n", "")
    assert res.stdout == ""
