"""CCE parser (extractors/cce/parse.py; SPEC B2): the real records and verbatim entry strings of
realdata/cce, both printed renewal layouts, registration entries, CPRS/NYPL exports, and an
Unparsed record with a reason for everything that cannot be read."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from extractors.cce.normalize import FILM_CLASSES
from extractors.cce.parse import (
    UNPARSED_REASONS, Unparsed, parse_registration_entry, parse_registration_text, parse_renewal_entry,
    parse_renewal_text, read_archivewatch, read_renewal_export, split_entries, split_registration_entries,
    split_title, title_problem, volume_coverage, volume_year,
)

AW_FILES = ("archivewatch_cce_renewals_off0000000.json", "archivewatch_cce_renewals_off1200000.json",
            "archivewatch_cce_renewals_off1612360.json")


def _cce(realdata_dir: Path) -> Path:
    return realdata_dir / "cce"


def _archivewatch(realdata_dir: Path) -> list[dict]:
    out: list[dict] = []
    for name in AW_FILES:
        out += json.loads((_cce(realdata_dir) / name).read_text(encoding="utf-8"))
    return out


def _verbatim(realdata_dir: Path) -> list[str]:
    lines = (_cce(realdata_dir) / "raw_entry_examples.txt").read_text(encoding="utf-8").splitlines()
    return [ln for ln in lines if ln.strip() and not ln.startswith(("#", "["))]


# ---------------------------------------------------------------------------------------------
# real data

@pytest.mark.realdata
def test_nypl_full_text_parses_into_nypl_fields(realdata_dir):
    """NYPL's own structured fields are the gold for the 1950 layout."""
    path = _cce(realdata_dir) / "nypl_cce_renewals_1950-1A_sample.tsv"
    rows = list(csv.DictReader(path.open(encoding="utf-8"), delimiter="\t", quoting=csv.QUOTE_NONE))
    assert len(rows) == 5
    for row in rows:
        got = parse_renewal_entry(row["full_text"])
        assert not isinstance(got, Unparsed), row["full_text"]
        (rec,) = got
        assert rec.layout == "1950"
        assert (rec.orig_reg_id, rec.orig_date, rec.renewal_id, rec.renewal_date) == (
            row["oreg"], row["odat"], row["id"], row["rdat"])
        assert f"{rec.claimant}|{rec.basis}" == row["claimants"]
        assert row["title"].startswith(rec.title) and rec.title


@pytest.mark.realdata
def test_verbatim_strings_into_fields(realdata_dir):
    lines = _verbatim(realdata_dir)
    parsed = {ln[:12]: parse_renewal_entry(ln) for ln in lines}
    adam = parsed["ADAM AND EVI"][0]
    assert (adam.title, adam.orig_reg_id, adam.orig_date, adam.claimant, adam.basis, adam.renewal_date,
            adam.renewal_id, adam.layout) == ("ADAM AND EVIL", "L24293", "1927-08-17", "Loew's Incorporated", "PWH",
                                             "1955-06-10", "R151558", "1954")
    quiet = parsed["ALL QUIET ON"][0]
    assert (quiet.orig_reg_id, quiet.orig_date, quiet.renewal_id, quiet.renewal_date, quiet.claimant) == (
        "LP1323", "1930-05-17", "R211372", "1958-03-26", "Universal Pictures Co., Inc.")
    rib = parsed["ADAM'S RIB, "][0]
    assert (rib.title, rib.orig_reg_id, rib.renewal_id, rib.renewal_date, rib.claimant, rib.layout) == (
        "ADAM'S RIB", "L18658", "R58624", "1950-02-17", "Paramount Pictures Corp.", "1950")
    assert rib.description.startswith("a photoplay in ten reels")
    # several registrations paired with a renewal list
    digest = parsed["ABBOTT'S DIG"]
    assert [(r.orig_reg_id, r.orig_date, r.renewal_id) for r in digest] == [
        ("B528574", "1922-05-31", "R61801"), ("B548911", "1922-08-24", "R61806"),
        ("B553698", "1922-12-02", "R61808"), ("B571736", "1923-03-02", "R61815")]
    # a renewal range R63718-63725 paired with eight registrations
    dolittle = parsed["ADVENTURES O"]
    assert [r.renewal_id for r in dolittle] == [f"R{n}" for n in range(63718, 63726)]
    assert dolittle[0].orig_reg_id == "B542207" and dolittle[-1].orig_date == "1922-12-31"
    assert {r.basis for r in dolittle} == {"W"}
    # ad interim: the pub. abroad note kept, the US registration read, the AI registration its own record
    address, interim = parsed["ADDRESS, by "]
    assert (address.orig_reg_id, address.orig_date, address.renewal_id, address.basis) == (
        "A704583", "1923-03-27", "R60233", "C")
    assert address.note == "pub. abroad 15Feb23, AI-4905" and "ad_interim_registration" in address.reasons
    assert (interim.orig_reg_id, interim.orig_date, interim.renewal_id) == ("AI-4905", "1923-02-15", "R60233")
    assert "ad_interim_record" in interim.reasons and "ad_interim_record" not in address.reasons
    # the 1954 layout for a book with an AUTHOR.|Title head
    (abbott,) = parsed["ABBOTT, AUST"]
    assert (abbott.title, abbott.orig_reg_id, abbott.renewal_id, abbott.renewal_date, abbott.layout) == (
        "Digest of all the New York reports, 1925", "A901544", "R129491", "1954-04-21", "1954")
    assert parsed["BRILLO MAKES"][0].basis == "P"
    assert parsed["AND SO, AS W"][0].title == "AND SO, AS WE SAID BEFORE"


