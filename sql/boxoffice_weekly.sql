-- Variety box office, tuple level and weekly totals (SPEC B1; paper 003 Section 2.1, Appendix B).
-- warehouse/boxoffice.py runs this file, then sql/boxoffice_yearly.sql, after registering:
--
--   bo_tuples(issue_date DATE, item_id VARCHAR, page INTEGER, extractor VARCHAR, model VARCHAR,
--             theater VARCHAR, city VARCHAR, movie VARCHAR, week VARCHAR, gross BIGINT,
--             confidence DOUBLE)
--       every extracted tuple, values as printed (city and movie raw).
--   bo_citymap(original VARCHAR, normalized VARCHAR, state VARCHAR, country VARCHAR)
--       the city map (realdata: citymap.csv; extra columns such as lat/lon are ignored).
--   bo_aliases(year INTEGER, alias VARCHAR, imdb VARCHAR, decision VARCHAR)
--       the curated alias table of one year's aliases as printed.
--
-- Rules (SPEC B1 and the reference scripts get_weekly.py / get_yearly.py of
-- bamman-group/variety-boxoffice, which these views reproduce except where noted):
--   * only `last week` figures count (week compared case-insensitively, whitespace trimmed and
--     collapsed);
--   * SHOWCASE entries (theater starting with SHOWCASE, any case, e.g. `SHOWCASE:857`) whose raw
--     city is Hollywood (case/space-folded) are national totals and are excluded, as in the
--     reference (`theater.startswith("SHOWCASE") and city == "Hollywood"`). The test is on the
--     *raw* city: the map folds Hollywood into Los Angeles, but SHOWCASE entries printed under
--     Los Angeles (a few local houses) and SHOWCASE entries of any other city are ordinary local
--     figures and stay;
--   * a null gross, or a gross <= 0, adds nothing (the reference keeps only gross > 0);
--   * the city is looked up in the map by its raw text, trimmed, inner whitespace collapsed and
--     case-folded on both sides. A city absent from the map, or mapped with an empty country, is
--     an unknown city: excluded and listed (reason unknown_city, and bo_unknown_cities) — the
--     reference stops with an error there instead. Only country USA / US / United States counts;
--     other countries (and `NA`, the map's "Nationwide") are non_us_city;
--   * shared grosses: when one theater-city lists several films on a page, Variety prints one
--     gross for all of them and the extractor repeats it on each film. Each film gets gross / n,
--     where n is the number of `last week` tuples on the same page (issue_date, item_id, page)
--     with the same theater and city (trimmed, exact case) — whatever their gross, mapping or
--     exclusion. This is the reference's divisor (a per-page Counter of theater_city over the
--     last-week tuples), and it yields the fractional weekly values of the released data, e.g.
--     27833.333333333332 = 83500 / 3;
--   * the movie key is the imdb id of the alias table for (year of issue_date, trimmed title)
--     when that row is decided (imdb a `tt…` id and decision auto / accepted / curated / manual;
--     if several decided rows share one alias, the smallest imdb id wins). Otherwise the key is
--     the title lower-cased, trimmed, inner whitespace collapsed (SPEC: "unmapped movies keep
--     their lower-cased title"; the reference drops them instead). key_kind says which.
--
-- Exclusion reasons, first failing rule wins, in this order:
--   not_last_week, showcase_hollywood, null_gross, nonpositive_gross, unknown_city, non_us_city.
-- Every tuple of bo_tuples is in exactly one of bo_counted / bo_excluded.

-- Text as compared: trimmed, inner whitespace runs collapsed to one space, lower-cased.
CREATE OR REPLACE TEMP MACRO bo_norm(x) AS lower(trim(regexp_replace(x, '\s+', ' ', 'g')));

-- The city map, one row per lookup key (a key listed twice keeps its first row by original text).
CREATE OR REPLACE TEMP VIEW bo_citymap_keyed AS
SELECT bo_norm(original) AS city_key, normalized, state, country
FROM bo_citymap
WHERE original IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY bo_norm(original)
                           ORDER BY original, normalized, country) = 1;

