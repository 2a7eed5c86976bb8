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
ORDER BY t.imdb_id, t.language, e.start_ms, e.position;

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
ORDER BY l.imdb_id, l.language, l.position, l."index";

-- SPEC A7 per-K coverage table (search optimum and frequency-prefix baseline).
CREATE OR REPLACE TEMP VIEW release_coverage AS
SELECT dimension, k, method, attributes, films, score FROM coverage ORDER BY dimension, k, method;

-- The selection run by the build (SPEC A7, stage `survey`): the chosen languages and rating
-- countries in release order, and the survey's per-K table (exact search and frequency prefix)
-- over the availability survey (docs/coverage.md "Selection run by the build").
CREATE OR REPLACE TEMP VIEW release_selection AS
SELECT dimension, position, attribute, mode FROM selected_attributes ORDER BY dimension, position;
CREATE OR REPLACE TEMP VIEW release_selection_per_k AS
SELECT dimension, k, method, attributes, films, score FROM selection_per_k ORDER BY dimension, k, method;

-- Task references (SPEC A10/A11): one row per released film, the benchmark targets exactly as
-- films.jsonl carries them. plot/synopsis/storyline are the cleaned text of `curation` (the raw
-- text stays in the state DB; a film without a curation row keeps its source text, as the entity
-- does); a task field the completeness rule withheld (`task_fields.kept = false`) is NULL for
-- every film. topics, full_cast, countries_of_origin and original_languages are not subject to
-- the rule (as in the entity). Lists are typed lists, never JSON text. Column ↔ entity field:
-- key_message = keyMessage, age_suitability = ageSuitabilityRating, full_cast = fullCast,
-- countries_of_origin = countriesOfOrigin, original_languages = originalLanguages.
CREATE OR REPLACE TEMP VIEW release_task_references AS
WITH kept AS (
    SELECT coalesce((SELECT kept FROM task_fields WHERE field = 'plot'), true) AS plot,
           coalesce((SELECT kept FROM task_fields WHERE field = 'synopsis'), true) AS synopsis,
           coalesce((SELECT kept FROM task_fields WHERE field = 'storyline'), true) AS storyline,
           coalesce((SELECT kept FROM task_fields WHERE field = 'keyMessage'), true) AS key_message,
           coalesce((SELECT kept FROM task_fields WHERE field = 'genres'), true) AS genres,
           coalesce((SELECT kept FROM task_fields WHERE field = 'ageSuitabilityRating'), true) AS age_suitability
), src AS (
    SELECT c.id, c.imdb_id,
           CASE WHEN cp.imdb_id IS NOT NULL THEN cp.clean ELSE json_extract_string(c.imdb, '$.plot') END AS plot,
           CASE WHEN cs.imdb_id IS NOT NULL THEN cs.clean ELSE json_extract_string(c.imdb, '$.synopsis') END AS synopsis,
           CASE WHEN cl.imdb_id IS NOT NULL THEN cl.clean ELSE json_extract_string(c.csm, '$.storyline') END AS storyline,
           json_extract_string(c.kim, '$.key_message') AS key_message,
           -- genres in the core genre space (film_genres, written by the curate stage); a state the
           -- curate stage never normalised keeps the IMDb list as it is
           CASE WHEN cg.imdb_id IS NOT NULL THEN cg.core
                ELSE coalesce(CAST(json_extract(c.imdb, '$.genres') AS VARCHAR[]), []) END AS genres,
           coalesce(CAST(json_extract(c.imdb, '$.topics') AS VARCHAR[]), []) AS topics,
           json_extract_string(c.csm, '$.age_suitability') AS age_suitability,
           list_transform(
               coalesce(from_json(json_extract(c.imdb, '$.cast'),
                                  '[{"actor": "VARCHAR", "characters": ["VARCHAR"], "additional_texts": ["VARCHAR"]}]'), []),
               lambda m: {'actor': m.actor, 'characters': coalesce(m.characters, []),
                          'additional_texts': coalesce(m.additional_texts, [])}) AS full_cast,
           coalesce(CAST(json_extract(c.imdb, '$.countries') AS VARCHAR[]), []) AS countries_of_origin,
           coalesce(CAST(json_extract(c.imdb, '$.languages') AS VARCHAR[]), []) AS original_languages
    FROM release_cohort c
    LEFT JOIN curation cp ON cp.imdb_id = c.imdb_id AND cp.field = 'plot'
    LEFT JOIN curation cs ON cs.imdb_id = c.imdb_id AND cs.field = 'synopsis'
    LEFT JOIN curation cl ON cl.imdb_id = c.imdb_id AND cl.field = 'storyline'
    LEFT JOIN (SELECT imdb_id, list_sort(list_distinct(flatten(list(core_genres)))) AS core
               FROM film_genres GROUP BY imdb_id) cg ON cg.imdb_id = c.imdb_id
), fills AS (
    -- curator-supplied values where the sources had none (task_gaps, `cinesub review fill`)
    SELECT imdb_id, field, value FROM task_gaps WHERE status = 'filled'
), filled AS (
    SELECT s.id, s.imdb_id,
           coalesce((SELECT json_extract_string(value, '$') FROM fills f WHERE f.imdb_id = s.imdb_id AND f.field = 'plot'), s.plot) AS plot,
           coalesce((SELECT json_extract_string(value, '$') FROM fills f WHERE f.imdb_id = s.imdb_id AND f.field = 'synopsis'), s.synopsis) AS synopsis,
           coalesce((SELECT json_extract_string(value, '$') FROM fills f WHERE f.imdb_id = s.imdb_id AND f.field = 'storyline'), s.storyline) AS storyline,
           coalesce((SELECT json_extract_string(value, '$') FROM fills f WHERE f.imdb_id = s.imdb_id AND f.field = 'keyMessage'), s.key_message) AS key_message,
           coalesce((SELECT CAST(value AS VARCHAR[]) FROM fills f WHERE f.imdb_id = s.imdb_id AND f.field = 'genres'), s.genres) AS genres,
           s.topics,
           coalesce((SELECT json_extract_string(value, '$') FROM fills f WHERE f.imdb_id = s.imdb_id AND f.field = 'ageSuitabilityRating'), s.age_suitability) AS age_suitability,
           s.full_cast, s.countries_of_origin, s.original_languages
    FROM src s
)
SELECT CAST(s.id AS BIGINT) AS id, s.imdb_id,
       CASE WHEN k.plot THEN s.plot END AS plot,
       CASE WHEN k.synopsis THEN s.synopsis END AS synopsis,
       CASE WHEN k.storyline THEN s.storyline END AS storyline,
       CASE WHEN k.key_message THEN s.key_message END AS key_message,
       CASE WHEN k.genres THEN s.genres END AS genres,
       s.topics,
       CASE WHEN k.age_suitability THEN s.age_suitability END AS age_suitability,
       s.full_cast, s.countries_of_origin, s.original_languages
FROM filled s CROSS JOIN kept k
ORDER BY s.id;

-- Every raw genre of a released film beside the core genres it maps to (validators/genres.py,
-- docs/genres.md): the annotation is kept beside the data, never over it.
CREATE OR REPLACE TEMP VIEW release_raw_genres AS
SELECT g.imdb_id, g.source, g.position, g.raw_genre, g.core_genres, g.status, g.mapping_version
FROM film_genres g JOIN release_cohort c USING (imdb_id)
ORDER BY g.imdb_id, g.source, g.position;