@pytest.mark.realdata
def test_verbatim_fragments_are_reported_with_reasons(realdata_dir):
    lines = _verbatim(realdata_dir)
    dracula = parse_renewal_entry(next(ln for ln in lines if "LP1947" in ln))
    assert isinstance(dracula, Unparsed) and dracula.reason == "no_renewal_number"
    assert dracula.partial["registrations"] == [("1931-02-02", "LP1947")]
    six = parse_renewal_entry(next(ln for ln in lines if ln.startswith("6 17Dec47")))
    assert isinstance(six, Unparsed) and six.reason == "no_renewal_number"
    assert six.partial["registrations"][0][0] == "1947-12-17"  # '©' read as '6'
    reg = parse_registration_entry(next(ln for ln in lines if ln.startswith("6 17Dec47")), ranges={"L": (1, 20000)})
    assert not isinstance(reg, Unparsed) and "ocr_copyright_sign" in reg[0].reasons
    white_eagle = next(ln for ln in lines if "Gun-Cane" in ln)
    res = parse_renewal_text(white_eagle)
    assert res.records == []
    assert [u.reason for u in res.unparsed] == ["orphan_renewal_fragment", "no_renewal_number"]
    assert all(u.reason in UNPARSED_REASONS for u in res.unparsed)


@pytest.mark.realdata
def test_every_verbatim_line_gives_records_or_reasons(realdata_dir):
    lines = _verbatim(realdata_dir)
    n_records = n_unparsed = 0
    for ln in lines:
        got = parse_renewal_entry(ln)
        if isinstance(got, Unparsed):
            assert got.reason in UNPARSED_REASONS
            n_unparsed += 1
        else:
            assert got and all(r.renewal_id and r.orig_date for r in got)
            n_records += 1
    assert (n_records, n_unparsed) == (11, 3)


@pytest.mark.realdata
def test_archivewatch_records_hit_rate(realdata_dir):
    """~374 real records (OCR noise included): measured 323/374 = 86.4% fully read
    (registration 355, renewal 372, title 343); floors set a little below."""
    recs = _archivewatch(realdata_dir)
    assert len(recs) == 374
    res = read_archivewatch(recs)
    assert len(res.records) + len(res.unparsed) == len(recs)  # nothing silently dropped
    rate = len(res.records) / len(recs)
    assert rate >= 0.85, rate
    every = res.records + [u.partial["record"] for u in res.unparsed]
    assert sum(r.orig_reg_id is not None for r in every) >= 350
    assert sum(r.renewal_id is not None for r in every) >= 370
    for u in res.unparsed:
        assert u.reason in {"orig_reg_uncertain", "renewal_id_uncertain", "title_not_read"}
        assert u.detail and u.partial["record"].reasons
    # clean numbers agree with the structured field, unchanged
    by_raw = {(r.orig_reg_raw, r.renewal_raw): r for r in every}
    exact = [r for r in recs if r["reg"][:1] in "LM" and r["reg"][1:].lstrip("P").isdigit() and len(r["reg"]) <= 7]
    agree = sum(by_raw[(r["reg"], r["r"])].orig_reg_id == r["reg"] for r in exact)
    assert agree / len(exact) >= 0.97, (agree, len(exact))


