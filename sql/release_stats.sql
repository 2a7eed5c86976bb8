-- Release statistics (SPEC A11, paper Tables 8–14): warehouse/stats.py runs this on a private
-- in-memory DuckDB connection (threads = 1, so float aggregates are bit-for-bit repeatable) after
-- registering these relations:
--   films, tracks, ratings, language_safety, entries, flags   the release tables
--   track_tokens(track_id, input_tokens)                      o200k_base counts (warehouse/tokens.py)
--   film_texts(film_id, field, words)                         whitespace word counts of the non-null
--                                                             task references in films.jsonl
--   film_genres(film_id, genre)                               films.jsonl genres (one row per label)
--   film_genre_counts(film_id, n_genres)                      films whose genres are not null
--   stat_languages(language, ord), stat_fields(field, ord), stat_categories(category, ord)
-- Parameters: {{reference}} (the reference language, 'en'); the duration-audit thresholds as exact
-- fractions {{span_num}}/{{span_den}}, {{tok_num}}/{{tok_den}}, {{entry_num}}/{{entry_den}}
-- (validators/duration_audit.py compares the same way, so the low-* counts agree with its flags).
--
-- One percentile method everywhere: quantile_cont (linear interpolation between the two nearest
-- order statistics, position p·(n−1): numpy's default "linear", Hyndman–Fan type 7); the
-- median is quantile_cont(x, 0.5).

-- The per-track relations (stat_covered, stat_track) are tables, computed once: each is read by
-- several statistics (three, and stat_track_vs_ref twice), and as views every reader would scan
-- and window all entries again. Rows in track_id order.

-- Subtitle-interval coverage per track (duration audit, A.9.1): the length of the union of the
-- entries' [start_ms, end_ms) intervals, overlaps counted once (validators.duration_audit.covered_ms),
-- registered as track_covered(track_id, covered_ms) by warehouse/stats.py (covered_table: one
-- vectorised pass; as a window here it was most of the statistics' time). It is the query
--   SELECT track_id, sum(greatest(0, end_ms - greatest(start_ms, coalesce(reach, start_ms))))
--   FROM (SELECT track_id, start_ms, end_ms,
--                max(end_ms) OVER (PARTITION BY track_id ORDER BY start_ms, end_ms
--                                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS reach
--         FROM entries WHERE end_ms > start_ms) GROUP BY track_id
-- (tests/test_stat_covered.py compares the two).
CREATE OR REPLACE TEMP TABLE stat_covered AS
SELECT track_id, covered_ms::BIGINT AS covered_ms FROM track_covered ORDER BY track_id;

-- One row per track of a release language, with what the tables below aggregate.
CREATE OR REPLACE TEMP TABLE stat_track AS
SELECT t.track_id, t.imdb_id, t.language, l.ord AS lang_ord,
       coalesce(e.entries, 0)::BIGINT AS entries,
       k.input_tokens::BIGINT AS input_tokens,
       t.n_tokens::BIGINT AS ws_tokens,
       (t.last_end_ms - t.first_start_ms)::BIGINT AS span_ms,
       coalesce(c.covered_ms, 0)::BIGINT AS covered_ms,
       CASE WHEN f.runtime_min > 0 THEN f.runtime_min::BIGINT * 60000 END AS runtime_ms
FROM tracks t
JOIN stat_languages l ON l.language = t.language
LEFT JOIN (SELECT track_id, count(*) AS entries FROM entries GROUP BY track_id) e ON e.track_id = t.track_id
LEFT JOIN track_tokens k ON k.track_id = t.track_id
LEFT JOIN stat_covered c ON c.track_id = t.track_id
LEFT JOIN films f ON f.imdb_id = t.imdb_id
ORDER BY t.track_id;

-- Each track beside the reference-language track of the same film (ratios null without one).
CREATE OR REPLACE TEMP VIEW stat_track_vs_ref AS
SELECT s.*,
       r.entries AS ref_entries, r.input_tokens AS ref_input_tokens, r.ws_tokens AS ref_ws_tokens,
       s.entries / nullif(r.entries, 0)::DOUBLE AS entry_ratio,
       s.input_tokens / nullif(r.input_tokens, 0)::DOUBLE AS input_token_ratio,
       s.ws_tokens / nullif(r.ws_tokens, 0)::DOUBLE AS ws_token_ratio,
       s.span_ms / s.runtime_ms::DOUBLE AS span_runtime,
       s.covered_ms / s.runtime_ms::DOUBLE AS interval_density,
       CASE WHEN s.runtime_ms IS NOT NULL AND s.span_ms IS NOT NULL
            THEN s.span_ms * {{span_den}} < {{span_num}} * s.runtime_ms END AS low_span,
       CASE WHEN r.input_tokens > 0 THEN s.input_tokens * {{tok_den}} < {{tok_num}} * r.input_tokens END AS low_token,
       CASE WHEN r.entries > 0 THEN s.entries * {{entry_den}} < {{entry_num}} * r.entries END AS low_entry
FROM stat_track s
LEFT JOIN stat_track r ON r.imdb_id = s.imdb_id AND r.language = {{reference}};

-- Table 8: core statistics (one row).
CREATE OR REPLACE TEMP VIEW stats_core AS
SELECT
    (SELECT count(*) FROM films)::BIGINT AS films,
    (SELECT count(*) FROM tracks)::BIGINT AS tracks,
    (SELECT count(*) FROM entries)::BIGINT AS entries,
    (SELECT min(year) FROM films)::INTEGER AS year_min,
    (SELECT max(year) FROM films)::INTEGER AS year_max,
    (SELECT avg(runtime_min) FROM films)::DOUBLE AS runtime_mean,
    (SELECT quantile_cont(runtime_min, 0.5) FROM films)::DOUBLE AS runtime_median,
    (SELECT quantile_cont(runtime_min, 0.95) FROM films)::DOUBLE AS runtime_p95,
    (SELECT max(runtime_min) FROM films)::INTEGER AS runtime_max,
    (SELECT avg(imdb_rating) FROM films)::DOUBLE AS imdb_rating_mean,
    (SELECT quantile_cont(imdb_rating, 0.5) FROM films)::DOUBLE AS imdb_rating_median,
    (SELECT min(imdb_rating) FROM films)::DOUBLE AS imdb_rating_min,
    (SELECT max(imdb_rating) FROM films)::DOUBLE AS imdb_rating_max,
    (SELECT count(DISTINCT genre) FROM film_genres)::BIGINT AS genre_labels,
    (SELECT avg(n_genres) FROM film_genre_counts)::DOUBLE AS genres_per_film_mean,
    (SELECT quantile_cont(n_genres, 0.5) FROM film_genre_counts)::DOUBLE AS genres_per_film_median;

-- Table 9: input size by language (o200k_base tokens of the prompt-formatted track). The ratios
-- are per film (track / reference track of the same film), then the median over films.
CREATE OR REPLACE TEMP VIEW stats_input_size AS
SELECT l.language,
       count(s.track_id)::BIGINT AS tracks,
       avg(s.input_tokens)::DOUBLE AS mean_tokens,
       quantile_cont(s.input_tokens, 0.5)::DOUBLE AS median_tokens,
       quantile_cont(s.input_tokens, 0.95)::DOUBLE AS p95_tokens,
       max(s.input_tokens)::BIGINT AS max_tokens,
       quantile_cont(s.entries, 0.5)::DOUBLE AS median_entries,
       quantile_cont(s.entry_ratio, 0.5)::DOUBLE AS median_entry_ratio,
       quantile_cont(s.input_token_ratio, 0.5)::DOUBLE AS median_token_ratio
FROM stat_languages l
LEFT JOIN stat_track_vs_ref s ON s.language = l.language
GROUP BY l.language, l.ord
ORDER BY l.ord;

-- Table 10: reference-output lengths in words (whitespace-separated tokens) of the task fields.
CREATE OR REPLACE TEMP VIEW stats_reference_length AS
SELECT d.field,
       count(t.words)::BIGINT AS films,
       avg(t.words)::DOUBLE AS mean_words,
       quantile_cont(t.words, 0.5)::DOUBLE AS median_words,
       quantile_cont(t.words, 0.95)::DOUBLE AS p95_words,
       max(t.words)::BIGINT AS max_words
FROM stat_fields d
LEFT JOIN film_texts t ON t.field = d.field
GROUP BY d.field, d.ord
ORDER BY d.ord;

-- Table 11: subtitle-grounded language content (English track), every category listed.
CREATE OR REPLACE TEMP VIEW stats_language_content AS
SELECT c.category,
       count(s.imdb_id) FILTER (WHERE s.occurrence_count > 0)::BIGINT AS films_with_evidence,
       coalesce(sum(s.occurrence_count), 0)::BIGINT AS occurrence_count,
       coalesce(sum(s.evidence_line_count), 0)::BIGINT AS evidence_line_count
FROM stat_categories c
LEFT JOIN language_safety s ON s.category = c.category
GROUP BY c.category, c.ord
ORDER BY c.ord;

-- Table 12: subtitle-duration coverage audit by language. Span/runtime = (last end − first
-- start) / runtime; interval density = covered ms / runtime; the token ratio is of o200k_base
-- tokens of the prompt-formatted track (track_tokens, the audit's count); ratios per film against
-- the English track; Table 12 prints means (mean_*), medians are kept beside them;
-- flagged_tracks = tracks with any duration-audit flag. docs/duration_audit.md has the same
-- numbers as one query over the release's Parquet files.
CREATE OR REPLACE TEMP VIEW stats_duration_audit AS
SELECT l.language,
       count(s.track_id)::BIGINT AS tracks,
       count(DISTINCT fl.track_id)::BIGINT AS flagged_tracks,
       avg(s.span_runtime)::DOUBLE AS mean_span_runtime,
       quantile_cont(s.span_runtime, 0.5)::DOUBLE AS median_span_runtime,
       quantile_cont(s.span_runtime, 0.05)::DOUBLE AS p05_span_runtime,
       avg(s.input_token_ratio)::DOUBLE AS mean_token_ratio,
       quantile_cont(s.input_token_ratio, 0.5)::DOUBLE AS median_token_ratio,
       avg(s.entry_ratio)::DOUBLE AS mean_entry_ratio,
       quantile_cont(s.entry_ratio, 0.5)::DOUBLE AS median_entry_ratio,
       avg(s.interval_density)::DOUBLE AS mean_interval_density,
       quantile_cont(s.interval_density, 0.5)::DOUBLE AS median_interval_density,
       count(*) FILTER (WHERE s.low_span)::BIGINT AS low_span,
       count(*) FILTER (WHERE s.low_token)::BIGINT AS low_token,
       count(*) FILTER (WHERE s.low_entry)::BIGINT AS low_entry
FROM stat_languages l
LEFT JOIN stat_track_vs_ref s ON s.language = l.language
LEFT JOIN (SELECT DISTINCT track_id FROM flags
           WHERE layer IN ('span_ratio', 'token_ratio', 'entry_ratio', 'span_vs_english')) fl
       ON fl.track_id = s.track_id
GROUP BY l.language, l.ord
ORDER BY l.ord;

-- Table 13: genre → films (films.jsonl labels as released).
CREATE OR REPLACE TEMP VIEW stats_genres AS
SELECT genre, count(DISTINCT film_id)::BIGINT AS films
FROM film_genres
GROUP BY genre
ORDER BY films DESC, genre;

-- Table 14: Common Sense age-suitability label → films.
CREATE OR REPLACE TEMP VIEW stats_age_suitability AS
SELECT age_suitability AS label,
       TRY_CAST(regexp_extract(age_suitability, '(\d+)', 1) AS INTEGER) AS minimum_age,
       count(*)::BIGINT AS films
FROM films
WHERE age_suitability IS NOT NULL
GROUP BY age_suitability
ORDER BY films DESC, minimum_age NULLS LAST, label;

-- National motion-picture ratings: (country, label, minimum age) → films.
CREATE OR REPLACE TEMP VIEW stats_ratings AS
SELECT country, label, minimum_age::INTEGER AS minimum_age, count(DISTINCT imdb_id)::BIGINT AS films
FROM ratings
GROUP BY country, label, minimum_age
ORDER BY country, minimum_age NULLS LAST, label;

-- Release year → films.
CREATE OR REPLACE TEMP VIEW stats_years AS
SELECT year::INTEGER AS year, count(*)::BIGINT AS films
FROM films
WHERE year IS NOT NULL
GROUP BY year
ORDER BY year;

-- Runtime (minutes) → films (the runtime histogram's data).
CREATE OR REPLACE TEMP VIEW stats_runtimes AS
SELECT runtime_min::INTEGER AS runtime_min, count(*)::BIGINT AS films
FROM films
WHERE runtime_min IS NOT NULL
GROUP BY runtime_min
ORDER BY runtime_min;

-- Per-track input size (the box plot's data; prompt budgeting per film and language).
CREATE OR REPLACE TEMP VIEW stats_input_tokens AS
SELECT imdb_id, language, track_id, entries, input_tokens
FROM stat_track
ORDER BY imdb_id, lang_ord, track_id;
