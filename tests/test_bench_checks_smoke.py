"""Smoke test of benchmarks/bench_checks.py on a few tracks of its synthetic corpus: the corpus
has the paper's size, its SRT bytes are in the legacy code pages, and the whole production pass
(process stage jobs, workers, writer, release Parquet) finds exactly what is planted, as does the
library baseline (nothing is written to benchmarks/results)."""

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


def test_tracks_are_written_in_their_legacy_code_pages():
    lengths = B.track_lengths(B.PAPER_TRACKS, B.PAPER_ENTRIES)
    frame, metas = B.make_batch(0, lengths[0:12])
    encodings = {m["language"]: enc for (_, enc), m in zip(B.srt_bytes(frame, metas), metas)
                 if not m["wrong_language"]}
    assert encodings == B.LEGACY
    (raw, enc), m = B.srt_bytes(frame, metas)[0], metas[0]
    assert raw.decode(enc).startswith("1\n") and raw.decode(enc).count("-->") == m["n"]


def test_the_whole_pass_finds_exactly_what_is_planted():
    # tracks 0-23 hold a macro_interval gap (7), a wrong-language track (11), e-mail lines (3, 13,
    # 23) and two artefacts per track
    res = B.main(["--tracks", "24", "--baseline-tracks", "2", "--batch-tracks", "8", "--workers", "2",
                  "--no-write"])
    p = res["pass"]
    assert res["results_match_planted"], p["mismatches"]
    assert p["planted_by_layer"] == {"language_mismatch": 1, "macro_interval": 1}
    assert p["sanitization"]["removed"] == 48 and p["sanitization"]["modified"] == 3
    assert p["db_entries"] == res["corpus"]["entries"]
    assert p["parquet_rows"] == res["corpus"]["entries"] - 48
    assert res["baseline"]["tracks"] == 2 and res["baseline"]["tracks_not_matching_planted"] == 0
    rss = res["peak_rss_mib"]
    # the pool's 2 workers (and multiprocessing's resource tracker) were sampled beside the coordinator
    assert rss["workers_seen"] >= 2 and rss["largest_worker"] > 0 and rss["coordinator"] > 0
    assert rss["sum_peak_sampled"] > max(rss["coordinator"], rss["largest_worker"])