@pytest.mark.realdata
def test_archivewatch_ocr_cases_from_the_manifest(realdata_dir):
    res = read_archivewatch(_archivewatch(realdata_dir))
    every = {r.title: r for r in res.records}
    unread = {u.partial["record"].title: u for u in res.unparsed}
    assert every["THE MAGNIFICENT AMBERSONS"].orig_reg_id == "L11485"  # '111485'
    assert every["ALWAYS THE WOMAN"].orig_reg_id == "L18333"  # '118333'
    assert every["THE WOLF MAN"].orig_reg_id == "L10910" and every["THE WOLF MAN"].renewal_id == "R455081"
    assert every["THE COVERED WAGON"].renewal_id == "R59685"
    assert every["The Next voice you hear"].orig_reg_id == "LP239"
    assert every["The Next voice you hear"].claimant == "wetro-SoldwynMayer, Inc."
    assert "claimant:trailing_fragment_kept_out" in every["The Next voice you hear"].reasons
    assert every["Thundering rails"].orig_reg_id == "MP332"  # 'HP332'
    assert unread["THE BUSTER"].reason == "renewal_id_uncertain"  # R909862
    assert unread["HIGH AND DRY"].partial["record"].renewal_candidates[0].reg_id == "R57076"  # R957076
    assert unread["EAGLE SQUADRON"].reason == "orig_reg_uncertain"  # L114352
    assert unread["Pictures Corporation"].reason == "title_not_read"
    assert every["WHAT ABOUT DADDY?"].description.startswith("A photoplay in 1 reel")


@pytest.mark.realdata
def test_cross_source_same_renewals(realdata_dir):
    """The 1950 volume records of Archive-Watch and NYPL's rows name the same renewals."""
    path = _cce(realdata_dir) / "nypl_cce_renewals_1950-1A_sample.tsv"
    nypl = {r.title: r for r in read_renewal_export(path, film_only=True).records}
    aw = {r.title: r for r in read_archivewatch(_archivewatch(realdata_dir)).records}
    for title in ("ADAM'S RIB", "THE ALARM"):
        n = next(v for k, v in nypl.items() if k.startswith(title))
        assert (aw[title].orig_reg_id, aw[title].renewal_id) == (n.orig_reg_id, n.renewal_id)
        assert aw[title].orig_year == int(n.orig_date[:4])


@pytest.mark.realdata
def test_cprs_export_layout(realdata_dir):
    res = read_renewal_export(_cce(realdata_dir) / "nypl_cce_renewals_1978-from-db_sample.tsv")
    assert len(res.records) == 13 and res.unparsed == []
    first = res.records[0]
    assert (first.orig_reg_id, first.orig_date, first.renewal_id, first.renewal_date, first.claimant, first.basis) == (
        "A42179", "1950-03-21", "RE9390", "1978-12-14", "Charles Singer", "A")
    assert {r.orig_reg_id for r in res.records} >= {"AI-1553", "AFO1742", "DP164", "TX274834", "KK48245"}
    religion = next(r for r in res.records if r.renewal_id == "RE3952")
    assert religion.claimant == "Amy R. Previs; Martin Robertson" and religion.basis == "C"
    films = read_renewal_export(_cce(realdata_dir) / "nypl_cce_renewals_1978-from-db_sample.tsv", film_only=True)
    assert films.records == [] and {u.reason for u in films.unparsed} == {"not_motion_picture"}


# ---------------------------------------------------------------------------------------------
# written examples

def test_cprs_text_with_padded_numbers_and_gaps():
    text = ("titl\toreg\todat\tid\tdreg\tclaimants\n"
            "The Bells of St. Mary's\tLP81\t1945-12-06\tRE0000542408\t1979-01-03\tNTA|PWH\n"
            "Nothing\t\t1950-01-01\tRE5\t1978-01-01\t\n"
            "Detour\tLP128\t1945-11-30\tRE-12-345\t1979-06-01\tPRC|PWH\n")
    res = read_renewal_export(text, film_only=True)
    assert [(r.orig_reg_id, r.renewal_id) for r in res.records] == [("LP81", "RE542408"), ("LP128", "RE12345")]
    assert [u.reason for u in res.unparsed] == ["missing_field"]
    with pytest.raises(ValueError, match="lacks columns"):
        read_renewal_export("titl\toreg\nX\tLP1\n")


