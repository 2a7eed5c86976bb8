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
--   cc_params(as_of)                                         one row: the status date of the run
--
-- Criteria (each a row of cc_audit, passed or not, with its evidence):
--   popularity  rank <= top-N of the year (true for every row of cc_top100, recorded for the trail)
--   copyright   the film's copyright status (status/rule/status_reason; the linked registration's own
--               status is reg_status/reg_rule):
--               * the linked registration is public_domain or likely_public_domain → passed (its rule);
--               * else the film's release year is before the 95-year line (release_year < year(as_of) −
--                 95, the R1 line of validators/copyright_status.py) and no registration date says
--                 otherwise (none linked, an ambiguous link, an unreadable registration date) →
--                 public_domain, rule R1_release_date, the evidence the release year and where it
--                 comes from (release_year_source: the catalog release year of an IMDb-keyed film, or
--                 the Variety ranking year of a title-keyed one — a film whose grosses Variety printed
--                 in year Y was shown, so published, by Y: the release year is the earlier of the two);
--               * a release year before the line but a linked registration dated inside the term →
--                 needs_review, rule R1_release_date_conflict (two dates disagree: never guessed);
--               * no registration linked and released inside the term → failed, no_registration
--                 (an unregistered film of 1931 on is not claimed public domain here);
--                 ambiguous_registration → undecided (needs_review);
--               * needs_review → undecided (an uncertain match never yields a public-domain answer).
--   ia_sound    an IA film item whose title and year agree, with metadata sound = sound; an item whose
--               metadata has no sound value, or a failed IA search, is undecided (sound:unknown,
--               ia:search_failed:<code>), never a silent drop; silent, not on IA, title mismatch → failed
-- Verdict (cc_candidates.verdict): included (every criterion passed) | excluded (a criterion failed)
-- | needs_review (none failed, one or more undecided; review_reasons says which). A film waiting for
-- review is not in the collection; exclusion_reasons lists every unmet criterion either way.
CREATE OR REPLACE TEMP VIEW cc_film_sources AS
SELECT film_reg_id, film_reg_date,
       string_agg('“' || source_title || '” ' || CASE WHEN renewed THEN 'renewed' || coalesce(' ' || renewal_id, '')
                                                      WHEN NOT renewed THEN 'not renewed'
                                                      ELSE 'renewal unknown' END,
                  '; ' ORDER BY source_title, renewal_id) AS source_works
FROM cc_source_works
GROUP BY film_reg_id, film_reg_date;

CREATE OR REPLACE TEMP VIEW cc_evidence AS
SELECT t.year, t.rank, t.key, t.key_kind,
       coalesce(l.title, t.key) AS title,
       t.box_office,
       l.reg_id, l.reg_date, l.reason AS link_reason,
       s.status AS reg_status, s.rule AS reg_rule, s.reason AS reg_reason, s.renewal_id, s.match_decision,
       m.n_renewals_searched,
       i.ia_item, i.sound, i.reason AS ia_reason,
       least(coalesce(l.film_year, t.year), t.year) AS release_year,
       CASE WHEN l.film_year IS NOT NULL AND l.film_year <= t.year THEN 'catalog release year'
            WHEN l.film_year IS NOT NULL THEN 'Variety ranking year ' || t.year || ' (shown by then; the catalog says '
                                               || l.film_year || ')'
            ELSE 'Variety ranking year ' || t.year || ' (shown by then)' END AS release_year_source,
       year(p.as_of) - 95 AS pd_line,
       p.as_of,
       least(coalesce(l.film_year, t.year), t.year) < year(p.as_of) - 95 AS released_before_line,
       -- a registration date that places the film inside the term (a readable one)
       (l.reg_id IS NOT NULL AND l.reg_date IS NOT NULL AND year(l.reg_date) >= year(p.as_of) - 95)
           AS reg_inside_term
FROM cc_top100 t
CROSS JOIN (SELECT max(as_of)::DATE AS as_of FROM cc_params) p
LEFT JOIN cc_links l ON l.year = t.year AND l.key = t.key
LEFT JOIN cc_status s ON s.reg_id = l.reg_id AND s.reg_date IS NOT DISTINCT FROM l.reg_date
LEFT JOIN cc_matches m ON m.reg_id = l.reg_id AND m.reg_date IS NOT DISTINCT FROM l.reg_date
LEFT JOIN cc_ia i ON i.year = t.year AND i.key = t.key;

CREATE OR REPLACE TEMP VIEW cc_judged AS
SELECT e.*,
       CASE WHEN reg_status IN ('public_domain', 'likely_public_domain') THEN 'registration'
            WHEN released_before_line AND reg_inside_term THEN 'release_date_conflict'
            WHEN released_before_line THEN 'release_date'
            ELSE 'registration' END AS copyright_basis,
       CASE WHEN ia_item IS NOT NULL AND sound = 'sound' THEN 'passed'
            WHEN ia_item IS NOT NULL AND sound IS NULL THEN 'undecided'
            WHEN ia_item IS NULL AND coalesce(ia_reason, '') LIKE 'search_failed%' THEN 'undecided'
            ELSE 'failed' END AS ia_sound_state
