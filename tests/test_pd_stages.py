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


# ---------------------------------------------------------------------------------------------
# the collection misses nothing it should hold (issue 17.7; sql/pd_collection.sql)

def _film(key, year, *, film_year=None, kind="imdb", link="linked", reg=None, status=None, rule="R2_not_renewed",
          ia="found", sound="sound"):
    """One ranked film's rows: (top100, film_links, status or None, film_ia)."""
    reg_id, reg_date = reg if reg else (None, None)
    top = {"year": year, "rank": 1, "key": key, "key_kind": kind, "box_office": 1000.0, "n_weeks": 1, "n_tuples": 1}
    lnk = {"year": year, "key": key, "title": key.title(), "film_year": film_year, "reg_id": reg_id,
           "reg_date": reg_date, "reg_title": key.title() if reg else None, "similarity": 100.0 if reg else None,
           "reason": link}
    st = ({"reg_id": reg_id, "reg_date": reg_date, "title": key.title(), "status": status, "rule": rule,
           "reason": f"{rule}: planted", "renewal_id": None, "match_decision": "unmatched",
           "as_of": D(2026, 1, 1)} if reg and status else None)
    item = {"year": year, "key": key, "query": "q", "ia_item": f"{key}_ia" if ia == "found" else None,
            "ia_title": key.title(), "ia_year": film_year, "sound": sound if ia == "found" else None, "reason": ia}
    return top, lnk, st, item


def _judge(tmp_path, films, as_of):
    from flows.stages.hollywood.collection import write_collection

    with pd_connect(tmp_path / "state.duckdb") as con:
        replace_rows(con, "pd_top100", [f[0] for f in films])
        replace_rows(con, "pd_film_links", [f[1] for f in films])
        replace_rows(con, "pd_status", [f[2] for f in films if f[2]])
        replace_rows(con, "pd_film_ia", [f[3] for f in films])
        stats = write_collection(con, as_of)
        cols = [d[0] for d in con.execute("SELECT * FROM pd_collection_candidates").description]
        cand = {r[cols.index("key")]: dict(zip(cols, r)) for r in
                con.execute("SELECT * FROM pd_collection_candidates").fetchall()}
        audit = {(k, c): (p, e) for k, c, p, e in
                 con.execute("SELECT key, criterion, passed, evidence FROM pd_collection_audit").fetchall()}
        coll = {r[0] for r in con.execute("SELECT key FROM pd_collection").fetchall()}
    return stats, cand, audit, coll


def test_collection_release_date_rule_and_needs_review(tmp_path):
    from validators.copyright_status import FILM_RULES, RULES

    assert set(FILM_RULES) <= set(RULES)
    films = [
        _film("silentless", 1928, film_year=1928, link="no_registration"),          # unregistered, 1928, sound
        _film("alias", 1929, kind="title", link="no_registration"),                  # title key: ranking year
        _film("late", 1934, film_year=1934, link="no_registration"),                 # unregistered, inside the term
        _film("conflict", 1931, film_year=1930, reg=("LP2001", D(1931, 2, 1)), status="protected",
              rule="R2_renewed"),                                                    # release 1930, reg 1931
        _film("nosound", 1934, film_year=1934, reg=("LP4001", D(1934, 1, 2)), status="likely_public_domain",
              sound=None),                                                           # IA item without sound
        _film("ambiguous", 1934, film_year=1934, link="ambiguous_registration"),
        _film("silent", 1934, film_year=1934, reg=("LP4002", D(1934, 1, 3)), status="likely_public_domain",
              sound="silent"),
        _film("good", 1934, film_year=1934, reg=("LP4003", D(1934, 1, 4)), status="likely_public_domain"),
        _film("searchfail", 1934, film_year=1934, reg=("LP4004", D(1934, 1, 5)), status="likely_public_domain",
              ia="search_failed:ia_http_503"),
        _film("gone", 1934, film_year=1934, reg=("LP4005", D(1934, 1, 6)), status="likely_public_domain",
              ia="not_on_ia"),
    ]
    stats, cand, audit, coll = _judge(tmp_path, films, D(2026, 1, 1))
    verdict = {k: c["verdict"] for k, c in cand.items()}
    assert verdict == {"silentless": "included", "alias": "included", "late": "excluded", "conflict": "needs_review",
                       "nosound": "needs_review", "ambiguous": "needs_review", "silent": "excluded",
                       "good": "included", "searchfail": "needs_review", "gone": "excluded"}
    assert coll == {"silentless", "alias", "good"}
    # public domain by its release date, the date and its source in the evidence
    pd = cand["silentless"]
    assert (pd["status"], pd["rule"], pd["reg_id"], pd["release_year"]) == ("public_domain", "R1_release_date", None, 1928)
    assert pd["release_year_source"] == "catalog release year" and pd["reg_status"] is None
    assert "released 1928 (catalog release year)" in pd["status_reason"] and "1931" in pd["status_reason"]
    passed, evidence = audit[("silentless", "copyright")]
    assert passed and "R1_release_date" in evidence and "no registration linked (no_registration)" in evidence
    assert cand["alias"]["release_year"] == 1929 and cand["alias"]["release_year_source"].startswith("Variety ranking year 1929")
    # an unregistered film inside the term is still not claimed public domain
    assert cand["late"]["exclusion_reasons"] == "copyright:no_registration" and not cand["late"]["copyright_ok"]
    assert "released 1934" in audit[("late", "copyright")][1]
    # two dates that disagree are never guessed
    c = cand["conflict"]
    assert (c["status"], c["rule"], c["reg_status"]) == ("needs_review", "R1_release_date_conflict", "protected")
    assert c["review_reasons"] == "status:needs_review:R1_release_date_conflict"
    # missing sound evidence: needs_review with a reason, in the audit too
    n = cand["nosound"]
    assert n["review_reasons"] == "sound:unknown" and n["exclusion_reasons"] == "sound:unknown" and n["copyright_ok"]
    assert "sound: unknown" in audit[("nosound", "ia_sound")][1] and not audit[("nosound", "ia_sound")][0]
    assert cand["ambiguous"]["review_reasons"] == "copyright:ambiguous_registration"
    assert cand["searchfail"]["review_reasons"] == "ia:search_failed:ia_http_503"
    assert cand["silent"]["exclusion_reasons"] == "not_sound:silent" and cand["silent"]["review_reasons"] is None
    assert stats["verdicts"] == {"excluded": 3, "included": 3, "needs_review": 4}
    assert stats["needs_review"] == 4 and stats["public_domain_by_release_date"] == 2
    assert stats["review_by"]["sound:unknown"] == 1 and stats["as_of"] == "2026-01-01"
    # every candidate has a verdict and every film not included says why
    assert all(c["verdict"] for c in cand.values())
    assert all(c["exclusion_reasons"] for c in cand.values() if not c["included"])