OCR_1970S_PAGE = """MOTION PICTURES RENEWALS

THE BELLS OF ST. MARY'S, a photoplay in 13 reels by Rainbow Productions. © 6Dec45; LP81. National Tele-
film Associates, Inc. (PWH); 3Jan73; R542408.
DETOUR. © 30Nov45; LP128. PRC Pictures, Inc.
(PwH); 5Jan73; R542500. THE STRANGER. @ 2Jul46; LP424. International Pictures, Inc. (P&H); 200ct73;
R561234.
KISS OF DEATH. © 1Aug47; LP1173. Twentieth Century-Fox Film Corp. (PWH); 2Aug74; R6l1003.
"""


def test_split_and_parse_a_1970s_page():
    entries = split_entries(OCR_1970S_PAGE)
    assert len(entries) == 5 and entries[0] == "MOTION PICTURES RENEWALS"
    assert entries[1] == ("THE BELLS OF ST. MARY'S, a photoplay in 13 reels by Rainbow Productions. © 6Dec45; LP81. "
                          "National Tele-film Associates, Inc. (PWH); 3Jan73; R542408.")  # hyphenated line joined
    assert entries[3].startswith("THE STRANGER. @ 2Jul46")  # two entries on one line split
    res = parse_renewal_text(OCR_1970S_PAGE, volume_year=1973)
    got = {r.orig_reg_id: r for r in res.records}
    assert set(got) == {"LP81", "LP128", "LP424", "LP1173"}
    assert got["LP81"].claimant == "National Tele-film Associates, Inc."
    assert got["LP128"].basis == "PWH" and "basis:basis_ocr_repaired" in got["LP128"].reasons
    assert got["LP424"].renewal_date == "1973-10-20" and "ocr_copyright_sign" in got["LP424"].reasons
    assert got["LP424"].title == "THE STRANGER"
    assert got["LP1173"].renewal_id == "R611003" and "renewal:ocr_digit_confusion" in got["LP1173"].reasons
    assert got["LP1173"].renewal_date == "1974-08-02"
    assert [u.reason for u in res.unparsed] == ["no_copyright_date"]  # the page heading, reported


def test_unreadable_entries_are_never_silent():
    res = parse_renewal_text("PAGE 12\n\nSOME TITLE. © 5May31; LP2207. Claimant (PWH); 5May59; R999.\n\n"
                             "OTHER. © 1Jan31, LP1; 2Jan31, LP2; 3Jan31, LP3. R10001-10002, 1Jan59, X (PWH)")
    reasons = [u.reason for u in res.unparsed]
    assert "no_copyright_date" in reasons
    assert "renewal_count_mismatch" in reasons
    assert len(res.records) == 1 and res.records[0].renewal_id is None
    assert any(r.startswith("renewal:") for r in res.records[0].reasons)


REGISTRATIONS_1940S = """THE BELLS OF ST. MARY'S. Rainbow Productions. Released by RKO Radio Pictures. 126 min.,
sd., b&w, 35 mm. © Rainbow Productions, inc.; 6Dec45; LP81.

ALL QUIET ON THE WESTERN FRONT. 14 reels. © Universal Pictures Corp.; 17May30; LP1323.

DRACULA. 8 reels. © Universal Pictures Corp.; 2Feb3l1; LP1947.

THE WOLF MAN. © 12Dec41; l10910. MAGNIFICENT AMBERSONS. 88 min. © 10Jul42; 111485.

NEWS OF THE DAY. No. 1. © Hearst Metrotone News, inc.; 3Jan50; MP1005; 6Jan50; MP1009.

A CREDITS PAGE WITHOUT ANY DATE.
"""


