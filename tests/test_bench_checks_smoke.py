"""Smoke test of benchmarks/bench_checks.py on a few tracks of its synthetic corpus: the corpus
has the paper's size, the production checks and sanitization find exactly what is planted, and
the Python-loop baseline, the per-track checks and the batch query agree (nothing is written to
benchmarks/results)."""

from __future__ import annotations

from benchmarks import bench_checks as B


def test_corpus_has_paper_scale_and_is_deterministic():
    lengths = B.track_lengths(B.PAPER_TRACKS, B.PAPER_ENTRIES)
    assert len(lengths) == 6072 and sum(lengths) == 8_130_000
    assert 1000 < min(lengths) and max(lengths) < 1700
    a, meta_a = B.make_batch(100, lengths[100:103])
    b, _ = B.make_batch(100, lengths[100:103])
    assert a.equals(b)
    assert a.height == sum(lengths[100:103])
    assert {m["language"] for m in meta_a} == {B.LANGS[100 % 6], B.LANGS[101 % 6], B.LANGS[102 % 6]}
    assert a["index"].to_list()[: lengths[100]] == list(range(1, lengths[100] + 1))


def test_checks_and_sanitization_find_exactly_what_is_planted():
    # tracks 0-59 hold a macro_interval gap (7), a block_lifespan block (57), a wrong-language
    # track (11), e-mail lines (every 10th from 3) and two artefacts per track
    out = B.run_range((0, 60, B.PAPER_TRACKS, B.PAPER_ENTRIES, 30))
    assert out["tracks"] == 60
    assert out["mismatches"] == []
    assert out["flags"] == {"block_lifespan": 1, "language_mismatch": 1, "macro_interval": 1}
    assert out["removed"] == 120 and out["modified"] == 6


def test_baseline_agrees_with_the_production_checks():
    res = B.run_baseline(B.PAPER_TRACKS, B.PAPER_ENTRIES, 60, 30)
    assert res["same_results"], res["differences"]
    assert res["entries"] > 60_000
