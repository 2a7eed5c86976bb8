"""The whole per-track pass at paper scale (issue 18 point 1): 6,072 tracks, 8.13M entries.

    python -m benchmarks.bench_checks [--quick] [--workers N] [--batch-tracks N] [--baseline-tracks N]

**Corpus.** Synthetic, generated before the clock starts (not committed): six languages in turn,
8,130,000 entries over 6,072 tracks (1,339 ± 250 each), dialogue from the sample world's phrase
banks (:mod:`cinesub.sample.phrases`), realistic timings, the distribution artefacts of each
language at the head and tail of every track, a narrative e-mail line in one track in ten, and
planted defects: one timing defect (``macro_interval``, ``block_lifespan``, ``delayed_onset``,
``chronology``, ``runtime_coverage`` in turn) every 50th track, a wrong-language track every 97th.
Each track is written as SRT bytes in its language's legacy code page where the text fits one
(en/id cp1252, ar cp1256, fa cp1256 with Arabic yeh, ro cp1250 with cedilla ş/ţ, vi cp1258 with
combining tone marks), UTF-8 for the wrong-language tracks, into a raw store (content addressed,
checked on read) like the one the build downloads into.

**Measured (the clock):** the production path of the ``process`` stage -- its jobs of
``--batch-tracks`` candidates (``Settings.process_batch_tracks``), its worker function
(:func:`flows.stages.subtitles.process._work`: read blob, decode, strict parse, every verification
layer incl. language identification, sanitization; :func:`validators.candidate.process_batch`) on
the item runner of the build (:class:`flows.items.LocalItemRunner`, ``--workers`` processes), its
writer (``ProcessStage._write_batch``: one DuckDB transaction per batch into a fresh state DB) --
then the release's entries Parquet (the ``release_entries`` query of sql/release_tables.sql over
the processed tracks, :func:`warehouse.publish.write_parquet`). Recorded: wall, entries/s, the
coordinator's time writing and waiting, peak RSS of the coordinator and of the largest worker,
flags per layer against the planted defects, sanitization actions against the planted artefacts,
rows in the DB and the Parquet against the corpus (a mismatch fails the run), and, on the first
``--baseline-tracks`` tracks in-process, the time of each step (decode, parse, checks,
sanitize).

**Baseline, same run:** the same work with ``chardet`` (encoding), ``srt`` (parse), ``langdetect``
(seeded, on the same ~200-character chunks, at most the same number per track), the timing rules
as a per-entry Python loop (:func:`python_loop_timing`) and sanitization as a per-entry loop of the
pattern file's regexes (``regex`` module), the entries written the same way (Arrow into DuckDB, the
same Parquet), on the first ``--baseline-tracks`` tracks in one process, projected linearly to the
whole corpus on ``--workers`` processes (perfect parallel speed-up assumed for the baseline: the
projection favours it). ``--quick`` runs 1/20 of the corpus (303 tracks) and also records its
linear projection. Results go to ``benchmarks/results/bench_checks.json`` under ``quick`` or
``full``; the other key is kept.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import platform
import random
import resource
import sys
import time
import unicodedata
from fractions import Fraction
from pathlib import Path
from typing import Any

import polars as pl

REPO = Path(__file__).resolve().parent.parent
RESULTS_FILE = REPO / "benchmarks" / "results" / "bench_checks.json"

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


# --------------------------------------------------------------------------------------------
# the baseline: srt + chardet + langdetect + Python loops
# --------------------------------------------------------------------------------------------
def python_loop_timing(entries: list[tuple[int, int, int]], runtime_min: float | None, th) -> dict[str, float]:
    """{layer: value} of the timing layers over (index, start_ms, end_ms) tuples in file order;
    the same rules, boundaries and values as validators.checks."""
    from validators.checks import exact_fraction, minutes_to_ms

    block_limit = minutes_to_ms(th.block_lifespan_min)
    onset_limit = minutes_to_ms(th.delayed_onset_min)
    gap_limit = minutes_to_ms(th.macro_interval_min)
    worst_neg = worst_block = worst_gap = None
    first_start = last_end = prev_end = None
    for _index, start, end in entries:
        d = end - start
        if d < 0 and (worst_neg is None or d < worst_neg):
            worst_neg = d
        if d >= block_limit and (worst_block is None or d > worst_block):
            worst_block = d
        if first_start is None or start < first_start:
            first_start = start
        if last_end is None or end > last_end:
            last_end = end
        if prev_end is not None:
            g = start - prev_end
            if g >= gap_limit and (worst_gap is None or g > worst_gap):
                worst_gap = g
        prev_end = end
    out: dict[str, float] = {}
    if worst_neg is not None:
        out["chronology"] = float(worst_neg)
    if worst_block is not None:
        out["block_lifespan"] = worst_block / 60_000
    if first_start is not None and first_start > onset_limit:
        out["delayed_onset"] = first_start / 60_000
    if runtime_min and last_end is not None:
        ratio = Fraction(max(last_end, 0), minutes_to_ms(runtime_min))
        if ratio < exact_fraction(th.runtime_coverage_min_ratio):
            out["runtime_coverage"] = float(ratio)
    if worst_gap is not None:
        out["macro_interval"] = worst_gap / 60_000
    return out



def _chunk_texts(contents: list[str], chunk_chars: int, max_chunks: int) -> list[str]:
    """Consecutive entries joined into ~chunk_chars chunks, at most max_chunks evenly spread."""
    chunks, cur, size = [], [], 0
    for text in contents:
        cur.append(text)
        size += len(text) + 1
        if size >= chunk_chars:
            chunks.append(" ".join(cur))
            cur, size = [], 0
    if cur:
        chunks.append(" ".join(cur))
    if len(chunks) <= max_chunks:
        return chunks
    return [chunks[round(i * (len(chunks) - 1) / (max_chunks - 1))] for i in range(max_chunks)]


def baseline_track(raw: bytes, language: str, runtime_min: float, th, patterns) -> dict[str, Any]:
    """One track the library way; returns its layers, sanitization counts and entry rows."""
    import chardet
    import langdetect
    import regex
    import srt

    from validators.language import CHUNK_CHARS, MAX_CHUNKS

    enc = chardet.detect(raw)["encoding"] or "utf-8"
    text = raw.decode(enc, errors="replace")
    subs = list(srt.parse(text))
    rows = [(s.index, int(s.start.total_seconds() * 1000), int(s.end.total_seconds() * 1000), s.content)
            for s in subs]
    layers = sorted(python_loop_timing([(i, a, b) for i, a, b, _ in rows], runtime_min, th))
    langdetect.DetectorFactory.seed = 0
    votes: dict[str, int] = {}
    for chunk in _chunk_texts([unicodedata.normalize("NFC", c) for *_, c in rows], CHUNK_CHARS, MAX_CHUNKS):
        try:
            lang = langdetect.detect(chunk)
        except langdetect.LangDetectException:
            lang = "und"
        votes[lang] = votes.get(lang, 0) + 1
    if votes.get(language, 0) < th.language_min_share * sum(votes.values()):
        layers = sorted(layers + ["language_mismatch"])
    active = [(p, regex.compile(p.regex)) for p in patterns.for_language(language)]
    removed = modified = 0
    clean = []
    for *_, content in rows:
        norm = unicodedata.normalize("NFC", content)
        if any(rx.search(norm) for p, rx in active if p.action == "remove_entry"):
            removed += 1
            clean.append(None)
            continue
        residue, redact = norm, False
        for p, rx in active:
            if p.action != "remove_entry" and rx.search(residue):
                redact |= p.action == "redact"
                residue = rx.sub(" ", residue)
        if residue != norm and not regex.search(r"\p{L}", residue):
            removed += 1
            clean.append(None)
        elif redact:
            modified += 1
            clean.append(next(rx for p, rx in active if p.action == "redact").sub("[email redacted]", content))
        else:
            clean.append(content)
    return {"layers": layers, "removed": removed, "modified": modified, "rows": rows, "clean": clean,
            "encoding": enc}


def run_baseline(tracks: list[dict[str, Any]], store, workdir: Path) -> dict[str, Any]:
    """The library baseline over ``tracks`` in this process, written like the pass; timed."""
    import duckdb
    import pyarrow as pa

    from cinesub.settings import Thresholds
    from cinesub.state import init_state
    from flows.stages.subtitles.common import insert_arrow
    from validators.sanitize import load_patterns
    from warehouse.publish import write_parquet

    th, patterns = Thresholds(), load_patterns()
    db = workdir / "baseline.duckdb"
    init_state(db)
    t0 = time.perf_counter()
    found = []
    with duckdb.connect(str(db)) as con:
        for m in tracks:
            r = baseline_track(store.get(m["sha"]), m["language"], m["runtime_min"], th, patterns)
            tid = str(m["track_no"])
            table = pa.table({"track_id": [tid] * len(r["rows"]), "position": list(range(len(r["rows"]))),
                              "index": [x[0] for x in r["rows"]],
                              "timeframe": [""] * len(r["rows"]),
                              "start_ms": [x[1] for x in r["rows"]], "end_ms": [x[2] for x in r["rows"]],
                              "content": [x[3] for x in r["rows"]], "clean_content": r["clean"]})
            con.execute("BEGIN")
            insert_arrow(con, "entries", table)
            con.execute("COMMIT")
            found.append(r)
        write_parquet(con.sql("SELECT * FROM entries WHERE clean_content IS NOT NULL ORDER BY track_id, "
                              "start_ms, position").to_arrow_table(), workdir / "baseline_entries.parquet")
    wall = time.perf_counter() - t0
    wrong = [m["track_no"] for m, r in zip(tracks, found)
             if r["layers"] != expected_layers(m) or r["removed"] != m["boilerplate"] or r["modified"] != m["emails"]]
    return {"name": "srt+chardet+langdetect", "tracks": len(tracks), "entries": sum(m["n"] for m in tracks),
            "wall_s": round(wall, 2), "tracks_not_matching_planted": len(wrong), "not_matching_sample": wrong[:10],
            "versions": _versions("srt", "chardet", "langdetect", "regex")}


def _versions(*names: str) -> dict[str, str]:
    from importlib.metadata import version

    return {n: version(n) for n in names}


# --------------------------------------------------------------------------------------------
# the production pass
# --------------------------------------------------------------------------------------------
def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    return resource.getrusage(who).ru_maxrss / 1024


class _Ctx:
    """What ``ProcessStage._write_batch`` reads of a run context."""

    run_id = "bench"

    @staticmethod
    def item_done(kind: str, con: Any = None) -> None:
        return None


def run_pass(tracks: list[dict[str, Any]], store, workdir: Path, workers: int, batch_tracks: int) -> dict[str, Any]:
    """The process stage's jobs, worker function, item runner and writer, then the entries Parquet."""
    import duckdb

    from cinesub.settings import Thresholds
    from cinesub.state import init_state
    from flows.items import LocalItemRunner
    from flows.stages.subtitles import process as P
    from warehouse.publish import write_parquet

    db = workdir / "state.duckdb"
    init_state(db)
    stage = P.ProcessStage()
    by_key = {key_of(m): m for m in tracks}
    jobs = P.batches([(store.url_for(m["sha"]), m["sha"], m["language"], m["runtime_min"], key_of(m))
                      for m in tracks], batch_tracks, Thresholds().model_dump_json(), "default")
    stats: dict[str, Any] = {"processed": 0, "ok": 0, "flagged": 0, "rejected": 0, "entries": 0}
    found: dict[tuple, Any] = {}
    write_s = 0.0
    t0 = time.perf_counter()
    runner = LocalItemRunner(workers)
    try:
        with duckdb.connect(str(db)) as con:
            for result in runner.map(P._work, jobs, P._work_failed):
                if isinstance(result, P._Retry):
                    raise RuntimeError("a batch's worker failed: the benchmark corpus has no poison file")
                t = time.perf_counter()
                stage._write_batch(con, _Ctx(), result, stats)
                write_s += time.perf_counter() - t
                for key, out in result:
                    found[key] = (sorted(out.reasons), out.status,
                                  int((out.sanitization["action"] == "removed").sum()) if out.sanitization is not None else -1,
                                  int((out.sanitization["action"] == "modified").sum()) if out.sanitization is not None else -1)
            t_pass = time.perf_counter()
            parquet = workdir / "entries.parquet"
            con.execute("""CREATE TEMP VIEW release_tracks AS SELECT * FROM tracks WHERE status <> 'rejected'""")
            write_parquet(con.sql(
                """SELECT e.track_id, t.imdb_id, t.language, e."index", e.timeframe, e.start_ms, e.end_ms,
                          e.clean_content AS content
                   FROM entries e JOIN release_tracks t USING (track_id)
                   WHERE e.clean_content IS NOT NULL
                   ORDER BY t.imdb_id, t.language, e.start_ms, e.position""").to_arrow_table(), parquet)
            t_end = time.perf_counter()
            db_entries = con.execute("SELECT count(*) FROM entries").fetchone()[0]
            db_tracks = con.execute("SELECT count(*) FROM tracks").fetchone()[0]
    finally:
        runner.close()
    import pyarrow.parquet as pq

    mismatches = []
    flags: dict[str, int] = {}
    planted: dict[str, int] = {}
    removed = modified = 0
    for key, m in by_key.items():
        reasons, status, n_removed, n_modified = found[key]
        # a wrong-language track in UTF-8 may also raise the decoder's `encoding` review flag
        # (its bytes do not read as the expected language): counted, not a mismatch
        layers = [r for r in reasons if not (m["wrong_language"] and r == "encoding")]
        for layer in reasons:
            flags[layer] = flags.get(layer, 0) + 1
        for layer in expected_layers(m):
            planted[layer] = planted.get(layer, 0) + 1
        removed += n_removed
        modified += n_modified
        if layers != expected_layers(m) or n_removed != m["boilerplate"] or n_modified != m["emails"]:
            mismatches.append({"track": m["track_no"], "language": m["language"], "encoding": m["encoding"],
                               "flags": reasons, "planted": expected_layers(m), "removed": n_removed,
                               "modified": n_modified})
    n_entries = sum(m["n"] for m in tracks)
    parquet_rows = pq.read_metadata(parquet).num_rows
    want_rows = n_entries - sum(m["boilerplate"] for m in tracks)
    if db_entries != n_entries or db_tracks != len(tracks) or parquet_rows != want_rows:
        mismatches.append({"db_entries": db_entries, "db_tracks": db_tracks, "parquet_rows": parquet_rows,
                           "want_entries": n_entries, "want_parquet_rows": want_rows})
    return {"wall_s": round(t_end - t0, 2), "process_and_write_s": round(t_pass - t0, 2),
            "coordinator_write_s": round(write_s, 2), "parquet_s": round(t_end - t_pass, 2),
            "entries_per_s": round(n_entries / (t_end - t0)), "stats": stats, "flags_by_layer": dict(sorted(flags.items())),
            "planted_by_layer": dict(sorted(planted.items())),
            "sanitization": {"removed": removed, "modified": modified,
                             "planted_artefacts": sum(m["boilerplate"] for m in tracks),
                             "planted_emails": sum(m["emails"] for m in tracks)},
            "db_entries": db_entries, "parquet_rows": parquet_rows, "parquet_mib": round(parquet.stat().st_size / 2**20, 1),
            "mismatches": mismatches[:20], "n_mismatches": len(mismatches)}


