"""The Hollywood HTML report (warehouse/pd_report.py): self-contained, every value escaped, and
the sections curators need (collection evidence, yearly top-N, evaluation per extractor,
exclusion counts by reason, review queues with counts)."""

from __future__ import annotations

import re

import duckdb

from flows.stages.hollywood.common import pd_connect
from warehouse.pd_report import collect_report_data, render_report, write_report

EVIL = '<script>alert("x")</script>'


def _state(path):
    with pd_connect(path) as con:
        con.execute("INSERT INTO pd_top100 VALUES (1934, 1, 'tt1', 'imdb', 1000.0, 2, 4), "
                    f"(1926, 1, '{EVIL}', 'title', 50.0, 1, 1)")
        con.execute("INSERT INTO pd_catalog_films VALUES ('tt1', 'Gone & Back', 1934, 10)")
        con.execute("INSERT INTO pd_collection VALUES ('tt1', 'Gone & Back', 1934, 1, 1000.0, 'LP1', '1934-01-15', "
                    "'likely_public_domain', 'R2_not_renewed', 'R2_not_renewed: no renewal', NULL, 'unmatched', 12, "
                    "'GoneBack1934', 'sound')")
        con.execute("INSERT INTO pd_collection_candidates VALUES (1934, 1, 'tt1', 'imdb', 'Gone & Back', 1000.0, 'LP1', "
                    "'1934-01-15', 'linked', 'likely_public_domain', 'R2_not_renewed', 'r', NULL, 'unmatched', 12, "
                    "'GoneBack1934', 'sound', 'found', TRUE, TRUE, TRUE, TRUE, '', 'included', NULL, "
                    "'likely_public_domain', 'R2_not_renewed', 1934, 'catalog')")
        con.execute("INSERT INTO pd_collection_audit VALUES (1934, 'tt1', 'copyright', TRUE, 'LP1 likely'), "
                    "(1934, 'tt1', 'ia_sound', TRUE, 'IA item GoneBack1934, sound: sound')")
        con.execute("INSERT INTO pd_evaluation VALUES ('gemini', 'm', 'mean', NULL, 'tuple_f1', 0.9, 0.8, 1.0, 3, "
                    "96, 95, NULL), ('gemini', 'm', 'issue', '1934-03-07', 'tuple_f1', 0.94, NULL, NULL, 1, 45, 44, NULL)")
        con.execute("INSERT INTO pd_excluded (reason) VALUES ('not_last_week'), ('not_last_week'), ('non_us_city')")
        con.execute(f"INSERT INTO pd_aliases VALUES (1934, '{EVIL}', 4, 'tt1', 'Gone & Back', 0.9, 'review', "
                    "'headline_form', 'suggested', NULL)")
        con.execute("INSERT INTO pd_matches VALUES ('LP9', '1934-03-16', 'HEARTS', 'matched_fuzzy_review', 'R1', NULL, "
                    "1, '[{\"renewal_id\": \"R1\", \"orig_reg_id\": \"LP8\", \"title\": \"HEARTS\", \"score\": 90}]', "
                    "'review_queue', NULL, 12)")
    return path


def test_report_is_escaped_self_contained_and_complete(tmp_path):
    db = _state(tmp_path / "state.duckdb")
    summary = {"release": {"version": "1.0.0", "path": "/x", "new": True, "change": "initial"},
               "as_of": "2026-01-01", "primary_extractor": "gemini", "run_id": "r"}
    out = write_report(db, tmp_path / "reports" / "hollywood.html", summary)
    page = out.read_text()
    assert "<script" not in page and "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;" in page
    assert "Gone &amp; Back" in page and "Gone & Back" not in page
    assert not re.search(r"""(?:src|href)=["']?(?:https?:)?//""", page)  # nothing fetched from outside
    for text in ("Collection (1 films)", "GoneBack1934", "LP1 (1934-01-15)", "Yearly top-N", "<h3>1926 (1 films)</h3>",
                 "Aliases to confirm (1)", "Copyright matches to review (1)", "R1 (orig LP8", "not_last_week",
                 "0.800–1.000", "1934-03-07"):
        assert text in page, text
    # exclusion counts by reason, largest first
    with duckdb.connect(str(db), read_only=True) as con:
        data = collect_report_data(con, summary)
    assert [(e["reason"], e["n"]) for e in data["excluded"]] == [("not_last_week", 2), ("non_us_city", 1)]


def test_empty_state_renders_with_reasons():
    page = render_report({"summary": {}})
    assert "no film passes all three criteria" in page and "no gold pages: not evaluated" in page
    assert page.startswith("<!DOCTYPE html>") and page.rstrip().endswith("</html>")


def test_cce_crosscheck_section_lists_each_page_and_every_disagreement(tmp_path):
    db = tmp_path / "state.duckdb"
    with pd_connect(db) as con:
        con.execute("""INSERT INTO pd_cce_crosscheck VALUES
            ('vol1961', 1, 'renewals', 'm', 4, 4, 4, [], [], ['renewal|LP4388|1934-01-05: R285114 != R285144'], FALSE),
            ('vol1939', 1, 'registrations', 'm', 16, 15, 15, ['registration|LP4580|1934-02-02'], [], [], FALSE),
            ('vol1977', 1, 'registrations', 'm', 1, 1, 1, [], [], [], TRUE)""")
        con.execute(f"""INSERT INTO pd_registrations (source, item_id, page, title, reg_id, confident, extractor)
                        VALUES ('cce:a', 'a', 1, '{EVIL}', 'LP1', TRUE, 'gemini'),
                               ('cce:b', 'b', 1, 'T', 'LP2', TRUE, 'ocr-rules'),
                               ('cce:b', 'b', 1, 'U', 'LP3', TRUE, 'ocr-rules')""")
        data = collect_report_data(con, {})
    assert [(c["item_id"], c["agree"]) for c in data["cce_crosscheck"]] == [
        ("vol1939", False), ("vol1961", False), ("vol1977", True)]
    assert [(x["kind"], x["extractor"], x["n"]) for x in data["cce_extractors"]] == [
        ("registration", "gemini", 1), ("registration", "ocr-rules", 2)]
    page = render_report(data)
    assert "CCE cross-check: OCR parser vs Gemini (3 text pages, 2 disagree)" in page
    assert "<h4>Disagreements (2)</h4>" in page
    section = page[page.index("<h4>Disagreements"):]
    assert "registration|LP4580|1934-02-02" in section and "R285114 != R285144" in section
    assert "vol1977" not in section  # an agreeing page is not a disagreement
    none = render_report({"summary": {}, "cce_crosscheck": [], "cce_extractors": []})
    assert "Gemini did not read any text page" in none and "none: every page agrees" in none