def test_registration_entries():
    res = parse_registration_text(REGISTRATIONS_1940S, ranges={"L": (10100, 12100)})
    got = {(r.title, r.reg_id): r for r in res.records}
    bells = got[("THE BELLS OF ST. MARY'S", "LP81")]
    assert bells.reg_date == "1945-12-06" and bells.claimant == "Rainbow Productions, inc."
    assert got[("ALL QUIET ON THE WESTERN FRONT", "LP1323")].reg_date == "1930-05-17"
    dracula = got[("DRACULA", "LP1947")]
    assert dracula.reg_date == "1931-02-02" and "reg_date:ocr_year_extra_char" in dracula.reasons
    assert got[("THE WOLF MAN", "L10910")].reg_date == "1941-12-12"
    amb = got[("MAGNIFICENT AMBERSONS", "L11485")]
    assert "reg:ocr_class_letter_read_as_digit" in amb.reasons
    news = [r for r in res.records if r.title == "NEWS OF THE DAY"]
    assert [(r.reg_id, r.reg_date) for r in news] == [("MP1005", "1950-01-03"), ("MP1009", "1950-01-06")]
    assert [u.reason for u in res.unparsed] == ["no_copyright_date"]


def test_titles_and_title_problems():
    assert split_title("ADAM'S RIB, a photoplay in ten reels, by Famous Players-Lasky Corp. ")[0] == "ADAM'S RIB"
    assert split_title("LOVE IN GLOOM, 2 photoplay in 2 reels by Columbia Pictures Corp")[0] == "LOVE IN GLOOM"
    assert split_title("6. The Gun-Cane murder. ")[0] == "The Gun-Cane murder"
    assert split_title("The Bells of St. Mary's. Rainbow Productions.")[0] == "The Bells of St. Mary's"
    assert title_problem("Pictures Corporation") == "title_is_credit"
    assert title_problem("Productions, Inc") == "title_is_credit"
    assert title_problem("episodes no") == "title_fragment"
    assert title_problem("(This is America, no") == "title_fragment"
    assert title_problem("The Petty girl") is None and title_problem("THE WOLF MAN") is None


def test_volume_year_from_identifier():
    assert volume_year("catalogofcopyri341213libr") == 1950
    assert volume_year("catalogofc19693231213libr") == 1969
    assert volume_year("1977motionpictur3311213libr") == 1977
    assert volume_year("something") is None


REGISTRATIONS_1912_1939 = """MOTION PICTURES 1912-1939

BROADWAY SERENADE OF 1934. 9 reels. © Metro-Goldwyn-Mayer Corp.; 10Jan34; LP4412.
CRIMSON TRAIL. 6 reels. © Paramount Productions, inc.; 26Jan34; LP4555.
LADY OF THE HARBOR. 7 reels. © United Artists Corp.;
9Feb34; LP46O1.
NEWS OF THE DAY. No. 1. © Hearst Metrotone News, inc.; 3Jan34; MP1005; 6Jan34; MP1009
THE 39 STEPS. 9 reels. © Gaumont-British Picture Corp.; 1Aug35; LP5790.
"""


def test_registration_title_ending_in_a_year_is_kept():
    """Regression: entries were cut after any 'digit.' ('BROADWAY SERENADE OF 1934.'), losing the
    title; an entry now ends only at its closing 'DATE; NUMBER.' (or a line ending in one)."""
    entries = split_registration_entries(REGISTRATIONS_1912_1939)
    assert entries == [
        "MOTION PICTURES 1912-1939",
        "BROADWAY SERENADE OF 1934. 9 reels. © Metro-Goldwyn-Mayer Corp.; 10Jan34; LP4412.",
        "CRIMSON TRAIL. 6 reels. © Paramount Productions, inc.; 26Jan34; LP4555.",
        "LADY OF THE HARBOR. 7 reels. © United Artists Corp.; 9Feb34; LP46O1.",
        "NEWS OF THE DAY. No. 1. © Hearst Metrotone News, inc.; 3Jan34; MP1005; 6Jan34; MP1009",
        "THE 39 STEPS. 9 reels. © Gaumont-British Picture Corp.; 1Aug35; LP5790.",
    ]
    res = parse_registration_text(REGISTRATIONS_1912_1939, volume_year=1939)
    got = {r.reg_id: r for r in res.records}
    assert (got["LP4412"].title, got["LP4412"].reg_date) == ("BROADWAY SERENADE OF 1934", "1934-01-10")
    assert got["LP4412"].claimant == "Metro-Goldwyn-Mayer Corp."
    assert got["LP4601"].title == "LADY OF THE HARBOR"
    assert got["MP1009"].title == "NEWS OF THE DAY" and got["MP1009"].reg_date == "1934-01-06"
    assert got["LP5790"].title == "THE 39 STEPS"
    assert [u.reason for u in res.unparsed] == ["no_copyright_date"]  # the heading, reported