def phase_seconds(tracks: list[dict[str, Any]], store, batch_tracks: int) -> dict[str, float]:
    """Where a worker's time goes, on ``tracks`` in this process: per step (validators.candidate
    timings; checks and sanitize for whole batches), blob read and outcome building the rest."""
    from cinesub.settings import Thresholds
    from validators import candidate as C

    th = Thresholds()
    out = {"decode": 0.0, "parse": 0.0, "checks": 0.0, "sanitize": 0.0}
    t0 = time.perf_counter()
    for b in range(0, len(tracks), batch_tracks):
        part = tracks[b:b + batch_tracks]
        runs = [C.decode_and_parse(store.get(m["sha"]), m["language"]) for m in part]
        C.verify_runs(runs, [m["language"] for m in part], [m["runtime_min"] for m in part], th)
        for r in runs:
            for k in out:
                out[k] += r.timings.get(k, 0.0)
    total = time.perf_counter() - t0
    out = {k: round(v, 2) for k, v in out.items()}
    out["total"] = round(total, 2)
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    import tempfile

    from cinesub.rawstore import RawStore

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="1/20 of the paper-scale corpus")
    ap.add_argument("--tracks", type=int, default=None, help="a corpus of this many tracks (tests)")
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1), help="worker processes")
    ap.add_argument("--batch-tracks", type=int, default=None, help="candidates per job (default: the setting)")
    ap.add_argument("--baseline-tracks", type=int, default=None, help="tracks for the library baseline")
    ap.add_argument("--no-write", action="store_true", help="do not write benchmarks/results")
    args = ap.parse_args(argv)
    from cinesub.settings import Settings

    batch_tracks = args.batch_tracks or Settings.model_fields["process_batch_tracks"].default
    scale = 20 if args.quick else 1
    n_tracks = args.tracks or PAPER_TRACKS // scale
    n_entries = round(PAPER_ENTRIES / PAPER_TRACKS * n_tracks)
    baseline_tracks = min(args.baseline_tracks or (60 if not args.quick else 12), n_tracks)
    mode = "quick" if args.quick else "full" if args.tracks is None else "custom"
    print(f"bench_checks ({mode}): {n_tracks} tracks, {n_entries} entries, {args.workers} worker(s), "
          f"jobs of {batch_tracks} tracks", flush=True)
    with tempfile.TemporaryDirectory(prefix="bench_checks_") as tmp:
        workdir = Path(tmp)
        store = RawStore(workdir / "raw")
        t = time.perf_counter()
        tracks = write_corpus(store, n_tracks, n_entries)
        generate_s = time.perf_counter() - t
        print(f"corpus written in {generate_s:.1f}s; running the pass", flush=True)
        production = run_pass(tracks, store, workdir, args.workers, batch_tracks)
        print(f"pass: {production['wall_s']}s wall", flush=True)
        phases = phase_seconds(tracks[:baseline_tracks], store, batch_tracks)
        baseline = run_baseline(tracks[:baseline_tracks], store, workdir)
    per_track = baseline["wall_s"] / baseline["tracks"]
    projected_baseline = per_track * n_tracks / args.workers
    result: dict[str, Any] = {
        "corpus": {"tracks": n_tracks, "entries": n_entries, "languages": list(LANGS), "scale": f"1/{scale}",
                   "encodings": {e: sum(1 for m in tracks if m["encoding"] == e) for e in sorted({m["encoding"] for m in tracks})},
                   "generate_s": round(generate_s, 1)},
        "workers": args.workers,
        "batch_tracks": batch_tracks,
        "pass": production,
        "peak_rss_mib": {"coordinator": round(peak_rss_mib(), 1),
                         "largest_worker": round(peak_rss_mib(resource.RUSAGE_CHILDREN), 1)},
        "phase_seconds_on_baseline_tracks": dict(phases, tracks=baseline_tracks),
        "baseline": dict(baseline, projected_wall_s=round(projected_baseline, 1),
                         projection=f"linear: wall per track on {baseline['tracks']} tracks in one process x "
                                    f"{n_tracks} tracks / {args.workers} workers (perfect speed-up assumed)"),
        "ratio_baseline_over_pass": round(projected_baseline / production["wall_s"], 2),
        "results_match_planted": production["n_mismatches"] == 0,
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "polars": pl.__version__,
                    "platform": platform.platform(), "load_avg_1m_at_end": round(os.getloadavg()[0], 2)},
        "recorded_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    result["peak_rss_mib"]["total_upper_bound"] = round(
        result["peak_rss_mib"]["coordinator"] + args.workers * result["peak_rss_mib"]["largest_worker"], 1)
    if scale > 1 or args.tracks:
        f = PAPER_TRACKS / n_tracks
        result["projected_full"] = {"note": f"linear projection of this run to {PAPER_TRACKS} tracks "
                                            f"(x{f:.2f}; same workers)",
                                    "wall_s": round(production["wall_s"] * f, 1),
                                    "baseline_wall_s": round(per_track * PAPER_TRACKS / args.workers, 1)}
    if not args.no_write and mode != "custom":
        stored: dict[str, Any] = {}
        if RESULTS_FILE.exists():
            try:
                stored = json.loads(RESULTS_FILE.read_text())
            except ValueError:
                stored = {}
        stored = {k: v for k, v in stored.items() if k in ("quick", "full")}
        stored = {"benchmark": "bench_checks",
                  "description": "the whole per-track pass (decode, strict parse, verification layers incl. "
                                 "language identification, sanitization, state DB writes, release entries Parquet) "
                                 "at paper scale against srt+chardet+langdetect", **stored, mode: result}
        RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
        tmpf = RESULTS_FILE.with_suffix(".json.tmp")
        tmpf.write_text(json.dumps(stored, indent=2) + "\n")
        tmpf.replace(RESULTS_FILE)
    b = result["baseline"]
    print(f"{n_tracks} tracks, {n_entries} entries: pass {production['wall_s']}s wall "
          f"({production['entries_per_s']} entries/s; writes {production['coordinator_write_s']}s, "
          f"parquet {production['parquet_s']}s); peak RSS {result['peak_rss_mib']}")
    print(f"flags {production['flags_by_layer']} (planted {production['planted_by_layer']}); "
          f"sanitization {production['sanitization']}; phases on {baseline_tracks} tracks {phases}")
    print(f"baseline {b['name']} on {b['tracks']} tracks: {b['wall_s']}s, projected {b['projected_wall_s']}s "
          f"-> ratio {result['ratio_baseline_over_pass']}x")
    if production["n_mismatches"]:
        print(f"MISMATCH: {production['mismatches'][:3]}", file=sys.stderr)
        raise SystemExit(1)
    return result


def run(quick: bool = False) -> dict[str, Any]:
    """Entry point of benchmarks.run (`make bench`)."""
    return main(["--quick"] if quick else [])


if __name__ == "__main__":
    main()
