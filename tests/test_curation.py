"""Task-reference curation (SPEC A10): the versioned rule file (every positive/negative example),
sentence-level cleaning with raw text kept, and the complete-coverage rule."""

from __future__ import annotations

import copy
import re

import pytest

from validators import curation
from validators.curation import CURATED_FIELDS, clean_reference, completeness, load_rules, split_sentences

RULES = load_rules()


def test_rules_file_is_versioned_and_well_formed():
    assert re.fullmatch(r"\d+\.\d+\.\d+", RULES.version)
    assert curation.rules_version() == RULES.version
    ids = [r.id for r in RULES.rules]
    assert len(ids) == len(set(ids))
    assert {r.kind for r in RULES.rules} == {"sentence", "prefix", "tail"}
    assert {r.category for r in RULES.rules} >= {"production", "remake", "franchise", "editorial"}
    for r in RULES.rules:
        assert r.reason and r.positive and r.negative, r.id


def test_bad_rule_file_is_refused(tmp_path):
    p = tmp_path / "r.yaml"
    p.write_text('version: "1.0.0"\nrules:\n  - {id: x, kind: sentence, category: c, reason: r, regex: "a", '
                 'positive: ["a"]}\n')
    with pytest.raises(ValueError, match="positive and negative"):
        load_rules(p)
    p.write_text('version: "one"\nrules: []\n')
    with pytest.raises(ValueError, match="version"):
        load_rules(p)


@pytest.mark.parametrize("rule", RULES.rules, ids=lambda r: r.id)
def test_rule_examples(rule):
    for text in rule.positive:
        res = clean_reference("plot", text)
        assert res.removed, (rule.id, text)
        if rule.kind == "sentence":
            assert rule.regex.search(text), (rule.id, text)
            assert res.clean == "" and res.status == "emptied", (rule.id, text, res.clean)
        else:
            assert rule.id in [x["rule"] for x in res.removed], (rule.id, text, res.removed)
        assert res.raw == text
    for text in rule.negative:
        res = clean_reference("plot", text)
        assert res.removed == [] and res.clean == text and res.status == "unchanged", (rule.id, text, res.removed)


NARRATIVE = ("Plot summary: Mr. Smith moves to St. Louis with his daughter. "
             "Filming began in March 2012 in Vancouver. "
             "The remake of her father's shop becomes her obsession. "
             "It is the first film in the Hunger Games franchise.\n\n"
             "Later, J. R. Holt visits the shop. A remake of the 1954 classic. "
             "It grossed over $50 million at the worldwide box office. She works at the box office of a cinema."
             " See full summary »")


def test_clean_reference_removes_external_sentences_and_keeps_raw():
    raw = copy.copy(NARRATIVE)
    res = clean_reference("synopsis", raw)
    assert raw == NARRATIVE and res.raw == NARRATIVE  # never modified in place
    assert res.clean == ("Mr. Smith moves to St. Louis with his daughter. "
                         "The remake of her father's shop becomes her obsession.\n\n"
                         "Later, J. R. Holt visits the shop. She works at the box office of a cinema.")
    assert [r["rule"] for r in res.removed] == ["editorial_label", "production_filming", "franchise_installment",
                                                "remake_note", "production_box_office", "editorial_see_full"]
    for r in res.removed:
        s, e = r["span"]
        assert NARRATIVE[s:e] == r["text"] and r["reason"]
    assert res.status == "cleaned" and res.rules_version == RULES.version and res.changed


def test_editorial_tails_and_credits():
    res = clean_reference("plot", "A retired hitman takes one last job. Written by Jane Doe")
    assert res.clean == "A retired hitman takes one last job."
    assert [r["rule"] for r in res.removed] == ["editorial_written_by"]
    res = clean_reference("storyline", "Two brothers inherit a vineyard.—IMDb Editors")
    assert res.clean == "Two brothers inherit a vineyard." and res.removed[0]["text"] == "—IMDb Editors"
    res = clean_reference("storyline", "Two brothers inherit a vineyard. (c) Sony Pictures Classics")
    assert res.clean == "Two brothers inherit a vineyard." and res.removed[0]["rule"] == "editorial_copyright"
    # several tails stacked
    res = clean_reference("plot", "A girl hides a dragon. (c) Studio —IMDb Editors")
    assert res.clean == "A girl hides a dragon."
    assert [r["rule"] for r in res.removed] == ["editorial_copyright", "editorial_imdb_editors"]


def test_missing_and_emptied_status():
    for value in (None, "", "   \n"):
        res = clean_reference("plot", value)
        assert res.status == "missing" and res.clean == "" and res.removed == []
    res = clean_reference("plot", "Filming began in 2001. See full summary »")
    assert res.status == "emptied" and res.clean == "" and len(res.removed) == 2
    assert clean_reference("plot", "A quiet story.").status == "unchanged"


def test_unknown_field_is_refused():
    with pytest.raises(ValueError):
        clean_reference("tagline", "Some tagline.")


def test_sentence_splitting_keeps_abbreviations_and_offsets():
    text = "Dr. Ruth meets Mr. J. R. Smith in the U.S. Army. They leave! Why? Because.\nNew line"
    spans = split_sentences(text)
    parts = [text[s:e] for s, e in spans]
    assert parts == ["Dr. Ruth meets Mr. J. R. Smith in the U.S. Army.", "They leave!", "Why?", "Because.",
                     "New line"]


def test_to_record_keeps_raw_and_clean():
    res = clean_reference("plot", "A boy runs. Filming began in May.")
    rec = res.to_record(7)
    assert rec["id"] == 7 and rec["raw"] == "A boy runs. Filming began in May." and rec["clean"] == "A boy runs."
    assert rec["rulesVersion"] == RULES.version and len(rec["rawSha256"]) == 64
    assert rec["removed"][0]["span"] == [12, 33]


def test_curate_record_does_not_touch_the_record():
    rec = {"id": 1, "plot": "A boy runs. Filming began in May.", "synopsis": None, "storyline": "He runs."}
    before = copy.deepcopy(rec)
    out = curation.curate_record(rec)
    assert rec == before and set(out) == set(CURATED_FIELDS)
    assert out["plot"].clean == "A boy runs." and out["synopsis"].status == "missing"


def test_completeness_taglines_946_of_1012():
    records = []
    for i in range(1, 1013):
        records.append({"id": i, "plot": f"Film {i} follows a family.", "keyMessage": "Be kind.",
                        "tagline": f"Tagline {i}." if i <= 946 else ("" if i % 2 else None)})
    rep = completeness(records, ["plot", "keyMessage", "tagline"])
    assert rep["plot"] == {"kept": True, "present": 1012, "missing": [], "total": 1012}
    assert rep["keyMessage"]["kept"] is True
    assert rep["tagline"]["kept"] is False and rep["tagline"]["present"] == 946
    assert rep["tagline"]["missing"] == list(range(947, 1013))
    assert curation.kept_fields(rep) == ["plot", "keyMessage"]


def test_completeness_counts_after_cleaning():
    records = [{"id": "a", "synopsis": "A girl finds a dragon."},
               {"id": "b", "synopsis": "Filming began in 2001. See full summary »"},  # empty once cleaned
               {"id": "c", "synopsis": clean_reference("synopsis", "She hides it.")},
               {"id": "d", "genres": []}]
    rep = completeness(records, ["synopsis", "genres"])
    assert rep["synopsis"] == {"kept": False, "present": 2, "missing": ["b", "d"], "total": 4}
    assert rep["genres"]["missing"] == ["a", "b", "c", "d"]
    assert completeness([], ["plot"])["plot"]["kept"] is False
