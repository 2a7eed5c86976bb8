-- The tables of a release, from the state DB. Ordered and free of timestamps, so unchanged
-- inputs give byte-identical Parquet files. Only cohort films (film_gates.dropped_at IS NULL)
-- that were not withdrawn on request; ids come from the film_ids registry (stable, never reused).
CREATE OR REPLACE TEMP VIEW release_cohort AS
SELECT f.*, i.id
FROM films f
JOIN film_gates g ON g.kim_id = f.kim_id AND g.dropped_at IS NULL
JOIN film_ids i ON i.imdb_id = f.imdb_id
WHERE f.imdb_id NOT IN (SELECT imdb_id FROM withdrawals);

CREATE OR REPLACE TEMP VIEW release_films AS
SELECT CAST(id AS BIGINT) AS id, imdb_id, title, year,
       CAST(json_extract(imdb, '$.runtime_min') AS INTEGER) AS runtime_min,
       CAST(json_extract(imdb, '$.rating') AS DOUBLE) AS imdb_rating,
       json_extract_string(csm, '$.age_suitability') AS age_suitability,
       json_extract_string(imdb, '$.genres[0]') AS primary_genre,
       json_extract_string(imdb, '$.countries[0]') AS country,
       kim_url, csm_url,
       CAST(imdb AS VARCHAR) AS imdb_json, CAST(kim AS VARCHAR) AS kim_json, CAST(csm AS VARCHAR) AS csm_json
FROM release_cohort ORDER BY id;

CREATE OR REPLACE TEMP VIEW release_ratings AS
SELECT r.imdb_id, r.country, r.label, r.minimum_age, r.ordinal, r.raw, r.rule
FROM ratings r JOIN release_cohort c USING (imdb_id)
ORDER BY r.imdb_id, r.country;

CREATE OR REPLACE TEMP VIEW release_tracks AS
SELECT t.track_id, t.imdb_id, t.language, t.provider, t.file_id, t.raw_sha256, t.download_count,
       t.encoding, t.decoder, s.status, t.n_entries, t.n_repairs, t.first_start_ms, t.last_end_ms, t.n_tokens
FROM selections s
JOIN release_cohort c USING (imdb_id)
JOIN tracks t ON t.track_id = s.track_id
ORDER BY t.imdb_id, t.language;

CREATE OR REPLACE TEMP VIEW release_entries AS
SELECT e.track_id, t.imdb_id, t.language, e."index", e.timeframe, e.start_ms, e.end_ms,
       e.clean_content AS content
FROM entries e JOIN release_tracks t USING (track_id)
WHERE e.clean_content IS NOT NULL
ORDER BY t.imdb_id, t.language, e.start_ms, e."index";

CREATE OR REPLACE TEMP VIEW release_language_safety AS
SELECT l.imdb_id, l.category, l.occurrence_count, l.evidence_line_count,
       CAST(l.evidence_indices AS VARCHAR) AS evidence_indices
FROM language_safety l JOIN release_cohort c USING (imdb_id)
ORDER BY l.imdb_id, l.category;

-- The build funnel (SPEC A1), plus a last row for films withdrawn on request (SPEC C).
CREATE OR REPLACE TEMP VIEW release_funnel AS
WITH build AS (
    SELECT gate_no, gate, kept, dropped, CAST(reasons AS VARCHAR) AS reasons FROM funnel
), withdrawn AS (
    SELECT count(*) AS n FROM withdrawals w
    JOIN films f ON f.imdb_id = w.imdb_id
    JOIN film_gates g ON g.kim_id = f.kim_id AND g.dropped_at IS NULL
)
SELECT * FROM build
UNION ALL
SELECT (SELECT coalesce(max(gate_no), 0) + 1 FROM build), 'not withdrawn on request',
       (SELECT kept FROM build ORDER BY gate_no DESC LIMIT 1) - (SELECT n FROM withdrawn),
       (SELECT n FROM withdrawn),
       CASE WHEN (SELECT n FROM withdrawn) > 0 THEN '{"withdrawn": ' || (SELECT n FROM withdrawn) || '}' ELSE '{}' END
WHERE EXISTS (SELECT 1 FROM build)
ORDER BY gate_no;

-- Every flag raised in the build (selected tracks and rejected candidates alike): the audit trail.
CREATE OR REPLACE TEMP VIEW release_flags AS
SELECT track_id, imdb_id, language, provider, file_id, layer, severity, value, threshold, detail,
       CAST(evidence AS VARCHAR) AS evidence
FROM flags
WHERE imdb_id IS NULL OR imdb_id NOT IN (SELECT imdb_id FROM withdrawals)
ORDER BY imdb_id, language, provider, file_id, layer;

CREATE OR REPLACE TEMP VIEW release_sanitization_log AS
SELECT l.track_id, l.imdb_id, l.language, l."index", l.action, l.reasons, l.sha256
FROM sanitization_log l JOIN release_tracks t USING (track_id)
ORDER BY l.imdb_id, l.language, l."index";

-- SPEC A7 per-K coverage table (search optimum and frequency-prefix baseline).
CREATE OR REPLACE TEMP VIEW release_coverage AS
SELECT dimension, k, method, attributes, films, score FROM coverage ORDER BY dimension, k, method;
