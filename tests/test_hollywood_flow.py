"""End to end: `cinesub hollywood build --sample` (the real CLI, the real Prefect flow, the real
internetarchive and google-genai clients against the loopback fixtures) into a fresh
CINESUB_HOME, checked against the sample worlds' ground truth (cinesub/sample/variety.py,
cinesub/sample/cce.py): the yearly ranking, the evaluation table, every planted copyright case
(the image-only CCE volume's through Gemini), the CCE cross-check of the OCR parser against
Gemini, the collection and its evidence (`cinesub copyright status`), reuse on a second build,
curated decisions changing the next release, and no secret in any file written."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from tests._cli_runner import run_cli


pytestmark = pytest.mark.slow


def _cli(home: Path, *args: str, timeout: int = 300) -> subprocess.CompletedProcess:
    """The real CLI in its own process group, on the session's Prefect server (tests/_cli_runner.py)."""
    # hollywood.as_of defaults to the run date: the world's truth is stated as of its AS_OF, so
    # the setting freezes it (the reproducible-release way)
    res = run_cli(home, *args, timeout=timeout,
                  drop_env=("CINESUB_GEMINI_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY"),
                  CINESUB_HOLLYWOOD__AS_OF="2026-01-01")
    assert res.returncode == 0, f"{args}: rc {res.returncode}\n{res.stdout[-2000:]}\n{res.stderr[-4000:]}"
    return res


def _json(home: Path, *args: str) -> dict:
    return json.loads(_cli(home, *args).stdout)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    home = tmp_path_factory.mktemp("hwhome")
    first = _json(home, "hollywood", "build", "--sample", "--json")
    second = _json(home, "hollywood", "build", "--sample", "--json")
    status_2026 = _json(home, "copyright", "status", "--as-of", "2026-01-01", "--json")
    status_2025 = _json(home, "copyright", "status", "--as-of", "2025-12-31", "--json")
    queue_before = _json(home, "hollywood", "review", "list", "--json")
    from cinesub.state import init_state

    init_state(home / "state.duckdb")  # an (empty) subtitle state: `cinesub review list` shows every queue
    shared_queue = _json(home, "review", "list", "--json")
    _cli(home, "hollywood", "review", "decide-alias", "1934", "Lady of Harbor", "tt9100003", "--by", "tester")
    _cli(home, "hollywood", "review", "decide-match", "LP4689", "1934-03-16", "--not-renewed", "--by", "tester")
    third = _json(home, "hollywood", "build", "--sample", "--json")
    queue_after = _json(home, "hollywood", "review", "list", "--json")
    world = home / "sample-world" / "pd-seed1934"
    return {
        "home": home, "first": first, "second": second, "third": third,
        "status_2026": status_2026, "status_2025": status_2025,
        "queue_before": queue_before, "queue_after": queue_after, "shared_queue": shared_queue,
        "variety": json.loads((world / "variety" / "manifest.json").read_text()),
        "cce": json.loads((world / "cce" / "manifest.json").read_text()),
    }


def _table(release: str | Path, name: str) -> list[dict]:
    return pq.read_table(Path(release) / f"{name}.parquet").to_pylist()


def _imdb(variety: dict, key: str) -> str:
    """The world's IMDb id of a release key: an IMDb key itself, or a title key (an alias printed
    under the alias minimum, e.g. the 1926 films) through the world's alias map."""
    amap = {a.lower(): imdb for y in variety["aliases"].values() for a, imdb in y["map"].items()}
    return key if key.startswith("tt") else amap.get(key, key)


