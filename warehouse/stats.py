"""Release statistics (SPEC A11 "Statistics as in Tables 8–14"): small tables computed from a
release's tables and its film entities, written as Parquet and one JSON file.

Tables (name → paper table):

* ``core`` (T8) — films, tracks, entries, release years, runtime and IMDb-rating summaries,
  distinct genre labels and genres per film (one row);
* ``input_size`` (T9) — per language: o200k_base input tokens of the prompt-formatted track
  (mean / median / p95 / max; warehouse/tokens.py says what is counted), median entries, and the
  median per-film entry and token ratios against the English track (the paper's "median ratio"
  column is the token ratio);
* ``reference_length`` (T10) — plot, synopsis, storyline, keyMessage length in words;
* ``language_content`` (T11) — per category: films with evidence, occurrences, evidence lines;
* ``duration_audit`` (T12) — per language: span/runtime (mean, median, p05), o200k_base token
  and entry ratios vs English (mean as Table 12 prints them, and median), interval density /
  runtime (mean, median), counts below the audit thresholds, tracks carrying a duration-audit
  flag (docs/duration_audit.md: the same numbers as one query over the release);
* ``genres`` (T13), ``age_suitability`` (T14), ``ratings`` (country, label, minimum age),
  ``years``, ``runtimes`` — label/value → films;
* ``input_tokens`` — per track input tokens and entries (the plots' distribution data);
* ``definitions`` — the methods behind the numbers (tokenizer, percentile, word counting).

Aggregates are DuckDB SQL (sql/release_stats.sql) on a private single-threaded connection, so
the same release gives the same bytes. Fields only in ``films.jsonl`` (plot, synopsis,
storyline, keyMessage, genres) are read by streaming it one line at a time. Floats are rounded to
:data:`FLOAT_DP` decimals in every table, so Parquet and JSON carry the same numbers.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from cinesub.settings import Thresholds
from cinesub.state import render_sql
from validators.checks import exact_fraction
from warehouse.tokens import DEFAULT_ENCODING, count_track_tokens

#: Decimals kept for every float statistic.
FLOAT_DP = 4
#: Reference language of the ratios.
REFERENCE_LANGUAGE = "en"
#: Narrative task fields measured in words (Table 10), in table order.
REFERENCE_FIELDS: tuple[str, ...] = ("plot", "synopsis", "storyline", "keyMessage")
#: Language-content categories (SPEC A11 order; validators/safety.py CATEGORIES).
CATEGORIES: tuple[str, ...] = ("strongProfanity", "crudeBodilyLanguage", "mildObscenity",
                               "religiousProfanityAndExclamation")
#: Statistic tables in output order: name → SQL view.
STAT_VIEWS: dict[str, str] = {
    "core": "stats_core",
    "input_size": "stats_input_size",
    "reference_length": "stats_reference_length",
    "language_content": "stats_language_content",
    "duration_audit": "stats_duration_audit",
    "genres": "stats_genres",
    "age_suitability": "stats_age_suitability",
    "ratings": "stats_ratings",
    "years": "stats_years",
    "runtimes": "stats_runtimes",
    "input_tokens": "stats_input_tokens",
}
PERCENTILE_METHOD = ("DuckDB quantile_cont: linear interpolation between the nearest order statistics at "
                     "position p*(n-1) (numpy 'linear', Hyndman-Fan type 7); median = quantile_cont(x, 0.5)")
WORD_METHOD = "whitespace-separated tokens: len(text.split()) in Python (Unicode whitespace); null fields skipped"
PROMPT_FORMAT = ("per track, the JSON array of its entries as in films.jsonl subtitles[].entries: "
                 "[{\"index\", \"timeframe\", \"content\"}] in start_ms, index order, json.dumps(ensure_ascii=False)")
#: The film-entity fields :func:`entity_tables` reads (a release passes only these, taken from
#: the entities as it writes them, instead of reading films.jsonl back).
ENTITY_STAT_FIELDS: tuple[str, ...] = ("id", *REFERENCE_FIELDS, "genres")
STATS_DIR = "stats"
JSON_NAME = "statistics.json"

# Empty stand-ins for optional release tables (so a partial dict still computes).
_EMPTY: dict[str, pa.Schema] = {
    "flags": pa.schema([("track_id", pa.string()), ("layer", pa.string())]),
    "language_safety": pa.schema([("imdb_id", pa.string()), ("category", pa.string()),
                                  ("occurrence_count", pa.int32()), ("evidence_line_count", pa.int32())]),
    "ratings": pa.schema([("imdb_id", pa.string()), ("country", pa.string()), ("label", pa.string()),
                          ("minimum_age", pa.int32())]),
}
_REQUIRED = ("films", "tracks", "entries")


def word_count(text: Any) -> int | None:
    """Words in a reference text (whitespace tokens); None for a missing field."""
    return len(text.split()) if isinstance(text, str) else None


def iter_entities(source: str | Path | Iterable[Mapping[str, Any]]) -> Iterator[Mapping[str, Any]]:
    """Film entities from a films.jsonl path (streamed, one line at a time) or an iterable."""
    if isinstance(source, (str, Path)):
        with open(source, encoding="utf-8") as fh:
            for line in fh:
                if line.strip():
                    yield json.loads(line)
    else:
        yield from source


def entity_tables(source: str | Path | Iterable[Mapping[str, Any]]) -> dict[str, pa.Table]:
    """``film_texts``, ``film_genres`` and ``film_genre_counts`` from the film entities."""
    texts: dict[str, list[Any]] = {"film_id": [], "field": [], "words": []}
    genres: dict[str, list[Any]] = {"film_id": [], "genre": []}
    counts: dict[str, list[Any]] = {"film_id": [], "n_genres": []}
    for ent in iter_entities(source):
        fid = int(ent["id"])
        for field in REFERENCE_FIELDS:
            words = word_count(ent.get(field))
            if words is not None:
                texts["film_id"].append(fid)
                texts["field"].append(field)
                texts["words"].append(words)
        labels = ent.get("genres")
        if labels is not None:
            distinct = sorted({str(g) for g in labels})
            counts["film_id"].append(fid)
            counts["n_genres"].append(len(distinct))
            for g in distinct:
                genres["film_id"].append(fid)
                genres["genre"].append(g)
    return {
        "film_texts": pa.table(texts, schema=pa.schema([("film_id", pa.int64()), ("field", pa.string()),
                                                        ("words", pa.int64())])),
        "film_genres": pa.table(genres, schema=pa.schema([("film_id", pa.int64()), ("genre", pa.string())])),
        "film_genre_counts": pa.table(counts, schema=pa.schema([("film_id", pa.int64()),
                                                                ("n_genres", pa.int64())])),
    }


#: the schema of :func:`covered_table` (``track_covered`` of sql/release_stats.sql)
COVERED_SCHEMA = pa.schema([("track_id", pa.string()), ("covered_ms", pa.int64())])


def covered_table(entries: pa.Table) -> pa.Table:
    """``(track_id, covered_ms)`` in track_id order: per track with at least one non-empty
    entry, the length of the union of its entries' ``[start_ms, end_ms)`` intervals (empty and
    inverted ones left out) — validators.duration_audit.covered_ms, the release statistics'
    ``stat_covered``. One vectorised pass instead of a SQL window over every entry: in start
    order within a track, an interval adds what reaches past the furthest end of those before it
    (all of which start no later, so the union after its start is one block; ties in any order
    give the same sum). A release's entries hold each track's rows together, by start; a table
    whose tracks are not contiguous is grouped by track first (same result). Integer sums: exact."""
    import numpy as np
    import pyarrow.compute as pc

    n = entries.num_rows
    tid = entries.column("track_id")
    if not n:
        return COVERED_SCHEMA.empty_table()
    tid = tid.combine_chunks() if tid.num_chunks != 1 else tid.chunk(0)
    if n > 1:
        change = np.r_[True, pc.not_equal(tid.slice(1), tid.slice(0, n - 1)).fill_null(True)
                       .to_numpy(zero_copy_only=False)]
    else:
        change = np.ones(1, dtype=bool)
    if tid.null_count or int(change.sum()) != pc.count_distinct(tid).as_py():  # a track's rows apart
        return _covered_grouped(entries)
    start = pc.fill_null(entries.column("start_ms"), 0).to_numpy().astype(np.int64, copy=False)
    end = pc.fill_null(entries.column("end_ms"), 0).to_numpy().astype(np.int64, copy=False)
    run = np.cumsum(change) - 1
    keep = end > start  # (SQL: WHERE end_ms > start_ms; a null compares as false)
    if entries.column("start_ms").null_count or entries.column("end_ms").null_count:
        keep &= ~(entries.column("start_ms").is_null().to_numpy(zero_copy_only=False)
                  | entries.column("end_ms").is_null().to_numpy(zero_copy_only=False))
    rows = np.flatnonzero(keep)
    if not len(rows):
        return COVERED_SCHEMA.empty_table()
    run, start, end = run[rows], start[rows], end[rows]
    if not bool(np.all((np.diff(start) >= 0) | (np.diff(run) != 0))):  # by start within each track
        order = np.lexsort((start, run))
        run, start, end, rows = run[order], start[order], end[order], rows[order]
    lo = min(int(start.min()), 0)
    span = int(end.max()) - lo + 1
    if span * (int(run[-1]) + 1) >= 2 ** 62:  # the runs' offsets would overflow
        return _covered_grouped(entries)
    # each run shifted past the previous one's values: one running maximum never crosses a run,
    # and a run's first interval finds nothing before it (the previous run ends lower)
    shift = run * span - lo
    start, end = start + shift, end + shift
    before = np.empty_like(end)
    before[0] = start[0]
    np.maximum.accumulate(end[:-1], out=before[1:])
    added = np.maximum(0, end - np.maximum(start, before))
    firsts = np.flatnonzero(np.r_[True, run[1:] != run[:-1]])
    out = pa.table({"track_id": tid.take(pa.array(rows[firsts])).cast(pa.string()),
                    "covered_ms": pa.array(np.add.reduceat(added, firsts), pa.int64())}, schema=COVERED_SCHEMA)
    return out.take(pc.sort_indices(out, [("track_id", "ascending")]))


def _covered_grouped(entries: pa.Table) -> pa.Table:
    """:func:`covered_table` for any order of rows (a window per track in polars)."""
    import polars as pl

    df = pl.from_arrow(entries.select(["track_id", "start_ms", "end_ms"]))
    assert isinstance(df, pl.DataFrame)
    df = df.filter(pl.col("end_ms") > pl.col("start_ms")).with_columns(
        pl.col("start_ms").cast(pl.Int64), pl.col("end_ms").cast(pl.Int64)).sort(["track_id", "start_ms"])
    reach = pl.col("end_ms").cum_max().shift(1).over("track_id")
    out = df.with_columns(
        (pl.col("end_ms") - pl.max_horizontal(pl.col("start_ms"), reach.fill_null(pl.col("start_ms"))))
        .clip(lower_bound=0).alias("c")).group_by("track_id").agg(pl.col("c").sum().cast(pl.Int64)).sort("track_id")
    return pa.table({"track_id": out["track_id"].cast(pl.Utf8).to_arrow().cast(pa.string()),
                     "covered_ms": out["c"].to_arrow().cast(pa.int64())}, schema=COVERED_SCHEMA)


def _ordinal_table(column: str, values: Sequence[str]) -> pa.Table:
    return pa.table({column: list(values), "ord": list(range(len(values)))},
                    schema=pa.schema([(column, pa.string()), ("ord", pa.int32())]))


def _round_floats(table: pa.Table, dp: int = FLOAT_DP) -> pa.Table:
    cols = []
    for field, col in zip(table.schema, table.columns):
        if pa.types.is_floating(field.type):
            # Python's round is correctly rounded (Arrow's round can leave 222.79999999999998)
            col = pa.array([None if v is None or math.isnan(v) else round(v, dp) for v in col.to_pylist()],
                           type=field.type)
        cols.append(col)
    return pa.table(cols, schema=table.schema)


def definitions_table(tokenizer: str, languages: Sequence[str], thresholds: Thresholds) -> pa.Table:
    rows = [
        ("encoding", tokenizer),
        ("tokenizer", f"tiktoken {tokenizer} (encode_ordinary)"),
        ("prompt_format", PROMPT_FORMAT),
        ("percentile", PERCENTILE_METHOD),
        ("words", WORD_METHOD),
        ("reference_language", REFERENCE_LANGUAGE),
        ("languages", " ".join(languages)),
        ("ratios", "per film: value(language) / value(English track of the same film); then the median over films"),
        ("span_runtime", "(last_end_ms - first_start_ms) / (runtime_min * 60000)"),
        ("duration_audit_tokens", "o200k_base tokens of the prompt-formatted track (as input_tokens), the duration "
                                  "audit's definition (validators/duration_audit.py count_tokens)"),
        ("interval_density", "union of the entries' [start_ms, end_ms) intervals / (runtime_min * 60000)"),
        ("thresholds", f"low_span: span/runtime < {thresholds.span_ratio_min:g}; "
                       f"low_token: token ratio < {thresholds.token_ratio_min:g}; "
                       f"low_entry: entry ratio < {thresholds.entry_ratio_min:g} (exact fractions)"),
        ("float_precision", f"rounded to {FLOAT_DP} decimals"),
    ]
    return pa.table({"name": [r[0] for r in rows], "value": [r[1] for r in rows]},
                    schema=pa.schema([("name", pa.string()), ("value", pa.string())]))


def _fraction(value: float) -> tuple[int, int]:
    f = exact_fraction(value)
    return f.numerator, f.denominator


def compute_stats(
    tables: Mapping[str, pa.Table],
    entities_path: str | Path | Iterable[Mapping[str, Any]],
    *,
    languages: Sequence[str],
    tokenizer: str = DEFAULT_ENCODING,
    thresholds: Thresholds | None = None,
    known_tokens: Mapping[str, int] | None = None,
    track_texts: Mapping[str, str] | None = None,
) -> dict[str, pa.Table]:
    """Every statistic table of a release (see the module docstring), in :data:`STAT_VIEWS`
    order plus ``definitions``.

    ``tables`` holds at least ``films``, ``tracks`` and ``entries`` (the release tables; the raw
    JSON columns of ``films`` may be present and are ignored); ``ratings``, ``language_safety`` and
    ``flags`` are used when present. ``entities_path`` is the release's films.jsonl (or the entity
    dicts). ``languages`` lists the release languages in table order; it must include English.
    ``known_tokens``: counts already made in ``tokenizer``, by the sha256 of the counted text
    (:func:`warehouse.tokens.count_track_tokens`); ``track_texts``: the sha256 of tracks' counted
    texts where the entities already formatted them (``count_track_tokens(texts=...)``).
    """
    missing = [n for n in _REQUIRED if n not in tables]
    if missing:
        raise ValueError(f"compute_stats needs the release tables {missing}")
    if REFERENCE_LANGUAGE not in languages:
        raise ValueError(f"languages must include the reference language {REFERENCE_LANGUAGE!r}")
    thresholds = thresholds or Thresholds()
    tokens = count_track_tokens(tables["entries"], encoding=tokenizer, known=known_tokens,
                                texts=track_texts).to_arrow()
    ent = entity_tables(entities_path)

    con = duckdb.connect()
    try:
        con.execute("SET threads = 1")  # bit-for-bit repeatable float aggregates
        for name in ("films", "tracks", "entries"):
            con.register(name, tables[name])
        for name, schema in _EMPTY.items():
            con.register(name, tables[name] if name in tables else schema.empty_table())
        con.register("track_tokens", tokens)
        con.register("track_covered", covered_table(tables["entries"]))
        for name, table in ent.items():
            con.register(name, table)
        con.register("stat_languages", _ordinal_table("language", languages))
        con.register("stat_fields", _ordinal_table("field", REFERENCE_FIELDS))
        con.register("stat_categories", _ordinal_table("category", CATEGORIES))
        span_num, span_den = _fraction(thresholds.span_ratio_min)
        tok_num, tok_den = _fraction(thresholds.token_ratio_min)
        entry_num, entry_den = _fraction(thresholds.entry_ratio_min)
        con.execute(render_sql("release_stats.sql", reference=REFERENCE_LANGUAGE,
                               span_num=span_num, span_den=span_den, tok_num=tok_num, tok_den=tok_den,
                               entry_num=entry_num, entry_den=entry_den))
        out = {name: _round_floats(con.sql(f"SELECT * FROM {view}").to_arrow_table())
               for name, view in STAT_VIEWS.items()}
    finally:
        con.close()
    out["definitions"] = definitions_table(tokenizer, languages, thresholds)
    return out


def _json_value(value: Any) -> Any:
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            return None
        return round(value, FLOAT_DP)
    return value


def stats_json(stats: Mapping[str, pa.Table]) -> str:
    """The JSON text of ``statistics.json``: {"format", "tables": {name: [row, …]}}; sorted keys,
    floats rounded to :data:`FLOAT_DP` decimals, rows in table order (deterministic bytes)."""
    doc = {
        "format": "cinesub-statistics/1",
        "tables": {name: [{k: _json_value(v) for k, v in row.items()} for row in table.to_pylist()]
                   for name, table in stats.items()},
    }
    return json.dumps(doc, sort_keys=True, ensure_ascii=False, indent=1) + "\n"


def write_stats(stats: Mapping[str, pa.Table], out_dir: str | Path) -> dict[str, Path]:
    """Write ``<out_dir>/stats/<name>.parquet`` for every table and ``<out_dir>/stats/statistics.json``.

    ``out_dir`` is the release directory. Returns {release-relative name ("stats/core.parquet",
    …, "stats/statistics.json"): path}, in a stable order, for the manifest to hash.
    """
    target = Path(out_dir) / STATS_DIR
    target.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name in sorted(stats):
        path = target / f"{name}.parquet"
        # Same writer settings as the release tables: fixed compression, no timestamps.
        pq.write_table(stats[name], path, compression="zstd", write_statistics=True, use_dictionary=True)
        written[f"{STATS_DIR}/{path.name}"] = path
    json_path = target / JSON_NAME
    json_path.write_text(stats_json(stats), encoding="utf-8")
    written[f"{STATS_DIR}/{JSON_NAME}"] = json_path
    return written
