"""Release statistics (SPEC A11, paper Tables 8–14): warehouse/tokens.py (o200k_base input tokens,
offline), warehouse/stats.py + sql/release_stats.sql (the tables, Parquet + statistics.json with
deterministic bytes) and warehouse/stats_page.py (the self-contained HTML page with inline SVG
plots, checked in headless Chromium).

The synthetic release below has 3 films × 6 languages with figures small enough to compute by
hand; the expected values are written out next to each assertion. Percentiles are quantile_cont
(linear, position p·(n−1)), e.g. p95 of [90, 100, 120] = 100 + 0.9·20 = 118.
"""

from __future__ import annotations

import html.parser
import json
import os
import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from _browser import open_page

from warehouse import tokens as tok
from warehouse.stats import compute_stats, stats_json, write_stats
from warehouse.stats_page import render_stats_page

REPO = Path(__file__).resolve().parent.parent
LANGS = ("en", "ar", "id", "fa", "ro", "vi")

# film: imdb_id, id, year, runtime_min, imdb_rating, age_suitability
FILMS = [("tt0000001", 1, 1980, 100, 6.0, "13+"),
         ("tt0000002", 2, 1990, 120, 7.0, "13+"),
         ("tt0000003", 3, 2000, 90, 8.0, "8+")]
# entries per (film, language)
N_ENTRIES = {
    "en": (4, 2, 5), "ar": (2, 2, 4), "id": (4, 2, 5), "fa": (4, 1, 5), "ro": (3, 2, 5), "vi": (4, 2, 6),
}
# span / runtime per (film, language); fa F1 sits exactly on the 0.65 threshold (not low)
SPAN = {
    "en": (0.9, 0.9, 0.8), "ar": (0.6, 0.9, 0.7), "id": (0.8, 0.8, 0.8), "fa": (0.65, 0.7, 0.8),
    "ro": (0.7, 0.7, 0.5), "vi": (0.9, 0.9, 1.0),
}
# whitespace tokens (tracks.n_tokens); ar F1 is exactly 0.6 of English (not low), ar F2 0.5 (low)
WS_TOKENS = {"en": (100, 50, 200), "ar": (60, 25, 200)}
LINES = {
    "en": 'Hello there, friend number {i}. "Quoted"\nsecond line',
    "ar": "مرحبا يا صديقي رقم {i}",
    "id": "Halo teman nomor {i}",
    "fa": "سلام دوست شماره {i}",
    "ro": "Bună ziua, prietene numărul {i}",
    "vi": "Xin chào người bạn số {i}",
}
TEXTS = {  # plot (3, 6, 9 words), synopsis, storyline (mixed whitespace), keyMessage (None for F3)
    1: {"plot": "A man walks.", "synopsis": "one two three four five", "storyline": "a  b\tc\nd",
        "keyMessage": "Be kind.", "genres": ["Drama", "Comedy"]},
    2: {"plot": "x y z w v u", "synopsis": "one two", "storyline": "a b", "keyMessage": "Tell the truth always.",
        "genres": ["Drama"]},
    3: {"plot": "one two three four five six seven eight nine", "synopsis": "s", "storyline": " lead  trail ",
        "keyMessage": None, "genres": ["Drama", "Action", "Comedy", "Drama"]},
}


def _tid(imdb: str, lang: str) -> str:
    return f"{imdb}-{lang}"