def test_first_build_publishes_a_versioned_release(built):
    home, first = built["home"], built["first"]
    rel = Path(first["release"]["path"])
    assert rel == home / "hollywood" / "releases" / "1.0.0"
    assert first["release"]["new"] is True and first["release"]["change"] == "initial"
    # (the third build of the fixture published 2.0.0 since: LATEST names it)
    assert (home / "hollywood" / "releases" / "LATEST").read_text().strip() == "2.0.0"
    assert (home / "hollywood" / "state.duckdb").is_file()
    man = json.loads((rel / "manifest.json").read_text())
    assert man["as_of"] == "2026-01-01" and man["primary_extractor"] == "gemini"
    assert man["as_of_frozen"] is True  # set by hollywood.as_of, not the run date
    assert man["inputs"]["sample_world"] and man["config_hash"]
    for name, meta in man["files"].items():
        data = (rel / name).read_bytes()
        assert hashlib.sha256(data).hexdigest() == meta["sha256"] and len(data) == meta["size"], name
    from warehouse.load import open_release

    con = open_release(rel)
    # 4 films of 1934 and The Talking Canary (1926, unregistered: R1_release_date)
    assert con.execute("SELECT count(*) FROM collection").fetchone()[0] == first["collection"]["size"] == 5
    assert con.execute("SELECT count(*) FROM yearly").fetchone()[0] == man["files"]["yearly.parquet"]["rows"]
    con.close()
    report = (home / "reports" / "hollywood.html").read_text()  # of the last build
    for section in ("Collection (6 films)", "Yearly top-N", "Extraction accuracy", "Review queues",
                    "Gone with the Tempest", "Hearts in Bondage"):
        assert section in report


def test_yearly_ranking_and_top100_match_the_world(built):
    rel, v = built["first"]["release"]["path"], built["variety"]
    top = _table(rel, "top100")
    yearly = _table(rel, "yearly")
    assert {r["year"] for r in yearly} == {1926, 1934}
    for year in (1926, 1934):
        ranks = [r["rank"] for r in yearly if r["year"] == year]
        assert sorted(ranks) == list(range(1, len(ranks) + 1))
    # 1934: the IMDb-keyed members are exactly the world's top-100
    imdb_1934 = sorted(r["key"] for r in top if r["year"] == 1934 and r["key_kind"] == "imdb")
    assert imdb_1934 == v["top100"]["1934"]
    # 1926 differs in key only: each 1926 alias is printed twice, under the alias minimum (3, SPEC
    # B1), so the films keep their lower-cased titles; mapped through the world's alias map they
    # are exactly the world's 1926 top-100
    counts_1926 = v["aliases"]["1926"]["counts"]
    assert max(counts_1926.values()) < 3
    amap = {a.lower(): imdb for a, imdb in v["aliases"]["1926"]["map"].items()}
    top_1926 = [r for r in top if r["year"] == 1926]
    assert {r["key_kind"] for r in top_1926} == {"title"}
    assert sorted(amap[r["key"]] for r in top_1926) == v["top100"]["1926"]
    # the unmapped movies of the world (not in the catalog) keep their titles too
    assert {"loop follies", "pagan moon"} <= {r["key"] for r in top if r["year"] == 1934}


def test_evaluation_table_per_extractor(built):
    ev = built["first"]["evaluation"]
    assert set(ev) == {"gemini", "ocr-rules"}
    for ext in ev.values():
        for metric in ("spearman", "movie_f1", "tuple_f1"):
            m = ext[metric]
            assert m["n_issues"] == 3 and m["ci_low"] <= m["mean"] <= m["ci_high"]
    # the Gemini fixture answers gold with three planted errors (dropped, wrong gross, swapped
    # week), all on the 1934-03-07 issue: tuple F1 there is 2·(gold-3) / (gold + gold-1)
    rows = _table(built["first"]["release"]["path"], "evaluation")
    v = built["variety"]
    issue = "1934-03-07"
    n_gold = sum(p["gold_tuples"] for it in v["items"] for p in it["pages"] if p["issue_date"] == issue)
    gem = {r["metric"]: r["value"] for r in rows if r["extractor"] == "gemini" and r["issue"] == issue}
    assert gem["tuple_f1"] == pytest.approx(2 * (n_gold - 3) / (n_gold + n_gold - 1))
    assert ev["gemini"]["tuple_f1"]["mean"] < 1.0
    assert ev["ocr-rules"]["tuple_f1"]["mean"] == pytest.approx(1.0)
    assert ev["gemini"]["spearman"]["mean"] == pytest.approx(1.0)


