"""The synthetic paper-scale corpus of benchmarks/bench_checks.py (issue 18 point 1): six
languages in turn, 8,130,000 entries over 6,072 tracks, the sample world's phrase banks, realistic
timings, distribution artefacts, e-mail lines and planted defects, written as SRT bytes in each
language's legacy code page (the module docstring of bench_checks says what and why)."""

from __future__ import annotations

import math
import random
import unicodedata
from typing import Any

import polars as pl

PAPER_TRACKS = 6_072
PAPER_ENTRIES = 8_130_000
LANGS = ("en", "ar", "id", "fa", "ro", "vi")
SEED = 20240607
TIMING_DEFECTS = ("macro_interval", "block_lifespan", "delayed_onset", "chronology", "runtime_coverage")
TIMING_EVERY = 50
LANGUAGE_EVERY = 97
EMAIL_EVERY = 10
SPREAD = 250  # entries per track vary by ± this much (pairwise, so the total is exact)


# --------------------------------------------------------------------------------------------
# the synthetic corpus
# --------------------------------------------------------------------------------------------
def track_lengths(n_tracks: int, n_entries: int) -> list[int]:
    """Entries per track: ``n_entries`` in total exactly, 1,339 ± SPREAD at paper scale."""
    base, rest = divmod(n_entries, n_tracks)
    lengths = [base + (1 if i < rest else 0) for i in range(n_tracks)]
    rng = random.Random(SEED)
    for i in range(0, n_tracks - 1, 2):
        d = rng.randint(0, SPREAD)
        lengths[i] += d
        lengths[i + 1] -= d
    assert sum(lengths) == n_entries and min(lengths) > 100
    return lengths