def _ms(ms: int) -> str:
    h, rest = divmod(ms, 3_600_000)
    m, rest = divmod(rest, 60_000)
    s, milli = divmod(rest, 1000)
    return f"{h:02d}:{m:02d}:{s:02d},{milli:03d}"


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> dict:
    """Synthetic release tables and films.jsonl."""
    root = tmp_path_factory.mktemp("release")
    films = pa.table({
        "id": pa.array([f[1] for f in FILMS], pa.int64()),
        "imdb_id": [f[0] for f in FILMS],
        "title": [f"Film {f[1]}" for f in FILMS],
        "year": pa.array([f[2] for f in FILMS], pa.int32()),
        "runtime_min": pa.array([f[3] for f in FILMS], pa.int32()),
        "imdb_rating": [f[4] for f in FILMS],
        "age_suitability": [f[5] for f in FILMS],
    })
    tracks, entries = [], []
    for lang in LANGS:
        for k, (imdb, _fid, _y, runtime, _r, _a) in enumerate(FILMS):
            tid = _tid(imdb, lang)
            n = N_ENTRIES[lang][k]
            for i in range(1, n + 1):
                # start times out of index order for entry 2 of every track (release order = start_ms)
                start = i * 10_000 if i != 2 else 5_000
                entries.append({"track_id": tid, "imdb_id": imdb, "language": lang, "index": i,
                                "timeframe": f"{_ms(start)} --> {_ms(start + 2_000)}", "start_ms": start,
                                "end_ms": start + 2_000, "content": LINES[lang].format(i=i)})
            tracks.append({"track_id": tid, "imdb_id": imdb, "language": lang, "n_entries": n,
                           "first_start_ms": 0, "last_end_ms": round(SPAN[lang][k] * runtime * 60_000),
                           "n_tokens": WS_TOKENS.get(lang, WS_TOKENS["en"])[k]})
    rng = random.Random(3)
    shuffled = entries[:]
    rng.shuffle(shuffled)  # table row order must not matter
    entries_t = pa.Table.from_pylist(shuffled, schema=pa.schema([
        ("track_id", pa.string()), ("imdb_id", pa.string()), ("language", pa.string()), ("index", pa.int64()),
        ("timeframe", pa.string()), ("start_ms", pa.int64()), ("end_ms", pa.int64()), ("content", pa.string())]))
    tracks_t = pa.Table.from_pylist(tracks, schema=pa.schema([
        ("track_id", pa.string()), ("imdb_id", pa.string()), ("language", pa.string()), ("n_entries", pa.int32()),
        ("first_start_ms", pa.int64()), ("last_end_ms", pa.int64()), ("n_tokens", pa.int64())]))
    ratings = pa.Table.from_pylist([
        {"imdb_id": "tt0000001", "country": "Australia", "label": "PG", "minimum_age": 0},
        {"imdb_id": "tt0000002", "country": "Australia", "label": "M", "minimum_age": 15},
        {"imdb_id": "tt0000003", "country": "Australia", "label": "PG", "minimum_age": 0},
        {"imdb_id": "tt0000001", "country": "United States", "label": "PG-13", "minimum_age": 13},
        {"imdb_id": "tt0000002", "country": "United States", "label": "R", "minimum_age": 17},
        {"imdb_id": "tt0000003", "country": "United States", "label": "PG-13", "minimum_age": 13},
    ], schema=pa.schema([("imdb_id", pa.string()), ("country", pa.string()), ("label", pa.string()),
                         ("minimum_age", pa.int32())]))
    safety = pa.Table.from_pylist([
        {"imdb_id": "tt0000001", "category": "strongProfanity", "occurrence_count": 3, "evidence_line_count": 2},
        {"imdb_id": "tt0000001", "category": "mildObscenity", "occurrence_count": 1, "evidence_line_count": 1},
        {"imdb_id": "tt0000002", "category": "strongProfanity", "occurrence_count": 0, "evidence_line_count": 0},
        {"imdb_id": "tt0000003", "category": "strongProfanity", "occurrence_count": 5, "evidence_line_count": 4},
        {"imdb_id": "tt0000003", "category": "crudeBodilyLanguage", "occurrence_count": 2, "evidence_line_count": 2},
    ], schema=pa.schema([("imdb_id", pa.string()), ("category", pa.string()), ("occurrence_count", pa.int32()),
                         ("evidence_line_count", pa.int32())]))
    flags = pa.table({"track_id": [_tid("tt0000001", "ar"), _tid("tt0000001", "ar"), "not-a-release-track"],
                      "layer": ["token_ratio", "entry_ratio", "span_ratio"]})
    # films.jsonl: SPEC A11 entities, subtitles written as warehouse/release.py does
    ents = []
    for imdb, fid, year, runtime, rating, age in FILMS:
        subs = []
        for lang in sorted(LANGS):
            rows = sorted((e for e in entries if e["track_id"] == _tid(imdb, lang)),
                          key=lambda e: (e["start_ms"], e["index"]))
            subs.append({"language": f"X ({lang})", "downloadCount": 1,
                         "entries": [{"index": e["index"], "timeframe": e["timeframe"], "content": e["content"]}
                                     for e in rows]})
        ents.append({"id": fid, "title": f"Film {fid}", "releaseYear": year, "duration": runtime,
                     "imdbRating": rating, **TEXTS[fid], "ageSuitabilityRating": age, "subtitles": subs})
    jsonl = root / "films.jsonl"
    jsonl.write_text("".join(json.dumps(e, ensure_ascii=False) + "\n" for e in ents), encoding="utf-8")
    tables = {"films": films, "tracks": tracks_t, "entries": entries_t, "ratings": ratings,
              "language_safety": safety, "flags": flags}
    return {"tables": tables, "jsonl": jsonl, "entities": ents, "root": root}


