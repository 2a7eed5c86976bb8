"""Issue 14 point 1, end to end: a real sample build in which one layer raises on some
candidates (a planted parser bug, patched in through ``sitecustomize`` so the spawn workers of
the process stage carry it too) finishes and publishes; every such candidate is a rejected
track with reason ``internal_error``, the exception type and detail in its row, its flag and its
attempt; a rerun (without the bug, every stage forced) reuses those rejections instead of
retrying the same bytes under the same processing version."""

from __future__ import annotations

import json

import duckdb
import pytest
from _cli_runner import run_build

pytestmark = pytest.mark.slow

SITECUSTOMIZE = '''
import hashlib

import extractors.srt as _srt

_real = _srt.parse_to_arrow


class PlantedParserBug(Exception):
    pass


def parse_to_arrow(text, *args, **kwargs):
    if hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[0] % 5 == 0:
        raise PlantedParserBug("planted parser bug")
    return _real(text, *args, **kwargs)


_srt.parse_to_arrow = parse_to_arrow
'''


def test_poison_candidates_are_recorded_rejections_and_reused(tmp_path):
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
    home = tmp_path / "home"
    first = run_build(home, PYTHONPATH=str(site), CINESUB_WORKERS="2")
    assert first.returncode == 0, first.stderr[-4000:]
    summary = json.loads(first.stdout)
    assert summary["release"]["path"]
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        poisoned = con.execute("""SELECT track_id, status, reasons, error_type, error_detail, processed_at
                                  FROM tracks WHERE reasons = 'internal_error' ORDER BY track_id""").fetchall()
        others = con.execute("SELECT count(*) FROM tracks WHERE error_type IS NOT NULL AND reasons <> 'internal_error'"
                             ).fetchone()[0]
        n_tracks = con.execute("SELECT count(*) FROM tracks").fetchone()[0]
        flags = dict(con.execute("""SELECT track_id, detail FROM flags WHERE layer = 'internal_error'""").fetchall())
        attempts = con.execute("""SELECT count(*) FROM attempts WHERE outcome = 'rejected'
                                  AND reason = 'internal_error'""").fetchone()[0]
    assert poisoned and len(poisoned) < n_tracks and others == 0
    for track_id, status, _, etype, detail, _ in poisoned:
        assert status == "rejected" and etype == "PlantedParserBug" and detail == "parse: planted parser bug"
        assert flags[track_id] == "PlantedParserBug: parse: planted parser bug"
    assert attempts == len(poisoned)

    again = run_build(home, "--force")  # no planted bug now: same bytes, same processing version
    assert again.returncode == 0, again.stderr[-4000:]
    assert json.loads(again.stdout)["work"]["tracks_processed"] == 0
    with duckdb.connect(str(home / "state.duckdb"), read_only=True) as con:
        after = con.execute("""SELECT track_id, status, reasons, error_type, error_detail, processed_at
                               FROM tracks WHERE reasons = 'internal_error' ORDER BY track_id""").fetchall()
    assert after == poisoned
