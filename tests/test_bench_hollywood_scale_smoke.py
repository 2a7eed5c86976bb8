"""Smoke test of benchmarks/bench_hollywood_scale.py on a tiny generated Variety year (2 issues ×
40 leaves, in-process worker): the generator is deterministic and plants the keep rate; a build
over the IA fixture fetches exactly one ``_jp2.zip`` member per kept page and never a whole zip;
a no-change rebuild asks only search + metadata; one touched item is seen as changed. No timing
or memory assertions (those are the benchmark's figures, benchmarks/results/hollywood_scale.json)."""

from __future__ import annotations

import pytest

from benchmarks import bench_hollywood_scale as B
from cinesub.sample.variety_scale import generate_scale_world, issue_dates, kept_leaves


def test_generator_is_deterministic_and_plants_the_keep_rate(tmp_path):
    a = generate_scale_world(tmp_path / "a", issues=1, leaves=50, keep_rate=0.04)
    b = generate_scale_world(tmp_path / "b", issues=1, leaves=50, keep_rate=0.04)
    ident = a["items"][0]["identifier"]
    assert ident == "variety113-1934-01-03" and issue_dates(2) == ["1934-01-03", "1934-01-10"]
    za, zb = (p / "ia" / ident / f"{ident}_jp2.zip" for p in (tmp_path / "a", tmp_path / "b"))
    assert za.read_bytes() == zb.read_bytes() and a["bytes"] == b["bytes"]
    assert a["items"][0]["grosses_leaves"] == len(kept_leaves(50, 0.04)) == 2
    assert 0 not in kept_leaves(300, 0.04) and len(kept_leaves(300, 0.04)) == 12


def test_request_kinds_follow_the_archive_url_shapes():
    assert B.request_kind("/metadata/variety113-1934-01-03") == "metadata"
    assert B.request_kind("/services/search/v1/scrape") == "search"
    assert B.request_kind("/download/v/v_hocr_searchtext.txt.gz") == "text"
    assert B.request_kind("/download/v/v_scandata.xml") == "text"
    assert B.request_kind("/download/v/v_jp2.zip/v_jp2%2Fv_0007.jp2") == "image"
    assert B.request_kind("/download/v/v_jp2.zip") == "zip"


def test_tiny_year_fetches_kept_images_only_and_rebuilds_without_downloads(tmp_path):
    res = B.measure(2, 40, 0.05, tmp_path, rebuilds=True, worker=B.work)
    build, same, one = res["build"], res["rebuild_unchanged"], res["rebuild_one_changed"]
    kept = build["stats"]["images"]["kept_pages"]
    assert kept == res["grosses_leaves"] == 4 and build["stats"]["filter"]["pages"] == 80
    assert build["fetched"]["image"]["requests"] == kept == build["stats"]["images"]["fetched"]
    assert build["fetched"]["zip"]["requests"] == 0
    assert build["fetched"]["text"]["requests"] == 2 * 3  # search text, page index, scandata per item
    assert build["stats"]["extract"]["ocr_rules_tuples"] > 0 and build["stats"]["aggregate"]["weekly"] > 0
    assert build["raw_store_bytes"] > 0
    assert {k for k, v in same["fetched"].items() if v["requests"]} == {"metadata", "search"}
    assert same["fetched"]["image"]["bytes"] == same["fetched"]["text"]["bytes"] == 0
    assert same["stats"]["discover"]["items_unchanged"] == 2
    assert one["stats"]["discover"]["items_changed"] == 1 and one["stats"]["discover"]["items_unchanged"] == 1
    assert one["fetched"]["image"]["requests"] == 0


def _run(leaves, peak, phases):
    return {"leaves": leaves, "build": {"peak_rss_bytes": peak, "phase_peak_rss_bytes": phases}}


def test_memory_growth_judges_every_phase_against_the_tolerance():
    small = _run(1000, 100_000, {"filter": 80_000, "aggregate": 100_000})
    flat = B.memory_growth(small, _run(4000, 101_000, {"filter": 80_500, "aggregate": 101_000}), tolerance=0.02)
    assert flat["memory_flat"] and flat["overall"]["growth_bytes"] == 1000
    assert flat["phases"]["filter"]["growth_bytes_per_leaf"] == round(500 / 3000, 1)
    # one phase growing past the tolerance fails the verdict even when the overall peak is flat
    grows = B.memory_growth(small, _run(4000, 101_000, {"filter": 90_000, "aggregate": 101_000}), tolerance=0.02)
    assert not grows["memory_flat"] and grows["phases"]["filter"]["growth_share"] == 0.125


def test_memory_growth_counts_each_world_by_its_lowest_peak_and_reports_the_noise():
    small = _run(1000, 100_000, {"filter": 80_000, "aggregate": 100_000})
    small["repeats"] = [{"peak_rss_bytes": 104_000, "phase_peak_rss_bytes": {"filter": 79_000, "aggregate": 104_000}}]
    big = _run(4000, 105_000, {"filter": 84_000, "aggregate": 105_000})
    # one noisy build of the larger world alone would fail the verdict (+5 %) ...
    assert not B.memory_growth(small, big, tolerance=0.02)["memory_flat"]
    # ... its repeat, as low as the smaller world's, passes it; the spread is the measured noise
    big["repeats"] = [{"peak_rss_bytes": 100_500, "phase_peak_rss_bytes": {"filter": 79_500, "aggregate": 100_500}}]
    g = B.memory_growth(small, big, tolerance=0.02)
    assert g["memory_flat"] and g["overall"]["growth_bytes"] == 500 and g["phases"]["filter"]["growth_bytes"] == 500
    assert g["builds_per_world"] == [2, 2] and g["noise_share"] == round(105_000 / 100_500 - 1, 4)
    # a repeat that is as high still fails: the lowest peak is what counts, not the mean
    big["repeats"] = [{"peak_rss_bytes": 106_000, "phase_peak_rss_bytes": {"filter": 85_000, "aggregate": 106_000}}]
    assert not B.memory_growth(small, big, tolerance=0.02)["memory_flat"]


def _fake_worker(read: int, spans: list):
    def worker(host, home, first, last):
        spans.append((first, last))
        return {"stats": {"discover": {"items": read}, "images": {"kept_pages": 0}}, "peak_rss_bytes": 1,
                "phase_peak_rss_bytes": {}}
    return worker


def test_a_world_past_one_year_is_read_over_its_whole_span(tmp_path):
    # 53 weekly issues from 1934-01-03 end in 1935: every build asks for both years, and a build
    # that read fewer items than the world holds is an error, not a figure
    spans: list = []
    res = B.measure(53, 2, 0.5, tmp_path / "a", worker=_fake_worker(53, spans), repeats=1)
    assert spans == [("1934-01-01", "1935-12-31")] * 2 and res["leaves"] == 106
    with pytest.raises(RuntimeError, match="discover read 52 items"):
        B.measure(53, 2, 0.5, tmp_path / "b", worker=_fake_worker(52, []))