@pytest.fixture(scope="module")
def stats(release) -> dict[str, pa.Table]:
    return compute_stats(release["tables"], release["jsonl"], languages=LANGS)


def rows(stats, name):
    return stats[name].to_pylist()


def by(stats, name, key):
    return {r[key]: r for r in stats[name].to_pylist()}


# ------------------------------------------------------------------------------------------------
# tokenizer
# ------------------------------------------------------------------------------------------------
def test_tokenizer_is_o200k_base_offline():
    enc = tok.load_encoding("o200k_base")
    assert enc.name == "o200k_base" and enc.n_vocab == 200019
    # a property of the published encoding: "hello world" is two tokens, these two
    assert enc.encode_ordinary("hello world") == [24912, 2375]
    assert tok.count_texts(["hello world", "", "hello world hello world"]) == [2, 0, 4]
    assert Path(os.environ["TIKTOKEN_CACHE_DIR"], tok.cache_key("o200k_base")).is_file()


def test_tokenizer_missing_or_tampered_table_fails_without_network(tmp_path, monkeypatch):
    import tiktoken.load

    def no_network(*a, **k):
        raise AssertionError("tiktoken tried to download")

    monkeypatch.setattr(tiktoken.load, "read_file", no_network)
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path))
    tok.load_encoding.cache_clear()
    try:
        with pytest.raises(tok.TokenizerUnavailable, match="make setup"):
            tok.load_encoding("o200k_base")
        bad = tmp_path / tok.cache_key("o200k_base")
        bad.write_bytes(b"not a bpe table")
        with pytest.raises(tok.TokenizerUnavailable, match="make setup"):
            tok.load_encoding("o200k_base")
        assert bad.exists()  # refused before tiktoken could delete it and refetch
        with pytest.raises(tok.TokenizerUnavailable, match="not supported"):
            tok.load_encoding("gpt2")
    finally:
        tok.load_encoding.cache_clear()


def test_track_tokens_are_the_entity_entries_json(release):
    enc = tok.load_encoding()
    counts = tok.count_track_tokens(release["tables"]["entries"])
    assert counts.columns == ["track_id", "input_tokens"] and counts.height == 18
    assert counts["track_id"].to_list() == sorted(counts["track_id"].to_list())
    got = dict(zip(counts["track_id"].to_list(), counts["input_tokens"].to_list()))
    # the prompt-formatted track is exactly the film entity's subtitles[].entries JSON array
    for ent, (imdb, *_rest) in zip(release["entities"], FILMS):
        for sub in ent["subtitles"]:
            lang = sub["language"][-3:-1]
            text = json.dumps(sub["entries"], ensure_ascii=False)
            assert got[_tid(imdb, lang)] == len(enc.encode_ordinary(text))
            assert tok.format_track(sub["entries"]) == text
    # polars input, any row order: same counts
    df = pl.from_arrow(release["tables"]["entries"]).reverse()
    assert tok.count_track_tokens(df).equals(counts)
    # relations: more entries → more tokens; English F1 (4 entries) > English F2 (2 entries)
    assert got[_tid("tt0000001", "en")] > got[_tid("tt0000002", "en")] > 0
    # release order is start_ms, then index: entry 2 starts first in every track
    assert [e["index"] for e in release["entities"][0]["subtitles"][1]["entries"]] == [2, 1, 3, 4]


# ------------------------------------------------------------------------------------------------
# statistics
# ------------------------------------------------------------------------------------------------
def test_core_table_8(stats):
    (core,) = rows(stats, "core")
    assert core == {
        "films": 3, "tracks": 18, "entries": 11 + 8 + 11 + 10 + 10 + 12,
        "year_min": 1980, "year_max": 2000,
        "runtime_mean": 103.3333, "runtime_median": 100.0, "runtime_p95": 118.0, "runtime_max": 120,
        "imdb_rating_mean": 7.0, "imdb_rating_median": 7.0, "imdb_rating_min": 6.0, "imdb_rating_max": 8.0,
        "genre_labels": 3, "genres_per_film_mean": 2.0, "genres_per_film_median": 2.0,
    }