def plan(track_no: int) -> dict[str, Any]:
    """What track ``track_no`` of the corpus is: language, planted defect, e-mail line."""
    lang = LANGS[track_no % len(LANGS)]
    timing = TIMING_DEFECTS[(track_no // TIMING_EVERY) % len(TIMING_DEFECTS)] if track_no % TIMING_EVERY == 7 else None
    wrong = track_no % LANGUAGE_EVERY == 11 and timing is None
    return {"language": lang, "timing": timing, "wrong_language": wrong, "email": track_no % EMAIL_EVERY == 3}


_BANKS: dict[str, Any] | None = None


def _banks() -> dict[str, Any]:
    """The phrase banks as one Series each (dialogue, e-mail lines, artefacts) with per-language
    offsets and sizes."""
    global _BANKS
    if _BANKS is None:
        from cinesub.sample import phrases as ph

        out: dict[str, Any] = {}
        for kind in ("dialogue", "email", "boilerplate"):
            lines: list[str] = []
            where: dict[str, tuple[int, int]] = {}
            for lang in LANGS:
                if kind == "dialogue":
                    mine = ph.bank(lang) + [p.text[lang] for p in ph.PHRASES if p.kind == "stage"]
                elif kind == "email":
                    mine = [p.text[lang] for p in ph.PHRASES if p.kind == "email"]
                else:
                    mine = [t for t, _ in ph.BOILERPLATE[lang]]
                where[lang] = (len(lines), len(mine))
                lines += mine
            out[kind] = (pl.Series(lines, dtype=pl.String), where)
        _BANKS = out
    return _BANKS


def _uniform(key: pl.Expr, lo: int, hi: int, seed: int) -> pl.Expr:
    """Deterministic pseudo-random integers in [lo, hi] from a key column (polars hashing)."""
    return (key.hash(seed) % (hi - lo + 1)).cast(pl.Int64) + lo


def _ts(col: str) -> pl.Expr:
    c = pl.col(col)
    return pl.format(
        "{}:{}:{},{}",
        (c // 3_600_000).cast(pl.String).str.zfill(2),
        (c // 60_000 % 60).cast(pl.String).str.zfill(2),
        (c // 1000 % 60).cast(pl.String).str.zfill(2),
        (c % 1000).cast(pl.String).str.zfill(3),
    )


MIN = 60_000


def make_batch(first: int, lengths: list[int]) -> tuple[pl.DataFrame, list[dict[str, Any]]]:
    """Tracks ``first .. first+len(lengths)-1`` as one entries frame (columns track — the position
    in the batch —, index, timeframe, start_ms, end_ms, content; tracks contiguous) plus per-track metadata; vectorised."""
    banks = _banks()
    seed = SEED + first
    metas: list[dict[str, Any]] = []
    offset = 0
    for k, n in enumerate(lengths):
        p = plan(first + k)
        content_lang = LANGS[(LANGS.index(p["language"]) + 1) % 6] if p["wrong_language"] else p["language"]
        metas.append(dict(p, track_no=first + k, offset=offset, n=n, boilerplate=2, emails=int(p["email"]),
                          d_off=banks["dialogue"][1][content_lang][0], d_len=banks["dialogue"][1][content_lang][1],
                          b_off=banks["boilerplate"][1][p["language"]][0],
                          b_len=banks["boilerplate"][1][p["language"]][1],
                          e_off=banks["email"][1][p["language"]][0], e_len=banks["email"][1][p["language"]][1]))
        offset += n
    meta = pl.DataFrame([{k: m[k] for k in ("n", "d_off", "d_len", "b_off", "b_len", "e_off", "e_len", "email")}
                         | {"timing": m["timing"] or "", "track": k} for k, m in enumerate(metas)],
                        schema_overrides={"track": pl.Int32})
    meta = meta.with_columns(_uniform(pl.col("track"), 60_000, 180_000, seed + 1).alias("start0"))
    key = pl.col("row")
    timing, index, mid = pl.col("timing"), pl.col("index"), pl.col("n") // 2 + 1
    frame = (
        meta.select(pl.col("track").repeat_by(pl.col("n")).explode())
        .join(meta, on="track", how="left", maintain_order="left")
        .with_row_index("row")
        .with_columns(
            (pl.int_range(pl.len()).over("track") + 1).cast(pl.Int64).alias("index"),
            _uniform(key, 1_000, 6_000, seed + 2).alias("dur"),
            _uniform(key, 120, 4_000, seed + 3).alias("gap"),
        )
        .with_columns(
            ((pl.col("dur") + pl.col("gap")).cum_sum().over("track") - pl.col("dur") - pl.col("gap")
             + pl.col("start0")
             + pl.when((timing == "macro_interval") & (index >= mid)).then(16 * MIN)
             .when((timing == "block_lifespan") & (index > mid)).then(16 * MIN)
             .when(timing == "delayed_onset").then(6 * MIN).otherwise(0)).alias("s"),
        )
        .with_columns(
            pl.when((timing == "block_lifespan") & (index == mid)).then(pl.col("s") + 16 * MIN)
            .otherwise(pl.col("s") + pl.col("dur")).alias("e"),
        )
        .with_columns(
            # chronology: the middle block ends before it starts
            pl.when((timing == "chronology") & (index == mid)).then(pl.col("e")).otherwise(pl.col("s"))
            .alias("start_ms"),
            pl.when((timing == "chronology") & (index == mid)).then(pl.col("s")).otherwise(pl.col("e"))
            .alias("end_ms"),
            pl.when((index == 1) | (index == pl.col("n")))
            .then(pl.col("b_off") + _uniform(key, 0, 1_000_000, seed + 4) % pl.col("b_len"))
            .alias("_b"),
            pl.when(pl.col("email") & (index == pl.col("n") // 3 + 1))
            .then(pl.col("e_off") + pl.col("track") % pl.col("e_len"))
            .alias("_e"),
            (pl.col("d_off") + _uniform(key, 0, 1_000_000, seed + 5) % pl.col("d_len")).alias("_d"),
        )
    )
    dialogue = banks["dialogue"][0].gather(frame["_d"])
    boiler = banks["boilerplate"][0].gather(frame["_b"].fill_null(0))
    email = banks["email"][0].gather(frame["_e"].fill_null(0))
    frame = frame.with_columns(
        pl.when(frame["_b"].is_not_null()).then(boiler)
        .when(frame["_e"].is_not_null()).then(email)
        .otherwise(dialogue).alias("content"),
        pl.format("{} --> {}", _ts("start_ms"), _ts("end_ms")).alias("timeframe"),
    )
    last_end = frame.group_by("track").agg(pl.col("end_ms").max()).sort("track")["end_ms"].to_list()
    for m, le in zip(metas, last_end):
        coverage = 0.5 if m["timing"] == "runtime_coverage" else 0.9
        m["runtime_min"] = math.ceil(le / MIN / coverage)
    return frame.select("track", "index", "timeframe", "start_ms", "end_ms", "content"), metas



# --------------------------------------------------------------------------------------------
# SRT bytes in legacy code pages
# --------------------------------------------------------------------------------------------
LEGACY = {"en": "cp1252", "id": "cp1252", "ar": "cp1256", "fa": "cp1256", "ro": "cp1250", "vi": "cp1258"}
#: what legacy files write for letters their code page lacks
_SUBSTITUTES = {"ی": "ي", "ș": "ş", "ț": "ţ", "Ș": "Ş", "Ț": "Ţ"}
_TABLES: dict[str, dict[int, str]] = {}
#: the combining tone marks cp1258 writes after a letter (grave, acute, tilde, hook, dot below)
_TONE_MARKS = frozenset("\u0300\u0301\u0303\u0309\u0323")


def _legacy_table(encoding: str, chars: set[str]) -> dict[int, str]:
    """A str.translate table so that text over ``chars`` encodes in ``encoding``: substitutes,
    and (cp1258) a precomposed letter as base + combining tone mark."""
    table: dict[int, str] = {}
    for ch in chars:
        try:
            ch.encode(encoding)
            continue
        except UnicodeEncodeError:
            pass
        alt = _SUBSTITUTES.get(ch)
        if alt is None:  # cp1258: the letter without its tone mark, then the combining tone mark
            d = unicodedata.normalize("NFD", ch)
            tone = next((c for c in d if c in _TONE_MARKS), None)
            alt = unicodedata.normalize("NFC", d.replace(tone, "", 1)) + tone if tone else None
        if alt is not None:
            try:
                alt.encode(encoding)
                table[ord(ch)] = alt
            except UnicodeEncodeError:
                pass
    return table


def srt_bytes(frame: pl.DataFrame, metas: list[dict[str, Any]]) -> list[tuple[bytes, str]]:
    """Each track of a :func:`make_batch` batch as SRT bytes and the encoding used."""
    texts = (frame.group_by("track", maintain_order=True)
             .agg(pl.format("{}\n{}\n{}\n", "index", "timeframe", "content").str.join("\n"))
             .sort("track")[:, 1].to_list())
    out = []
    for text, m in zip(texts, metas):
        enc = "utf-8" if m["wrong_language"] else LEGACY[m["language"]]
        if enc != "utf-8":
            if enc not in _TABLES:
                _TABLES[enc] = {}
            missing = {ch for ch in set(text) if ord(ch) > 127 and ord(ch) not in _TABLES[enc]}
            if missing:
                _TABLES[enc].update(_legacy_table(enc, missing))
            try:
                out.append((text.translate(_TABLES[enc]).encode(enc), enc))
                continue
            except UnicodeEncodeError:
                enc = "utf-8"
        out.append((text.encode("utf-8"), enc))
    return out


def write_corpus(store, n_tracks: int, n_entries: int, batch: int = 100) -> list[dict[str, Any]]:
    """Every track of the corpus as a blob in ``store``; per track its plan, runtime, encoding, sha."""
    lengths = track_lengths(n_tracks, n_entries)
    tracks = []
    for b in range(0, n_tracks, batch):
        frame, metas = make_batch(b, lengths[b:min(b + batch, n_tracks)])
        for (raw, enc), m in zip(srt_bytes(frame, metas), metas):
            sha, _ = store.put(raw)
            tracks.append({k: m[k] for k in ("track_no", "language", "timing", "wrong_language", "n",
                                              "boilerplate", "emails", "runtime_min")} | {"sha": sha, "encoding": enc})
    return tracks


def expected_layers(m: dict[str, Any]) -> list[str]:
    return sorted(([m["timing"]] if m["timing"] else []) + (["language_mismatch"] if m["wrong_language"] else []))


def key_of(m: dict[str, Any]) -> tuple:
    """The process stage's track key (imdb, language, provider, file_id, rank, count, sha, runtime)."""
    return (f"tt{m['track_no']:07d}", m["language"], "bench", str(m["track_no"]), 1, 0, m["sha"], m["runtime_min"])
