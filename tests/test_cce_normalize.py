"""CCE number and date normalisation (extractors/cce/normalize.py; SPEC B2): OCR confusions from
realdata/cce/MANIFEST.md, candidates with confidences, reason codes for every change."""

from __future__ import annotations

import pytest

from extractors.cce.normalize import (
    CONFIDENT, FILM_EARLIEST_YEAR, REASONS, class_family, normalize_basis, normalize_reg_id, normalize_renewal_id,
    parse_cce_date, ranges_from, reg_key, renewal_number_window, resolve_two_digit_year,
)


@pytest.mark.parametrize("raw, iso, reason", [
    ("7Feb23", "1923-02-07", None),
    ("17Dec22", "1922-12-17", None),
    ("10Jun55", "1955-06-10", None),
    ("3Jan73", "1973-01-03", None),
    ("22Ju169", "1969-07-22", "ocr_month_repaired"),      # Ju1 = Jul
    ("200ct69", "1969-10-20", "ocr_month_repaired"),      # 0ct = Oct
    ("20ct69", "1969-10-02", "ocr_month_repaired"),
    ("SDec77", "1977-12-05", "ocr_day_repaired"),         # S = 5
    ("g0ct69", "1969-10-09", "ocr_day_repaired"),
    ("9DecT7", "1977-12-09", "ocr_year_repaired"),        # T = 7
    ("11Nov/77", "1977-11-11", None),
    ("29Aug/7", "1977-08-29", "ocr_year_repaired"),       # / = 7
    ("21Novw/7", "1977-11-21", "ocr_year_repaired"),
    ("16J3an69", "1969-01-16", "ocr_month_stray_char"),
    ("10¢t69", "1969-10-01", "ocr_month_repaired"),
    ("223u169", "1969-07-22", "ocr_month_fuzzy"),         # 3ul = Jul
    ("2Feb3l1", "1931-02-02", "ocr_year_extra_char"),     # Dracula, MANIFEST
    ("1930-05-17", "1930-05-17", None),
])
def test_dates_ocr_forms(raw, iso, reason):
    got = parse_cce_date(raw)
    assert got.iso == iso, got
    if reason:
        assert reason in got.reasons
    assert all(r in REASONS for r in got.reasons)


def test_two_digit_year_is_recorded_and_century_follows_context():
    assert parse_cce_date("7Feb23").reasons == ("two_digit_year_19xx",)
    assert parse_cce_date("1930-05-17").reasons == ()  # nothing changed, nothing recorded
    # a 1905 work renewed in a 1933 volume: still 19xx; an '05' in a volume of 1899 is 1805
    assert parse_cce_date("4Jul05", context_year=1933).iso == "1905-07-04"
    got = parse_cce_date("4Jul05", context_year=1899)
    assert got.iso == "1805-07-04" and "century_from_context" in got.reasons
    # a stray year character resolved by the context year: a 1958 volume renews 1930-31 works
    assert parse_cce_date("2Feb3l1", context_year=1958).iso == "1931-02-02"


def test_two_digit_year_never_before_the_film_floor():
    """Regression: a cumulative 1912-1939 volume read with its first year as context put '34'
    in 1834; with the motion-picture floor (1890) no century before it is taken."""
    assert parse_cce_date("10Jan34", context_year=1912).iso == "1834-01-10"  # no floor: the plain rule
    got = parse_cce_date("10Jan34", context_year=1912, min_year=FILM_EARLIEST_YEAR)
    assert got.iso == "1934-01-10" and "century_from_floor" in got.reasons
    assert parse_cce_date("4Jul95", context_year=1899, min_year=FILM_EARLIEST_YEAR).iso == "1895-07-04"
    assert resolve_two_digit_year(34, context_year=1939, min_year=FILM_EARLIEST_YEAR) == (
        1934, ("two_digit_year_19xx",))