def test_input_size_table_9(stats, release):
    size = by(stats, "input_size", "language")
    assert [r["language"] for r in rows(stats, "input_size")] == list(LANGS)
    counts = tok.count_track_tokens(release["tables"]["entries"])
    got = dict(zip(counts["track_id"].to_list(), counts["input_tokens"].to_list()))
    for lang in LANGS:
        vals = [got[_tid(f[0], lang)] for f in FILMS]
        en = [got[_tid(f[0], "en")] for f in FILMS]
        r = size[lang]
        assert r["tracks"] == 3
        assert r["mean_tokens"] == round(float(np.mean(vals)), 4)
        assert r["median_tokens"] == float(np.median(vals))
        assert r["p95_tokens"] == round(float(np.percentile(vals, 95)), 4)  # numpy 'linear' = quantile_cont
        assert r["max_tokens"] == max(vals)
        assert r["median_token_ratio"] == round(float(np.median([v / e for v, e in zip(vals, en)])), 4)
    # entries: en [4, 2, 5] → 4; ar [2, 2, 4] → 2; ar entry ratios [0.5, 1, 0.8] → 0.8; vi [1, 1, 1.2] → 1
    assert size["en"]["median_entries"] == 4.0 and size["ar"]["median_entries"] == 2.0
    assert size["en"]["median_entry_ratio"] == 1.0 and size["en"]["median_token_ratio"] == 1.0
    assert size["ar"]["median_entry_ratio"] == 0.8
    assert size["fa"]["median_entry_ratio"] == 1.0 and size["vi"]["median_entry_ratio"] == 1.0


def test_reference_length_table_10(stats):
    ref = by(stats, "reference_length", "field")
    assert list(ref) == ["plot", "synopsis", "storyline", "keyMessage"]
    # plot words [3, 6, 9]: mean 6, median 6, p95 6 + 0.9·3 = 8.7, max 9
    assert ref["plot"] == {"field": "plot", "films": 3, "mean_words": 6.0, "median_words": 6.0,
                           "p95_words": 8.7, "max_words": 9}
    # synopsis [5, 2, 1]; storyline "a  b\tc\nd" → 4 whitespace tokens, [4, 2, 2]
    assert (ref["synopsis"]["mean_words"], ref["synopsis"]["median_words"]) == (2.6667, 2.0)
    assert (ref["storyline"]["max_words"], ref["storyline"]["median_words"]) == (4, 2.0)
    # keyMessage missing for film 3: [2, 4] → mean 3, median 3, p95 2 + 0.95·2 = 3.9
    assert ref["keyMessage"] == {"field": "keyMessage", "films": 2, "mean_words": 3.0, "median_words": 3.0,
                                 "p95_words": 3.9, "max_words": 4}


def test_language_content_table_11(stats):
    assert rows(stats, "language_content") == [
        {"category": "strongProfanity", "films_with_evidence": 2, "occurrence_count": 8, "evidence_line_count": 6},
        {"category": "crudeBodilyLanguage", "films_with_evidence": 1, "occurrence_count": 2, "evidence_line_count": 2},
        {"category": "mildObscenity", "films_with_evidence": 1, "occurrence_count": 1, "evidence_line_count": 1},
        {"category": "religiousProfanityAndExclamation", "films_with_evidence": 0, "occurrence_count": 0,
         "evidence_line_count": 0},
    ]


