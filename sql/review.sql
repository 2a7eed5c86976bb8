-- Curator review (`cinesub review`, docs/review.md) and the flagged-track report
-- (warehouse/report.py): what a curator needs to look at in the current state, the candidate
-- chain around it and the decision history. Read-only: temp views over the state tables.
-- Parameters: {{processing_version}} (tracks of other processing versions are history, not state).
-- Needs the view of sql/link_decisions.sql (run it first).

-- The decision in force per track (the same rule as sql/selection.sql: the latest one wins;
-- decision ids start with the decision time, so equal timestamps still order by time).
CREATE OR REPLACE TEMP VIEW review_latest_decisions AS
SELECT * EXCLUDE (rn) FROM (
    SELECT d.*, row_number() OVER (PARTITION BY track_id ORDER BY decided_at DESC, decision_id DESC) AS rn
    FROM decisions d
) WHERE rn = 1;

-- One row per IMDb id: the inventory film (the first KIM page, as sql/eligible_films.sql) and
-- where it left the funnel (NULL dropped_at = in the cohort).
CREATE OR REPLACE TEMP VIEW review_films AS
SELECT f.imdb_id, f.title, f.year, f.kim_id, g.dropped_at, g.reason AS gate_reason, g.detail AS gate_detail,
       CAST(json_extract(f.imdb, '$.runtime_min') AS INTEGER) AS runtime_min
FROM films f
LEFT JOIN film_gates g USING (kim_id)
WHERE f.imdb_id IS NOT NULL
  AND f.kim_id = (SELECT min(f2.kim_id) FROM films f2 WHERE f2.imdb_id = f.imdb_id);

-- Tracks of the current processing version.
CREATE OR REPLACE TEMP VIEW review_current_tracks AS
SELECT * FROM tracks WHERE processing_version = {{processing_version}};

-- Flags per track, aggregated (stop outranks review).
CREATE OR REPLACE TEMP VIEW review_track_flags AS
SELECT track_id,
       array_agg(DISTINCT layer ORDER BY layer) AS layers,
       CASE WHEN bool_or(severity = 'stop') THEN 'stop' ELSE 'review' END AS severity,
       count(*) AS n_flags
FROM flags GROUP BY track_id;

-- Every current track with its film, chain rank, flags, the selection of its film-language and
-- the decision in force.
CREATE OR REPLACE TEMP VIEW review_all_tracks AS
SELECT t.track_id, t.imdb_id, rf.title, rf.year, t.language, t.provider, t.file_id, c.rank,
       t.download_count, t.status AS track_status, t.reasons,
       coalesce(tf.layers, []::VARCHAR[]) AS layers, tf.severity, coalesce(tf.n_flags, 0) AS n_flags,
       s.status AS selection_status, s.reason AS selection_reason,
       coalesce(s.track_id = t.track_id, false) AS selected,
       s.track_id AS selected_track_id, s.file_id AS selected_file_id,
       d.action AS decision, d.decided_by, d.decided_at, d.note AS decision_note,
       CASE
           WHEN rf.imdb_id IS NULL THEN 'not in inventory'
           WHEN rf.dropped_at IS NULL THEN 'cohort'
           ELSE 'dropped at gate ' || rf.dropped_at || ' (' || coalesce(rf.gate_reason, '?') || ')'
       END AS film_status,
       t.first_start_ms, t.last_end_ms, t.n_entries, t.n_tokens, t.runtime_min, t.encoding, t.decoder,
       t.raw_sha256, t.processed_at
FROM review_current_tracks t
LEFT JOIN review_films rf ON rf.imdb_id = t.imdb_id
LEFT JOIN candidates c ON c.imdb_id = t.imdb_id AND c.language = t.language
                      AND c.provider = t.provider AND c.file_id = t.file_id
LEFT JOIN review_track_flags tf ON tf.track_id = t.track_id
LEFT JOIN selections s ON s.imdb_id = t.imdb_id AND s.language = t.language
LEFT JOIN review_latest_decisions d ON d.track_id = t.track_id;

-- The review queue: current tracks that are flagged or rejected or carry any flag (the duration
-- audit flags selected tracks whose own status is ok).
CREATE OR REPLACE TEMP VIEW review_queue AS
SELECT * FROM review_all_tracks
WHERE track_status <> 'ok' OR n_flags > 0;

-- The open and decided entity-link disagreements (SPEC A1 gate 3), shown beside the queue: the
-- decision in force (link_decision_in_force of sql/link_decisions.sql, created first), whether
-- a build has applied it yet (the inventory copies it into link_reviews) and where the film is
-- in the funnel now.
CREATE OR REPLACE TEMP VIEW review_link_queue AS
SELECT lr.kim_id, f.title, f.year, lr.kim_imdb_id, lr.csm_imdb_id, lr.csm_url, lr.reason,
       coalesce(d.decision, 'open') AS decision, d.decided_by, d.decided_at, d.note,
       coalesce(d.decision = lr.decision AND d.decided_at IS NOT DISTINCT FROM lr.decided_at, false) AS applied,
       f.imdb_id AS film_imdb_id, f.link_status, g.dropped_at, g.reason AS gate_reason,
       CASE
           WHEN g.kim_id IS NULL THEN 'not judged yet'
           WHEN g.dropped_at IS NULL THEN 'cohort'
           ELSE 'dropped at gate ' || g.dropped_at || ' (' || coalesce(g.reason, '?') || ')'
       END AS film_status
FROM link_reviews lr
LEFT JOIN films f USING (kim_id)
LEFT JOIN link_decision_in_force d USING (kim_id)
LEFT JOIN film_gates g USING (kim_id);

-- Every entity-link decision (append-only history), the one in force marked.
CREATE OR REPLACE TEMP VIEW review_link_decision_history AS
SELECT d.decision_id, d.decided_at, d.decided_by, d.decision, d.note, d.kim_id, f.title,
       d.kim_imdb_id, d.csm_imdb_id, coalesce(i.decision_id = d.decision_id, false) AS in_force
FROM link_decisions d
LEFT JOIN films f USING (kim_id)
LEFT JOIN link_decision_in_force i USING (kim_id);

-- Every decision with the track it names and the current outcome of its film-language.
CREATE OR REPLACE TEMP VIEW review_decision_history AS
SELECT d.decision_id, d.decided_at, d.decided_by, d.action, d.note, d.track_id, d.imdb_id, rf.title,
       d.language, t.provider, t.file_id, t.status AS track_status,
       coalesce(ld.decision_id = d.decision_id, false) AS in_force,
       s.status AS selection_status, s.file_id AS selected_file_id,
       coalesce(s.track_id = d.track_id, false) AS track_selected
FROM decisions d
LEFT JOIN tracks t ON t.track_id = d.track_id
LEFT JOIN review_films rf ON rf.imdb_id = d.imdb_id
LEFT JOIN review_latest_decisions ld ON ld.track_id = d.track_id
LEFT JOIN selections s ON s.imdb_id = d.imdb_id AND s.language = d.language;
