-- The inputs of the box-office aggregation (sql/boxoffice_weekly.sql) read in place from the
-- Hollywood state DB (sql/pd_schema.sql) by the variety-aggregate stage
-- (flows/stages/hollywood/boxoffice.py), so that no tuple passes through Python (issue 17: the
-- stage's memory does not grow with the number of items). Parameter: {{extractor}} (the primary
-- extractor: only its tuples are aggregated).
--
--   bo_state_tuples  the extractor's tuples, columns of bo_tuples;
--   bo_state_aliases the alias table of every year (bo_aliases: year, alias, imdb, decision).

CREATE OR REPLACE TEMP VIEW bo_state_tuples AS
SELECT issue_date, item_id, page, extractor, model, theater, city, movie, week, gross, confidence
FROM pd_tuples
WHERE extractor = {{extractor}};

CREATE OR REPLACE TEMP VIEW bo_state_aliases AS
SELECT year, alias, imdb, decision FROM pd_aliases;
