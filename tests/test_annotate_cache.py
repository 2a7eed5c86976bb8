"""The annotate stage's scan cache (flows/stages/subtitles/annotate.py ScanCache): a cached scan
is the scan; another scanner or an unreadable entry means a fresh scan."""

from __future__ import annotations

import polars as pl

from flows.stages.subtitles.annotate import ScanCache
from validators.safety import safety_to_json, scan


def _scan(texts: list[str]):
    scanned = scan(pl.DataFrame({"index": list(range(1, len(texts) + 1)), "content": texts}))
    return safety_to_json(scanned), [[m.index, m.category, m.span, m.rule, m.start, m.end] for m in scanned.matches]


def test_a_cached_scan_is_the_scan_and_is_keyed_by_the_scanner(tmp_path):
    result, matches = _scan(["Oh my God, what the hell.", "Damn it!", "A quiet line."])
    cache = ScanCache(tmp_path)
    assert cache.get("t1") is None
    assert cache.put("t1", result, matches) == (result, matches)
    assert ScanCache(tmp_path).get("t1") == (result, matches)
    assert ScanCache(tmp_path).get("t2") is None
    other = ScanCache(tmp_path)
    other.scanner = "another lexicon"
    assert other.get("t1") is None
    for p in tmp_path.glob("*.json"):
        p.write_text("{")
    assert ScanCache(tmp_path).get("t1") is None
