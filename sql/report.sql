-- The flagged-track report of a build (warehouse/report.py, docs/review.md). Needs the views of
-- sql/review.sql (created first by the report writer). Read-only.

-- Every flag on a current track, with its film, chain rank, the track's status, the decision in
-- force and what the chain selected for the film-language instead.
CREATE OR REPLACE TEMP VIEW report_flags AS
SELECT q.imdb_id, q.title, q.language, q.rank, q.provider, q.file_id, q.track_id, q.track_status,
       f.layer, f.severity, f.value, f.threshold, f.detail, CAST(f.evidence AS VARCHAR) AS evidence,
       q.selected, q.selection_status, q.selected_file_id, q.decision, q.decided_by, q.film_status,
       CASE
           WHEN q.selected THEN 'this track (' || q.selection_status || ')'
           WHEN q.selected_file_id IS NOT NULL THEN q.selected_file_id || ' (' || q.selection_status || ')'
           ELSE coalesce(q.selection_status, 'no selection')
       END AS selected_instead
FROM review_queue q
JOIN flags f ON f.track_id = q.track_id
ORDER BY q.imdb_id, q.language, q.rank NULLS LAST, q.file_id, f.layer;

-- Flags by layer and language (all current tracks; "selected" = on a selected track).
CREATE OR REPLACE TEMP VIEW report_layer_language AS
SELECT layer, language, count(*) AS n, count(*) FILTER (WHERE selected) AS n_selected,
       max(severity) AS severity
FROM report_flags
GROUP BY layer, language
ORDER BY layer, language;

-- Coverage of every current track with timing: first start .. last end against the runtime.
CREATE OR REPLACE TEMP VIEW report_coverage AS
SELECT track_id, imdb_id, title, language, file_id, track_status, selected, layers,
       first_start_ms, last_end_ms, runtime_min
FROM review_all_tracks
WHERE first_start_ms IS NOT NULL AND last_end_ms IS NOT NULL
ORDER BY imdb_id, language, rank NULLS LAST, file_id;

-- Tracks whose flags are about timing: drawn as timelines with their evidence.
CREATE OR REPLACE TEMP VIEW report_timeline_tracks AS
SELECT q.track_id, q.imdb_id, q.title, q.language, q.file_id, q.track_status, q.selected, q.decision,
       q.first_start_ms, q.last_end_ms, q.runtime_min, f.layer, f.detail, CAST(f.evidence AS VARCHAR) AS evidence
FROM review_queue q
JOIN flags f ON f.track_id = q.track_id
WHERE f.layer IN ('macro_interval', 'block_lifespan', 'delayed_onset', 'runtime_coverage', 'chronology',
                  'span_ratio', 'span_vs_english')
ORDER BY CASE f.layer WHEN 'macro_interval' THEN 0 ELSE 1 END, q.imdb_id, q.language, q.file_id, f.layer;

-- Sanitization actions on the selected tracks, by language and reason.
CREATE OR REPLACE TEMP VIEW report_sanitization AS
SELECT l.language, l.action, l.reasons, count(*) AS n
FROM sanitization_log l
JOIN selections s ON s.track_id = l.track_id
GROUP BY ALL
ORDER BY l.language, l.action, l.reasons;