def test_every_planted_cce_case_is_classified_as_planted(built):
    rel, cases = built["first"]["release"]["path"], built["cce"]["cases"]
    status = {(r["reg_id"], r["reg_date"].isoformat()): r for r in _table(rel, "status")}
    got = {c["case"]: status[(c["reg_id"], c["reg_date"])]["status"] for c in cases}
    assert got == {c["case"]: c["status"] for c in cases}
    # the day before: only the 1930 film differs (recomputed by `copyright status`)
    before = {(s["reg_id"], s["reg_date"]): s["status"] for s in built["status_2025"]["statuses"]}
    for c in cases:
        assert before[(c["reg_id"], c["reg_date"])] == c.get("status_as_of_2025_12_31", c["status"]), c["case"]


def test_cce_crosscheck_in_the_release_shows_the_planted_gemini_errors(built):
    """Text pages: the OCR parser (source of record) against Gemini on the page image. The fixture's
    two planted errors disagree (MIDNIGHT EXPRESS renewal misread, NIGHT PATROL dropped); every
    other text page agrees; the image-only volume has no OCR to compare."""
    first = built["first"]
    rel = first["release"]["path"]
    cross = {(r["item_id"], r["page"]): r for r in _table(rel, "cce_crosscheck")}
    text_pages = {(v["identifier"], p["page"]) for v in built["cce"]["volumes"] if v["text_layer"] for p in v["pages"]}
    assert set(cross) == text_pages and len(cross) == 14
    bad = {k: r for k, r in cross.items() if not r["agree"]}
    assert set(bad) == {("catalogofcopyri1961motsynth", 1), ("motionpict19121939synth", 1)}
    midnight, patrol = bad[("catalogofcopyri1961motsynth", 1)], bad[("motionpict19121939synth", 1)]
    assert midnight["renewal_differs"] == ["renewal|LP4388|1934-01-05: R285114 != R285144"]
    assert midnight["ocr_only"] == midnight["gemini_only"] == [] and midnight["matched"] == midnight["n_ocr"] == 4
    assert patrol["ocr_only"] == ["registration|LP4580|1934-02-02"] and patrol["gemini_only"] == []
    assert patrol["n_ocr"] == patrol["n_gemini"] + 1 == patrol["matched"] + 1
    for r in cross.values():
        if r["agree"]:
            assert r["n_ocr"] == r["n_gemini"] == r["matched"] and not (r["ocr_only"] or r["gemini_only"])
    assert first["counts"]["cce_crosscheck_pages"] == 14 and first["counts"]["cce_crosscheck_disagree"] == 2
    stats = first["stages"]["cce-parse"]
    assert (stats["gemini_pages"], stats["gemini_calls"], stats["gemini_errors"]) == (16, 16, {})
    report = (built["home"] / "reports" / "hollywood.html").read_text()
    assert "CCE cross-check: OCR parser vs Gemini (14 text pages, 2 disagree)" in report
    assert "R285114 != R285144" in report and "registration|LP4580|1934-02-02" in report


def test_image_only_volume_is_read_by_gemini_and_its_cases_classified(built):
    rel, cce = built["first"]["release"]["path"], built["cce"]
    (vol,) = [v["identifier"] for v in cce["volumes"] if not v["text_layer"]]
    regs = _table(rel, "registrations")
    from_vol = sorted((r["reg_id"], r["reg_date"].isoformat(), r["extractor"]) for r in regs if r["item_id"] == vol)
    gold = json.loads((built["home"] / "sample-world" / "pd-seed1934" / "cce" / "gold" / vol / "0001.json").read_text())
    assert from_vol == sorted((e["reg_id"], e["reg_date"], "gemini") for e in gold["entries"]) and len(from_vol) == 2
    assert {r["extractor"] for r in regs if r["item_id"] != vol} == {"ocr-rules"}
    assert {r["extractor"] for r in _table(rel, "renewals")} == {"ocr-rules", "export"}
    assert not [u for u in _table(rel, "unparsed") if u["reason"] == "image_only_page" or u["reason"].startswith("gemini:")]
    status = {(r["reg_id"], r["reg_date"].isoformat()): r["status"] for r in _table(rel, "status")}
    planted = {(c["reg_id"], c["reg_date"]): c["status"] for c in cce["cases"]
               if c["case"] in {e["case"] for e in gold["entries"]}}
    assert planted == {("LP26990", "1963-12-12"): "likely_public_domain", ("LP28001", "1964-01-06"): "protected"}
    assert {k: status[k] for k in planted} == planted


