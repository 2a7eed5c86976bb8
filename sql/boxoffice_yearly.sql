-- Variety box office, yearly ranking (SPEC B1). Runs after sql/boxoffice_weekly.sql on the same
-- connection and reads its view bo_counted (tuples that count, each with its share of the gross).
-- Parameter: {{top_n}} (100: the top 100 per year define popularity).
--
--   bo_yearly(year, rank, key, key_kind, box_office, n_weeks, n_tuples)
--       box_office = the sum over the year's counted tuples of gross / n_sharing (the year is the
--       issue's year, as in the reference get_yearly.py). Kept as DOUBLE, unrounded; the released
--       yearly TSV prints it rounded to whole dollars. rank = 1, 2, … by box_office descending
--       (compared rounded to 1e-6 dollar, so float summation order cannot split a tie); ties are
--       broken by key ascending, so every rank is used once and the order is the same on every run.
--   bo_top100(year, rank, key, key_kind, box_office, n_weeks, n_tuples)
--       the rows of rank <= {{top_n}}: exactly {{top_n}} per year (fewer if the year has fewer
--       movies), a tie at the cut being decided by the same key order.

CREATE OR REPLACE TEMP VIEW bo_yearly AS
WITH totals AS (
    SELECT year, key, any_value(key_kind) AS key_kind, sum(share_gross) AS box_office,
           count(DISTINCT issue_date) AS n_weeks, count(*) AS n_tuples
    FROM bo_counted
    GROUP BY year, key
)
SELECT year,
       row_number() OVER (PARTITION BY year ORDER BY round(box_office, 6) DESC, key ASC) AS rank,
       key, key_kind, box_office, n_weeks, n_tuples
FROM totals;

CREATE OR REPLACE TEMP VIEW bo_top100 AS
SELECT * FROM bo_yearly WHERE rank <= {{top_n}};