def test_two_digit_year_inside_the_volume_coverage():
    cov = (1912, 1939)
    for raw, iso in (("10Jan34", "1934-01-10"), ("3Mar12", "1912-03-03"), ("31Dec39", "1939-12-31")):
        got = parse_cce_date(raw, context_year=1912, coverage=cov)
        assert got.iso == iso and got.reasons == ("century_from_coverage",), got
    # within a year of the coverage: read, and flagged
    edge = parse_cce_date("5Jan40", coverage=cov)
    assert edge.iso == "1940-01-05" and "year_outside_volume_coverage" in edge.reasons
    # far outside: not pushed into another century, not read, and said why
    far = parse_cce_date("5Jan45", context_year=1939, coverage=cov)
    assert far.iso is None and far.reasons == ("year_outside_volume_coverage",)
    assert resolve_two_digit_year(70, coverage=cov, min_year=FILM_EARLIEST_YEAR) == (
        None, ("year_outside_volume_coverage",))
    # a stray year character: the reading inside the coverage wins over the renewal heuristic
    assert parse_cce_date("2Feb3l1", context_year=1939, coverage=cov).iso == "1931-02-02"
    assert parse_cce_date("2Feb3l1", context_year=1939).iso == "1911-02-02"  # without coverage: 1939-28
    assert all(r in REASONS for r in far.reasons + edge.reasons)


@pytest.mark.parametrize("raw, reason", [("31Feb50", "invalid_date"), ("143169", "unreadable_date"),
                                         ("", "unreadable_date"), ("Feb50", "unreadable_date")])
def test_unreadable_dates_say_why(raw, reason):
    got = parse_cce_date(raw)
    assert got.iso is None and got.reasons == (reason,)


def test_exact_registration_numbers_unchanged():
    for raw in ("L18658", "LP1323", "LP239", "MP2627", "M11311", "LU123", "MU9"):
        got = normalize_reg_id(raw)
        assert got.value == raw and got.best.confidence == 1.0 and got.best.reasons == ()
    got = normalize_reg_id("AI-4905", classes=None)
    assert got.value == "AI-4905"
    assert normalize_reg_id("A704583", classes=None).value == "A704583"


def test_class_letter_read_as_digit_needs_the_volume_to_be_confident():
    alone = normalize_reg_id("118333")
    assert alone.best.reg_id == "L18333" and not alone.confident and alone.value is None
    assert "ocr_class_letter_read_as_digit" in alone.best.reasons
    ctx = {"L": (17100, 20500)}
    got = normalize_reg_id("118333", ranges=ctx)
    assert got.value == "L18333" and got.best.confidence >= CONFIDENT
    assert set(got.best.reasons) == {"ocr_class_letter_read_as_digit", "in_series_range"}
    # the class letter lost rather than misread: only the range tells which
    got = normalize_reg_id("18123", ranges=ctx)
    assert got.value == "L18123" and "class_letter_missing" in got.best.reasons


def test_ocr_letter_confusions():
    assert normalize_reg_id("L1O910").value == "L10910"
    assert "ocr_digit_confusion" in normalize_reg_id("L1O910").best.reasons
    assert normalize_reg_id("l18333").value == "L18333"
    hp = normalize_reg_id("HP1009")
    assert hp.best.reg_id == "MP1009" and "ocr_class_letter_confusion" in hp.best.reasons
    lost = normalize_reg_id("P1005", ranges={"MP": (200, 3000), "LP": (20, 1100)})
    assert {c.reg_id for c in lost.candidates} >= {"MP1005", "LP1005"} and lost.value is None
    assert normalize_reg_id("©©©").value is None and normalize_reg_id("©©©").reasons == ("unreadable_number",)


@pytest.mark.parametrize("raw", ["1P4412", "IP4412", "|P4412", "1P4412.", "1P 4412"])
def test_class_L_read_as_1_before_P(raw):
    """Regression: '1P4412' (the L of LP read as 1) was unreadable; it reads LP4412, confident,
    with MP4412 a weak alternative (the 1 as what is left of an M)."""
    got = normalize_reg_id(raw)
    assert got.value == "LP4412" and got.confident
    assert "ocr_class_letter_L_read_as_digit" in got.best.reasons and got.best.confidence < 1.0
    alt = {c.reg_id: c for c in got.candidates}["MP4412"]
    assert "ocr_class_letter_M_remnant" in alt.reasons and alt.confidence < CONFIDENT
    assert normalize_reg_id("1U123").value == "LU123"
    assert normalize_reg_id(raw, classes=None).value == "LP4412"
    assert all(r in REASONS for c in got.candidates for r in c.reasons)