def test_duration_audit_table_12(stats, release):
    audit = by(stats, "duration_audit", "language")
    ar, fa, ro, en = audit["ar"], audit["fa"], audit["ro"], audit["en"]
    # ar spans [0.6, 0.9, 0.7]: mean 0.7333, median 0.7, p05 0.6 + 0.1·0.1 = 0.61
    assert (ar["mean_span_runtime"], ar["median_span_runtime"], ar["p05_span_runtime"]) == (0.7333, 0.7, 0.61)
    # token ratios are of o200k_base tokens of the prompt-formatted track (the audit's count)
    counts = tok.count_track_tokens(release["tables"]["entries"])
    got = dict(zip(counts["track_id"].to_list(), counts["input_tokens"].to_list()))
    ratios = [got[_tid(f[0], "ar")] / got[_tid(f[0], "en")] for f in FILMS]
    assert ar["mean_token_ratio"] == round(float(np.mean(ratios)), 4)
    assert ar["median_token_ratio"] == round(float(np.median(ratios)), 4)
    assert ar["low_token"] == sum(r < 0.6 for r in ratios) == 1  # F1: 2 short entries against 4
    # ar entry ratios [0.5, 1.0, 0.8] → mean 0.7667
    assert ar["mean_entry_ratio"] == 0.7667
    # every entry lasts 2 s and none overlap: density = 2 s · entries / runtime
    assert en["mean_interval_density"] == round(float(np.mean(
        [2_000 * n / (f[3] * 60_000) for n, f in zip(N_ENTRIES["en"], FILMS)])), 4)
    assert ar["low_span"] == 1 and ar["low_entry"] == 1 and ar["flagged_tracks"] == 1
    assert ar["median_entry_ratio"] == 0.8
    assert fa["low_span"] == 0  # exactly 0.65 is not below the threshold
    assert fa["low_entry"] == 1  # F2: 1 / 2 entries
    assert ro["low_span"] == 1 and ro["low_entry"] == 0  # 3/4 = 0.75 is not below 0.70
    assert (en["median_token_ratio"], en["median_entry_ratio"], en["low_token"], en["flagged_tracks"]) == (1.0, 1.0, 0, 0)
    assert en["median_span_runtime"] == 0.9
    assert sum(r["flagged_tracks"] for r in audit.values()) == 1  # the non-release flag is not counted


def test_label_tables_13_14_and_distributions(stats):
    assert rows(stats, "genres") == [{"genre": "Drama", "films": 3}, {"genre": "Comedy", "films": 2},
                                     {"genre": "Action", "films": 1}]
    assert rows(stats, "age_suitability") == [{"label": "13+", "minimum_age": 13, "films": 2},
                                              {"label": "8+", "minimum_age": 8, "films": 1}]
    assert rows(stats, "ratings") == [
        {"country": "Australia", "label": "PG", "minimum_age": 0, "films": 2},
        {"country": "Australia", "label": "M", "minimum_age": 15, "films": 1},
        {"country": "United States", "label": "PG-13", "minimum_age": 13, "films": 2},
        {"country": "United States", "label": "R", "minimum_age": 17, "films": 1},
    ]
    assert rows(stats, "years") == [{"year": y, "films": 1} for y in (1980, 1990, 2000)]
    assert rows(stats, "runtimes") == [{"runtime_min": m, "films": 1} for m in (90, 100, 120)]
    per_track = rows(stats, "input_tokens")
    assert len(per_track) == 18 and per_track[0]["imdb_id"] == "tt0000001" and per_track[0]["language"] == "en"
    assert per_track[1]["entries"] == 2  # ar F1
    defs = by(stats, "definitions", "name")
    assert defs["encoding"]["value"] == "o200k_base"
    assert "o200k_base" in defs["tokenizer"]["value"] and "quantile_cont" in defs["percentile"]["value"]


def test_entity_dicts_give_the_same_stats(release, stats):
    again = compute_stats(release["tables"], iter(release["entities"]), languages=LANGS)
    assert list(again) == list(stats)
    for name in stats:
        assert again[name].equals(stats[name]), name


def test_write_stats_deterministic_parquet_and_json(release, stats, tmp_path):
    a = write_stats(stats, tmp_path / "a")
    again = compute_stats(release["tables"], release["jsonl"], languages=LANGS)
    b = write_stats(again, tmp_path / "b")
    assert sorted(a) == sorted([f"stats/{n}.parquet" for n in stats] + ["stats/statistics.json"])
    for key in a:
        assert a[key] == tmp_path / "a" / key
        assert a[key].read_bytes() == b[key].read_bytes(), key
    for name, table in stats.items():
        assert pq.read_table(a[f"stats/{name}.parquet"]).equals(table)
    text = a["stats/statistics.json"].read_text(encoding="utf-8")
    doc = json.loads(text)
    assert text == json.dumps(doc, sort_keys=True, ensure_ascii=False, indent=1) + "\n"  # sorted keys
    assert set(doc["tables"]) == set(stats)
    assert doc["tables"]["core"][0]["runtime_mean"] == 103.3333
    floats = [v for t in doc["tables"].values() for r in t for v in r.values() if isinstance(v, float)]
    assert floats and all(round(v, 4) == v for v in floats)
    assert text == stats_json(stats)


