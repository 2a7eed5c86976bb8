"""The Hollywood report's verdict (issue 17): every ranked film with its verdict, copyright
status, the rule that decided it and the evidence used; the needs_review films listed on their
own (never dropped); the collection table names the rule and evidence. The end-to-end check on a
real sample build is tests/test_hollywood_flow.py (the 1926 R1_release_date / sound:unknown films)."""

from __future__ import annotations

import html
import re

from flows.stages.hollywood.common import pd_connect
from warehouse.pd_report import collect_report_data, render_report, verdict_row


def _cand(key, verdict, status, rule, reason, *, reg=None, sound="sound", review=None, excl="", link="linked"):
    return {"year": 1926, "rank": 1, "key": key, "key_kind": "title", "title": key, "box_office": 100.0,
            "reg_id": reg, "reg_date": None, "link_reason": link, "status": status, "rule": rule,
            "status_reason": reason, "renewal_id": None, "match_decision": None, "n_renewals_searched": None,
            "ia_item": "X", "sound": sound, "ia_reason": "found", "popular": True,
            "copyright_ok": status in ("public_domain", "likely_public_domain"), "ia_sound_ok": sound == "sound",
            "included": verdict == "included", "exclusion_reasons": excl, "verdict": verdict,
            "review_reasons": review, "reg_status": None, "reg_rule": None, "release_year": 1926,
            "release_year_source": "Variety ranking year 1926 (shown by then)"}


CANDS = [
    _cand("canary", "included", "public_domain", "R1_release_date",
          "R1_release_date: released 1926, before the 95-year line 1931; no registration linked (no_registration)",
          link="no_registration"),
    _cand("cavalcade", "needs_review", "public_domain", "R1_release_date", "R1_release_date: released 1926",
          sound=None, review="sound:unknown", excl="sound:unknown", link="no_registration"),
    _cand("river", "needs_review", "needs_review", "R5_source_work_unknown",
          "R5_source_work_unknown: based on 'X, a story', renewal unknown", reg="LP6420",
          review="status:needs_review:R5_source_work_unknown", excl="status:needs_review"),
    _cand("pagan", "excluded", None, None, None, link="no_registration", excl="copyright:no_registration"),
]


def _table_rows(page: str, title: str) -> list[list[str]]:
    start = page.index(title)
    seg = page[start:page.index("<h", start + len(title))]
    return [[html.unescape(re.sub(r"<[^>]+>", "", td)) for td in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
            for tr in re.findall(r"<tr>(.*?)</tr>", seg)[1:]]


def test_verdict_row_names_status_rule_evidence_and_reasons():
    row = verdict_row(CANDS[1], None, "IA item X, sound: unknown (no sound metadata: needs review)")
    assert row[4:7] == ["needs_review", "public_domain", "R1_release_date"]
    assert row[7] == "R1_release_date: released 1926; IA item X, sound: unknown (no sound metadata: needs review)"
    assert row[8] == "sound:unknown"  # a needs_review film: its review reasons
    none = verdict_row(CANDS[3], "no_registration: no registration linked", "not_on_ia")
    assert none[5] == "none (no_registration)" and none[6] is None and none[8] == "copyright:no_registration"


def test_every_ranked_film_has_a_verdict_and_waiting_films_are_listed():
    audit = [{"year": 1926, "key": "cavalcade", "criterion": "ia_sound", "passed": False,
              "evidence": "IA item X, sound: unknown (no sound metadata: needs review)"},
             {"year": 1926, "key": "canary", "criterion": "copyright", "passed": True,
              "evidence": "public_domain — R1_release_date: released 1926 (Variety ranking year)"}]
    coll = [{k: CANDS[0][k] for k in ("key", "title", "year", "rank", "box_office", "reg_id", "reg_date", "status",
                                       "rule", "status_reason", "renewal_id", "match_decision",
                                       "n_renewals_searched", "ia_item", "sound")}]
    page = render_report({"summary": {}, "candidates": CANDS, "audit": audit, "collection": coll})
    verdicts = {r[3]: r for r in _table_rows(page, "Verdict per ranked film (4)")}
    assert sorted(verdicts) == ["canary", "cavalcade", "pagan", "river"]
    assert verdicts["canary"][4:7] == ["included", "public_domain", "R1_release_date"]
    assert verdicts["canary"][7].startswith("public_domain — R1_release_date: released 1926")
    assert verdicts["river"][4:7] == ["needs_review", "needs_review", "R5_source_work_unknown"]
    assert verdicts["river"][8] == "status:needs_review:R5_source_work_unknown"
    assert verdicts["cavalcade"][8] == "sound:unknown" and "sound: unknown" in verdicts["cavalcade"][7]
    waiting = _table_rows(page, "Films waiting for review (2)")
    assert sorted(r[3] for r in waiting) == ["cavalcade", "river"]
    (c,) = _table_rows(page, "Collection (1 films)")
    assert c[4:8] == ["none linked", "included", "public_domain", "R1_release_date"]
    assert "R1_release_date: released 1926" in c[8]


def test_no_review_and_an_empty_state_render(tmp_path):
    with pd_connect(tmp_path / "state.duckdb") as con:
        page = render_report(collect_report_data(con, {}))
    assert "Verdict per ranked film (0)" in page and "no ranked film" in page
    assert "Films waiting for review (0)" in page
