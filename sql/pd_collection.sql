-- The public-domain collection (SPEC B2; paper 003 §2): Variety top-100 ∩ (public domain or
-- likely public domain) ∩ sound film available on the Internet Archive, with a per-film audit
-- trail, one row per criterion.
--
-- Inputs (views or tables on the caller's connection; flows/stages/hollywood/collection.py binds the
-- state DB's tables, `cinesub copyright status --as-of` binds a release's Parquet files with
-- statuses recomputed for another date):
--   cc_top100(year, rank, key, key_kind, box_office, …)      the yearly top-N (pd_top100)
--   cc_links(year, key, title, film_year, reg_id, reg_date, reg_title, similarity, reason)
--   cc_status(reg_id, reg_date, title, status, rule, reason, renewal_id, match_decision, as_of)
--   cc_matches(reg_id, reg_date, n_renewals_searched, …)
--   cc_ia(year, key, query, ia_item, ia_title, ia_year, sound, reason)
--   cc_source_works(film_reg_id, film_reg_date, source_title, renewed, renewal_id)
--                                                            AFI "based on" rows (pd_source_works)
--
-- Criteria (each a row of cc_audit, passed or not, with its evidence):
--   popularity  rank <= top-N of the year (true for every row of cc_top100, recorded for the trail)
--   copyright   the linked registration's status is public_domain or likely_public_domain; no
--               registration linked → failed (reason no_registration: an unregistered film is not
--               claimed public domain here); needs_review → failed (an uncertain match never
--               yields a public-domain answer)
--   ia_sound    an IA film item whose title and year agree, with metadata sound = sound
-- A film's source works (AFI "based on") are part of its copyright evidence: a source work whose
-- own copyright was renewed makes the film protected (rule R5_source_work_renewed), an unknown
-- one needs_review (R5_source_work_unknown); the rows are listed in the audit either way.
-- Outputs: cc_candidates (every top-N film with all evidence and the verdict), cc_collection
-- (the included films, one row per film: its best-ranked year), cc_audit.

CREATE OR REPLACE TEMP VIEW cc_film_sources AS
SELECT film_reg_id, film_reg_date,
       string_agg('“' || source_title || '” ' || CASE WHEN renewed THEN 'renewed' || coalesce(' ' || renewal_id, '')
                                                      WHEN NOT renewed THEN 'not renewed'
                                                      ELSE 'renewal unknown' END,
                  '; ' ORDER BY source_title, renewal_id) AS source_works
FROM cc_source_works
GROUP BY film_reg_id, film_reg_date;

CREATE OR REPLACE TEMP VIEW cc_candidates AS
SELECT t.year, t.rank, t.key, t.key_kind,
       coalesce(l.title, t.key) AS title,
       t.box_office,
       l.reg_id, l.reg_date, l.reason AS link_reason,
       s.status, s.rule, s.reason AS status_reason, s.renewal_id, s.match_decision,
       m.n_renewals_searched,
       i.ia_item, i.sound, i.reason AS ia_reason,
       TRUE AS popular,
       coalesce(s.status IN ('public_domain', 'likely_public_domain'), FALSE) AS copyright_ok,
       coalesce(i.ia_item IS NOT NULL AND i.sound = 'sound', FALSE) AS ia_sound_ok,
       coalesce(s.status IN ('public_domain', 'likely_public_domain'), FALSE)
           AND coalesce(i.ia_item IS NOT NULL AND i.sound = 'sound', FALSE) AS included,
       concat_ws(',',
           CASE WHEN l.reg_id IS NULL THEN 'copyright:' || coalesce(l.reason, 'no_registration')
                WHEN s.status NOT IN ('public_domain', 'likely_public_domain') THEN 'status:' || s.status END,
           CASE WHEN i.ia_item IS NULL THEN 'ia:' || coalesce(i.reason, 'not_on_ia')
                WHEN coalesce(i.sound, '') <> 'sound' THEN 'not_sound:' || coalesce(i.sound, 'unknown') END
       ) AS exclusion_reasons
FROM cc_top100 t
LEFT JOIN cc_links l ON l.year = t.year AND l.key = t.key
LEFT JOIN cc_status s ON s.reg_id = l.reg_id AND s.reg_date IS NOT DISTINCT FROM l.reg_date
LEFT JOIN cc_matches m ON m.reg_id = l.reg_id AND m.reg_date IS NOT DISTINCT FROM l.reg_date
LEFT JOIN cc_ia i ON i.year = t.year AND i.key = t.key;

CREATE OR REPLACE TEMP VIEW cc_collection AS
SELECT key, title, year, rank, box_office, reg_id, reg_date, status, rule, status_reason, renewal_id,
       match_decision, n_renewals_searched, ia_item, sound
FROM cc_candidates
WHERE included
QUALIFY row_number() OVER (PARTITION BY key ORDER BY rank, year) = 1;

CREATE OR REPLACE TEMP VIEW cc_audit AS
SELECT year, key, 'popularity' AS criterion, popular AS passed,
       'rank ' || rank || ' of ' || year || '; box office $' || round(box_office)::BIGINT AS evidence
FROM cc_candidates
UNION ALL
SELECT year, key, 'copyright', copyright_ok,
       CASE WHEN c.reg_id IS NULL THEN coalesce(link_reason, 'no_registration') || ': no registration linked'
            ELSE c.reg_id || ' (' || coalesce(c.reg_date::VARCHAR, '?') || ') ' || coalesce(status, '?') || ' — '
                 || coalesce(status_reason, '') || '; renewals searched: ' || coalesce(n_renewals_searched, 0)
                 || '; matched renewal: ' || coalesce(renewal_id, 'none')
                 || coalesce('; source works (AFI based on): ' || w.source_works, '') END
FROM cc_candidates c
LEFT JOIN cc_film_sources w ON w.film_reg_id = c.reg_id AND w.film_reg_date IS NOT DISTINCT FROM c.reg_date
UNION ALL
SELECT year, key, 'ia_sound', ia_sound_ok,
       CASE WHEN ia_item IS NULL THEN coalesce(ia_reason, 'not_on_ia')
            ELSE 'IA item ' || ia_item || ', sound: ' || coalesce(sound, 'unknown') END
FROM cc_candidates;
