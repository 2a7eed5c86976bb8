-- Films that pass funnel gates 2-4 (IMDb link, entity link, metadata) and so are worth
-- acquiring subtitles for. The full funnel (with gates 5-6) is sql/funnel.sql.
CREATE OR REPLACE TEMP VIEW eligible_films AS
SELECT f.kim_id, f.imdb_id, f.title, f.year,
       CAST(json_extract(f.imdb, '$.runtime_min') AS INTEGER) AS runtime_min
FROM films f
WHERE f.imdb_id_status = 'ok'
  AND f.imdb_id IS NOT NULL
  -- the first KIM page for an IMDb id wins; later duplicates are dropped at gate 2
  AND f.kim_id = (SELECT min(f2.kim_id) FROM films f2 WHERE f2.imdb_id = f.imdb_id)
  -- gate 3: the links agree, or a curator decided the disagreement for the KIM or the CSM id
  -- (the inventory applied it: validators/entity_link.py)
  AND f.link_status IN ('agree', 'accepted_kim', 'accepted_csm')
  AND f.imdb IS NOT NULL
  AND coalesce(trim(json_extract_string(f.imdb, '$.synopsis')), '') <> ''
  AND coalesce(trim(json_extract_string(f.imdb, '$.plot')), '') <> ''
  AND json_array_length(json_extract(f.imdb, '$.certificates')) > 0;
