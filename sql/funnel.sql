-- The funnel of SPEC A1: the gate at which each inventory film leaves (film_gate_eval) and the
-- per-gate counts (funnel_now). Needs the temp views of eligible_films.sql and selection.sql,
-- the wanted_languages and wanted_countries temp tables.
CREATE OR REPLACE TEMP VIEW film_lang AS
SELECT s.imdb_id,
       string_agg(s.language || ':' || s.status, ',' ORDER BY s.language)
           FILTER (WHERE s.status NOT IN ('ok', 'retained')) AS bad_languages
FROM selections s
JOIN wanted_languages l ON l.language = s.language
GROUP BY s.imdb_id;

CREATE OR REPLACE TEMP VIEW film_countries AS
SELECT e.imdb_id,
       string_agg(c.country, ',' ORDER BY c.country) FILTER (WHERE r.country IS NULL) AS missing_countries
FROM eligible_films e
CROSS JOIN wanted_countries c
LEFT JOIN ratings r ON r.imdb_id = e.imdb_id AND r.country = c.country
GROUP BY e.imdb_id;

CREATE OR REPLACE TEMP VIEW film_gate_eval AS
SELECT f.kim_id, f.imdb_id,
       CASE
           WHEN f.imdb_id_status = 'unparsed' THEN 1
           WHEN f.imdb_id_status IN ('missing', 'malformed') THEN 2
           WHEN f.kim_id <> (SELECT min(f2.kim_id) FROM films f2 WHERE f2.imdb_id = f.imdb_id) THEN 2
           WHEN f.imdb IS NULL THEN 3
           WHEN f.link_status NOT IN ('agree', 'accepted_kim', 'accepted_csm') THEN 3
           WHEN e.imdb_id IS NULL THEN 4
           WHEN fl.bad_languages IS NOT NULL OR fl.imdb_id IS NULL THEN 5
           WHEN fc.missing_countries IS NOT NULL THEN 6
       END AS dropped_at,
       CASE
           WHEN f.imdb_id_status = 'unparsed' THEN 'kim_page_unparseable'
           WHEN f.imdb_id_status = 'missing' THEN 'imdb_link_missing'
           WHEN f.imdb_id_status = 'malformed' THEN 'imdb_id_malformed'
           WHEN f.kim_id <> (SELECT min(f2.kim_id) FROM films f2 WHERE f2.imdb_id = f.imdb_id) THEN 'duplicate_imdb_id'
           WHEN f.imdb IS NULL THEN 'imdb_record_missing'
           WHEN f.link_status = 'no_csm' THEN 'csm_page_missing'
           WHEN f.link_status = 'rejected' THEN 'csm_link_rejected'
           WHEN f.link_status NOT IN ('agree', 'accepted_kim', 'accepted_csm') THEN 'csm_link_disagrees'
           WHEN e.imdb_id IS NULL AND coalesce(trim(json_extract_string(f.imdb, '$.synopsis')), '') = '' THEN 'synopsis_missing'
           WHEN e.imdb_id IS NULL AND coalesce(trim(json_extract_string(f.imdb, '$.plot')), '') = '' THEN 'plot_missing'
           WHEN e.imdb_id IS NULL THEN 'ratings_missing'
           WHEN fl.imdb_id IS NULL THEN 'not_acquired'
           WHEN fl.bad_languages IS NOT NULL THEN 'language_missing'
           WHEN fc.missing_countries IS NOT NULL THEN 'country_missing'
       END AS reason,
       CASE
           WHEN fl.bad_languages IS NOT NULL AND e.imdb_id IS NOT NULL THEN fl.bad_languages
           WHEN fc.missing_countries IS NOT NULL AND e.imdb_id IS NOT NULL THEN fc.missing_countries
           WHEN f.link_status IN ('disagree', 'rejected') THEN 'kim ' || coalesce(f.imdb_id, '?') || ' vs csm ' || coalesce(f.csm_imdb_id, '?')
           WHEN f.imdb_id_status = 'malformed' THEN f.kim_imdb_link
       END AS detail
FROM films f
LEFT JOIN eligible_films e ON e.kim_id = f.kim_id
LEFT JOIN film_lang fl ON fl.imdb_id = e.imdb_id
LEFT JOIN film_countries fc ON fc.imdb_id = e.imdb_id;

CREATE OR REPLACE TEMP VIEW funnel_now AS
WITH gates(gate_no, gate) AS (
    VALUES (1, 'source_crawl'), (2, 'imdb_link'), (3, 'entity_link'), (4, 'metadata'),
           (5, 'language_coverage'), (6, 'country_coverage')
),
per_gate AS (
    SELECT g.gate_no, g.gate,
           count(*) FILTER (WHERE fg.dropped_at IS NULL OR fg.dropped_at > g.gate_no) AS kept,
           count(*) FILTER (WHERE fg.dropped_at = g.gate_no) AS dropped
    FROM gates g CROSS JOIN film_gates fg
    GROUP BY g.gate_no, g.gate
),
reasons AS (
    SELECT dropped_at AS gate_no, json_group_object(reason, n) AS reasons
    FROM (SELECT dropped_at, reason, count(*) AS n FROM film_gates WHERE dropped_at IS NOT NULL
          GROUP BY dropped_at, reason ORDER BY reason)
    GROUP BY dropped_at
)
SELECT p.gate_no, p.gate, p.kept, p.dropped, coalesce(r.reasons, '{}'::JSON) AS reasons
FROM per_gate p LEFT JOIN reasons r USING (gate_no)
ORDER BY p.gate_no;