def test_collection_equals_the_world_and_every_exclusion_has_its_reason(built):
    rel, v, want = built["first"]["release"]["path"], built["variety"], built["cce"]["collection"]
    assert sorted(_imdb(v, r["key"]) for r in _table(rel, "collection")) == want["included"]
    amap = {a.lower(): imdb for y in v["aliases"].values() for a, imdb in y["map"].items()}
    translate = {"status:protected": "status:protected", "status:needs_review": "status:needs_review",
                 "not_sound:silent": "not_sound", "ia:not_on_ia": "not_on_ia"}
    got = {}
    for c in _table(rel, "collection_candidates"):
        imdb = c["key"] if c["key_kind"] == "imdb" else amap.get(c["key"])
        if imdb in want["excluded"]:
            got[imdb] = sorted(translate[r] for r in c["exclusion_reasons"].split(","))
    # a film absent from the Internet Archive has no IA metadata to say it is silent: the world
    # lists "not_sound" beside "not_on_ia" for it (it knows), the flow can only say "not_on_ia"
    expected = {k: sorted(r for r in rs if not (r == "not_sound" and "not_on_ia" in rs))
                for k, rs in want["excluded"].items()}
    assert got == expected
    audit = _table(rel, "collection_audit")
    assert {a["criterion"] for a in audit} == {"popularity", "copyright", "ia_sound"}
    assert len(audit) == 3 * len(_table(rel, "top100"))


def test_copyright_status_lists_each_collection_film_with_evidence(built):
    st = built["status_2026"]
    assert st["recomputed"] is False and st["source"]["version"] == "1.0.0"
    films = {f["imdb"] or _imdb(built["variety"], f["key"]): f for f in st["collection"]}
    assert sorted(films) == built["cce"]["collection"]["included"]
    gone = films["tt9100001"]
    assert gone["title"] == "Gone with the Tempest" and gone["year"] == 1934 and gone["rank"] == 1
    assert gone["gross"] > 0 and gone["status"] == "likely_public_domain" and gone["rule"] == "R2_not_renewed"
    assert gone["registration"] == {"reg_id": "LP4520", "reg_date": "1934-01-15"}
    assert gone["renewal_searched"]["searched"] and gone["renewal_searched"]["renewal_records"] > 0
    assert gone["renewal_matched"] is None
    assert gone["ia_item"] == "GoneWithTheTempest1934" and gone["sound"] == "sound"
    by = {s["reg_id"]: s for s in st["statuses"]}
    assert by["LP1380"]["status"] == "public_domain"  # the 1930 film, as of 2026-01-01
    before = built["status_2025"]
    assert before["recomputed"] is True
    by_before = {s["reg_id"]: s for s in before["statuses"]}
    assert by_before["LP1380"]["status"] == "protected" and by_before["LP1380"]["rule"] == "R2_renewed"
    # the collection's films are of 1934 and 1926 (before both days' 95-year lines): a day earlier
    # changes none of them
    assert sorted(f["imdb"] or _imdb(built["variety"], f["key"]) for f in before["collection"]) == sorted(films)


