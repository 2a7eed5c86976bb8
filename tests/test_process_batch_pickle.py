"""The process stage's worker results (flows/stages/subtitles/process.py ``_Batch``) cross the
process boundary with each batch's frames as one Arrow table, and come back as a plain list of
the same outcomes: the same values, dtypes and order, tracks without frames and rejected tracks
included; a batch whose frames differ in schema goes as a plain list."""

from __future__ import annotations

import pickle

import polars as pl
from polars.testing import assert_frame_equal

from flows.stages.subtitles.process import _Batch
from validators.candidate import TrackOutcome, internal_error_outcome


def _entries(n: int, text: str) -> pl.DataFrame:
    return pl.DataFrame({"position": list(range(n)), "index": list(range(1, n + 1)),
                         "content": [f"{text} {i} – ünï" for i in range(n)],
                         "clean_content": [None if i % 3 == 0 else f"{text} {i}" for i in range(n)]},
                        schema={"position": pl.Int64, "index": pl.Int64, "content": pl.String,
                                "clean_content": pl.String})


def _log(n: int) -> pl.DataFrame:
    return pl.DataFrame({"index": list(range(n)), "action": ["removed"] * n},
                        schema={"index": pl.Int64, "action": pl.String})


def _outcomes():
    return [
        (("tt1", "en", 1), TrackOutcome("ok", "utf-8", "strict", [], [], entries=_entries(5, "a"), sanitization=_log(2))),
        (("tt1", "ar", 2), internal_error_outcome("ValueError", "boom", "parse")),
        (("tt2", "en", 3), TrackOutcome("flagged", "cp1252", "strict", ["chronology"], [],
                                        entries=_entries(0, "b"), sanitization=_log(0))),
        (("tt3", "vi", 4), TrackOutcome("ok", "cp1258", "strict", [], [], entries=_entries(7, "c"), sanitization=None)),
    ]


def _same(got, want):
    assert type(got) is list and len(got) == len(want)
    for (gk, g), (wk, w) in zip(got, want):
        assert gk == wk
        for name in ("status", "encoding", "decoder", "reasons", "n_repairs", "error_type", "error_detail"):
            assert getattr(g, name) == getattr(w, name)
        for name in ("entries", "sanitization"):
            a, b = getattr(g, name), getattr(w, name)
            assert (a is None) == (b is None), name
            if a is not None:
                assert_frame_equal(a, b)
                assert a.schema == b.schema


def test_a_batch_comes_back_as_the_same_outcomes():
    want = _outcomes()
    data = pickle.dumps(_Batch(_outcomes()))
    assert b"_unbatch" in data  # packed: the frames as one table each
    _same(pickle.loads(data), want)


def test_a_batch_whose_frames_differ_in_schema_goes_as_a_plain_list():
    odd = _outcomes()
    odd[3][1].entries = odd[3][1].entries.with_columns(pl.col("index").cast(pl.Int32))
    data = pickle.dumps(_Batch(odd))
    assert b"_unbatch" not in data
    got = pickle.loads(data)
    _same(got, odd)
    assert got[3][1].entries.schema["index"] == pl.Int32


def test_an_empty_batch():
    assert pickle.loads(pickle.dumps(_Batch([]))) == []
