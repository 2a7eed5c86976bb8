-- The recovery chain (SPEC A2): per film and language, candidates in download-count order;
-- the chosen track is the first one that processed clean (or that a curator retained); while
-- none is clean and untried candidates remain (up to {{max_candidates}}), the next one is needed.
-- Parameters: {{max_candidates}}, {{processing_version}}.
CREATE OR REPLACE TEMP VIEW current_tracks AS
SELECT t.* FROM tracks t
JOIN eligible_films e ON e.imdb_id = t.imdb_id
WHERE t.processing_version = {{processing_version}}
  AND t.runtime_min IS NOT DISTINCT FROM e.runtime_min;

CREATE OR REPLACE TEMP VIEW latest_decisions AS
SELECT * EXCLUDE (rn) FROM (
    SELECT d.*, row_number() OVER (PARTITION BY track_id ORDER BY decided_at DESC, decision_id DESC) AS rn
    FROM decisions d
) WHERE rn = 1;

-- candidates whose download was refused for good (unsafe archive, ...): rejected, no track
CREATE OR REPLACE TEMP VIEW refused_downloads AS
SELECT DISTINCT provider, file_id FROM attempts WHERE outcome = 'download_rejected';

CREATE OR REPLACE TEMP VIEW chain AS
SELECT c.imdb_id, c.language, c.provider, c.file_id, c.rank, c.download_count,
       t.track_id,
       coalesce(t.status, CASE WHEN r.file_id IS NOT NULL THEN 'rejected' END) AS track_status,
       d.action AS decision,
       CASE
           WHEN d.action = 'replace' THEN 'replaced'
           WHEN d.action = 'retain' AND t.status = 'flagged' THEN 'retained'
           WHEN t.status IS NULL AND r.file_id IS NOT NULL THEN 'rejected'
           ELSE t.status
       END AS eff_status
FROM candidates c
JOIN eligible_films e ON e.imdb_id = c.imdb_id
LEFT JOIN tracks t
       ON t.imdb_id = c.imdb_id AND t.language = c.language
      AND t.provider = c.provider AND t.file_id = c.file_id
      AND t.track_id IN (SELECT track_id FROM current_tracks)
LEFT JOIN latest_decisions d ON d.track_id = t.track_id
LEFT JOIN refused_downloads r ON r.provider = c.provider AND r.file_id = c.file_id
WHERE NOT coalesce(c.machine_translated, false) AND NOT coalesce(c.ai_translated, false);

CREATE OR REPLACE TEMP VIEW chain_groups AS
SELECT e.imdb_id, l.language,
       coalesce(bool_or(ch.decision = 'exclude'), false) AS excluded,
       min(ch.rank) FILTER (WHERE ch.eff_status IN ('ok', 'retained')) AS clean_rank,
       min(ch.rank) FILTER (WHERE ch.eff_status = 'flagged') AS flagged_rank,
       count(ch.track_status) AS processed,
       min(ch.rank) FILTER (WHERE ch.track_status IS NULL) AS next_rank,
       count(ch.file_id) AS n_candidates
FROM eligible_films e
CROSS JOIN wanted_languages l
LEFT JOIN chain ch ON ch.imdb_id = e.imdb_id AND ch.language = l.language
GROUP BY e.imdb_id, l.language;

-- Candidates to download / process next.
CREATE OR REPLACE TEMP VIEW needed_candidates AS
SELECT ch.*
FROM chain_groups g
JOIN chain ch ON ch.imdb_id = g.imdb_id AND ch.language = g.language AND ch.rank = g.next_rank
WHERE NOT g.excluded AND g.clean_rank IS NULL AND g.processed < {{max_candidates}};

-- The selection per film and language.
CREATE OR REPLACE TEMP VIEW selection_now AS
SELECT g.imdb_id, g.language,
       CASE WHEN g.excluded THEN NULL ELSE coalesce(c1.track_id, c2.track_id) END AS track_id,
       CASE WHEN g.excluded THEN NULL ELSE coalesce(c1.file_id, c2.file_id) END AS file_id,
       CASE WHEN g.excluded THEN NULL ELSE coalesce(c1.provider, c2.provider) END AS provider,
       CASE WHEN g.excluded THEN NULL ELSE coalesce(c1.download_count, c2.download_count) END AS download_count,
       CASE
           WHEN g.excluded THEN 'excluded'
           WHEN c1.track_id IS NOT NULL THEN c1.eff_status
           WHEN c2.track_id IS NOT NULL THEN 'flagged'
           ELSE 'missing'
       END AS status,
       CASE
           WHEN g.excluded THEN 'curator_exclude'
           WHEN c1.track_id IS NOT NULL THEN NULL
           WHEN c2.track_id IS NOT NULL THEN 'no_clean_candidate'
           WHEN g.n_candidates = 0 THEN 'no_candidates'
           ELSE 'all_candidates_rejected'
       END AS reason
FROM chain_groups g
LEFT JOIN chain c1 ON c1.imdb_id = g.imdb_id AND c1.language = g.language AND c1.rank = g.clean_rank
LEFT JOIN chain c2 ON c2.imdb_id = g.imdb_id AND c2.language = g.language AND c2.rank = g.flagged_rank;
