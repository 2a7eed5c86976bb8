"""The pure helpers of the Hollywood flow's stages (flows/stages/pd_*.py, flows/hollywood.py):
issue dates from running heads, registration entry splitting, the 1P→LP repair, film ↔
registration and film ↔ IA item links, the extractor cross-check, the Gemini fallback, and the
stage reuse rule against the Hollywood state DB."""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest

from cinesub.settings import load_settings
from flows.env.live import LiveEnvironment
from flows.env.sample import SampleEnvironment
from flows.kernel_context import RunContext
from flows.kernel_exec import execute
from flows.hollywood import gemini_plan
from extractors.cce.normalize import normalize_reg_id
from extractors.cce.parse import split_registration_entries
from flows.stages.hollywood.collection import ia_query, link_registration, pick_ia_item
from flows.stages.hollywood.common import PDStage, hollywood_config_hash, pd_connect, pd_state_db, replace_rows
from flows.stages.hollywood.variety import crosscheck_rows, head_issue_date

D = dt.date


def test_issue_date_from_the_running_head():
    lo, hi = D(1934, 3, 7), D(1934, 3, 14)
    assert head_issue_date("Wednesday, March 14, 1934    PICTURE GROSSES    VARIETY 16\n", lo, hi) == D(1934, 3, 14)
    assert head_issue_date("VARIETY  Wednesday, Marcb 7, 1934\n", lo, hi) == D(1934, 3, 7)  # OCR-damaged month
    # a date far outside the item's range is not the issue date (an article mentioning a year)
    assert head_issue_date("Wednesday, March 7, 1954\n", lo, hi) is None
    assert head_issue_date("LEGITIMATE    VARIETY\nno date here\n", lo, hi) is None
    # only the head is read: a date deep in the page text is ignored
    assert head_issue_date("x" * 300 + " March 9, 1934", lo, hi) is None


def test_registration_entries_split_at_their_closing_number():
    text = ("MOTION PICTURES 1912-1939\n\n"
            "BROADWAY SERENADE OF 1934. 9 reels. © Metro-Goldwyn-Mayer Corp.; 10Jan34; LP4412.\n"
            "CRIMSON TRAIL. 6 reels. © Paramount Productions, inc.; 26Jan34; LP4555.\n"
            "LADY OF THE HARBOR. 7 reels. © United Artists Corp.;\n9Feb34; LP46O1.\n")
    entries = split_registration_entries(text)
    assert entries == [
        "MOTION PICTURES 1912-1939",
        "BROADWAY SERENADE OF 1934. 9 reels. © Metro-Goldwyn-Mayer Corp.; 10Jan34; LP4412.",
        "CRIMSON TRAIL. 6 reels. © Paramount Productions, inc.; 26Jan34; LP4555.",
        "LADY OF THE HARBOR. 7 reels. © United Artists Corp.; 9Feb34; LP46O1.",
    ]
    from extractors.cce.parse import parse_registration_entry

    (rec,) = parse_registration_entry(entries[1], volume_year=1951)
    assert (rec.title, rec.reg_id, rec.reg_date) == ("BROADWAY SERENADE OF 1934", "LP4412", "1934-01-10")


def test_leading_digit_for_class_letter_is_read_as_lp():
    """The planted Serenade renewal prints its number as 1P4412: read as LP4412 with its reason."""
    for raw in ("1P4412", "|P4412."):
        reading = normalize_reg_id(raw)
        assert reading.value == "LP4412"
        assert "ocr_class_letter_L_read_as_digit" in reading.best.reasons
    assert normalize_reg_id("LP4412").value == "LP4412"
    assert normalize_reg_id("").value is None


REGS = [("LP4520", D(1934, 1, 15), "GONE WITH THE TEMPEST"), ("LP4701", D(1934, 3, 23), "SING, SAILOR, SING"),
        ("LP4701", D(1954, 9, 14), "VALLEY OF SHADOWS"), ("L22890", D(1926, 4, 12), "THE DESERT SHEIKH")]


def test_film_registration_link_by_title_and_year():
    got = link_registration("Gone with the Tempest", (1933, 1935), REGS, 90.0)
    assert (got["reg_id"], got["reg_date"], got["reason"]) == ("LP4520", D(1934, 1, 15), "linked")
    # a title-keyed film (lower-cased alias): the article is ignored
    assert link_registration("desert sheikh", (1923, 1927), REGS, 90.0)["reg_id"] == "L22890"
    # outside the year window there is nothing
    assert link_registration("Gone with the Tempest", (1950, 1952), REGS, 90.0)["reason"] == "no_registration"
    # two registrations of the same title on different dates: never guessed
    twins = REGS + [("LP5000", D(1935, 2, 2), "GONE WITH THE TEMPEST")]
    amb = link_registration("Gone with the Tempest", (1933, 1935), twins, 90.0)
    assert amb["reason"] == "ambiguous_registration" and amb["reg_id"] is None