-- Decided aliases, one per (year, alias).
CREATE OR REPLACE TEMP VIEW bo_aliases_decided AS
SELECT year::INTEGER AS year, trim(alias) AS alias, trim(imdb) AS imdb
FROM bo_aliases
WHERE imdb IS NOT NULL
  AND regexp_full_match(trim(imdb), 'tt[0-9]+')
  AND lower(trim(decision)) IN ('auto', 'accepted', 'curated', 'manual')
QUALIFY row_number() OVER (PARTITION BY year, trim(alias) ORDER BY trim(imdb)) = 1;

-- Every tuple with its city class (us / non_us / unknown), movie key, share divisor n_sharing,
-- share of the gross and exclusion reason (NULL: the tuple counts).
CREATE OR REPLACE TEMP VIEW bo_classified AS
WITH t AS (
    SELECT *,
           bo_norm(coalesce(week, '')) = 'last week' AS is_last_week,
           bo_norm(city) AS city_key,
           year(issue_date)::INTEGER AS year
    FROM bo_tuples
), shared AS (
    SELECT *,
           CASE WHEN is_last_week THEN count(*) FILTER (WHERE is_last_week) OVER (
               PARTITION BY issue_date, item_id, page, trim(theater), trim(city)) END AS n_sharing
    FROM t
), located AS (
    SELECT s.*, m.normalized AS city_normalized, m.state, m.country,
           CASE WHEN m.city_key IS NULL OR coalesce(trim(m.country), '') = '' THEN 'unknown'
                WHEN upper(trim(m.country)) IN ('USA', 'US', 'UNITED STATES') THEN 'us'
                ELSE 'non_us' END AS city_class
    FROM shared s LEFT JOIN bo_citymap_keyed m ON m.city_key = s.city_key
)
SELECT l.issue_date, l.year, l.item_id, l.page, l.extractor, l.model,
       l.theater, l.city, l.movie, l.week, l.gross, l.confidence,
       l.city_normalized, l.state, l.country, l.city_class,
       coalesce(a.imdb, bo_norm(l.movie)) AS key,
       CASE WHEN a.imdb IS NOT NULL THEN 'imdb' ELSE 'title' END AS key_kind,
       l.n_sharing,
       l.gross::DOUBLE / l.n_sharing AS share_gross,
       CASE
           WHEN NOT l.is_last_week THEN 'not_last_week'
           WHEN upper(trim(coalesce(l.theater, ''))) LIKE 'SHOWCASE%'
                AND l.city_key = 'hollywood' THEN 'showcase_hollywood'
           WHEN l.gross IS NULL THEN 'null_gross'
           WHEN l.gross <= 0 THEN 'nonpositive_gross'
           WHEN l.city_class = 'unknown' THEN 'unknown_city'
           WHEN l.city_class = 'non_us' THEN 'non_us_city'
       END AS reason
FROM located l
LEFT JOIN bo_aliases_decided a ON a.year = l.year AND a.alias = trim(l.movie);

CREATE OR REPLACE TEMP VIEW bo_counted AS
SELECT * EXCLUDE (reason) FROM bo_classified WHERE reason IS NULL;

-- The audit: every tuple that adds nothing, with its reason code.
CREATE OR REPLACE TEMP VIEW bo_excluded AS
SELECT issue_date, item_id, page, extractor, model, theater, city, movie, week, gross,
       city_normalized, country, key, reason
FROM bo_classified WHERE reason IS NOT NULL;

-- Raw cities missing from the map (all weeks), for the city-map review queue.
CREATE OR REPLACE TEMP VIEW bo_unknown_cities AS
SELECT city, count(*) AS n_tuples,
       count(*) FILTER (WHERE bo_norm(coalesce(week, '')) = 'last week') AS n_last_week,
       min(issue_date) AS first_issue, max(issue_date) AS last_issue
FROM bo_classified
WHERE city_class = 'unknown'
GROUP BY city;

-- Weekly totals per movie key and issue (the released weekly table: imdb, date, box_office).
CREATE OR REPLACE TEMP VIEW bo_weekly AS
SELECT key, issue_date, sum(share_gross) AS gross, any_value(key_kind) AS key_kind,
       count(*) AS n_tuples
FROM bo_counted
GROUP BY key, issue_date;
