"""Kids-in-Mind reference vs subtitle counts (SPEC A9): the prose-count mapping, the discrepancy
report, and end to end the build's ``safety_discrepancies`` / ``safety_matches`` state tables."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from _cli_runner import sample20_build

from cinesub.settings import Settings
from extractors.sources.kim import parse_kim_language_counts
from validators.safety import CATEGORIES, safety_to_json, scan
from validators.safety_reference import KIM_TO_CATEGORY, discrepancies, kim_category_counts


def _cat(count: int, indices: list[int] | None = None) -> dict:
    indices = indices or []
    return {"occurrenceCount": count, "evidenceLineCount": len(indices), "evidenceSubtitleIndices": indices}


# --------------------------------------------------------------------------------------------
# mapping
# --------------------------------------------------------------------------------------------
def test_mapping_covers_every_kim_key_and_category():
    assert set(KIM_TO_CATEGORY) == {"f_words", "scatological", "anatomical", "mild", "religious"}
    assert set(KIM_TO_CATEGORY.values()) == set(CATEGORIES)
    summary = parse_kim_language_counts("")
    assert set(summary) == set(KIM_TO_CATEGORY)


def test_kim_category_counts_sums_scatological_and_anatomical():
    got = kim_category_counts({"f_words": 25, "scatological": 9, "anatomical": 6, "mild": 12, "religious": 8})
    assert got == {"strongProfanity": 25, "crudeBodilyLanguage": 15, "mildObscenity": 12,
                   "religiousProfanityAndExclamation": 8}
    assert list(got) == list(CATEGORIES)
    assert kim_category_counts({"anatomical": 3}) == {"strongProfanity": 0, "crudeBodilyLanguage": 3,
                                                      "mildObscenity": 0, "religiousProfanityAndExclamation": 0}
    with pytest.raises(ValueError):
        kim_category_counts({"sexual": 2})


def test_prose_summary_to_categories():
    prose = ("about 25 F-words and its derivatives, 9 scatological terms, 6 anatomical terms, "
             "12 mild obscenities, name-calling (idiot, jerk), 8 religious exclamations.")
    got = kim_category_counts(parse_kim_language_counts(prose))
    assert got == {"strongProfanity": 25, "crudeBodilyLanguage": 15, "mildObscenity": 12,
                   "religiousProfanityAndExclamation": 8}
    # a category KIM does not mention counts 0
    got = kim_category_counts(parse_kim_language_counts("1 F-word, 2 religious exclamations"))
    assert got["crudeBodilyLanguage"] == 0 and got["mildObscenity"] == 0 and got["strongProfanity"] == 1


# --------------------------------------------------------------------------------------------
# discrepancies
# --------------------------------------------------------------------------------------------
SUBS = {
    "strongProfanity": _cat(30, [9, 3, 5, 7, 11, 12, 40]),
    "crudeBodilyLanguage": _cat(15, [2, 4]),
    "mildObscenity": _cat(6, [8]),
    "religiousProfanityAndExclamation": _cat(0),
}
KIM = {"f_words": 24, "scatological": 9, "anatomical": 6, "mild": 12, "religious": 0}


def test_discrepancy_rows_difference_and_large():
    rows = discrepancies(SUBS, KIM, 5)
    assert [r["category"] for r in rows] == list(CATEGORIES)
    by = {r["category"]: r for r in rows}
    assert by["strongProfanity"] == {"category": "strongProfanity", "subtitle_count": 30, "kim_count": 24,
                                     "difference": 6, "large": True,
                                     "sample_evidence_indices": [3, 5, 7, 9, 11]}
    assert by["crudeBodilyLanguage"]["kim_count"] == 15
    assert by["crudeBodilyLanguage"]["difference"] == 0 and by["crudeBodilyLanguage"]["large"] is False
    # exactly at the threshold is not large; the sign is kept (subtitle - KIM)
    assert by["mildObscenity"]["difference"] == -6 and by["mildObscenity"]["large"] is True
    assert discrepancies(SUBS, KIM, 6)[2]["large"] is False
    assert discrepancies(SUBS, KIM, 6)[0]["large"] is False
    assert by["religiousProfanityAndExclamation"] == {
        "category": "religiousProfanityAndExclamation", "subtitle_count": 0, "kim_count": 0,
        "difference": 0, "large": False, "sample_evidence_indices": []}


def test_discrepancies_are_never_forced_to_agree():
    rows = discrepancies(SUBS, KIM, 0)
    # the subtitle side is reported as counted, whatever KIM says
    assert [r["subtitle_count"] for r in rows] == [30, 15, 6, 0]
    assert [r["kim_count"] for r in rows] == [24, 15, 12, 0]
    assert [r["large"] for r in rows] == [True, False, True, False]


def test_no_kim_summary_means_no_reference():
    rows = discrepancies(SUBS, None, 5)
    assert all(r["kim_count"] is None and r["difference"] is None and r["large"] is False for r in rows)
    assert rows[0]["subtitle_count"] == 30


def test_discrepancies_accept_scan_results_and_validate_input():
    result = scan([(1, "What the fuck?"), (2, "Oh my God!"), (3, "Fuck. Shit.")])
    rows = discrepancies(safety_to_json(result), {"f_words": 2}, 5)
    assert rows[0]["subtitle_count"] == 2 and rows[0]["difference"] == 0
    assert rows[0]["sample_evidence_indices"] == [1, 3]
    assert discrepancies(result.categories, {"f_words": 2}, 5) == rows
    with pytest.raises(ValueError):
        discrepancies({"strongProfanity": _cat(1)}, KIM, 5)
    with pytest.raises(ValueError):
        discrepancies(SUBS, KIM, -1)


def test_threshold_setting_default():
    assert Settings().safety.discrepancy_large == 5


# --------------------------------------------------------------------------------------------
# end to end: the build's state tables
# --------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def built():
    home, summary = sample20_build()  # shared with other modules: read only
    manifest = json.loads(next((home / "sample-world").glob("*/manifest.json")).read_text())
    con = duckdb.connect(str(home / "state.duckdb"), read_only=True)
    yield home, summary, manifest, con
    con.close()


def _cohort(con) -> list[str]:
    return [r[0] for r in con.execute(
        "SELECT imdb_id FROM film_gates WHERE dropped_at IS NULL ORDER BY 1").fetchall()]


def test_one_discrepancy_row_per_cohort_film_and_category(built):
    _, summary, manifest, con = built
    cohort = _cohort(con)
    assert len(cohort) == summary["films"] > 0
    expected = sorted(f["imdb_id"] for f in manifest["films"] if f["expected_drop_gate"] is None)
    assert cohort == expected
    rows = con.execute("SELECT imdb_id, category FROM safety_discrepancies ORDER BY 1, 2").fetchall()
    assert rows == sorted((i, c) for i in cohort for c in CATEGORIES)
    # the track is the selected English one
    bad = con.execute("""SELECT count(*) FROM safety_discrepancies d
                         LEFT JOIN selections s ON s.imdb_id = d.imdb_id AND s.language = 'en'
                         WHERE s.track_id IS DISTINCT FROM d.track_id""").fetchone()[0]
    assert bad == 0


def test_subtitle_counts_equal_planted_and_kim_counts_equal_the_page(built):
    _, _, manifest, con = built
    large = Settings().safety.discrepancy_large
    films = {f["imdb_id"]: f for f in manifest["films"] if f["expected_drop_gate"] is None}
    got = {(i, c): (s, k, d, lg, json.loads(e)) for i, c, s, k, d, lg, e in con.execute(
        """SELECT imdb_id, category, subtitle_count, kim_count, difference, large,
                  sample_evidence_indices FROM safety_discrepancies""").fetchall()}
    safety = {(i, c): (n, json.loads(e)) for i, c, n, e in con.execute(
        "SELECT imdb_id, category, occurrence_count, evidence_indices FROM language_safety").fetchall()}
    n_diff = 0
    for imdb, film in films.items():
        planted = kim_category_counts(film["planted_language_counts"])
        kim = kim_category_counts(film["kim_language_counts"])
        for cat in CATEGORIES:
            sub, kim_count, diff, lg, sample = got[(imdb, cat)]
            assert sub == planted[cat], (imdb, cat)
            assert kim_count == kim[cat], (imdb, cat)
            assert diff == sub - kim_count
            assert lg is (abs(diff) > large)
            n_diff += diff != 0
            assert safety[(imdb, cat)][0] == sub
            assert sample == safety[(imdb, cat)][1][:5]
    assert sum(v[0] for v in got.values()) > 0
    assert n_diff > 0  # the sample world plants disagreeing KIM counts; they are reported, not hidden


def test_safety_matches_resolve_to_the_selected_english_track(built):
    _, _, _, con = built
    n = con.execute("SELECT count(*) FROM safety_matches").fetchone()[0]
    assert n > 0
    unresolved = con.execute("""
        SELECT count(*) FROM safety_matches m
        LEFT JOIN selections s ON s.imdb_id = m.imdb_id AND s.language = 'en' AND s.track_id = m.track_id
        LEFT JOIN entries e ON e.track_id = m.track_id AND e."index" = m."index"
        WHERE s.track_id IS NULL OR e."index" IS NULL OR e.clean_content IS NULL""").fetchone()[0]
    assert unresolved == 0
    # one match row per counted occurrence, the same entries as the published evidence
    per = dict(((i, c), k) for i, c, k in con.execute(
        "SELECT imdb_id, category, count(*) FROM safety_matches GROUP BY 1, 2").fetchall())
    for imdb, cat, occ, idx in con.execute(
            "SELECT imdb_id, category, occurrence_count, evidence_indices FROM language_safety").fetchall():
        assert per.get((imdb, cat), 0) == occ
        got = [r[0] for r in con.execute(
            'SELECT DISTINCT "index" FROM safety_matches WHERE imdb_id = ? AND category = ? ORDER BY 1',
            [imdb, cat]).fetchall()]
        assert got == json.loads(idx)
    # matched spans really occur in the entry text; rules come from the lexicon
    from validators.safety import load_lexicon
    rules = {r.id for r in load_lexicon().rules}
    for span, rule, content in con.execute(
            """SELECT m.span, m.rule, e.clean_content FROM safety_matches m
               JOIN entries e ON e.track_id = m.track_id AND e."index" = m."index" """).fetchall():
        assert rule in rules
        assert span.lower().replace("\u2019", "'") in content.lower().replace("\u2019", "'")


def test_matches_are_not_in_the_release(built):
    home, summary, _, _ = built
    rel = Path(summary["release"]["path"])
    names = [p.name for p in rel.rglob("*")]
    assert not any("safety_matches" in n or "safety_discrepancies" in n for n in names)
    rcon = duckdb.connect(str(rel / "cinesub.duckdb"), read_only=True)
    tables = {r[0] for r in rcon.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    rcon.close()
    assert "safety_matches" not in tables and "safety_discrepancies" not in tables