def test_cumulative_volume_years_and_coverage():
    """Regression: volume_year() of a cumulative volume was the first year of its range, so '34'
    read 1834; it is now the last year, and the range bounds two-digit years."""
    assert volume_coverage("motionpict19121939librrich") == (1912, 1939)
    assert volume_year("motionpict19121939librrich") == 1939
    assert volume_coverage("x", "Catalog of Copyright Entries, Cumulative Series: Motion Pictures 1940-1949") == (
        1940, 1949)
    assert volume_coverage("x", "Motion pictures, 1912 to 1939") == (1912, 1939)
    assert volume_coverage("catalogofcopyri341213libr", "1950 Third Series Vol 4 Parts 12-13") is None
    assert volume_coverage("catalogofc19693231213libr") is None
    assert volume_year("motionpictures", "Motion Pictures 1940-49") == 1949
    assert volume_year("motionpictures", None, "1951-06-01") == 1951  # the metadata date, last
    vol = "motionpict19121939synth"
    # the year alone (no coverage) already keeps '34' in the 1900s; so does the film floor
    (rec,) = parse_registration_entry("CRIMSON TRAIL. 6 reels. © Paramount; 26Jan34; LP4555.",
                                      volume_year=volume_year(vol))
    assert rec.reg_date == "1934-01-26"
    (rec,) = parse_registration_entry("CRIMSON TRAIL. 6 reels. © Paramount; 26Jan34; LP4555.", volume_year=1912)
    assert rec.reg_date == "1934-01-26" and "reg_date:century_from_floor" in rec.reasons
    res = parse_registration_text(REGISTRATIONS_1912_1939 + "\nDRACULA. 8 reels. © Universal; 2Feb3l1; LP1947.\n"
                                  "A STRAY. 5 reels. © Somebody; 5Jan45; LP9999.\n",
                                  volume_year=volume_year(vol), coverage=volume_coverage(vol))
    got = {r.reg_id: r for r in res.records}
    assert got["LP4412"].reg_date == "1934-01-10" and "reg_date:century_from_coverage" in got["LP4412"].reasons
    assert got["LP1947"].reg_date == "1931-02-02"  # the stray year character resolved inside 1912-1939
    (stray,) = [u for u in res.unparsed if u.reason == "no_registration"]
    assert "A STRAY" in stray.raw and "year_outside_volume_coverage" in stray.detail


# ---------------------------------------------------------------------------------------------
# entries as printed (issue 17, point 6): claimant-first, long basis, R-less lists, ad interim,
# digit-ending class symbols, implausible gaps flagged; measured against NYPL's own parse

@pytest.mark.realdata
def test_against_nypl_fully_read_and_no_silent_error(realdata_dir):
    """NYPL's fields are the gold: >= 97% of rows fully read, none silently wrong, each miss with a reason."""
    from extractors.cce.nypl_check import measure, nypl_rows

    rows = nypl_rows([_cce(realdata_dir) / "nypl_cce_renewals_1950-1A_sample.tsv"])
    assert rows
    res = measure(rows)
    assert res["fully_read_fraction"] >= 0.97, res["misses"]
    assert res["silent_errors"] == []
    assert res["misses_without_reason"] == []


def test_against_gathered_nypl_rows():
    """The same measure on rows gathered from NYPL's repository (tests/data/cce/README.md): every
    row NYPL parsed, fully read or flagged with a reason, none silently wrong."""
    from extractors.cce.nypl_check import measure, nypl_rows

    rows = nypl_rows([Path(__file__).parent / "data" / "cce" / "nypl_1950-1A_head.tsv"])
    assert len(rows) >= 40
    res = measure(rows)
    assert res["fully_read_fraction"] >= 0.97, res["misses"]
    assert res["silent_errors"] == []
    assert res["misses_without_reason"] == []