FROM cc_evidence e;

CREATE OR REPLACE TEMP VIEW cc_copyright AS
SELECT j.*,
       CASE copyright_basis
            WHEN 'release_date' THEN 'public_domain'
            WHEN 'release_date_conflict' THEN 'needs_review'
            ELSE reg_status END AS status,
       CASE copyright_basis
            WHEN 'release_date' THEN 'R1_release_date'
            WHEN 'release_date_conflict' THEN 'R1_release_date_conflict'
            ELSE reg_rule END AS rule,
       CASE copyright_basis
            WHEN 'release_date' THEN
                'R1_release_date: released ' || release_year || ' (' || release_year_source || '), before the '
                || '95-year line ' || pd_line || ' (as of ' || as_of || '); '
                || CASE WHEN reg_id IS NULL THEN 'no registration linked (' || coalesce(link_reason, 'no_registration') || ')'
                        ELSE 'registration ' || reg_id || ' has no readable date' END
            WHEN 'release_date_conflict' THEN
                'R1_release_date_conflict: released ' || release_year || ' (' || release_year_source
                || '), before the 95-year line ' || pd_line || ' (as of ' || as_of || '), but registration '
                || reg_id || ' is dated ' || reg_date || ' (' || coalesce(reg_status, '?') || ')'
            ELSE reg_reason END AS status_reason
FROM cc_judged j;

CREATE OR REPLACE TEMP VIEW cc_candidates AS
WITH c AS (
    SELECT x.*,
           coalesce(status IN ('public_domain', 'likely_public_domain'), FALSE) AS copyright_ok,
           CASE WHEN status IN ('public_domain', 'likely_public_domain') THEN 'passed'
                WHEN status = 'needs_review' THEN 'undecided'
                WHEN status IS NULL AND link_reason = 'ambiguous_registration' THEN 'undecided'
                ELSE 'failed' END AS copyright_state
    FROM cc_copyright x
)
SELECT year, rank, key, key_kind, title, box_office,
       reg_id, reg_date, link_reason, status, rule, status_reason, renewal_id, match_decision,
       n_renewals_searched, ia_item, sound, ia_reason,
       TRUE AS popular,
       copyright_ok,
       ia_sound_state = 'passed' AS ia_sound_ok,
       copyright_ok AND ia_sound_state = 'passed' AS included,
       concat_ws(',',
           CASE WHEN copyright_ok THEN NULL
                WHEN status IS NULL THEN 'copyright:' || coalesce(link_reason, 'no_registration')
                ELSE 'status:' || status END,
           CASE WHEN ia_item IS NULL THEN 'ia:' || coalesce(ia_reason, 'not_on_ia')
                WHEN sound IS NULL THEN 'sound:unknown'
                WHEN sound <> 'sound' THEN 'not_sound:' || sound END
       ) AS exclusion_reasons,
       CASE WHEN copyright_ok AND ia_sound_state = 'passed' THEN 'included'
            WHEN copyright_state = 'failed' OR ia_sound_state = 'failed' THEN 'excluded'
            ELSE 'needs_review' END AS verdict,
       nullif(concat_ws(',',
           CASE WHEN copyright_state = 'undecided' AND ia_sound_state <> 'failed'
                THEN CASE WHEN status IS NULL THEN 'copyright:' || link_reason ELSE 'status:needs_review:' || rule END END,
           CASE WHEN ia_sound_state = 'undecided' AND copyright_state <> 'failed'
                THEN CASE WHEN ia_item IS NULL THEN 'ia:' || ia_reason ELSE 'sound:unknown' END END
       ), '') AS review_reasons,
       reg_status, reg_rule, release_year, release_year_source
FROM c;

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
       CASE WHEN c.rule IN ('R1_release_date', 'R1_release_date_conflict') THEN c.status || ' — ' || c.status_reason
            WHEN c.reg_id IS NULL THEN coalesce(link_reason, 'no_registration') || ': no registration linked'
                 || '; released ' || c.release_year || ' (' || c.release_year_source || ')'
            ELSE c.reg_id || ' (' || coalesce(c.reg_date::VARCHAR, '?') || ') ' || coalesce(status, '?') || ' — '
                 || coalesce(status_reason, '') || '; renewals searched: ' || coalesce(n_renewals_searched, 0)
                 || '; matched renewal: ' || coalesce(renewal_id, 'none')
                 || coalesce('; source works (AFI based on): ' || w.source_works, '') END
FROM cc_candidates c
LEFT JOIN cc_film_sources w ON w.film_reg_id = c.reg_id AND w.film_reg_date IS NOT DISTINCT FROM c.reg_date
UNION ALL
SELECT year, key, 'ia_sound', ia_sound_ok,
       CASE WHEN ia_item IS NULL THEN coalesce(ia_reason, 'not_on_ia')
            WHEN sound IS NULL THEN 'IA item ' || ia_item || ', sound: unknown (no sound metadata: needs review)'
            ELSE 'IA item ' || ia_item || ', sound: ' || sound END
FROM cc_candidates;
