-- The tables of a public-domain Hollywood release (warehouse/pd_release.py), one TEMP view
-- rel_<name> per Parquet file, over the Hollywood state DB (sql/pd_schema.sql). Every view is
-- fully ordered (ORDER BY ALL) so identical data gives identical Parquet bytes, which is how an
-- unchanged build publishes nothing new. No timestamps: a release is a function of its inputs.

CREATE OR REPLACE TEMP VIEW rel_pages AS
SELECT p.item_id, p.page, p.issue_date, p.issue_date_source, p.ocr_sha256, p.image_sha256,
       f.keep, f.reason AS filter_reason, f.phrase AS filter_phrase, f.score AS filter_score
FROM pd_pages p LEFT JOIN pd_page_filter f USING (item_id, page)
ORDER BY ALL;

CREATE OR REPLACE TEMP VIEW rel_tuples AS
SELECT item_id, page, issue_date, extractor, model, seq, theater, city, movie, week, gross, confidence, line_no
FROM pd_tuples ORDER BY ALL;

CREATE OR REPLACE TEMP VIEW rel_extract_errors AS SELECT * FROM pd_extract_errors ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_crosscheck AS SELECT * FROM pd_crosscheck ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_weekly AS SELECT * FROM pd_weekly ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_yearly AS SELECT * FROM pd_yearly ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_top100 AS SELECT * FROM pd_top100 ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_excluded AS SELECT * FROM pd_excluded ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_unknown_cities AS SELECT * FROM pd_unknown_cities ORDER BY ALL;

-- Aliases with the catalog record each one points to.
CREATE OR REPLACE TEMP VIEW rel_aliases AS
SELECT a.year, a.alias, a.n, a.imdb, a.title, c.year AS imdb_year, a.score, a.decision, a.reason,
       a.decided_by, a.runner_up
FROM pd_aliases a LEFT JOIN pd_catalog_films c ON c.imdb = a.imdb
ORDER BY ALL;

CREATE OR REPLACE TEMP VIEW rel_evaluation AS SELECT * FROM pd_evaluation ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_registrations AS SELECT * FROM pd_registrations ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_renewals AS SELECT * FROM pd_renewals ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_unparsed AS SELECT * FROM pd_unparsed ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_cce_crosscheck AS SELECT * FROM pd_cce_crosscheck ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_matches AS SELECT * FROM pd_matches ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_status AS SELECT * FROM pd_status ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_source_works AS SELECT * FROM pd_source_works ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_film_links AS SELECT * FROM pd_film_links ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_film_ia AS SELECT * FROM pd_film_ia ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_collection AS SELECT * FROM pd_collection ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_collection_candidates AS SELECT * FROM pd_collection_candidates ORDER BY ALL;
CREATE OR REPLACE TEMP VIEW rel_collection_audit AS SELECT * FROM pd_collection_audit ORDER BY ALL;