def test_claimant_first_layout():
    (rec,) = parse_renewal_entry("THE LEATHER PUSHERS. © RKO Radio Pictures, inc. (PWH) Round 1. "
                                 "© 11Jan23, L18581. R71837, 19Dec50.")
    assert (rec.layout, rec.orig_reg_id, rec.orig_date, rec.renewal_id, rec.renewal_date) == (
        "claimant_first", "L18581", "1923-01-11", "R71837", "1950-12-19")
    assert (rec.claimant, rec.basis, rec.title) == ("RKO Radio Pictures, inc.", "PWH", "THE LEATHER PUSHERS")
    assert "Round 1" in rec.description
    # dates listed before their numbers, paired in order
    a, b = parse_renewal_entry("AINSLEE'S. © Street & Smith Publications, inc. (PCW) v. 50, nos. 4-5. "
                               "© 15Nov22, 15Dec22, B551759, B567153. R56538-56539, 30Dec49.")
    assert [(r.orig_reg_id, r.orig_date, r.renewal_id) for r in (a, b)] == [
        ("B551759", "1922-11-15", "R56538"), ("B567153", "1922-12-15", "R56539")]


def test_long_basis_several_claimants_and_renewal_letter_carried():
    recs = parse_renewal_entry("A SERIAL. © 3Jan40, L1001; 3Jan40, L1002; 3Jan40, L1003. R427033-427034, 427037, "
                               "2Jan68, Mary Smith (E of D. W. Griffith, PWH)")
    assert [r.renewal_id for r in recs] == ["R427033", "R427034", "R427037"]
    assert recs[0].basis == "PWH" and recs[0].claimant == "Mary Smith"
    assert "basis text: E of D. W. Griffith" in recs[0].note
    assert {"renewal_letter_carried", "basis:long_basis_text"} <= set(recs[0].reasons)
    (two,) = parse_renewal_entry("X, by Y. © 16May22, A674144. R61614, 27Apr50, Clement Gould Noyes (NK) & "
                                 "Miles S. Sherrill (A)")
    assert (two.claimant, two.basis) == ("Clement Gould Noyes; Miles S. Sherrill", "NK; A")


def test_class_symbol_ending_in_a_digit():
    (rec,) = parse_renewal_entry("A BOOK. © 7Feb23, A5-4459. R58624, 17Feb50, Someone (A)")
    assert rec.orig_reg_id == "A5-4459"
    film = parse_renewal_entry("A BOOK. © 7Feb23, A5-4459. R58624, 17Feb50, Someone (A)", classes=FILM_CLASSES)
    assert film[0].orig_reg_id is None  # not a film class: never read as one


@pytest.mark.parametrize("entry,flag", [
    ("LATE. © 7Feb20, L14658. R58624, 17Feb50, P (PWH)", "flag:renewal_after_28th_year"),
    ("EARLY. © 7Feb30, L14658. R58624, 17Feb50, P (PWH)", "flag:renewal_before_28th_year"),
    ("OLD. © 7Feb1893, L14658. R58624, 17Feb50, P (PWH)", "flag:registration_before_1894"),
])
def test_implausible_gaps_are_flagged_not_trusted(entry, flag):
    from extractors.cce.entries import entry_status

    recs = parse_renewal_entry(entry)
    assert flag in recs[0].reasons
    assert entry_status(recs)[0] == "flagged"
    ok = parse_renewal_entry("FINE. © 7Feb23, L14658. R58624, 17Feb50, P (PWH)")
    assert entry_status(ok) == ("read", list(ok[0].reasons)) and not any(r.startswith("flag:") for r in ok[0].reasons)


def test_parse_entries_cli(tmp_path):
    from typer.testing import CliRunner

    from cinesub.cli_copyright import copyright_app

    f = tmp_path / "entries.txt"
    f.write_text("ADAM'S RIB, a photoplay in ten reels, by Famous Players-Lasky Corp. © 7Feb23, L18658. "
                 "R58624, 17Feb50, Paramount Pictures Corp. (PWH)\n\nnot an entry\n"
                 "LATE. © 7Feb20, L14658. R58624, 17Feb50, P (PWH)\n", encoding="utf-8")
    res = CliRunner().invoke(copyright_app, ["parse-entries", str(f), "--volume-year", "1950", "--json"])
    assert res.exit_code == 0, res.output
    got = json.loads(res.stdout)
    assert [(e["line"], e["status"]) for e in got] == [(1, "read"), (3, "unread"), (4, "flagged")]
    assert got[0]["records"][0]["orig_reg_id"] == "L18658" and got[1]["reasons"] == ["no_copyright_date"]
    missing = CliRunner().invoke(copyright_app, ["parse-entries", str(tmp_path / "nope.txt"), "--json"])
    assert missing.exit_code == 2 and missing.stdout == ""