@pytest.mark.parametrize("as_of", [D(2025, 12, 31), D(2026, 1, 1), D(2026, 12, 31), D(2027, 1, 1)])
def test_collection_release_date_line_follows_as_of(tmp_path, as_of):
    from validators.copyright_status import public_domain_by_term

    films = [_film("f1930", 1930, film_year=1930, link="no_registration"),
             _film("f1931", 1931, film_year=1931, link="no_registration")]
    _, cand, _, coll = _judge(tmp_path, films, as_of)
    for key, year in (("f1930", 1930), ("f1931", 1931)):
        assert (key in coll) is public_domain_by_term(year, as_of), (key, as_of)
        assert cand[key]["verdict"] == ("included" if public_domain_by_term(year, as_of) else "excluded")


def test_as_of_defaults_to_the_run_date_and_a_setting_freezes_it(tmp_path, monkeypatch):
    monkeypatch.delenv("CINESUB_HOLLYWOOD__AS_OF", raising=False)
    before = dt.datetime.now(dt.timezone.utc).date()
    s = load_settings(None, tmp_path)
    after = dt.datetime.now(dt.timezone.utc).date()
    assert s.hollywood.as_of in {before, after} and "as_of" not in s.hollywood.model_fields_set
    monkeypatch.setenv("CINESUB_HOLLYWOOD__AS_OF", "2026-01-01")
    frozen = load_settings(None, tmp_path)
    assert frozen.hollywood.as_of == D(2026, 1, 1) and "as_of" in frozen.hollywood.model_fields_set
    assert hollywood_config_hash(frozen) != hollywood_config_hash(s) or s.hollywood.as_of == D(2026, 1, 1)


def test_variety_discover_is_incremental_by_item_fingerprint(tmp_path):
    """A no-change rediscovery asks only search + metadata (the fixture's request log); an item
    whose item_last_updated moved is fetched again, alone, and the stats say so."""
    from types import SimpleNamespace

    from cinesub.rawstore import RawStore
    from cinesub.sample.variety import generate_variety_world
    from extractors.ia import IAClient, ia_retry_policy, make_session
    from fixtures.ia_server import IAFixture
    from flows.stages.hollywood.variety import VarietyDiscoverStage

    vm = generate_variety_world(tmp_path / "variety", seed=1934)
    settings = load_settings(home=tmp_path / "home")
    settings.hollywood.variety_start, settings.hollywood.variety_end = "1926-01-01", "1934-12-31"
    with IAFixture(tmp_path / "variety") as srv:
        def ctx():  # a fresh client per build, as each run builds its own
            client = IAClient(make_session(srv.host), RawStore.for_settings(settings),
                              retry=ia_retry_policy(max_attempts=2, backoff_base_s=0.0, backoff_max_s=0.0))
            return SimpleNamespace(settings=settings, env=SimpleNamespace(ia_client=lambda store: client), items=None)

        stage = VarietyDiscoverStage()
        with pd_connect(pd_state_db(settings)) as con:
            first = stage.run(ctx(), con)
            pages1 = con.execute("SELECT * FROM pd_pages ORDER BY item_id, page").fetchall()
            n_items = len(vm["items"])
            assert first["items_new"] == n_items and first["items_unchanged"] == 0
            assert first["pages"] == sum(len(i["pages"]) for i in vm["items"])
            assert srv.count("download") > 0
            assert not any(".jp2" in e.path or e.path.endswith("_jp2.zip") for e in srv.log)  # no image at discovery
            n0 = len(srv.log)
            second = stage.run(ctx(), con)
            kinds = {e.path.split("/")[1] for e in srv.log[n0:]}
            assert kinds <= {"services", "advancedsearch.php", "metadata"}, kinds  # nothing but search + metadata
            assert second["items_unchanged"] == n_items and second["items_new"] == second["items_changed"] == 0
            assert con.execute("SELECT * FROM pd_pages ORDER BY item_id, page").fetchall() == pages1
            changed = vm["items"][0]["identifier"]
            srv.touch(changed)
            n1 = len(srv.log)
            third = stage.run(ctx(), con)
            downloads = {e.path.split("/")[2] for e in srv.log[n1:] if e.path.startswith("/download/")}
            assert third["items_changed"] == 1 and third["items_unchanged"] == n_items - 1
            assert downloads <= {changed}
            fp = con.execute("SELECT fingerprint, text_source, alignment FROM pd_variety_items WHERE item_id = ?",
                             [changed]).fetchone()
            assert fp == (f"{changed}@1700000001", "hocr", "scandata")