def test_class_L_read_as_1_is_weighed_against_the_volume():
    # the volume's LP run holds the number: confident and raised
    got = normalize_reg_id("1P4412", ranges={"LP": (4000, 5200), "MP": (100, 900)})
    assert got.value == "LP4412" and "in_series_range" in got.best.reasons
    # only the MP run holds it: no confident reading, candidates go to review
    amb = normalize_reg_id("1P4412", ranges={"MP": (4000, 5200), "LP": (100, 900)})
    assert amb.value is None and "ambiguous_reading" in amb.reasons
    assert {"LP4412", "MP4412"} <= {c.reg_id for c in amb.candidates}
    # M read as 4 is a rarer confusion: a candidate, never a confident reading alone
    four = normalize_reg_id("4P1005")
    assert four.best.reg_id == "MP1005" and four.value is None
    # damage inside the digits stays unreadable; a lost letter is not this repair
    assert normalize_reg_id("1P44X2").value is None
    assert normalize_reg_id("1PA4412").value is None


def test_seventh_digit_gives_candidates_not_a_guess():
    ctx = {"L": (10100, 12100)}
    got = normalize_reg_id("L114352", ranges=ctx)
    assert got.value is None and "ambiguous_reading" in got.reasons
    ids = {c.reg_id for c in got.candidates}
    assert {"L11352", "L11452", "L11432", "L11435"} <= ids
    assert all(c.confidence < CONFIDENT for c in got.candidates)
    # without a range nothing says the number is too long
    assert normalize_reg_id("L114352").value == "L114352"


def test_renewal_numbers():
    assert normalize_renewal_id("R58624", year=1950).value == "R58624"
    assert normalize_renewal_id("R45 2882", year=1969).value == "R452882"
    assert normalize_renewal_id("R45 2882").best.reasons == ("digits_rejoined",)
    eight = normalize_renewal_id("8670686", year=1977)
    assert eight.value == "R670686" and "ocr_R_read_as_8" in eight.best.reasons
    assert normalize_renewal_id("B670680", year=1977).value == "R670680"
    assert normalize_renewal_id("RE9390").value == "RE9390"
    padded = normalize_renewal_id("RE0000123456")
    assert padded.value == "RE123456" and "leading_zeros_dropped" in padded.best.reasons
    assert normalize_renewal_id("RE-123-456").value == "RE123456"
    assert normalize_renewal_id("&bo&1352", year=1977).value is None


def test_renewal_number_with_a_crept_in_digit():
    got = normalize_renewal_id("R957076", year=1950)  # MANIFEST: likely R57076
    assert got.value is None
    assert got.best.reg_id == "R57076" and "extra_digit_removed" in got.best.reasons
    assert any(c.reg_id == "R957076" and "renewal_number_implausible_for_year" in c.reasons for c in got.candidates)
    bad = normalize_renewal_id("R909862", year=1950)
    assert bad.value is None and "renewal_number_implausible_for_year" in bad.reasons
    lo, hi = renewal_number_window(1950)
    assert lo <= 57078 <= hi and lo <= 68902 <= hi and not lo <= 909862 <= hi
    assert renewal_number_window(1949) is None


@pytest.mark.parametrize("raw, code", [("PWH", "PWH"), ("PwH", "PWH"), ("PW#H", "PWH"), ("{PWH", "PWH"),
                                       ("PH", "PWH"), ("PHH", "PWH"), ("P&H", "PWH"), ("EWH", "PWH"),
                                       ("PCW", "PCW"), ("A", "A"), ("NK", "NK"), ("W", "W")])
def test_basis_codes(raw, code):
    assert normalize_basis(raw)[0] == code
    assert normalize_basis(raw)[1] == (() if raw == code else ("basis_ocr_repaired",))


def test_basis_unreadable():
    assert normalize_basis("xyzq") == (None, ("basis_unreadable",))


def test_reg_key_is_number_plus_date_and_family():
    assert reg_key("LP1323", "1930-05-17") != reg_key("LP1323", "1950-05-17")
    assert reg_key("L81", "1945-12-06") == reg_key("LP81", "1945-12-06")  # seed 003 Figs 3-4
    assert reg_key("LU81", "1945-12-06") != reg_key("LP81", "1945-12-06")
    assert class_family("M") == class_family("MP") == "MP"


def test_ranges_ignore_outliers_and_rare_classes():
    ids = [f"L{n}" for n in range(10374, 11754, 50)] + ["L11", "L114352", "L116402", "HP332", "P1005", "Q1"]
    rng = ranges_from(ids)
    assert set(rng) == {"L"}
    lo, hi = rng["L"]
    assert 10000 < lo <= 10374 and 11753 <= hi < 12500
