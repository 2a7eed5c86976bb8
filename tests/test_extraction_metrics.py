"""Box-office evaluation (SPEC B1, paper 003 Appendix B): hand-computed Spearman ρ, Movie F1 and
Tuple F1 on tiny issues, bootstrap intervals, degenerate cases and the per-issue folders."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from validators.extraction_metrics import (
    bootstrap_mean_ci,
    evaluate,
    evaluate_dirs,
    movie_totals,
    parse_gross,
    render_eval_table,
    score_issue,
)


def tup(movie, gross, *, theater=None, city="Chicago", week="last week", issue="1926-05-05"):
    return {"issue": issue, "theater": theater or f"{movie} house", "city": city, "movie": movie,
            "week": week, "gross": gross}


GOLD = [tup("A", 400), tup("B", 300), tup("C", 200), tup("D", 100)]


def test_perfect_prediction():
    res = evaluate(GOLD, [dict(r) for r in GOLD], n_boot=200)
    row = res["per_issue"][0]
    assert (row["spearman"], row["movie_f1"], row["tuple_f1"]) == (1.0, 1.0, 1.0)
    for metric in ("spearman", "movie_f1", "tuple_f1"):
        s = res["summary"][metric]
        assert (s["mean"], s["ci_low"], s["ci_high"], s["n_issues"]) == (1.0, 1.0, 1.0, 1)
    assert res["missing"] == []


def test_one_missing_tuple():
    row = score_issue(GOLD, GOLD[:3])
    # 3 of 4 gold tuples found, nothing invented: P = 1, R = 3/4, F1 = 6/7
    assert row["tuple_precision"] == 1.0 and row["tuple_recall"] == 0.75
    assert row["tuple_f1"] == pytest.approx(6 / 7)
    assert row["movie_f1"] == pytest.approx(6 / 7)
    assert row["spearman"] == pytest.approx(1.0) and row["n_rho_movies"] == 3


def test_one_wrong_gross():
    pred = [dict(r) for r in GOLD]
    pred[3]["gross"] = 150  # D: 100 read as 150, order unchanged
    row = score_issue(GOLD, pred)
    assert row["n_tuple_matches"] == 3 and row["tuple_f1"] == pytest.approx(0.75)
    assert row["movie_f1"] == 1.0 and row["spearman"] == pytest.approx(1.0)


def test_swapped_ranks():
    pred = [tup("A", 300), tup("B", 400), tup("C", 200), tup("D", 100)]
    row = score_issue(GOLD, pred)
    # d = (1, 1, 0, 0): ρ = 1 − 6·2 / (4·15) = 0.8
    assert row["spearman"] == pytest.approx(0.8)
    assert row["tuple_f1"] == pytest.approx(0.5) and row["movie_f1"] == 1.0


def test_light_normalisation_and_multiset_matching():
    gold = [tup("The Big Parade", 12000, theater="Capitol"),
            tup("The Big Parade", 12000, theater="Capitol"),  # printed twice
            tup("Ben-Hur", 9000, theater="Strand")]
    pred = [{"issue": "1926-05-05", "theater": " capitol", "city": "CHICAGO",
             "movie": "the  big parade", "week": "Last Week", "gross": "$12,000"},
            tup("Ben-Hur", 9000, theater="Strand", week="this week")]  # wrong week
    row = score_issue(gold, pred)
    assert row["n_tuple_matches"] == 1
    assert row["tuple_precision"] == 0.5 and row["tuple_recall"] == pytest.approx(1 / 3)
    assert row["movie_f1"] == 1.0


def test_per_movie_total_is_the_plain_sum_of_grosses():
    rows = [tup("Gone", 100, week="this week"), tup("GONE", 50), tup("Gone With Wind", 25),
            tup("Other", None)]
    movies, totals = movie_totals(rows)
    assert movies == {"gone", "gone with wind", "other"}
    assert totals == {"gone": 150.0, "gone with wind": 25.0}
    aliases = {"gone": "tt0031381", "Gone With  Wind": "tt0031381"}
    row = score_issue(rows, [tup("Gone with the Wind", 175), tup("Other", 1)],
                      aliases={**aliases, "Gone with the Wind": "tt0031381"})
    assert row["n_gold_movies"] == 2 and row["movie_f1"] == 1.0
    _, last = movie_totals(rows, weeks=["last week"])
    assert last == {"gone": 50.0, "gone with wind": 25.0}


def test_degenerate_spearman_is_null_with_a_reason_and_left_out_of_the_mean():
    gold = (GOLD
            + [tup("A", 10, issue="one"), tup("B", 20, issue="one")]
            + [tup("A", 10, issue="flat"), tup("B", 10, issue="flat")])
    pred = ([tup("A", 400), tup("B", 300), tup("C", 100), tup("D", 200)]   # ρ = 0.8
            + [tup("A", 10, issue="one"), tup("X", 20, issue="one")]      # one shared movie
            + [tup("A", 5, issue="flat"), tup("B", 7, issue="flat")])     # gold totals constant
    res = evaluate(gold, pred, n_boot=100)
    rows = {r["issue"]: r for r in res["per_issue"]}
    assert rows["one"]["spearman"] is None
    assert rows["one"]["spearman_reason"] == "fewer_than_2_shared_movies"
    assert rows["flat"]["spearman_reason"] == "constant_totals"
    s = res["summary"]["spearman"]
    assert s["mean"] == pytest.approx(0.8) and s["n_issues"] == 1 and s["n_excluded"] == 2
    assert {e["reason"] for e in s["excluded"]} == {"fewer_than_2_shared_movies",
                                                    "constant_totals"}
    assert res["summary"]["movie_f1"]["n_issues"] == 3
    text = render_eval_table(res)
    assert "n/a (fewer_than_2_shared_movies)" in text and "1 constant_totals" in text


def test_empty_sides():
    row = score_issue(GOLD, [])
    assert row["movie_f1"] == 0.0 and row["tuple_f1"] == 0.0
    assert row["tuple_precision"] is None and row["tuple_precision_reason"] == "no_pred_tuples"
    both = score_issue([], [])
    assert both["movie_f1"] is None and both["movie_f1_reason"] == "no_movies"
    assert both["tuple_f1_reason"] == "no_tuples"


def _issues(n):
    gold, pred = [], []
    for i in range(n):
        issue = f"issue{i}"
        films = [tup(f"m{j}", 1000 * (j + 1), issue=issue) for j in range(5)]
        gold += films
        pred += films[: 5 - i % 4] + [tup("ghost", 7, issue=issue)] * (i % 3)
    return gold, pred


def test_bootstrap_interval_contains_the_mean_and_is_repeatable():
    gold, pred = _issues(8)
    first = evaluate(gold, pred, n_boot=500, seed=7)
    again = evaluate(gold, pred, n_boot=500, seed=7)
    other = evaluate(gold, pred, n_boot=500, seed=8)
    assert first == again
    values = [r["tuple_f1"] for r in first["per_issue"]]
    s = first["summary"]["tuple_f1"]
    assert s["mean"] == pytest.approx(sum(values) / len(values))
    assert s["ci_low"] <= s["mean"] <= s["ci_high"] and s["ci_low"] < s["ci_high"]
    assert min(values) <= s["ci_low"] and s["ci_high"] <= max(values)
    assert (other["summary"]["tuple_f1"]["ci_low"], other["summary"]["tuple_f1"]["ci_high"]) != (
        s["ci_low"], s["ci_high"])
    json.dumps(first)  # the CLI prints it as JSON


def test_bootstrap_mean_ci_edge_cases():
    assert bootstrap_mean_ci([]) == (None, None, None)
    assert bootstrap_mean_ci([0.5], n_boot=10) == (0.5, 0.5, 0.5)
    with pytest.raises(ValueError):
        evaluate(GOLD, GOLD, n_boot=0)


def test_polars_input_and_issue_date_column():
    gold = pl.DataFrame([{**r, "issue_date": "1926-05-05"} for r in GOLD]).drop("issue")
    pred = pl.DataFrame([{**r, "issue_date": "1926-05-05"} for r in GOLD[:2]]).drop("issue")
    res = evaluate(gold, pred, n_boot=50)
    assert [r["issue"] for r in res["per_issue"]] == ["1926-05-05"]
    assert res["per_issue"][0]["tuple_recall"] == 0.5


def test_parse_gross():
    assert parse_gross("$14,000") == 14000 and parse_gross(14000.0) == 14000
    assert parse_gross("") is None and parse_gross(None) is None
    with pytest.raises(ValueError):
        parse_gross("14G")
    with pytest.raises(ValueError):
        parse_gross(10.5)


def _write_jsonl(path: Path, rows):
    path.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "issue"}) + "\n"
                            for r in rows) + "\n", encoding="utf-8")


def _write_tsv(path: Path, rows):
    lines = ["theater\tcity\tmovie\tweek\tgross"]
    lines += ["\t".join([r["theater"], r["city"], r["movie"], r["week"],
                         "" if r["gross"] is None else str(r["gross"])]) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


def test_evaluate_dirs_jsonl_tsv_and_missing_issues(tmp_path):
    gold_dir, pred_dir = tmp_path / "gold", tmp_path / "pred"
    gold_dir.mkdir()
    pred_dir.mkdir()
    _write_jsonl(gold_dir / "1926-05-05.jsonl", GOLD)
    _write_tsv(gold_dir / "1926-05-12.tsv", GOLD + [tup("E", None)])
    _write_jsonl(gold_dir / "1926-05-19.jsonl", GOLD)
    _write_tsv(gold_dir / "1926-05-26.tsv", GOLD)
    (gold_dir / "README.txt").write_text("not an issue")
    _write_tsv(pred_dir / "1926-05-05.tsv", GOLD)                  # perfect
    _write_jsonl(pred_dir / "1926-05-12.jsonl", GOLD)              # misses E
    (pred_dir / "1926-05-26.jsonl").write_text("")                 # extractor found nothing
    _write_jsonl(pred_dir / "1926-06-02.jsonl", GOLD)              # no gold for it

    res = evaluate_dirs(gold_dir, pred_dir, n_boot=100)
    rows = {r["issue"]: r for r in res["per_issue"]}
    assert sorted(rows) == ["1926-05-05", "1926-05-12", "1926-05-26"]
    assert rows["1926-05-05"]["tuple_f1"] == 1.0
    assert rows["1926-05-12"]["tuple_recall"] == pytest.approx(4 / 5)
    assert rows["1926-05-12"]["movie_recall"] == pytest.approx(4 / 5)
    assert rows["1926-05-26"]["tuple_f1"] == 0.0
    assert res["missing"] == [{"issue": "1926-05-19", "reason": "missing_pred"},
                              {"issue": "1926-06-02", "reason": "missing_gold"}]
    text = render_eval_table(res)
    assert "1926-05-19 (missing_pred)" in text and "1926-06-02 (missing_gold)" in text
    assert text.splitlines()[0].split() == ["issue", "gold", "pred", "shared", "spearman",
                                            "movie", "F1", "tuple", "F1"]

    scored = evaluate_dirs(gold_dir, pred_dir, n_boot=100, missing_pred_as_empty=True)
    assert {r["issue"]: r["tuple_f1"] for r in scored["per_issue"]}["1926-05-19"] == 0.0
    assert scored["n_issues_scored"] == 4


def test_evaluate_dirs_rejects_bad_files(tmp_path):
    gold_dir, pred_dir = tmp_path / "gold", tmp_path / "pred"
    gold_dir.mkdir()
    pred_dir.mkdir()
    (gold_dir / "a.tsv").write_text("theater\tcity\tmovie\tgross\nX\tY\tZ\t1\n")
    with pytest.raises(ValueError, match="week"):
        evaluate_dirs(gold_dir, pred_dir)
    (gold_dir / "a.tsv").write_text("theater\tcity\tmovie\tweek\tgross\nX\tY\tZ\tlast week\t14G\n")
    with pytest.raises(ValueError, match="a.tsv"):
        evaluate_dirs(gold_dir, pred_dir)
    (gold_dir / "a.tsv").unlink()
    _write_jsonl(gold_dir / "a.jsonl", GOLD)
    _write_tsv(gold_dir / "a.tsv", GOLD)
    with pytest.raises(ValueError, match="both"):
        evaluate_dirs(gold_dir, pred_dir)
    (gold_dir / "a.tsv").unlink()
    with pytest.raises(FileNotFoundError):
        evaluate_dirs(gold_dir, tmp_path / "absent")