def test_film_based_on_a_renewed_novel_is_excluded_with_its_source_work_evidence(built):
    """SPEC B2 / AFI "based on": Winter Orchard (1934, registered, not renewed, ranked, sound on
    IA) is based on a novel whose copyright was renewed — protected, out of the collection, with
    the source work in the release's audit trail and in `copyright status` (both dates)."""
    rel, cce = built["first"]["release"]["path"], built["cce"]
    case = next(c for c in cce["cases"] if c["case"] == "source_work_renewed_orchard")
    assert case["imdb"] == "tt9100009" and case["status"] == "protected"
    assert cce["collection"]["excluded"]["tt9100009"] == ["status:protected"]
    assert "tt9100009" in built["variety"]["top100"]["1934"]
    # the source works the stage read and released
    released = {(w["film_reg_id"], w["renewed"]) for w in _table(rel, "source_works")}
    assert released == {("LP4630", True), ("LP4520", False), ("LP6420", None)}
    status = {r["reg_id"]: r for r in _table(rel, "status")}
    assert status["LP4630"]["status"] == "protected" and status["LP4630"]["rule"] == "R5_source_work_renewed"
    assert status["LP4630"]["renewal_id"] == "R231245"
    assert status["LP6420"]["status"] == "needs_review" and status["LP6420"]["rule"] == "R5_source_work_unknown"
    assert status["LP4520"]["status"] == "likely_public_domain"  # an unrenewed source changes nothing
    cand = next(c for c in _table(rel, "collection_candidates") if c["key"] == "tt9100009")
    assert not cand["included"] and cand["exclusion_reasons"] == "status:protected"
    assert cand["ia_sound_ok"] and cand["reg_id"] == "LP4630"  # excluded by the source work alone
    audit = next(a for a in _table(rel, "collection_audit")
                 if a["key"] == "tt9100009" and a["criterion"] == "copyright")
    assert not audit["passed"] and "R5_source_work_renewed" in audit["evidence"]
    assert "source works (AFI based on): “Winter Orchard, a novel” renewed R231245" in audit["evidence"]
    gone_audit = next(a for a in _table(rel, "collection_audit")
                      if a["key"] == "tt9100001" and a["criterion"] == "copyright")
    assert gone_audit["passed"] and "“Tempest over the Delta, a story” not renewed" in gone_audit["evidence"]
    report = Path(built["third"]["report"]["path"]).read_text(encoding="utf-8")  # the curators' audit table
    assert "“Winter Orchard, a novel” renewed R231245" in report and "R5_source_work_renewed" in report
    for st in (built["status_2026"], built["status_2025"]):  # as released, and recomputed a day earlier
        assert "tt9100009" not in {f["imdb"] for f in st["collection"]}
        ex = next(f for f in st["excluded"] if f["imdb"] == "tt9100009")
        assert ex["status"] == "protected" and ex["rule"] == "R5_source_work_renewed"
        assert ex["source_works"] == [{"source_title": "Winter Orchard, a novel", "renewed": True,
                                       "renewal_id": "R231245"}]
        by = {s["reg_id"]: s for s in st["statuses"]}
        assert by["LP4630"]["rule"] == "R5_source_work_renewed" and by["LP6420"]["status"] == "needs_review"
        gone = next(f for f in st["collection"] if f["imdb"] == "tt9100001")
        assert gone["source_works"] == [{"source_title": "Tempest over the Delta, a story", "renewed": False,
                                         "renewal_id": None}]