def test_ia_item_pick_title_year_and_sound():
    assert ia_query("Sing, Sailor, Sing") == "mediatype:movies AND title:(sing sailor sing)"
    assert ia_query("The Man and Not") == "mediatype:movies AND title:(man)"
    docs = [{"identifier": "GoneWithTheTempest1951", "title": "Gone with the Tempest", "year": "1951", "sound": "sound"},
            {"identifier": "GoneWithTheTempest1934", "title": "Gone with the Tempest", "year": "1934", "sound": "Sound"}]
    got = pick_ia_item("Gone with the Tempest", 1934, docs, 90.0)
    assert (got["ia_item"], got["sound"], got["reason"]) == ("GoneWithTheTempest1934", "sound", "found")
    silent = pick_ia_item("Her Bargain Day", 1926, [{"identifier": "H", "title": "Her Bargain Day", "date": "1926",
                                                     "sound": "silent"}], 90.0)
    assert silent["sound"] == "silent"
    unknown = pick_ia_item("Her Bargain Day", 1926, [{"identifier": "H", "title": "Her Bargain Day"}], 90.0)
    assert unknown["ia_item"] == "H" and unknown["sound"] is None
    assert pick_ia_item("Gone with the Tempest", 1934, docs[:1], 90.0)["reason"] == "title_mismatch"
    assert pick_ia_item("Gone with the Tempest", 1934, [], 90.0)["reason"] == "not_on_ia"


def _t(ext: str, page: int, movie: str, gross: int | None, week: str = "last week") -> dict[str, Any]:
    return {"item_id": "i", "page": page, "extractor": ext, "theater": "Roxy", "city": "New York", "movie": movie,
            "week": week, "gross": gross}


def test_crosscheck_counts_exact_tuples_in_common():
    pages = [{"item_id": "i", "page": p, "issue_date": None} for p in (1, 2, 3)]
    tuples = [_t("gemini", 1, "Gone", 100), _t("ocr-rules", 1, "Gone", 100),
              _t("gemini", 2, "Gone", 100), _t("gemini", 2, "Gone", 100), _t("ocr-rules", 2, "gone ", 100),
              _t("ocr-rules", 2, "Lady", 5)]
    rows = {r["page"]: r for r in crosscheck_rows(pages, tuples, "gemini", "ocr-rules", True)}
    assert (rows[1]["n_agree"], rows[1]["agreement"], rows[1]["status"]) == (1, 1.0, "agree")
    assert (rows[2]["n_primary"], rows[2]["n_secondary"], rows[2]["n_agree"]) == (2, 2, 1)
    assert rows[2]["agreement"] == pytest.approx(0.5) and rows[2]["status"] == "disagree"
    assert rows[3]["status"] == "both_empty" and rows[3]["agreement"] is None
    missing = crosscheck_rows(pages[:1], tuples, "ocr-rules", "gemini", False)
    assert missing[0]["status"] == "secondary_missing"


def test_gemini_plan_falls_back_to_ocr_rules(monkeypatch, tmp_path):
    for var in ("CINESUB_GEMINI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"):
        monkeypatch.delenv(var, raising=False)
    s = load_settings(None, tmp_path)
    s.curation.gemini_api_key_block = None
    sample, live = SampleEnvironment(s), LiveEnvironment(s)

    def plan(env):
        p = gemini_plan(s, env)
        return p.primary_extractor, p.fallback_reason

    assert plan(sample) == ("gemini", None)
    assert plan(live) == ("ocr-rules", "no_gemini_api_key")
    monkeypatch.setenv("CINESUB_GEMINI_API_KEY", "k-live")
    info = gemini_plan(s, live)
    assert (info.available, info.primary_extractor, info.fallback_reason) == (True, "gemini", None)
    assert "k-live" not in repr(info)
    s.hollywood.gemini_enabled = False
    assert plan(sample) == ("ocr-rules", "gemini_disabled")
    s.hollywood.primary_extractor = "ocr-rules"
    assert plan(sample) == ("ocr-rules", None)


class _Counting(PDStage):
    name = "counting"
    reads = ("pd_match_decisions",)
    writes = ("pd_unparsed",)
    runs = 0

    def run(self, ctx: RunContext, con) -> dict[str, Any]:
        type(self).runs += 1
        n = con.execute("SELECT count(*) FROM pd_match_decisions").fetchone()[0]
        replace_rows(con, "pd_unparsed", [{"source": "t", "kind": "page", "reason": f"n{n}"}])
        return {"n": n}


class _AsOf(_Counting):
    name = "as-of"
    uses_as_of = True


def test_stage_reuse_against_the_hollywood_state_db(tmp_path):
    settings = load_settings(None, tmp_path)
    ctx = RunContext(settings=settings, run_id="r1")
    assert execute(_Counting(), ctx)["reused"] is False
    assert execute(_Counting(), RunContext(settings=settings, run_id="r2"))["reused"] is True
    assert _Counting.runs == 1
    with pd_connect(pd_state_db(settings)) as con:  # an input table changes → the stage reruns
        con.execute("INSERT INTO pd_match_decisions VALUES ('LP1', '1934-01-01', NULL, 'not_renewed', 'x', now())")
    st = execute(_Counting(), RunContext(settings=settings, run_id="r3"))
    assert st["reused"] is False and st["n"] == 1 and _Counting.runs == 2
    assert pd_state_db(settings) == tmp_path.resolve() / "hollywood" / "state.duckdb"
    # the status date reruns only the stages that depend on it
    assert execute(_AsOf(), RunContext(settings=settings, run_id="r4"))["reused"] is False
    settings.hollywood.as_of = D(2025, 12, 31)
    assert execute(_Counting(), RunContext(settings=settings, run_id="r5"))["reused"] is True
    assert execute(_AsOf(), RunContext(settings=settings, run_id="r6"))["reused"] is False
    assert hollywood_config_hash(settings) != hollywood_config_hash(settings, with_as_of=False)