def test_compute_stats_needs_the_core_tables(release):
    with pytest.raises(ValueError, match="entries"):
        compute_stats({k: v for k, v in release["tables"].items() if k != "entries"}, release["jsonl"],
                      languages=LANGS)
    with pytest.raises(ValueError, match="reference language"):
        compute_stats(release["tables"], release["jsonl"], languages=("ar", "fa"))


# ------------------------------------------------------------------------------------------------
# page
# ------------------------------------------------------------------------------------------------
VOID = {"meta", "link", "br", "hr", "img", "input", "col", "area", "base", "wbr", "source", "track", "embed", "param"}


class _Balance(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.svgs = 0
        self.titles_in_svg = 0

    def handle_starttag(self, tag, attrs):
        if tag == "svg":
            self.svgs += 1
        if tag == "title" and "svg" in self.stack:
            self.titles_in_svg += 1
        if tag not in VOID:
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"unbalanced </{tag}> (open: {self.stack[-3:]})")
            return
        self.stack.pop()


@pytest.fixture(scope="module")
def page(stats, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("page") / "stats" / "statistics.html"
    return render_stats_page(stats, out, title="cinesub", version="1.2.3")


def test_page_contains_every_table_and_figure(page, stats):
    text = page.read_text(encoding="utf-8")
    assert text.startswith("<!DOCTYPE html>")
    parser = _Balance()
    parser.feed(text)
    parser.close()
    assert not parser.errors and parser.stack == [], (parser.errors, parser.stack)
    for name in stats:
        assert f'id="{name}-table"' in text, name
    assert parser.svgs >= 6 and parser.titles_in_svg == parser.svgs
    assert text.count("<figcaption>") == parser.svgs
    assert len(re.findall(r'<svg class="plot" role="img" aria-label="[^"]+"', text)) == parser.svgs
    ids = re.findall(r'\bid="([^"]+)"', text)
    assert len(ids) == len(set(ids))  # figure ids prefixed: unique in the page
    # hand-computed figures show up in the cells
    assert '<td class="n">118</td>' in text  # runtime p95
    assert "<td>Drama</td><td class=\"n\">3</td>" in text
    assert "1.2.3" in text and "thousand o200k_base tokens" in text


def test_page_is_offline_and_deterministic(page, stats, tmp_path):
    text = page.read_text(encoding="utf-8")
    assert "Content-Security-Policy" in text and "default-src 'none'" in text
    assert "<script" not in text.lower()
    refs = re.findall(r"""\b(?:src|href)\s*=\s*["']([^"']*)["']""", text)
    assert all(r.startswith(("data:", "#")) for r in refs), refs
    assert not re.search(r"<(?:link|img|iframe|script)\b[^>]*\b(?:src|href)=[\"']https?:", text)
    assert "@import" not in text and "url(http" not in text
    again = render_stats_page(stats, tmp_path / "again.html", title="cinesub", version="1.2.3")
    assert again.read_bytes() == page.read_bytes()
    # a fresh interpreter with another hash seed writes the same bytes
    files = write_stats(stats, tmp_path / "rel")
    code = (
        "import sys, pyarrow.parquet as pq; from pathlib import Path\n"
        "from warehouse.stats_page import render_stats_page\n"
        "d = Path(sys.argv[1]); names = [p.stem for p in sorted(d.glob('*.parquet'))]\n"
        "order = ['core','input_size','reference_length','language_content','duration_audit','genres',"
        "'age_suitability','ratings','years','runtimes','input_tokens','definitions']\n"
        "st = {n: pq.read_table(d / f'{n}.parquet') for n in order if n in names}\n"
        "render_stats_page(st, sys.argv[2], title='cinesub', version='1.2.3')\n"
    )
    out = tmp_path / "subprocess.html"
    env = dict(os.environ, PYTHONHASHSEED="12345")
    proc = subprocess.run([sys.executable, "-c", code, str(files["stats/core.parquet"].parent), str(out)],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert list(stats) == ["core", "input_size", "reference_length", "language_content", "duration_audit", "genres",
                           "age_suitability", "ratings", "years", "runtimes", "input_tokens", "definitions"]
    assert out.read_bytes() == page.read_bytes()


def test_page_renders_in_headless_chromium(page, tmp_path):
    shot = tmp_path / "statistics.png"
    with open_page(page) as (pg, log):
        svgs = pg.locator("svg.plot")
        assert svgs.count() >= 6
        for i in range(svgs.count()):
            box = svgs.nth(i).bounding_box()
            assert box and box["width"] > 100 and box["height"] > 100, (i, box)
            assert svgs.nth(i).locator("text").count() > 3  # axis labels drawn as text
        assert "Subtitle input size by language" in pg.inner_text("#input_size")
        assert "Romanian (ro)" in pg.inner_text("#input_size-table")
        pg.screenshot(path=str(shot), full_page=True)
    log.assert_clean(page.as_uri())
    assert shot.stat().st_size > 20_000


# ------------------------------------------------------------------------------------------------
# issue 14 point 8: free text never becomes markup
# ------------------------------------------------------------------------------------------------
HOSTILE_GENRES = ["Action $ Money $", "Drama $%$", r"Sci-Fi $\frac$", "Noir ${$", r"Back\slash \n",
                  "<script>alert(1)</script>", 'x id="evil" href="#evil"', "100% {braces} a_b^c & co",
                  "Bell\x07Ring"]


def test_statistics_page_draws_data_text_as_plain_text(release, tmp_path):
    ents = [dict(e, genres=HOSTILE_GENRES[k::3], ageSuitabilityRating=f"{8 + k}+ $x$ <b>")
            for k, e in enumerate(release["entities"])]
    tables = dict(release["tables"])
    tables["films"] = tables["films"].set_column(
        tables["films"].column_names.index("age_suitability"), "age_suitability",
        pa.array([f"{8 + k}+ $x$ <b>" for k in range(len(FILMS))]))
    ratings = tables["ratings"].to_pylist()
    for r in ratings:
        r["country"] = "Ruritania $%$ <i>" if r["country"] == "Australia" else r["country"]
    tables["ratings"] = pa.Table.from_pylist(ratings, schema=tables["ratings"].schema)
    hostile = compute_stats(tables, iter(ents), languages=LANGS)
    assert {r["genre"] for r in hostile["genres"].to_pylist()} == set(HOSTILE_GENRES)
    page = render_stats_page(hostile, tmp_path / "statistics.html", title="cinesub <b>", version="1.2.3")
    text = page.read_text(encoding="utf-8")
    parser = _Balance()
    parser.feed(text)
    parser.close()
    assert not parser.errors and parser.stack == [], (parser.errors, parser.stack)
    assert "<script" not in text.lower() and "<b>" not in text and "<i>" not in text
    genres_fig = text[text.index('<figure id="fig-genres">'):]
    genres_fig = genres_fig[:genres_fig.index("</figure>")]
    for g in HOSTILE_GENRES[:-1]:  # drawn as written: no mathtext, no markup
        assert html.escape(g, quote=False) in genres_fig, g
    assert "Bell\ufffdRing" in genres_fig and "\x07" not in genres_fig
    assert 'id="fig-genres-evil"' not in text and 'href="#fig-genres-evil"' not in text  # the label's text kept
    assert "Ruritania $%$ &lt;i&gt;" in text[text.index('<figure id="fig-ratings">'):]
    assert "8+ $x$ &lt;b&gt;" in text[text.index('<figure id="fig-age-suitability">'):]
    # and in the tables beside the plots, escaped
    assert "<td>&lt;script&gt;alert(1)&lt;/script&gt;</td>" in text
    assert "<title>cinesub &lt;b&gt; — statistics 1.2.3</title>" in text


def test_long_and_empty_labels_are_shortened_not_dropped():
    from warehouse.stats_page import MAX_PLOT_LABEL, plot_text

    assert plot_text("$x$") == "$x$" and plot_text(None) == "(none)" and plot_text("") == "(empty)"
    assert plot_text("a\nb\tc\x00d") == "a b c\ufffdd"
    long = plot_text("Genre " * 40)
    assert len(long) == MAX_PLOT_LABEL and long.endswith("…")