def test_unregistered_1926_films_r1_release_date_and_missing_sound_evidence(built):
    """Issue 17: a film released before the 95-year line with no registration linked is public
    domain by rule R1_release_date, with its evidence, and lands in the collection (The Talking
    Canary, 1926, sound, on IA); the same film whose IA item has no sound metadata is needs_review
    (Jazz Cavalcade) — listed with its reason in the release, `copyright status` and the report's
    verdict table, never dropped."""
    import html
    import re

    rel, v, want = built["first"]["release"]["path"], built["variety"], built["cce"]["collection"]
    assert want["r1_release_date"] == ["tt9000004", "tt9000005"]
    assert want["needs_review"] == {"tt9000005": ["sound:unknown"]} and "tt9000004" in want["included"]
    cands = {_imdb(v, c["key"]): c for c in _table(rel, "collection_candidates")}
    canary, cavalcade = cands["tt9000004"], cands["tt9000005"]
    for c in (canary, cavalcade):
        assert c["reg_id"] is None and c["status"] == "public_domain" and c["rule"] == "R1_release_date"
        assert c["status_reason"].startswith("R1_release_date: released 1926")
        assert "before the 95-year line 1931" in c["status_reason"] and "no registration linked" in c["status_reason"]
    assert canary["verdict"] == "included" and canary["sound"] == "sound"
    assert cavalcade["verdict"] == "needs_review" and cavalcade["review_reasons"] == "sound:unknown"
    assert cavalcade["ia_item"] == "JazzCavalcade1926" and cavalcade["sound"] is None
    coll = {_imdb(v, r["key"]): r for r in _table(rel, "collection")}
    assert coll["tt9000004"]["rule"] == "R1_release_date" and "tt9000005" not in coll
    audit = {(_imdb(v, a["key"]), a["criterion"]): a for a in _table(rel, "collection_audit")}
    assert audit[("tt9000004", "copyright")]["passed"]
    assert "R1_release_date" in audit[("tt9000004", "copyright")]["evidence"]
    assert audit[("tt9000005", "ia_sound")]["passed"] is False
    assert "sound: unknown" in audit[("tt9000005", "ia_sound")]["evidence"]
    st = built["status_2026"]
    r1 = next(f for f in st["collection"] if _imdb(v, f["key"]) == "tt9000004")
    assert r1["rule"] == "R1_release_date" and r1["registration"] == {"reg_id": None, "reg_date": None}
    ex = next(f for f in st["excluded"] if _imdb(v, f["key"]) == "tt9000005")
    assert ex["verdict"] == "needs_review" and ex["review_reasons"] == "sound:unknown"
    # the report's verdict table (of the last build, after the curator decisions): every ranked
    # film with its verdict, status, rule and evidence
    page = Path(built["third"]["report"]["path"]).read_text(encoding="utf-8")

    def section_rows(title: str) -> dict[str, list[str]]:
        start = page.index(title)
        seg = page[start:page.index("<h", start + len(title))]
        out = {}
        for tr in re.findall(r"<tr>(.*?)</tr>", seg)[1:]:
            cells = [html.unescape(re.sub(r"<[^>]+>", "", td)) for td in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
            out[cells[3]] = cells
        return out

    verdicts = section_rows("Verdict per ranked film")
    assert len(verdicts) == len(_table(built["third"]["release"]["path"], "top100"))
    assert verdicts["talking canary"][4:7] == ["included", "public_domain", "R1_release_date"]
    assert "no registration linked" in verdicts["talking canary"][7]
    assert verdicts["jazz cavalcade"][4:7] == ["needs_review", "public_domain", "R1_release_date"]
    assert "sound: unknown" in verdicts["jazz cavalcade"][7] and verdicts["jazz cavalcade"][8] == "sound:unknown"
    assert verdicts["tt9100007"][4:6] == ["included", "likely_public_domain"]  # the curator said: not renewed
    assert verdicts["tt9100009"][4:7] == ["excluded", "protected", "R5_source_work_renewed"]
    assert verdicts["pagan moon"][4:6] == ["excluded", "none (no_registration)"]
    waiting = section_rows("Films waiting for review")
    assert sorted(waiting) == ["jazz cavalcade"] and waiting["jazz cavalcade"][8] == "sound:unknown"
    coll_rows = re.findall(r"<tr>(.*?)</tr>", page[page.index("<h2>Collection"):page.index("Verdict per ranked")])
    canary_row = next(html.unescape(re.sub(r"<[^>]+>", "|", r)) for r in coll_rows if "talking canary" in r)
    assert "none linked" in canary_row and "|included|" in canary_row and "|R1_release_date|" in canary_row


def test_second_build_reuses_every_stage_and_publishes_nothing(built):
    first, second = built["first"], built["second"]
    assert second["all_stages_reused"] is True
    assert second["release"]["new"] is False and second["release"]["version"] == "1.0.0"
    assert second["sample_world_reused"] is True
    assert second["collection"] == first["collection"]
    releases = built["home"] / "hollywood" / "releases"
    assert sorted(p.name for p in releases.iterdir() if p.is_dir() and not p.is_symlink()) == ["1.0.0", "2.0.0"]


def test_curated_decisions_change_the_next_release(built):
    before, after = built["queue_before"], built["queue_after"]
    assert [(a["year"], a["alias"]) for a in before["aliases"]] == [(1934, "Lady of Harbor")]
    assert [m["reg_id"] for m in before["matches"]] == ["LP4689"]
    assert after["counts"]["aliases"] == 0 and after["counts"]["matches"] == 0
    assert after["counts"]["curated_aliases"] == 1 and after["counts"]["curated_matches"] == 1
    third = built["third"]
    assert third["release"]["new"] is True and third["release"]["version"] == "2.0.0"
    assert third["release"]["change"] == "major"
    old, new = built["first"]["release"]["path"], third["release"]["path"]
    # the alias now counts for the film: its title key is gone and its gross moved to the film
    old_top = {r["key"]: r for r in _table(old, "top100") if r["year"] == 1934}
    new_top = {r["key"]: r for r in _table(new, "top100") if r["year"] == 1934}
    assert "lady of harbor" in old_top and "lady of harbor" not in new_top
    assert new_top["tt9100003"]["box_office"] == pytest.approx(
        old_top["tt9100003"]["box_office"] + old_top["lady of harbor"]["box_office"])
    alias = next(a for a in _table(new, "aliases") if a["alias"] == "Lady of Harbor")
    assert alias["decision"] == "curated" and alias["decided_by"] == "curated:tester"
    # the curator says Hearts in Bondage was not renewed: likely public domain, sound, on IA → in
    status = next(s for s in _table(new, "status") if s["reg_id"] == "LP4689")
    assert status["status"] == "likely_public_domain" and status["match_decision"] == "curator_not_renewed"
    keys = sorted(_imdb(built["variety"], r["key"]) for r in _table(new, "collection"))
    assert keys == sorted(built["cce"]["collection"]["included"] + ["tt9100007"])
    assert third["collection"]["size"] == 6


def test_pd_queues_are_listed_with_the_other_curator_queues(built):
    shared, own = built["shared_queue"], built["queue_before"]
    assert shared["tracks"] == [] and shared["link_reviews"] == []
    assert shared["variety_aliases"] == own["aliases"] and shared["copyright_matches"] == own["matches"]
    assert len(shared["variety_aliases"]) == 1 and len(shared["copyright_matches"]) == 1


def test_no_secret_in_any_file_under_cinesub_home(built):
    from fixtures.gemini_server import DEFAULT_API_KEY

    secret = DEFAULT_API_KEY.encode()
    offenders = [str(p) for p in built["home"].rglob("*") if p.is_file() and secret in p.read_bytes()]
    assert offenders == []
    assert any((built["home"] / "cache" / "gemini-pages").rglob("*.json"))  # Gemini really ran
    con = duckdb.connect(str(built["home"] / "hollywood" / "state.duckdb"), read_only=True)
    assert con.execute("SELECT count(*) FROM pd_tuples WHERE extractor = 'gemini'").fetchone()[0] > 0
    con.close()


def test_live_build_without_the_archive_stops_with_a_reason_code(tmp_path):
    """A live build whose Internet Archive host does not answer (a closed loopback port) ends
    with exit code 5 and the provider's reason code, records the run as failed and publishes
    nothing."""
    import socket

    import duckdb

    with socket.socket() as s:  # a free port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    catalog = tmp_path / "catalog.tsv"
    catalog.write_text("imdb\ttitle\tyear\ntt0000001\tX\t1934\n")
    home = tmp_path / "live"
    res = run_cli(home, "hollywood", "build", timeout=300, CINESUB_HOLLYWOOD__CATALOG_PATH=str(catalog),
                  CINESUB_HOLLYWOOD__IA_HOST=f"127.0.0.1:{port}")
    assert res.returncode == 5, res.stderr[-3000:]
    assert "hollywood build stopped: network" in " ".join(res.stderr.split())
    with duckdb.connect(str(home / "hollywood" / "state.duckdb"), read_only=True) as con:
        assert con.execute("SELECT status FROM runs").fetchall() == [("failed",)]
    assert not (home / "hollywood" / "releases").exists() or not any((home / "hollywood" / "releases").iterdir())
